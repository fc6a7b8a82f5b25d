/*
 * The watchdog (UTC_WATCHDOG=SECONDS): every blocking wait of the runtime says what it
 * waits on in a record of the calling thread, and a monitor thread prints one line for
 * each thread that has waited longer than SECONDS (rank, task, thread, what, how long).
 *
 * Cost when UTC_WATCHDOG is not set: one relaxed load and a branch per wait. When it is
 * set: a clock read and a few relaxed stores before the wait, one store after. Only the
 * outermost wait of a thread is recorded (a task barrier that waits on an MPI request
 * shows as the barrier).
 */
#ifndef UTC_FRAMEWORK_WATCHDOG_H
#define UTC_FRAMEWORK_WATCHDOG_H

#include <stdatomic.h>
#include <stdbool.h>

#include <utc/status.h>

/* What a blocked thread waits on; obj, tag, peer and name are read as the kind says. */
typedef enum utc__wait_kind {
    UTC__WAIT_NONE = 0,
    UTC__WAIT_TASK,          /* utc_task_init/wait: obj = task id, name = task name */
    UTC__WAIT_BARRIER_LOCAL, /* a task's threads on this rank: obj = task id */
    UTC__WAIT_BARRIER,       /* all threads of a task, across ranks: obj = task id */
    UTC__WAIT_WORLD_BARRIER, /* utc_barrier */
    UTC__WAIT_MPI,           /* an MPI request (utc__mpi_wait) */
    UTC__WAIT_CONDUIT_READ,  /* obj = conduit id, tag, peer = world rank of the writer */
    UTC__WAIT_CONDUIT_WRITE, /* obj = conduit id, tag, peer = world rank of the reader */
    UTC__WAIT_CONDUIT_REQ,   /* utc_request_wait: as read/write, tag < 0 unknown */
    UTC__WAIT_CONDUIT_SETUP, /* utc_conduit_create meeting the other ranks: obj = id */
    UTC__WAIT_RMA,           /* remote access: obj = task id, peer = target world rank */
    UTC__WAIT_RMA_BARRIER,   /* global shared data barrier / create / destroy: obj = task id */
    UTC__WAIT_COLLECTIVE     /* a task collective: obj = task id */
} utc__wait_kind_t;

/* Set once at utc_init when UTC_WATCHDOG is set; never cleared. */
extern atomic_bool utc__wd_on;

void utc__wd_begin_slow(utc__wait_kind_t kind, int obj, int tag, int peer, const char *name);
void utc__wd_end_slow(void);

/* Before a blocking wait. `name` (may be NULL) must outlive the wait (a task's ops name,
 * a string literal). Pair every begin with one end on the same thread. */
static inline void utc__wd_begin(utc__wait_kind_t kind, int obj, int tag, int peer,
                                 const char *name)
{
    /* relaxed: set before any task thread exists (pthread_create orders it) */
    if (atomic_load_explicit(&utc__wd_on, memory_order_relaxed))
        utc__wd_begin_slow(kind, obj, tag, peer, name);
}

/* After the wait. */
static inline void utc__wd_end(void)
{
    if (atomic_load_explicit(&utc__wd_on, memory_order_relaxed))
        utc__wd_end_slow();
}

/* Evaluate `call` (not void) between utc__wd_begin and utc__wd_end; yields its value. */
#define UTC__WD_CALL(kind, obj, tag, peer, name, call)                                     \
    __extension__({                                                                        \
        utc__wd_begin(kind, obj, tag, peer, name);                                         \
        __typeof__(call) utc__wd_rv_ = (call);                                             \
        utc__wd_end();                                                                     \
        utc__wd_rv_;                                                                       \
    })

/* utc_init (main thread, after MPI is up): reads UTC_WATCHDOG; when it is a positive
 * number of seconds, starts the monitor thread. A bad value gets a warning, no watchdog. */
void utc__wd_start(void);
/* utc_finalize: stops and joins the monitor thread (if any). */
void utc__wd_stop(void);

#endif /* UTC_FRAMEWORK_WATCHDOG_H */
