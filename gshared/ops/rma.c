/*
 * Remote access to global shared data: loads and stores on any rank of the task, atomics,
 * quiet and the task-wide barrier. Every call is checked before anything is issued; the
 * window is locked (lock_all) for the task's whole life, so each access is one MPI call
 * plus the completion the operation promises.
 *
 * Completion, with many threads of a rank on one window (MPI_THREAD_MULTIPLE), chosen by
 * measurement (doc/PERFORMANCE.md):
 * - rload: MPI_Get + MPI_Win_flush_local(target). MPI_Rget + a test loop costs the same on
 *   the shared-memory components but ~2 us more per call on osc/ucx (the multi-host path),
 *   and waiting on an Rget request with back-off (sleeping) stalls osc/ucx's progress:
 *   16x slower at 1 MiB. The flush's wait is the transfer's own progress, so the thread
 *   spins only as long as the data takes to move.
 * - rstore: `src` is free on return. Small stores are copied into a per-thread staging
 *   buffer and put from there, so they need no completion at all; larger ones are put and
 *   locally flushed. Either way the store is remotely complete at the next
 *   MPI_Win_flush_all (quiet or barrier), which completes every thread's operations.
 * - atomics flush their target: the result is in hand and the update visible on return.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/wait_hook.h"
#include "observe/trace.h"
#include "core/wake.h"
#include "data/gdata.h"
#include "ops/rma.h"

/* Largest piece moved by one MPI call (counts are int). */
#define GS_CHUNK ((size_t)1 << 30)
/* Stores up to this size go through the staging buffer: copying them is cheaper than the
 * local flush it saves (measured: ~15 ns on a shared-memory window, more on osc/ucx). */
#define GS_STAGE_MAX ((size_t)256)
/* Bytes of each thread's staging buffer. */
#define GS_STAGE_SIZE ((size_t)256 << 10)

/*
 * The calling thread's staging buffer. A staged put's origin is a slice of it; a slice is
 * reused only after MPI_Win_flush_local_all (buffer full) or a flush_all this thread knows
 * of (its quiet or barrier), which complete every put of the process on the window.
 */
typedef struct {
    char *buf;
    size_t used;
    MPI_Win win;
} gs_stage_t;

static UTC__GS_TLS gs_stage_t gs_stage = {NULL, 0, MPI_WIN_NULL};

void utc__gs_stage_release(void)
{
    if (gs_stage.buf && gs_stage.used > 0)
        MPI_Win_flush_local_all(gs_stage.win);
    free(gs_stage.buf);
    gs_stage = (gs_stage_t){NULL, 0, MPI_WIN_NULL};
}

/* After a flush_all of win by this thread: every staged slice is free again. */
static inline void gs_stage_reset(MPI_Win win)
{
    if (gs_stage.win == win)
        gs_stage.used = 0;
}

/* A slice of `len` bytes of the staging buffer for win, or NULL (use the direct path). */
static char *gs_stage_slice(MPI_Win win, size_t len, int *err)
{
    gs_stage_t *s = &gs_stage;
    if (!s->buf) {
        s->buf = malloc(GS_STAGE_SIZE);
        if (!s->buf)
            return NULL;
        s->win = win;
        s->used = 0;
    }
    if (s->win != win)
        return NULL; /* a task thread uses one window; be safe anyway */
    size_t need = (len + 15) & ~(size_t)15;
    if (s->used + need > GS_STAGE_SIZE) {
        *err = MPI_Win_flush_local_all(win);
        if (*err != MPI_SUCCESS)
            return NULL;
        s->used = 0;
    }
    char *p = s->buf + s->used;
    s->used += need;
    return p;
}

/* The checks of remote_check, one by one with their messages (also says UTC_OK for an
 * empty block, which the fast path does not let through). */
