/*
 * Remote access to global shared data: loads and stores on any rank of the task, atomics,
 * quiet and the task-wide barrier. Every call is checked before anything is issued; the
 * window is locked (lock_all) for the task's whole life, so each access is one MPI call
 * plus the completion the operation promises.
 *
 * Completion, with many threads of a rank on one window (MPI_THREAD_MULTIPLE):
 * - rload uses MPI_Rget and waits on its own request: the thread waits for its data only,
 *   not for other threads' traffic to the same target (which MPI_Win_flush_local would).
 * - rstore uses MPI_Rput and waits for local completion, so `src` is free on return; the
 *   store is remotely complete at the next MPI_Win_flush_all (quiet or barrier), which
 *   completes every thread's operations of the process.
 * - atomics flush their target: the result is in hand and the update visible on return.
 */
#include <limits.h>
#include <string.h>

#include "gshared_internal.h"

/* Largest piece moved by one MPI call (counts are int). */
#define GS_CHUNK ((size_t)1 << 30)

static utc_status_t remote_check(const utc_gdata_t *gd, int rank, size_t start, size_t n,
                                 const void *buf, const char *fn)
{
    utc_status_t rc = utc__gdata_check(gd, fn);
    if (rc != UTC_OK)
        return rc;
    if (rank < 0 || rank >= gd->nranks)
        return utc__error(UTC_ERR_OUT_OF_RANGE,
                          "%s: rank %d is not a rank of task '%s' (group ranks 0 .. %d)", fn,
                          rank, utc_task_name(gd->task), gd->nranks - 1);
    if (n == 0 && start <= gd->count)
        return UTC_OK;
    rc = utc__gdata_check_range(gd, start, n, fn);
    if (rc != UTC_OK)
        return rc;
    if (!buf)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: the buffer is NULL", fn);
    return UTC_OK;
}

static utc_status_t remote_get(const utc_gdata_t *gd, int rank, size_t start, size_t n,
                               void *dst)
{
    char *p = dst;
    size_t disp = gd->offset + start * gd->elem_size;
    size_t left = n * gd->elem_size;
    while (left > 0) {
        int len = (int)(left < GS_CHUNK ? left : GS_CHUNK);
        MPI_Request req;
        int err = MPI_Rget(p, len, MPI_BYTE, rank, (MPI_Aint)disp, len, MPI_BYTE, gd->win, &req);
        if (err != MPI_SUCCESS)
            return utc__mpi_error(err, "MPI_Rget (utc_gdata_rload)");
        utc_status_t rc = utc__mpi_wait(&req, MPI_STATUS_IGNORE, -1.0);
        if (rc != UTC_OK)
            return rc;
        p += len;
        disp += (size_t)len;
        left -= (size_t)len;
    }
    return UTC_OK;
}

static utc_status_t remote_put(const utc_gdata_t *gd, int rank, size_t start, size_t n,
                               const void *src)
{
    const char *p = src;
    size_t disp = gd->offset + start * gd->elem_size;
    size_t left = n * gd->elem_size;
    while (left > 0) {
        int len = (int)(left < GS_CHUNK ? left : GS_CHUNK);
        MPI_Request req;
        int err = MPI_Rput(p, len, MPI_BYTE, rank, (MPI_Aint)disp, len, MPI_BYTE, gd->win, &req);
        if (err != MPI_SUCCESS)
            return utc__mpi_error(err, "MPI_Rput (utc_gdata_rstore)");
        utc_status_t rc = utc__mpi_wait(&req, MPI_STATUS_IGNORE, -1.0);
        if (rc != UTC_OK)
            return rc;
        p += len;
        disp += (size_t)len;
        left -= (size_t)len;
    }
    return UTC_OK;
}

utc_status_t utc_gdata_rload(utc_gdata_t *gd, int rank, size_t index, void *dst)
{
    utc_status_t rc = remote_check(gd, rank, index, 1, dst, "utc_gdata_rload");
    return rc != UTC_OK ? rc : remote_get(gd, rank, index, 1, dst);
}

