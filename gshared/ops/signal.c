/*
 * Signals on global shared data: a producer-consumer handoff between ranks without a
 * barrier of the whole task. The producer stores a block and then a signal element on the
 * consumer's rank (utc_gdata_rstore_signal, or its stores, a quiet, and a store of the
 * element); the consumer waits for the element's value (utc_gdata_wait_until), and then
 * sees the block.
 *
 * Storing: on a window in shared memory (one node) the producer stores directly into the
 * target's part, mapped here (core/window.h's peer_base): a memcpy, then a release store of
 * the element, which no load that acquires it can see before the block. Elsewhere: MPI_Put
 * of the block, MPI_Win_flush of the target (complete there), then the element with
 * MPI_Accumulate(MPI_REPLACE) (atomic per element) and another flush. Either way both are
 * complete at the target on return.
 *
 * The element is in this rank's own window memory, so waiting is a local load in a loop:
 * no MPI call per look on a window in shared memory (one node), MPI_Win_sync before each
 * look otherwise (it brings remote updates into the copy local loads see; the rank's
 * progress thread moves them for transports that need the target's help). After the
 * value is seen, MPI_Win_sync orders it before the caller's later loads of the window
 * (MPI's rule for seeing remote updates with local loads).
 *
 * Waiting costs little: the runtime's back-off (base/sync.h's utc__backoff_step: spin
 * ~50 us, yield until 0.2 ms, then sleep in doubling steps of at most 1 ms).
 */
#include <stdatomic.h>
#include <string.h>

#include "base/sync.h"
#include "base/wait_hook.h"
#include "observe/trace.h"
#include "data/gdata.h"

static bool compare(int64_t v, utc_cmp_t cmp, int64_t value)
{
    switch (cmp) {
    case UTC_CMP_EQ:
        return v == value;
    case UTC_CMP_NE:
        return v != value;
    case UTC_CMP_GT:
        return v > value;
    case UTC_CMP_GE:
        return v >= value;
    case UTC_CMP_LT:
        return v < value;
    case UTC_CMP_LE:
        return v <= value;
    }
    return false;
}

/* A signal element: a live object of the caller's task with 8-byte elements, `index` in
 * range. */
static utc_status_t signal_check(const utc_gdata_t *gd, size_t index, const char *fn)
{
    utc_status_t rc = utc__gdata_check(gd, fn);
    if (rc != UTC_OK)
        return rc;
    if ((rc = utc__gdata_check_range(gd, index, 1, fn)) != UTC_OK)
        return rc;
    if (gd->elem_size != sizeof(int64_t))
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: a signal is an 8-byte (int64_t) element; this object's are %zu "
                          "bytes",
                          fn, gd->elem_size);
    return UTC_OK;
}

/* The loop: true once the element compares, false at the deadline (< 0: none). */
static bool wait_loop(const utc_gdata_t *gd, size_t index, utc_cmp_t cmp, int64_t value,
                      double deadline, int64_t *v, int *err)
{
    /* 8-byte aligned (the allocator aligns every part), read whole */
    const _Atomic int64_t *p = (const _Atomic int64_t *)(gd->local + index * sizeof(int64_t));
    bool shared = gd->gs->shared;
    for (utc__backoff_t b = UTC__BACKOFF_INIT;;) {
        if (!shared && (*err = MPI_Win_sync(gd->win)) != MPI_SUCCESS)
            return false;
        /* acquire: the producer's stores that came before the signal are seen after it */
        *v = atomic_load_explicit(p, memory_order_acquire);
        if (compare(*v, cmp, value))
            return (*err = MPI_Win_sync(gd->win)) == MPI_SUCCESS;
        /* the clock every 64 looks (a VM's clock read costs ~50 ns), the first included */
        if (deadline >= 0 && (b.iter & 63) == 0 && utc_wtime() >= deadline)
            return false;
        utc__backoff_step(&b);
    }
}