__attribute__((cold, noinline)) static utc_status_t remote_check_slow(const utc_gdata_t *gd,
                                                                      int rank, size_t start,
                                                                      size_t n, const void *buf,
                                                                      const char *fn)
{
    utc_status_t rc = utc__gdata_check(gd, fn);
    if (rc != UTC_OK)
        return rc;
    if (rank < 0 || rank >= gd->nranks)
        return utc__error(UTC_ERR_OUT_OF_RANGE,
                          "%s: rank %d is not a rank of task '%s' (group ranks 0 .. %d)", fn, rank,
                          utc_task_name(gd->task), gd->nranks - 1);
    return utc__gdata_check_block(gd, start, n, buf, fn);
}

/* Everything an access needs checked, before anything is issued: one inlined test on the
 * hot path, the reasons out of line. */
static inline __attribute__((always_inline)) utc_status_t remote_check(const utc_gdata_t *gd,
                                                                       int rank, size_t start,
                                                                       size_t n, const void *buf,
                                                                       const char *fn)
{
    if (gd && gd->magic == UTC__GDATA_MAGIC && utc__gs_in_task(gd->task) &&
        (unsigned)rank < (unsigned)gd->nranks && start < gd->count && n >= 1 &&
        n <= gd->count - start && buf)
        return UTC_OK;
    return remote_check_slow(gd, rank, start, n, buf, fn);
}

static utc_status_t remote_get(const utc_gdata_t *gd, int rank, size_t start, size_t n, void *dst)
{
    char *p = dst;
    size_t disp = gd->offset + start * gd->elem_size;
    size_t left = n * gd->elem_size;
    while (left > 0) {
        int len = (int)(left < GS_CHUNK ? left : GS_CHUNK);
        int err = MPI_Get(p, len, MPI_BYTE, rank, (MPI_Aint)disp, len, MPI_BYTE, gd->win);
        if (err == MPI_SUCCESS)
            err = MPI_Win_flush_local(rank, gd->win);
        if (err != MPI_SUCCESS)
            return utc__mpi_error(err, "MPI_Get (utc_gdata_rload)");
        p += len;
        disp += (size_t)len;
        left -= (size_t)len;
    }
    return UTC_OK;
}

static utc_status_t remote_put(const utc_gdata_t *gd, int rank, size_t start, size_t n,
                               const void *src)
{
    size_t disp = gd->offset + start * gd->elem_size;
    size_t left = n * gd->elem_size;
    int err = MPI_SUCCESS;
    if (left <= GS_STAGE_MAX) {
        char *slice = gs_stage_slice(gd->win, left, &err);
        if (slice) {
            memcpy(slice, src, left);
            int len = (int)left;
            err = MPI_Put(slice, len, MPI_BYTE, rank, (MPI_Aint)disp, len, MPI_BYTE, gd->win);
            return err == MPI_SUCCESS ? UTC_OK : utc__mpi_error(err, "MPI_Put (utc_gdata_rstore)");
        }
        if (err != MPI_SUCCESS)
            return utc__mpi_error(err, "MPI_Win_flush_local_all (utc_gdata_rstore)");
    }
    const char *p = src;
    while (left > 0) {
        int len = (int)(left < GS_CHUNK ? left : GS_CHUNK);
        err = MPI_Put(p, len, MPI_BYTE, rank, (MPI_Aint)disp, len, MPI_BYTE, gd->win);
        if (err == MPI_SUCCESS)
            err = MPI_Win_flush_local(rank, gd->win);
        if (err != MPI_SUCCESS)
            return utc__mpi_error(err, "MPI_Put (utc_gdata_rstore)");
        p += len;
        disp += (size_t)len;
        left -= (size_t)len;
    }
    return UTC_OK;
}

