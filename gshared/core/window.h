/*
 * gshared core: what each task owns on a rank (core/window.c owns it). The per-task state:
 * the task's own communicator, its RMA window (open and locked for the task's life) and the
 * window's allocator; the checks that a thread belongs to a task; and the "team" steps in
 * which one thread of the rank works while the task's other threads on the rank wait.
 * The layers above (data/, ops/) use it; it includes nothing of theirs.
 */
#ifndef UTC_GSHARED_CORE_WINDOW_H
#define UTC_GSHARED_CORE_WINDOW_H

#include <stdbool.h>
#include <stddef.h>

#include <mpi.h>

#include "utc_internal.h"
#include "core/alloc.h"
#include "core/board.h"

struct utc_gdata;

typedef struct utc__gs_task {
    utc_task_t *task; /* the public handle (rank instance) */
    MPI_Comm comm;    /* our own copy of the task communicator: rank == group rank */
    int nranks, rank; /* group size, this rank in the group */
    int nlocal;       /* the task's threads on this rank */
    MPI_Win win;      /* MPI_WIN_NULL when window_size is 0 */
    bool shared;      /* allocated with MPI_Win_allocate_shared (one node) */
    bool progress;    /* holds a reference on the progress thread */
    char *base;       /* this rank's window memory */
    char **peer_base; /* shared window: every rank's window memory (MPI_Win_shared_query),
                       * which this rank may load and store directly; else NULL */
    size_t size;      /* bytes of window on each rank */
    size_t wake_off;  /* shared window: where each rank's wake record starts (core/wake.h),
                       * past `size`; 0 when there is none */
    /* Only the leader of a team step touches these (see utc__gs_team_*). */
    utc__gs_alloc_t alloc;
    uint64_t coll_seq; /* checked collectives on comm so far (ops/collectives.c) */
    int *coll_ints;    /* 4 x nranks: the v-form collectives' counts for MPI */
    MPI_Request *coll_reqs; /* 2 x nranks: a collective's requests */
    /* the number of the collective each rank entered last, for the watchdog (core/board.h):
     * in the window, past the allocator's bytes, or in a window of its own */
    utc__gs_board_t board;
    bool board_tried;          /* the board has a window, or will never have one */
    struct utc_gdata *objects; /* live objects, to free with the task (data/gdata.c's) */
    /* team of the rank's threads: "one thread does it, all get the result" */
    utc__barrier_t barrier;
    utc_status_t team_rc; /* published by the leader, read after the barrier */
    void *team_ptr;
    char team_msg[512];
} utc__gs_task_t;

/* Make the gshared state of `task` on this rank: its communicator and, when the task has a
 * window_size, its window, locked. *gs is NULL on a rank that holds none of the task's
 * threads. Collective over the task's ranks; on failure the error is set and nothing is
 * left. */
utc_status_t utc__gs_task_open(utc_task_t *task, utc__gs_task_t **gs)
    __attribute__((warn_unused_result));
/* Unlock and free the window, drop the progress reference, free the state. The objects
 * must be gone already. Collective over the task's ranks. */
void utc__gs_task_close(utc__gs_task_t *gs);

/* The gshared state of `task` on this rank (NULL on ranks outside the task). */
static inline utc__gs_task_t *utc__gs_of(const utc_task_t *task)
{
    return (utc__gs_task_t *)task->impl->ext[UTC__EXT_GSHARED];
}

/* Thread-locals read on every access: the initial-exec model makes each read one
 * instruction instead of a call to __tls_get_addr (the library is linked, not dlopen'd
 * late; glibc keeps spare static TLS for the few bytes either way). */
#define UTC__GS_TLS _Thread_local __attribute__((tls_model("initial-exec")))

/* The task whose thread this is, set when the thread starts (or by the fallback below).
 * Each task thread serves exactly one task for its whole life. */
extern UTC__GS_TLS const utc_task_t *utc__gs_thread_task;

/* The fallback: asks the framework, and caches a yes. */
bool utc__gs_in_task_slow(const utc_task_t *task);

/* Whether the calling thread is a thread of `task`. Cheap: one thread-local compare. */
static inline bool utc__gs_in_task(const utc_task_t *task)
{
    return (task && utc__gs_thread_task == task) || utc__gs_in_task_slow(task);
}

/* Check ctx (non-NULL, the caller's own) and return its task's gshared state in *gs. */
utc_status_t utc__gs_ctx_state(utc_ctx_t *ctx, const char *fn, utc__gs_task_t **gs)
    __attribute__((warn_unused_result));

/* A task with no window: give its board a window of its own (core/board.h). Called by
 * the leader of the task's first collective whose ranks agree (they have met), on every
 * rank; collective over the task's ranks. On failure (alike on every rank) the board stays
 * without one. Sets board_tried. */
void utc__gs_board_window(utc__gs_task_t *gs);

/*
 * Team steps: every local thread of the task calls utc__gs_team_enter; it returns true in
 * exactly one of them (the leader) once all have arrived. The leader does the work, then
 * every thread calls utc__gs_team_leave with the leader's status (the others pass
 * anything): all return the leader's status, with its last-error message copied.
 * The barrier's atomics order the leader's writes before the others' reads. Both block.
 */
bool utc__gs_team_enter(utc__gs_task_t *gs);
utc_status_t utc__gs_team_leave(utc__gs_task_t *gs, bool leader, utc_status_t rc);

#endif /* UTC_GSHARED_CORE_WINDOW_H */