utc_status_t utc_gdata_wait_until(utc_gdata_t *gd, size_t index, utc_cmp_t cmp, int64_t value,
                                  double timeout_s, int64_t *seen)
{
    static const char fn[] = "utc_gdata_wait_until";
    utc_status_t rc = signal_check(gd, index, fn);
    if (rc != UTC_OK)
        return rc;
    if ((unsigned)cmp > UTC_CMP_LE)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: unknown comparison %d (UTC_CMP_EQ, _NE, _GT, _GE, _LT or _LE)",
                          fn, (int)cmp);
    if (timeout_s != timeout_s) /* NaN: neither a limit nor "for ever" */
        return utc__error(UTC_ERR_INVALID_ARG, "%s: the timeout is NaN (give seconds >= 0, or "
                          "a negative value to wait for ever)", fn);
    double deadline = timeout_s < 0 ? -1.0 : utc_wtime() + timeout_s;
    int64_t v = 0;
    int err = MPI_SUCCESS;
    uint64_t prof_t0 = utc__prof_stamp();
    bool met = UTC__WAIT_CALL(UTC__WAIT_RMA, gd->task->impl->id, -1, gd->rank,
                              gd->task->impl->ops->name,
                              wait_loop(gd, index, cmp, value, deadline, &v, &err));
    if (seen)
        *seen = v;
    if (err != MPI_SUCCESS)
        return utc__mpi_error(err, "MPI_Win_sync (utc_gdata_wait_until)");
    if (!met)
        return utc__error(UTC_ERR_TIMEOUT,
                          "%s: element %zu of this rank's part is %lld, which did not become "
                          "%s %lld within %.3f s",
                          fn, index, (long long)v,
                          (const char *const[]){"==", "!=", ">", ">=", "<", "<="}[cmp],
                          (long long)value, timeout_s);
    UTC__PROF_LEAF(UTC__EV_RMA_WAIT, prof_t0, gd->task->impl->id, 8, -1, gd->rank);
    return UTC_OK;
}

/* ---- storing a block and its signal ---- */

/* MPI's path: the block (in pieces of at most INT_MAX bytes), a flush of the target, the
 * element, another flush. */
static int put_signal_mpi(const utc_gdata_t *gd, int rank, size_t start, size_t n,
                          const void *src, size_t sig_index, int64_t sig_value)
{
    const char *p = src;
    size_t disp = gd->offset + start * sizeof(int64_t), left = n * sizeof(int64_t);
    int err = MPI_SUCCESS;
    while (left > 0 && err == MPI_SUCCESS) {
        int len = (int)(left < (size_t)1 << 30 ? left : (size_t)1 << 30);
        err = MPI_Put(p, len, MPI_BYTE, rank, (MPI_Aint)disp, len, MPI_BYTE, gd->win);
        p += len;
        disp += (size_t)len;
        left -= (size_t)len;
    }
    if (err == MPI_SUCCESS && n > 0)
        err = MPI_Win_flush(rank, gd->win);
    if (err == MPI_SUCCESS)
        err = MPI_Accumulate(&sig_value, 1, MPI_INT64_T, rank,
                             (MPI_Aint)(gd->offset + sig_index * sizeof(int64_t)), 1,
                             MPI_INT64_T, MPI_REPLACE, gd->win);
    if (err == MPI_SUCCESS)
        err = MPI_Win_flush(rank, gd->win);
    return err;
}

utc_status_t utc_gdata_rstore_signal(utc_gdata_t *gd, int rank, size_t start, size_t n,
                                     const void *src, size_t sig_index, int64_t sig_value)
{
    static const char fn[] = "utc_gdata_rstore_signal";
    utc_status_t rc = signal_check(gd, sig_index, fn);
    if (rc != UTC_OK)
        return rc;
    if ((unsigned)rank >= (unsigned)gd->nranks)
        return utc__error(UTC_ERR_OUT_OF_RANGE,
                          "%s: rank %d is not a rank of task '%s' (group ranks 0 .. %d)", fn, rank,
                          utc_task_name(gd->task), gd->nranks - 1);
    if ((rc = utc__gdata_check_block(gd, start, n, src, fn)) != UTC_OK)
        return rc;
    if (n > 0 && sig_index >= start && sig_index < start + n)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: the signal element %zu is inside the block %zu .. %zu it signals",
                          fn, sig_index, start, start + n - 1);
    uint64_t prof_t0 = utc__prof_stamp();
    char *const *peer = gd->gs->peer_base;
    if (peer) {
        char *part = peer[rank] + gd->offset;
        if (n > 0)
            memcpy(part + start * sizeof(int64_t), src, n * sizeof(int64_t));
        /* release: the block is visible before the element to whoever acquires it */
        atomic_store_explicit((_Atomic int64_t *)(part + sig_index * sizeof(int64_t)),
                              sig_value, memory_order_release);
    } else {
        int err = UTC__WAIT_CALL(UTC__WAIT_RMA, gd->task->impl->id, -1, rank,
                                 gd->task->impl->ops->name,
                                 put_signal_mpi(gd, rank, start, n, src, sig_index, sig_value));
        if (err != MPI_SUCCESS)
            return utc__mpi_error(err, "MPI_Put (utc_gdata_rstore_signal)");
    }
    UTC__PROF_LEAF(UTC__EV_RMA_STORE, prof_t0, gd->task->impl->id, (n + 1) * sizeof(int64_t),
                   -1, rank);
    return UTC_OK;
}
