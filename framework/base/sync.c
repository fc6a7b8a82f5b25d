/* Futex-based waiting: threads spin for a few microseconds, then sleep in the kernel. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <stdint.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/sync.h"

/* How long a waiter spins before it sleeps: long enough to catch a partner that is about
 * to arrive (a round trip through a mailbox or ring is a few microseconds), short enough
 * that idle threads cost nothing. */
#define SPIN_NS 30000
#define BACKOFF_SPIN_NS 50000
#define BACKOFF_YIELD_NS 200000

static long futex(atomic_uint *word, int op, unsigned val, const struct timespec *ts)
{
    return syscall(SYS_futex, (unsigned *)word, op, val, ts, NULL, 0);
}

void utc__futex_wait(atomic_uint *word, unsigned expected)
{
    futex(word, FUTEX_WAIT_PRIVATE, expected, NULL);
}

/* A futex wait of op (private or shared) for at most timeout_s seconds (< 0: none);
 * returns 0, or -1 on timeout. */
static int futex_wait_for(atomic_uint *word, int op, unsigned expected, double timeout_s)
{
    struct timespec ts, *tsp = NULL;
    if (timeout_s >= 0) {
        ts.tv_sec = (time_t)timeout_s;
        ts.tv_nsec = (long)((timeout_s - (double)ts.tv_sec) * 1e9);
        tsp = &ts;
    }
    if (futex(word, op, expected, tsp) == -1 && errno == ETIMEDOUT)
        return -1;
    return 0;
}

int utc__futex_wait_timeout(atomic_uint *word, unsigned expected, double timeout_s)
{
    return futex_wait_for(word, FUTEX_WAIT_PRIVATE, expected, timeout_s);
}

void utc__futex_wake(atomic_uint *word, int n) { futex(word, FUTEX_WAKE_PRIVATE, (unsigned)n, NULL); }

int utc__futex_wait_shared(atomic_uint *word, unsigned expected, double timeout_s)
{
    /* no FUTEX_PRIVATE_FLAG: the kernel keys the word by its page, so processes that map
     * it at different addresses meet on it */
    return futex_wait_for(word, FUTEX_WAIT, expected, timeout_s);
}

void utc__futex_wake_shared(atomic_uint *word, int n) { futex(word, FUTEX_WAKE, (unsigned)n, NULL); }

unsigned utc__spin_while_eq(atomic_uint *word, unsigned old, unsigned long spin_ns)
{
    uint64_t deadline = 0;
    unsigned v;
    /* acquire: pairs with the release store/increment of whoever changes the word, so
     * what they wrote before is visible to the caller once it sees the new value */
    for (unsigned i = 0;; i++) {
        v = atomic_load_explicit(word, memory_order_acquire);
        if (v != old)
            return v;
        /* a few microseconds of pure spinning, then yield between polls: with more
         * runnable threads than cores a pure spinner would keep the thread it waits
         * for off the core */
        if (i < 256) {
            utc__cpu_relax();
            continue;
        }
        sched_yield();
        uint64_t t = utc__clock_ns();
        if (!deadline)
            deadline = t + spin_ns;
        else if (t > deadline)
            return v;
    }
}

unsigned utc__wait_change_counted(atomic_uint *word, unsigned old, atomic_uint *sleepers)
{
    return utc__wait_change_spin(word, old, sleepers, SPIN_NS);
}

unsigned utc__wait_change_spin(atomic_uint *word, unsigned old, atomic_uint *sleepers,
                               unsigned long spin_ns)
{
    unsigned v = spin_ns ? utc__spin_while_eq(word, old, spin_ns) : atomic_load(word);
    if (v != old)
        return v;
    /* seq_cst increment then seq_cst re-check: a Dekker pair with the waker, which
     * changes the word (seq_cst) and then reads `sleepers` before deciding to wake */
    if (sleepers)
        atomic_fetch_add(sleepers, 1);
    while ((v = atomic_load(word)) == old)
        utc__futex_wait(word, old);
    if (sleepers)
        atomic_fetch_sub(sleepers, 1);
    return v;
}

unsigned utc__wait_change(atomic_uint *word, unsigned old)
{
    return utc__wait_change_counted(word, old, NULL);
}

void utc__barrier_init(utc__barrier_t *b, unsigned count)
{
    atomic_init(&b->arrived, 0);
    atomic_init(&b->generation, 0);
    atomic_init(&b->sleepers, 0);
    b->count = count;
}

int utc__barrier_wait(utc__barrier_t *b)
{
    if (b->count <= 1)
        return 1;
    /* acquire: the generation we wait to change must be read before we arrive */
    unsigned gen = atomic_load_explicit(&b->generation, memory_order_acquire);
    /* acq_rel: our earlier writes are released to the last arriver, and the last
     * arriver acquires everyone's before it opens the next generation */
    if (atomic_fetch_add_explicit(&b->arrived, 1, memory_order_acq_rel) + 1 == b->count) {
        atomic_store_explicit(&b->arrived, 0, memory_order_relaxed); /* ordered by the release below */
        /* seq_cst: releases everyone's writes to the waiters, and is the waker's half
         * of the Dekker pair with utc__wait_change_counted */
        atomic_fetch_add(&b->generation, 1);
        if (atomic_load(&b->sleepers))
            utc__futex_wake(&b->generation, INT_MAX);
        return 1;
    }
    utc__wait_change_counted(&b->generation, gen, &b->sleepers);
    return 0;
}

