/*
 * Run statistics (UTC_STATS=1): per task, its threads' busy time (in init, run and fini)
 * and the part of it spent waiting in the runtime (conduits, barriers, remote loads and
 * stores, collectives, GPU waits); per conduit, messages, bytes and mean transfer time.
 *
 * The counters live in each thread's profiling record (trace.c) and are fed by the same
 * hooks as the tracer (trace.h); only their owner thread writes them, so they need no
 * locks. utc__stats_report reads them at utc_finalize, once every task thread is joined.
 */
#ifndef UTC_OBSERVE_STATS_H
#define UTC_OBSERVE_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <mpi.h>

#include "observe/trace.h"

/* Deepest span nesting whose waiting time is accounted for exactly. */
#define UTC__STATS_DEPTH 32
/* Bytes of a task name kept for the report and the trace, with its NUL (longer names are
 * cut between characters, base/text.h). */
#define UTC__STATS_NAME 48

typedef struct utc__stats_conduit utc__stats_conduit_t;

/* One thread's counters. Zero-initialized; task_id -1 for threads that are not task
 * threads (the main thread). */
typedef struct utc__stats_thread {
    int task_id;
    char task_name[UTC__STATS_NAME];
    uint64_t busy_ns; /* in the task's init, run and fini */
    uint64_t wait_ns; /* in waiting spans, outermost ones only */
    uint64_t runs;    /* run commands executed */
    /* open spans: the waiting time counted when each began */
    int depth;
    uint64_t wait_at_open[UTC__STATS_DEPTH];
    utc__stats_conduit_t *conduits; /* per conduit and direction (uthash) */
} utc__stats_thread_t;

/* A span opens on the owner thread. */
static inline void utc__stats_open(utc__stats_thread_t *st)
{
    if (st->depth < UTC__STATS_DEPTH)
        st->wait_at_open[st->depth] = st->wait_ns;
    st->depth++;
}

/* The innermost span closes after dur_ns; `waiting` says whether its kind is a wait. */
void utc__stats_close(utc__stats_thread_t *st, utc__ev_t ev, bool waiting, uint64_t dur_ns,
                      int obj, int64_t bytes);

/* A leaf span (opened by nothing) ends after dur_ns. A wait adds its time; if it is
 * nested in an open wait, that one's close replaces it, so nothing is counted twice. */
void utc__stats_leaf(utc__stats_thread_t *st, utc__ev_t ev, bool waiting, uint64_t dur_ns,
                     int obj, int64_t bytes);

/* Free what the counters hold. */
void utc__stats_thread_fini(utc__stats_thread_t *st);

/*
 * Gather every rank's counters on rank 0 and print the table to `out` there.
 * Collective over comm (the world); threads[0..n-1] are this rank's records.
 * elapsed_s: seconds from utc_init to now.
 */
void utc__stats_report(MPI_Comm comm, utc__stats_thread_t *const *threads, int n,
                       double elapsed_s, FILE *out);

#endif /* UTC_OBSERVE_STATS_H */