utc_status_t utc_gdata_rload(utc_gdata_t *gd, int rank, size_t index, void *dst)
{
    utc_status_t rc = remote_check(gd, rank, index, 1, dst, "utc_gdata_rload");
    return rc != UTC_OK
               ? rc
               : UTC__PROF_CALL(UTC__EV_RMA_LOAD, gd->task->impl->id, gd->elem_size, -1, rank,
                                UTC__WAIT_CALL(UTC__WAIT_RMA, gd->task->impl->id, -1, rank,
                                               gd->task->impl->ops->name,
                                               remote_get(gd, rank, index, 1, dst)));
}

utc_status_t utc_gdata_rstore(utc_gdata_t *gd, int rank, size_t index, const void *src)
{
    utc_status_t rc = remote_check(gd, rank, index, 1, src, "utc_gdata_rstore");
    return rc != UTC_OK ? rc
                        : UTC__PROF_CALL(UTC__EV_RMA_STORE, gd->task->impl->id, gd->elem_size, -1,
                                         rank, remote_put(gd, rank, index, 1, src));
}

utc_status_t utc_gdata_rload_block(utc_gdata_t *gd, int rank, size_t start, size_t n, void *dst)
{
    utc_status_t rc = remote_check(gd, rank, start, n, dst, "utc_gdata_rload_block");
    return rc != UTC_OK
               ? rc
               : UTC__PROF_CALL(UTC__EV_RMA_LOAD, gd->task->impl->id, n * gd->elem_size, -1, rank,
                                UTC__WAIT_CALL(UTC__WAIT_RMA, gd->task->impl->id, -1, rank,
                                               gd->task->impl->ops->name,
                                               remote_get(gd, rank, start, n, dst)));
}

utc_status_t utc_gdata_rstore_block(utc_gdata_t *gd, int rank, size_t start, size_t n,
                                    const void *src)
{
    utc_status_t rc = remote_check(gd, rank, start, n, src, "utc_gdata_rstore_block");
    return rc != UTC_OK ? rc
                        : UTC__PROF_CALL(UTC__EV_RMA_STORE, gd->task->impl->id, n * gd->elem_size,
                                         -1, rank, remote_put(gd, rank, start, n, src));
}

/* ---- atomics ---- */

static utc_status_t atomic_check(const utc_gdata_t *gd, int rank, size_t index, const char *fn)
{
    int64_t dummy;
    utc_status_t rc = remote_check(gd, rank, index, 1, &dummy, fn);
    if (rc != UTC_OK)
        return rc;
    if (gd->elem_size != sizeof(int64_t))
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: atomics need 8-byte (int64_t) elements; this object's are %zu "
                          "bytes",
                          fn, gd->elem_size);
    return UTC_OK;
}

/* After an atomic on element `index` of `rank`'s part, complete there: wake the threads
 * that sleep on it in utc_gdata_wait_until (on a shared window; core/wake.h). */
static void wake_element(const utc_gdata_t *gd, int rank, size_t index)
{
    utc__gs_wake_t *w = utc__gs_wake_of(gd->gs, rank);
    if (w)
        utc__gs_wake(utc__gs_wake_slot(w, gd->offset + index * sizeof(int64_t)));
}

utc_status_t utc_gdata_fetch_add(utc_gdata_t *gd, int rank, size_t index, int64_t value,
                                 int64_t *old)
{
    static const char fn[] = "utc_gdata_fetch_add";
    utc_status_t rc = atomic_check(gd, rank, index, fn);
    if (rc != UTC_OK)
        return rc;
    int64_t result = 0;
    uint64_t prof_t0 = utc__prof_stamp();
    int err = MPI_Fetch_and_op(&value, &result, MPI_INT64_T, rank,
                               (MPI_Aint)(gd->offset + index * sizeof(int64_t)), MPI_SUM, gd->win);
    if (err == MPI_SUCCESS)
        err = MPI_Win_flush(rank, gd->win);
    if (err != MPI_SUCCESS)
        return utc__mpi_error(err, "MPI_Fetch_and_op (utc_gdata_fetch_add)");
    wake_element(gd, rank, index);
    if (old)
        *old = result;
    UTC__PROF_LEAF(UTC__EV_RMA_ATOMIC, prof_t0, gd->task->impl->id, 8, -1, rank);
    return UTC_OK;
}

