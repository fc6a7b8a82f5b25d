/*
 * Signals on global shared data: a producer-consumer handoff between ranks without a
 * barrier of the whole task. The producer stores a block and then a signal element on the
 * consumer's rank (utc_gdata_rstore_signal, or its stores, a quiet, and a store of the
 * element); the consumer waits for the element's value (utc_gdata_wait_until), and then
 * sees the block.
 *
 * Storing: on a window in shared memory (one node) the producer stores directly into the
 * target's part, mapped here (core/window.h's peer_base): a memcpy, then a release store of
 * the element, which no load that acquires it can see before the block, and a wake of its
 * sleepers if the target's wake record says there are any. Elsewhere: MPI_Put
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
 * Waiting costs little. On a shared window: poll for UTC_GSHARED_SIGNAL_POLL_US (default
 * 0.2 ms) with the runtime's back-off (base/sync.h: spin ~50 us then yield; yield from
 * the start when the task's threads on the node outnumber the CPUs, or the spinner keeps
 * the thread it waits for off a core: 3 ranks on 2 cores passed a token in 34.6 us a hop
 * that way, in 0.93 us yielding), then sleep on the element's slot in this rank's wake
 * record (core/wake.h), a futex shared between the processes, which every store path here
 * wakes (rstore_signal, quiet, the atomics), at most UTC_GSHARED_SIGNAL_SLEEP_US (1 ms) at
 * a time. Sleeping at once instead of yielding cost 10-12 us a hop (the wake-up's), so the
 * futex is for long waits: it wakes a sleeper in 20-80 us where 1 ms naps took 50-175.
 * Elsewhere: the back-off alone (spin, yield, sleep in doubling steps of <= 1 ms).
 */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sync.h"
#include "base/wait_hook.h"
#include "context/binding.h"
#include "observe/trace.h"
#include "core/wake.h"
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

/* What a wait_until waits for, for the watchdog (base/wait_hook.h): it names the element,
 * the comparison and the value, and what the waiter last saw, only when it reports. */
typedef struct {
    utc__wait_detail_t base;
    const utc_gdata_t *gd;
    size_t index;
    utc_cmp_t cmp;
    int64_t value;
    _Atomic int64_t last; /* the last value the waiter saw (relaxed: a report only) */
} signal_wait_t;

static_assert(offsetof(signal_wait_t, base) == 0, "the detail record comes first");

static const char *const cmp_op[] = {"==", "!=", ">", ">=", "<", "<="};

static void signal_describe(const utc__wait_detail_t *self, char *buf, size_t n)
{
    const signal_wait_t *w = (const signal_wait_t *)self;
    /* relaxed: the waiter's last look, told as it is */
    long long last = (long long)atomic_load_explicit(&w->last, memory_order_relaxed);
    snprintf(buf, n,
             "utc_gdata_wait_until on element %zu of this rank's part of the object at window "
             "offset %zu (%zu elements per rank): waits until it is %s %lld, last seen %lld",
             w->index, w->gd->offset, w->gd->count, cmp_op[w->cmp], (long long)w->value, last);
}

/* More threads of the task on this node (its ranks, all here on a shared window, times
 * this rank's threads) than the process has CPUs: a waiter then yields from its first look
 * instead of spinning, or it would keep the thread it waits for off a core. */
static bool crowded(const utc__gs_task_t *gs)
{
    static atomic_int cpus; /* the allowed CPUs, learnt once (relaxed: the same value) */
    int c = atomic_load_explicit(&cpus, memory_order_relaxed);
    if (!c) {
        c = utc__cpus_allowed();
        atomic_store_explicit(&cpus, c, memory_order_relaxed);
    }
    return (long)gs->nranks * (gs->nlocal > 0 ? gs->nlocal : 1) > c;
}

/*
 * On a shared window a waiter polls (spins, yields) for UTC_GSHARED_SIGNAL_POLL_US
 * microseconds (default 200, 0: sleeps at once), then sleeps on its wake slot until a
 * store of the element wakes it, but at most UTC_GSHARED_SIGNAL_SLEEP_US (default 1000)
 * at a time, so that stores that do not wake (a local store, through utc_gdata_ptr) are
 * still seen.
 */
typedef struct {
    uint64_t poll_ns;
    double sleep_s;
} signal_tuning_t;

/* An environment variable of microseconds in lo .. hi, or dflt (with a warning if bad). */
static long env_us(const char *name, long dflt, long lo, long hi)
{
    const char *env = getenv(name);
    if (!env || !*env)
        return dflt;
    char *end;
    long us = strtol(env, &end, 10);
    if (*end == '\0' && us >= lo && us <= hi)
        return us;
    utc_log(UTC_LOG_WARN, "%s='%s' is not %ld..%ld; using %ld", name, env, lo, hi, dflt);
    return dflt;
}

