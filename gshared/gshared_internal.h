/*
 * Internals of the gshared module: the per-task state (window, allocator, the rank's team
 * of threads for "one thread does it" steps) shared by window.c, gdata.c, rma.c and
 * collectives.c. Not installed.
 */
#ifndef UTC_GSHARED_INTERNAL_H
#define UTC_GSHARED_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include <utc/collectives.h>
#include <utc/gshared.h>

#include "utc_internal.h"

/* ---- allocator (allocator.c): first fit over [0, size), coalescing on free ---- */

/* Alignment of every object in the window: a cache line, so objects never share one and
 * 8-byte atomics are always aligned. */
#define UTC__GS_ALIGN ((size_t)64)

typedef struct utc__gs_extent {
    size_t off, len;
    struct utc__gs_extent *next;
} utc__gs_extent_t;

typedef struct utc__gs_alloc {
    size_t size;            /* bytes managed */
    size_t free_bytes;      /* sum of the free list */
    utc__gs_extent_t *free; /* free extents, sorted by offset, never adjacent */
} utc__gs_alloc_t;

/* Manage [0, size) rounded down to UTC__GS_ALIGN. UTC_ERR_NO_MEMORY (no message set). */
utc_status_t utc__gs_alloc_init(utc__gs_alloc_t *a, size_t size)
    __attribute__((warn_unused_result));
void utc__gs_alloc_fini(utc__gs_alloc_t *a);
/* Round a request up to the allocator's granule; 0 if it would overflow. */
size_t utc__gs_alloc_round(size_t bytes);
/* First fit: *off is the lowest free offset that fits `bytes` (a multiple of UTC__GS_ALIGN,
 * from utc__gs_alloc_round). Deterministic: the same sequence of calls gives the same
 * offsets on every rank. UTC_ERR_NO_MEMORY (no message set) when nothing fits. */
utc_status_t utc__gs_alloc_get(utc__gs_alloc_t *a, size_t bytes, size_t *off)
    __attribute__((warn_unused_result));
/* Give [off, off+bytes) back, merging with free neighbours. `spare` is a list node the
 * caller allocated with the object (so freeing never fails and ranks never diverge): it is
 * used or freed. */
void utc__gs_alloc_put(utc__gs_alloc_t *a, size_t off, size_t bytes, utc__gs_extent_t *spare);
/* Largest free extent, for error messages. */
size_t utc__gs_alloc_largest(const utc__gs_alloc_t *a);

/* ---- per-task state (window.c) ---- */

typedef struct utc__gs_task {
    utc_task_t *task; /* the public handle (rank instance) */
    MPI_Comm comm;    /* our own copy of the task communicator: rank == group rank */
    int nranks, rank; /* group size, this rank in the group */
    int nlocal;       /* the task's threads on this rank */
    MPI_Win win;      /* MPI_WIN_NULL when window_size is 0 */
    bool shared;      /* allocated with MPI_Win_allocate_shared (one node) */
    bool progress;    /* holds a reference on the progress thread */
    char *base;       /* this rank's window memory */
    size_t size;      /* bytes of window on each rank */
    /* Only the leader of a team step touches these (see utc__gs_team_*). */
    utc__gs_alloc_t alloc;
    struct utc_gdata *objects; /* live objects, to free with the task */
    /* team of the rank's threads: "one thread does it, all get the result" */
    utc__barrier_t barrier;
    utc_status_t team_rc; /* published by the leader, read after the barrier */
    void *team_ptr;
    char team_msg[512];
} utc__gs_task_t;

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

/*
 * Team steps: every local thread of the task calls utc__gs_team_enter; it returns true in
 * exactly one of them (the leader) once all have arrived. The leader does the work, then
 * every thread calls utc__gs_team_leave with the leader's status (the others pass
 * anything): all return the leader's status, with its last-error message copied.
 * The barrier's atomics order the leader's writes before the others' reads.
 */
bool utc__gs_team_enter(utc__gs_task_t *gs);
utc_status_t utc__gs_team_leave(utc__gs_task_t *gs, bool leader, utc_status_t rc);

/* ---- objects (gdata.c) ---- */

#define UTC__GDATA_MAGIC 0x67646174u /* "gdat" */

struct utc_gdata {
    uint32_t magic; /* UTC__GDATA_MAGIC while alive */
    utc_task_t *task;
    utc__gs_task_t *gs;
    MPI_Win win;
    char *local;   /* this rank's part: gs->base + offset */
    size_t offset; /* byte displacement of the part in every rank's window */
    size_t elem_size, count;
    size_t bytes; /* space taken in the window (rounded) */
    int nranks, rank;
    struct utc_gdata *next;  /* in gs->objects */
    utc__gs_extent_t *spare; /* free-list node for when the space is given back */
};

/* Out-of-line half of utc__gdata_check: says what is wrong (last error) and returns it. */
utc_status_t utc__gdata_check_fail(const utc_gdata_t *gd, const char *fn);

/* Validate a handle and the calling thread; on failure sets the last error naming `fn`.
 * Inline: it runs before every access. */
static inline utc_status_t utc__gdata_check(const utc_gdata_t *gd, const char *fn)
{
    if (gd && gd->magic == UTC__GDATA_MAGIC && utc__gs_in_task(gd->task))
        return UTC_OK;
    return utc__gdata_check_fail(gd, fn);
}

/* Check that elements start .. start+n-1 exist (n >= 1 for single elements). */
static inline utc_status_t utc__gdata_check_range(const utc_gdata_t *gd, size_t start, size_t n,
                                                  const char *fn)
{
    if (start < gd->count && n <= gd->count - start)
        return UTC_OK;
    return utc__error(UTC_ERR_OUT_OF_RANGE,
                      "%s: elements %zu .. %zu (n = %zu) out of range: the object has %zu "
                      "elements on each rank",
                      fn, start, start + n - 1, n, gd->count);
}

/* Free every object still alive in gs (at task destroy). */
void utc__gdata_free_all(utc__gs_task_t *gs);

/* ---- progress for passive targets (progress.c) ---- */

/* Take / drop a reference on this rank's progress thread, which runs while any window
 * that may need target-side progress (not in shared memory) has objects. Any thread. */
void utc__gs_progress_acquire(void);
void utc__gs_progress_release(void);

/* ---- remote access (rma.c) ---- */

/* Complete and free the calling thread's staging buffer for small remote stores (when the
 * thread stops; its task's window is still open). */
void utc__gs_stage_release(void);

#endif /* UTC_GSHARED_INTERNAL_H */