utc_status_t utc_gdata_compare_swap(utc_gdata_t *gd, int rank, size_t index, int64_t compare,
                                    int64_t value, int64_t *old)
{
    static const char fn[] = "utc_gdata_compare_swap";
    utc_status_t rc = atomic_check(gd, rank, index, fn);
    if (rc != UTC_OK)
        return rc;
    int64_t result = 0;
    uint64_t prof_t0 = utc__prof_stamp();
    int err = MPI_Compare_and_swap(&value, &compare, &result, MPI_INT64_T, rank,
                                   (MPI_Aint)(gd->offset + index * sizeof(int64_t)), gd->win);
    if (err == MPI_SUCCESS)
        err = MPI_Win_flush(rank, gd->win);
    if (err != MPI_SUCCESS)
        return utc__mpi_error(err, "MPI_Compare_and_swap (utc_gdata_compare_swap)");
    wake_element(gd, rank, index);
    if (old)
        *old = result;
    UTC__PROF_LEAF(UTC__EV_RMA_ATOMIC, prof_t0, gd->task->impl->id, 8, -1, rank);
    return UTC_OK;
}

/* ---- completion and synchronization ---- */

utc_status_t utc_gdata_quiet(utc_gdata_t *gd)
{
    utc_status_t rc = utc__gdata_check(gd, "utc_gdata_quiet");
    if (rc != UTC_OK)
        return rc;
    int err = UTC__PROF_CALL(UTC__EV_RMA_QUIET, gd->task->impl->id, -1, -1, -1,
                             MPI_Win_flush_all(gd->win));
    if (err != MPI_SUCCESS)
        return utc__mpi_error(err, "MPI_Win_flush_all (utc_gdata_quiet)");
    gs_stage_reset(gd->win);
    /* the stores are complete: wake whoever sleeps on an element they may have set
     * (utc_gdata_wait_until) */
    utc__gs_wake_all(gd->gs);
    return UTC_OK;
}

utc_status_t utc_gdata_barrier(utc_gdata_t *gd)
{
    utc_status_t rc = utc__gdata_check(gd, "utc_gdata_barrier");
    if (rc != UTC_OK)
        return rc;
    utc__gs_task_t *gs = gd->gs;
    uint64_t prof_t0 = utc__prof_stamp();
    /* Once every local thread has arrived, all their stores are issued: one flush_all then
     * completes them all (flushes are per process, not per thread). */
    utc__wait_begin(UTC__WAIT_RMA_BARRIER, gd->task->impl->id, -1, -1, gd->task->impl->ops->name);
    bool leader = utc__gs_team_enter(gs);
    if (leader) {
        int err = MPI_Win_flush_all(gs->win);
        if (err == MPI_SUCCESS)
            err = MPI_Win_sync(gs->win); /* our local stores, public for remote loads */
        if (err != MPI_SUCCESS) {
            rc = utc__mpi_error(err, "MPI_Win_flush_all (utc_gdata_barrier)");
        } else {
            MPI_Request req;
            err = MPI_Ibarrier(gs->comm, &req);
            rc = err == MPI_SUCCESS ? utc__mpi_wait(&req, MPI_STATUS_IGNORE, -1.0)
                                    : utc__mpi_error(err, "MPI_Ibarrier (utc_gdata_barrier)");
            if (rc == UTC_OK)
                MPI_Win_sync(gs->win); /* others' stores, visible to our local loads */
        }
    }
    rc = UTC__PROF_LEAF_VAL(UTC__EV_RMA_BARRIER, prof_t0, gd->task->impl->id, -1, -1, -1,
                            utc__gs_team_leave(gs, leader, rc));
    utc__wait_end();
    if (rc == UTC_OK)
        gs_stage_reset(gs->win); /* the leader's flush_all came after our last put */
    return rc;
}
