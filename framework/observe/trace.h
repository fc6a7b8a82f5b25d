/*
 * Profiling hooks of the runtime: the tracer (UTC_TRACE=file.json, a Chrome trace-event
 * file) and the statistics (UTC_STATS=1, a table at utc_finalize) share them.
 *
 * A hook costs one predictable branch on a global flag when both are off:
 *
 *     uint64_t t0 = utc__prof_start();          // 0 when off; opens a span when on
 *     ... the operation ...
 *     UTC__PROF_END(UTC__EV_RMA_LOAD, t0, obj, bytes, tag, peer);
 *
 * or, for a call whose value is returned, in one line:
 *
 *     return UTC__PROF_CALL(UTC__EV_BARRIER, task_id, -1, -1, -1, do_barrier(ctx));
 *
 * The arguments after the event are evaluated after the operation, only when profiling is
 * on (so a read's received size may be passed). Use -1 for what does not apply. Spans on
 * one thread must nest: every utc__prof_start is closed by exactly one UTC__PROF_END on
 * the same thread.
 *
 * Where a function has early returns, a leaf span needs no closing: take a stamp, and
 * record the span only on the path that reaches the end (nothing else may open a span
 * in between on this thread):
 *
 *     uint64_t t0 = utc__prof_stamp();
 *     ... if (err) return rc; ...
 *     UTC__PROF_LEAF(UTC__EV_RMA_ATOMIC, t0, obj, 8, -1, rank);
 *     return UTC_OK;
 *
 * Events are kept in bounded per-thread buffers (no locks on the hot path) and written
 * at utc_finalize; see stats.h for what the statistics take from them.
 */
#ifndef UTC_OBSERVE_TRACE_H
#define UTC_OBSERVE_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include <utc/status.h>

#include "base/clock.h"

/* Bits of utc__prof_flags. */
enum { UTC__PROF_TRACE = 1, UTC__PROF_STATS = 2 };

/*
 * What is on. Written only by utc__prof_init (in utc_init, before any task thread exists)
 * and utc__prof_finalize (in utc_finalize, after every task thread has been joined), so a
 * plain read is ordered by pthread_create / pthread_join: no atomic needed on the hot path.
 */
extern int utc__prof_flags;

#define UTC__PROF_ON() __builtin_expect(utc__prof_flags != 0, 0)

/* Kinds of events. Their names, categories and whether they count as waiting are in
 * trace.c (ev_info): add a row there when adding one here. */
typedef enum utc__ev {
    /* task threads (framework/tasks/thread.c); obj = task id */
    UTC__EV_TASK_INIT = 0,
    UTC__EV_TASK_RUN,
    UTC__EV_TASK_FINI,
    /* the main thread (framework/tasks/task.c, context/context.c); obj = task id */
    UTC__EV_TASK_CREATE,
    UTC__EV_TASK_DESTROY,
    UTC__EV_TASK_WAIT,
    /* barriers; obj = task id (-1: the world) */
    UTC__EV_BARRIER_LOCAL,
    UTC__EV_BARRIER,
    UTC__EV_WORLD_BARRIER,
    /* conduits; obj = conduit id, bytes, tag, peer = world rank of the other end.
     * WRITE / READ are transfers: one event per message, by the thread that moves it
     * (the statistics count messages from them). WAIT is any other wait on a conduit. */
    UTC__EV_CONDUIT_WRITE,
    UTC__EV_CONDUIT_READ,
    UTC__EV_CONDUIT_WAIT,
    /* global shared data; obj = task id, peer = group rank, bytes moved */
    UTC__EV_RMA_LOAD,
    UTC__EV_RMA_STORE,
    UTC__EV_RMA_ATOMIC,
    UTC__EV_RMA_QUIET,
    UTC__EV_RMA_BARRIER,
    UTC__EV_RMA_WAIT, /* utc_gdata_wait_until; peer = this rank */
    /* task collectives; obj = task id, peer = root (rooted ones), bytes = what this rank sends */
    UTC__EV_COLL_BCAST,
    UTC__EV_COLL_GATHER,
    UTC__EV_COLL_SCATTER,
    UTC__EV_COLL_REDUCE,
    UTC__EV_COLL_ALLREDUCE,
    UTC__EV_COLL_ALLGATHER, /* allgather and allgatherv */
    UTC__EV_COLL_ALLTOALL,  /* alltoall and alltoallv */
    UTC__EV_COLL_SCAN,      /* scan and exscan */
    /* GPU; obj = device, bytes moved */
    UTC__EV_GPU_H2D,
    UTC__EV_GPU_D2H,
    UTC__EV_GPU_SYNC, /* waiting for the thread's stream (its kernels) or a buffer's copies */
    UTC__EV_COUNT
} utc__ev_t;

