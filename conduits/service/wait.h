/*
 * Conduit service: waiting. Event words that blocked readers and writers sleep on, the
 * back-off for polling MPI requests, deadlines. Used by the conduit and the transports.
 */
#ifndef UTC_CONDUITS_WAIT_H
#define UTC_CONDUITS_WAIT_H

#include <stdatomic.h>
#include <stdbool.h>

#include <utc/context.h>

/* Change an event word (seq_cst) and wake its sleepers, if any: the waker's half of the
 * Dekker pair in utc__event_wait. */
void utc__event_signal(atomic_uint *event, atomic_uint *sleepers);

/* Spin briefly, then sleep, while *event == old; at most until `deadline` (utc_wtime
 * seconds, < 0: none). Returns false on timeout. */
bool utc__event_wait(atomic_uint *event, unsigned old, atomic_uint *sleepers, double deadline);

/*
 * Back-off for polling loops (MPI requests and probes): spin ~50 us, then yield until
 * 1 ms, then sleep in steps of 1/16 of the time waited so far, at most 1 ms, so a late
 * wake-up costs at most ~6% of the wait while an idle waiter polls ~1000 times a second.
 * While a transfer is known to be in flight (busy_until), it yields instead of sleeping:
 * the MPI progress engine needs the calls, and the end is near.
 */
typedef struct utc__poll {
    double start;      /* utc_wtime of the first step */
    double waited;     /* seconds waited at the last clock read */
    double busy_until; /* yield rather than sleep until then (0: not set) */
    unsigned iter;
} utc__poll_t;

#define UTC__POLL_INIT {0, 0, 0, 0}
void utc__poll_step(utc__poll_t *p);

/* Deadline from a timeout: < 0 stays -1 (none). */
static inline double utc__deadline(double timeout_s)
{
    return timeout_s < 0 ? -1.0 : utc_wtime() + timeout_s;
}

#endif /* UTC_CONDUITS_WAIT_H */