utc_status_t utc_gdata_rstore(utc_gdata_t *gd, int rank, size_t index, const void *src)
{
    utc_status_t rc = remote_check(gd, rank, index, 1, src, "utc_gdata_rstore");
    return rc != UTC_OK ? rc : remote_put(gd, rank, index, 1, src);
}

utc_status_t utc_gdata_rload_block(utc_gdata_t *gd, int rank, size_t start, size_t n,
                                   void *dst)
{
    utc_status_t rc = remote_check(gd, rank, start, n, dst, "utc_gdata_rload_block");
    return rc != UTC_OK ? rc : remote_get(gd, rank, start, n, dst);
}

utc_status_t utc_gdata_rstore_block(utc_gdata_t *gd, int rank, size_t start, size_t n,
                                    const void *src)
{
    utc_status_t rc = remote_check(gd, rank, start, n, src, "utc_gdata_rstore_block");
    return rc != UTC_OK ? rc : remote_put(gd, rank, start, n, src);
}

/* ---- atomics ---- */

static utc_status_t atomic_check(const utc_gdata_t *gd, int rank, size_t index,
                                 const char *fn)
{
    int64_t dummy;
    utc_status_t rc = remote_check(gd, rank, index, 1, &dummy, fn);
    if (rc != UTC_OK)
        return rc;
    if (gd->elem_size != sizeof(int64_t))
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: atomics need 8-byte (int64_t) elements; this object's are %zu "
                          "bytes", fn, gd->elem_size);
    return UTC_OK;
}

utc_status_t utc_gdata_fetch_add(utc_gdata_t *gd, int rank, size_t index, int64_t value,
                                 int64_t *old)
{
    static const char fn[] = "utc_gdata_fetch_add";
    utc_status_t rc = atomic_check(gd, rank, index, fn);
    if (rc != UTC_OK)
        return rc;
    int64_t result = 0;
    int err = MPI_Fetch_and_op(&value, &result, MPI_INT64_T, rank,
                               (MPI_Aint)(gd->offset + index * sizeof(int64_t)), MPI_SUM,
                               gd->win);
    if (err == MPI_SUCCESS)
        err = MPI_Win_flush(rank, gd->win);
    if (err != MPI_SUCCESS)
        return utc__mpi_error(err, "MPI_Fetch_and_op (utc_gdata_fetch_add)");
    if (old)
        *old = result;
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
    int err = MPI_Compare_and_swap(&value, &compare, &result, MPI_INT64_T, rank,
                                   (MPI_Aint)(gd->offset + index * sizeof(int64_t)), gd->win);
    if (err == MPI_SUCCESS)
        err = MPI_Win_flush(rank, gd->win);
    if (err != MPI_SUCCESS)
        return utc__mpi_error(err, "MPI_Compare_and_swap (utc_gdata_compare_swap)");
    if (old)
        *old = result;
    return UTC_OK;
}

/* ---- completion and synchronization ---- */

utc_status_t utc_gdata_quiet(utc_gdata_t *gd)
{
    utc_status_t rc = utc__gdata_check(gd, "utc_gdata_quiet");
    if (rc != UTC_OK)
        return rc;
    int err = MPI_Win_flush_all(gd->win);
    return err == MPI_SUCCESS ? UTC_OK : utc__mpi_error(err, "MPI_Win_flush_all (utc_gdata_quiet)");
}

utc_status_t utc_gdata_barrier(utc_gdata_t *gd)
{
    utc_status_t rc = utc__gdata_check(gd, "utc_gdata_barrier");
    if (rc != UTC_OK)
        return rc;
    utc__gs_task_t *gs = gd->gs;
    /* Once every local thread has arrived, all their stores are issued: one flush_all then
     * completes them all (flushes are per process, not per thread). */
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
    return utc__gs_team_leave(gs, leader, rc);
}