/* Bytes kept of a conduit's transport names on a rank ("inproc,mpi"), with the NUL. */
#define UTC__PROF_TRANSPORT 24

/* Conduit `id` uses transport(s) `transport` on this rank (the component names, joined by
 * commas, no space: one word in the statistics' table): the trace
 * says so in a metadata record per conduit, the statistics in a column. Called at the
 * conduit's creation (main thread) when profiling is on. */
void utc__prof_conduit(int id, const char *transport);

/* The transport(s) recorded for conduit `id` on this rank, or "-". */
const char *utc__prof_conduit_transport(int id);

/* Nanoseconds of the monotonic clock (the one utc_wtime reads). */
static inline uint64_t utc__prof_clock(void) { return utc__clock_ns(); }

/* Open a span on the calling thread and return its start (slow path of utc__prof_start). */
uint64_t utc__prof_begin(void);

/* Close the calling thread's innermost span, begun at t0, as an event of kind ev. */
void utc__prof_span(utc__ev_t ev, uint64_t t0, int obj, int64_t bytes, int tag, int peer);

/* Start of a span: 0 (and nothing else) when profiling is off. */
static inline uint64_t utc__prof_start(void)
{
    return UTC__PROF_ON() ? utc__prof_begin() : 0;
}

#define UTC__PROF_END(ev, t0, obj, bytes, tag, peer)                                       \
    do {                                                                                   \
        if (UTC__PROF_ON())                                                                \
            utc__prof_span((ev), (t0), (obj), (int64_t)(bytes), (tag), (peer));            \
    } while (0)

/* A stamp for a leaf span: 0 when profiling is off. Opens nothing. */
static inline uint64_t utc__prof_stamp(void)
{
    return UTC__PROF_ON() ? utc__prof_clock() : 0;
}

/* Record a leaf span from t0 (a utc__prof_stamp) to now on the calling thread. */
void utc__prof_leaf(utc__ev_t ev, uint64_t t0, int obj, int64_t bytes, int tag, int peer);

#define UTC__PROF_LEAF(ev, t0, obj, bytes, tag, peer)                                      \
    do {                                                                                   \
        if (UTC__PROF_ON())                                                                \
            utc__prof_leaf((ev), (t0), (obj), (int64_t)(bytes), (tag), (peer));            \
    } while (0)

/* Evaluate `call`, record a leaf span from t0 to its end, and yield its value. */
#define UTC__PROF_LEAF_VAL(ev, t0, obj, bytes, tag, peer, call)                            \
    __extension__({                                                                        \
        __typeof__(call) utc__prof_rv_ = (call);                                           \
        UTC__PROF_LEAF(ev, t0, obj, bytes, tag, peer);                                     \
        utc__prof_rv_;                                                                     \
    })

/* Evaluate `call` inside a span and yield its value (a GNU statement expression). */
#define UTC__PROF_CALL(ev, obj, bytes, tag, peer, call)                                    \
    __extension__({                                                                        \
        uint64_t utc__prof_t0_ = utc__prof_start();                                        \
        __typeof__(call) utc__prof_rv_ = (call);                                           \
        UTC__PROF_END(ev, utc__prof_t0_, obj, bytes, tag, peer);                           \
        utc__prof_rv_;                                                                     \
    })

/* A task thread starts (framework/tasks/thread.c): names its track and its statistics row. */
void utc__prof_thread_start(int task_id, const char *task_name, int global_id, int local_id);

/* utc_init, with the runtime's world communicator: reads UTC_TRACE and UTC_STATS on rank 0,
 * shares them, and aligns the ranks' clocks when tracing. Collective; main thread. */
void utc__prof_init(MPI_Comm world);

/* utc_finalize, after the tasks are gone and before the world communicator goes: prints
 * the statistics and writes the trace (rank 0 gathers). Collective; main thread.
 * Returns UTC_OK, or UTC_ERR_IO on every rank when the trace could not be written whole
 * (rank 0 logs why; the last-error message says it too). */
utc_status_t utc__prof_finalize(MPI_Comm world) __attribute__((warn_unused_result));

#endif /* UTC_OBSERVE_TRACE_H */