static signal_tuning_t signal_tuning;
static pthread_once_t signal_tuning_once = PTHREAD_ONCE_INIT;

static void read_tuning(void)
{
    signal_tuning.poll_ns = (uint64_t)env_us("UTC_GSHARED_SIGNAL_POLL_US", 200, 0, 60000000) * 1000;
    signal_tuning.sleep_s = (double)env_us("UTC_GSHARED_SIGNAL_SLEEP_US", 1000, 1, 60000000) * 1e-6;
}

/* The loop: true once the element compares, false at the deadline (< 0: none). */
static bool wait_loop(signal_wait_t *w, double deadline, int64_t *v, int *err)
{
    const utc_gdata_t *gd = w->gd;
    size_t disp = gd->offset + w->index * sizeof(int64_t);
    /* 8-byte aligned (the allocator aligns every part), read whole */
    const _Atomic int64_t *p = (const _Atomic int64_t *)(gd->gs->base + disp);
    bool shared = gd->gs->shared;
    /* on a shared window: this rank's wake record, to sleep on once polling is over */
    utc__gs_wake_t *wake = utc__gs_wake_of(gd->gs, gd->rank);
    bool yield = wake && crowded(gd->gs);
    if (wake)
        pthread_once(&signal_tuning_once, read_tuning); /* the tuning, read once */
    int64_t last = atomic_load_explicit(&w->last, memory_order_relaxed);
    for (utc__backoff_t b = UTC__BACKOFF_INIT;;) {
        if (!shared && (*err = MPI_Win_sync(gd->win)) != MPI_SUCCESS)
            return false;
        /* acquire: the producer's stores that came before the signal are seen after it */
        *v = atomic_load_explicit(p, memory_order_acquire);
        if (compare(*v, w->cmp, w->value))
            return (*err = MPI_Win_sync(gd->win)) == MPI_SUCCESS;
        if (*v != last) /* relaxed: for the watchdog's report only */
            atomic_store_explicit(&w->last, last = *v, memory_order_relaxed);
        /* the clock every 64 looks (a VM's clock read costs ~50 ns), the first included */
        if (deadline >= 0 && (b.iter & 63) == 0 && utc_wtime() >= deadline)
            return false;
        /* polled long enough (as of the back-off's last clock read): sleep until a store of
         * the element wakes us */
        if (wake && b.last_ns >= signal_tuning.poll_ns) {
            double most = signal_tuning.sleep_s;
            double left = deadline < 0 ? most : deadline - utc_wtime();
            if (left <= 0)
                return false;
            utc__gs_sleep(wake, disp, p, *v, left < most ? left : most);
            b.iter = 64; /* the clock at the next look */
            continue;
        }
        if (yield)
            utc__backoff_step_yield(&b);
        else
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
    int64_t v = 0;
    int err = MPI_SUCCESS;
    uint64_t prof_t0 = utc__prof_stamp();
    bool met;
    const _Atomic int64_t *elem = (const _Atomic int64_t *)(gd->local + index * sizeof(int64_t));
    /* On one node a signal that came before the call costs one look: no clock read, no
     * wait to record. acquire: as wait_loop's looks. */
    if (gd->gs->shared &&
        compare(v = atomic_load_explicit(elem, memory_order_acquire), cmp, value)) {
        met = (err = MPI_Win_sync(gd->win)) == MPI_SUCCESS;
    } else {
        double deadline = timeout_s < 0 ? -1.0 : utc_wtime() + timeout_s;
        signal_wait_t w = {.base = {.describe = signal_describe},
                           .gd = gd,
                           .index = index,
                           .cmp = cmp,
                           .value = value};
        met = UTC__WAIT_CALL_DETAIL(UTC__WAIT_RMA, gd->task->impl->id, -1, gd->world_rank,
                                    gd->task->impl->ops->name, &w.base,
                                    wait_loop(&w, deadline, &v, &err));
    }
    if (seen)
        *seen = v;
    if (err != MPI_SUCCESS)
        return utc__mpi_error(err, "MPI_Win_sync (utc_gdata_wait_until)");
    if (!met)
        return utc__error(UTC_ERR_TIMEOUT,
                          "%s: element %zu of this rank's part is %lld, which did not become "
                          "%s %lld within %.3f s",
                          fn, index, (long long)v, cmp_op[cmp], (long long)value, timeout_s);
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
        /* release: the block is visible before the element to whoever acquires it; then
         * wake its sleepers, if any (the waker's half of core/wake.h's pair) */
        atomic_store_explicit((_Atomic int64_t *)(part + sig_index * sizeof(int64_t)), sig_value,
                              memory_order_release);
        utc__gs_wake(utc__gs_wake_slot(utc__gs_wake_of(gd->gs, rank),
                                       gd->offset + sig_index * sizeof(int64_t)));
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
