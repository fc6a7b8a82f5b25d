/* Waiting in the conduits: event words (sleep after a short spin) and the polling back-off
 * for MPI requests (service/wait.h). */
#define _GNU_SOURCE
#include <limits.h>
#include <sched.h>
#include <time.h>

#include <utc/context.h>

#include "base/sync.h"
#include "service/wait.h"

/* How long a blocked thread spins before it sleeps on a futex: covers a ping-pong round
 * trip through the ring (well under a microsecond) with a wide margin. */
#define EVENT_SPIN_NS 50000

void utc__event_signal(atomic_uint *event, atomic_uint *sleepers)
{
    /* seq_cst increment, then seq_cst read of the sleeper count: the waker's half of the
     * Dekker pair in utc__event_wait */
    atomic_fetch_add(event, 1);
    if (atomic_load(sleepers))
        utc__futex_wake(event, INT_MAX);
}

bool utc__event_wait(atomic_uint *event, unsigned old, atomic_uint *sleepers, double deadline)
{
    if (deadline >= 0 && utc_wtime() >= deadline)
        return atomic_load(event) != old;
    if (utc__spin_while_eq(event, old, EVENT_SPIN_NS) != old)
        return true;
    /* seq_cst increment, then seq_cst re-read in the loop: with utc__event_signal, either
     * we see its change or it sees us counted and wakes us */
    atomic_fetch_add(sleepers, 1);
    bool changed = true;
    while (atomic_load(event) == old) {
        if (deadline < 0) {
            utc__futex_wait(event, old);
            continue;
        }
        double left = deadline - utc_wtime();
        if (left <= 0) {
            changed = false;
            break;
        }
        utc__futex_wait_timeout(event, old, left);
    }
    atomic_fetch_sub(sleepers, 1);
    return changed;
}

void utc__poll_step(utc__poll_t *p)
{
    /* while spinning, read the clock every 16 steps only (a VM's clock costs ~50 ns); the
     * first 16 steps (a message just about to arrive) read it not at all */
    if (p->iter == 16) {
        p->start = utc_wtime();
        p->waited = 0;
    } else if (p->iter > 16 && ((p->iter & 15) == 0 || p->waited >= 50e-6)) {
        p->waited = utc_wtime() - p->start;
    }
    p->iter++;
    if (p->waited < 50e-6) {
        utc__cpu_relax();
        return;
    }
    if (p->waited < 1e-3 || p->start + p->waited < p->busy_until) {
        sched_yield();
        return;
    }
    double s = p->waited / 16;
    if (s > 1e-3)
        s = 1e-3;
    struct timespec ts = {0, (long)(s * 1e9)};
    nanosleep(&ts, NULL);
}