int utc__barrier_wait_or(utc__barrier_t *b, bool (*gone)(void *arg), void *arg)
{
    if (b->count <= 1)
        return 1;
    /* as utc__barrier_wait */
    unsigned gen = atomic_load_explicit(&b->generation, memory_order_acquire);
    if (atomic_fetch_add_explicit(&b->arrived, 1, memory_order_acq_rel) + 1 == b->count) {
        atomic_store_explicit(&b->arrived, 0, memory_order_relaxed);
        atomic_fetch_add(&b->generation, 1);
        if (atomic_load(&b->sleepers))
            utc__futex_wake(&b->generation, INT_MAX);
        return 1;
    }
    if (utc__spin_while_eq(&b->generation, gen, SPIN_NS) != gen)
        return 0;
    for (;;) {
        /* seq_cst count, then look: the Dekker pair with the opener's increment */
        atomic_fetch_add(&b->sleepers, 1);
        if (atomic_load(&b->generation) == gen)
            utc__futex_wait_timeout(&b->generation, gen, 0.02);
        atomic_fetch_sub(&b->sleepers, 1);
        if (atomic_load_explicit(&b->generation, memory_order_acquire) != gen)
            return 0;
        if (!gone(arg))
            continue;
        /* withdraw: possible while the round is short of its count (a full count is being
         * opened: then it completes, and we wait for it) */
        unsigned a = atomic_load(&b->arrived);
        while (a > 0 && a < b->count && atomic_load(&b->generation) == gen)
            if (atomic_compare_exchange_weak(&b->arrived, &a, a - 1))
                return -1;
    }
}

/* Spin for spin_ns, then yield until 200 us, then sleep doubling from 1 us to 1 ms. */
static void backoff(utc__backoff_t *b, uint64_t spin_ns)
{
    if (b->iter == 0)
        b->start_ns = utc__clock_ns();
    uint64_t waited = (b->iter & 15) == 0 ? utc__clock_ns() - b->start_ns : b->last_ns;
    b->last_ns = waited;
    if (waited < spin_ns) {
        utc__cpu_relax();
    } else if (waited < BACKOFF_YIELD_NS) {
        sched_yield();
    } else {
        b->sleep_ns = b->sleep_ns ? b->sleep_ns * 2 : 1000;
        if (b->sleep_ns > 1000000)
            b->sleep_ns = 1000000;
        struct timespec ts = {0, (long)b->sleep_ns};
        nanosleep(&ts, NULL);
    }
    b->iter++;
}

void utc__backoff_step(utc__backoff_t *b) { backoff(b, BACKOFF_SPIN_NS); }

void utc__backoff_step_yield(utc__backoff_t *b) { backoff(b, 0); }

bool utc__backoff_polling(const utc__backoff_t *b)
{
    /* the time waited as of the last step that read the clock, as utc__backoff_step uses */
    return b->last_ns < BACKOFF_YIELD_NS;
}

void utc__spin_lock_wait(utc__spinlock_t *l)
{
    utc__backoff_t b = UTC__BACKOFF_INIT;
    do {
        /* relaxed: only a hint to try the exchange again */
        while (atomic_load_explicit(&l->taken, memory_order_relaxed))
            utc__backoff_step(&b);
    } while (atomic_exchange_explicit(&l->taken, 1, memory_order_acquire));
}

/* ---- owner locks ---- */

_Thread_local const void *utc__olock_id;
_Thread_local char utc__olock_token;

void utc__olock_settle(utc__olock_t *l, const void *me, bool claim)
{
    /* relaxed: stored only under the spin lock, which this thread holds */
    const void *o = atomic_load_explicit(&l->owner, memory_order_relaxed);
    if (o == me || o == UTC__OLOCK_SHARED)
        return; /* no owner's take can be in flight */
    if (!o) {
        /* no owner yet: none can have taken it without the spin lock */
        if (claim)
            atomic_store_explicit(&l->owner, me, memory_order_relaxed);
        return;
    }
    if (claim) /* a second thread uses it on its hot path: the bias ends */
        atomic_store_explicit(&l->owner, UTC__OLOCK_SHARED, memory_order_relaxed);
    utc__fence_heavy(); /* the heavy side: the spin lock (and owner) before the look */
    /* acquire: the owner's critical section before ours */
    while (atomic_load_explicit(&l->busy, memory_order_acquire))
        utc__cpu_relax();
}

/* ---- asymmetric fences ---- */

bool utc__fence_asym;

void utc__fences_init(void)
{
#ifdef SYS_membarrier
    /* By name: the numbers were once written by hand, off by one bit (registering the
     * SYNC_CORE variant, refused with EPERM), so the light side stayed a full fence. */
    if (!utc__fence_asym) {
        long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0);
        utc__fence_asym =
            cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
            (cmds & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) &&
            syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0;
    }
#endif
}

bool utc__fence_global_asym;
static bool fence_global_kernel; /* the kernel has MEMBARRIER_CMD_GLOBAL_EXPEDITED */
static pthread_once_t fence_global_once = PTHREAD_ONCE_INIT;

static void fence_global_setup(void)
{
#ifdef SYS_membarrier
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0);
    fence_global_kernel = cmds > 0 && (cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
                          (cmds & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED);
    utc__fence_global_asym =
        fence_global_kernel &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0) == 0;
#endif
}

void utc__fence_global_init(void)
{
    pthread_once(&fence_global_once, fence_global_setup);
}

void utc__fence_global_heavy(void)
{
    utc__fence_global_init();
    /* seq_cst fence first: this thread's own earlier stores, whatever the kernel does */
    atomic_thread_fence(memory_order_seq_cst);
#ifdef SYS_membarrier
    if (fence_global_kernel && syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0) == 0)
        return;
#endif
    /* Without it no process registered (the same kernel), so every light side is a full
     * fence: the one above completes the pair. */
}

void utc__fence_heavy(void)
{
#ifdef SYS_membarrier
    if (utc__fence_asym && syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) == 0)
        return;
#endif
    atomic_thread_fence(memory_order_seq_cst);
}
