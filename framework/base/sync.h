/*
 * Thread synchronization that sleeps instead of spinning: futex words, a spin-then-sleep
 * wait, a reusable barrier and a back-off helper. Linux (futex) only.
 */
#ifndef UTC_BASE_SYNC_H
#define UTC_BASE_SYNC_H

#include <stdatomic.h>
#include <stdbool.h>

/* Sleep while *word == expected (may return spuriously). */
void utc__futex_wait(atomic_uint *word, unsigned expected);
/* Sleep while *word == expected, at most timeout_s seconds; returns 0, or -1 on timeout. */
int utc__futex_wait_timeout(atomic_uint *word, unsigned expected, double timeout_s);
/* Wake up to n sleepers on word (n = INT_MAX: all). */
void utc__futex_wake(atomic_uint *word, int n);
/* The same across processes: for a word in memory that several processes map (a shared
 * RMA window), where the private futexes above would not meet. The timeout is at most
 * timeout_s seconds (< 0: none); returns 0, or -1 on timeout. */
int utc__futex_wait_shared(atomic_uint *word, unsigned expected, double timeout_s);
void utc__futex_wake_shared(atomic_uint *word, int n);

/*
 * Asymmetric fences, for a Dekker pair whose one side is hot (every call) and the other
 * rare (a destroy): the hot side orders its store before its load with
 * utc__fence_light(), the rare side with utc__fence_heavy(), which makes every running
 * thread of the process execute a full barrier (Linux membarrier, private expedited).
 * Without membarrier both are full fences. utc__fences_init() once, before any thread.
 */
extern bool utc__fence_asym;
void utc__fences_init(void);
void utc__fence_heavy(void);

static inline void utc__fence_light(void)
{
    if (__builtin_expect(utc__fence_asym, 1))
        atomic_signal_fence(memory_order_seq_cst); /* the compiler's order only */
    else
        atomic_thread_fence(memory_order_seq_cst);
}

/*
 * The same pair across processes, for a Dekker pair through memory that several processes
 * map (a shared RMA window): MEMBARRIER_CMD_GLOBAL_EXPEDITED makes every running thread of
 * every process registered for it execute a full barrier. utc__fence_global_init()
 * registers the calling process (once; any thread; before its first light fence);
 * utc__fence_global_light() is then a compiler barrier in a registered process and a full
 * fence in others; utc__fence_global_heavy() is the membarrier where the kernel has it
 * (whether or not this process is registered) and a full fence where it does not, in
 * which case no process can have registered.
 */
extern bool utc__fence_global_asym; /* this process is registered */
void utc__fence_global_init(void);
void utc__fence_global_heavy(void);

static inline void utc__fence_global_light(void)
{
    if (__builtin_expect(utc__fence_global_asym, 1))
        atomic_signal_fence(memory_order_seq_cst); /* the compiler's order only */
    else
        atomic_thread_fence(memory_order_seq_cst);
}

/* Spin up to spin_ns while *word == old; returns the last value seen (== old: timed out). */
unsigned utc__spin_while_eq(atomic_uint *word, unsigned old, unsigned long spin_ns);
/* Spin briefly (30 us), then sleep, until *word != old. Returns the new value. */
unsigned utc__wait_change(atomic_uint *word, unsigned old);
/* The same, counting itself in *sleepers while asleep, so that a waker may skip the
 * wake-up system call when nobody sleeps: the waker must change *word (seq_cst), then
 * read *sleepers (seq_cst) and call utc__futex_wake if it is non-zero. */
unsigned utc__wait_change_counted(atomic_uint *word, unsigned old, atomic_uint *sleepers);
/* The same with a spin of spin_ns before sleeping (0: sleep at once). */
unsigned utc__wait_change_spin(atomic_uint *word, unsigned old, atomic_uint *sleepers,
                               unsigned long spin_ns);

/* A reusable barrier for a fixed number of threads; waiters sleep after a short spin. */
typedef struct utc__barrier {
    atomic_uint arrived;
    atomic_uint generation;
    atomic_uint sleepers;
    unsigned count;
} utc__barrier_t;

void utc__barrier_init(utc__barrier_t *b, unsigned count);
/* Returns 1 in exactly one thread per round (the last to arrive), 0 in the others. */
int utc__barrier_wait(utc__barrier_t *b);

/* As utc__barrier_wait, but while it waits (every 20 ms once asleep) it asks gone(arg)
 * whether a thread that has not arrived never will; if so it withdraws from the round and
 * returns -1 (the barrier stays usable). Returns 1 or 0 as utc__barrier_wait when the
 * round completes. */
int utc__barrier_wait_or(utc__barrier_t *b, bool (*gone)(void *arg), void *arg);

/* Back-off for polling loops: spin, then yield, then sleep in growing steps (<= 1 ms). */
typedef struct utc__backoff {
    unsigned iter;
    unsigned sleep_ns;
    unsigned long long start_ns, last_ns;
} utc__backoff_t;

#define UTC__BACKOFF_INIT {0, 0, 0, 0}
void utc__backoff_step(utc__backoff_t *b);
/* The same without the spin: it yields from the first step (then sleeps as above). For a
 * waiter that shares its cores with what it waits for (more ranks or threads than cores),
 * where spinning keeps the thread it waits for off a core: a yield lets it run at once. */
void utc__backoff_step_yield(utc__backoff_t *b);
/* Whether b is still polling (spinning or yielding, its first 200 us): false once its steps
 * sleep. For a wait that has a sleep of its own to fall back on (a CUDA event). */
bool utc__backoff_polling(const utc__backoff_t *b);

/*
 * A lock for short critical sections on a hot path, never held while sleeping: one atomic
 * exchange to take it, one release store to give it back. A thread that finds it taken
 * waits with the back-off above (spin, yield, then sleep), so waiting costs no core for
 * long. On the MPI transport's polling path it took 16-18 ns off an 8 B message's one way
 * against pthread_mutex (doc/PERFORMANCE.md, issue 13).
 */
typedef struct utc__spinlock {
    atomic_int taken;
} utc__spinlock_t;

#define UTC__SPINLOCK_INIT {0}
void utc__spin_lock_wait(utc__spinlock_t *l); /* the contended path of utc__spin_lock */

static inline void utc__spin_lock(utc__spinlock_t *l)
{
    if (__builtin_expect(atomic_exchange_explicit(&l->taken, 1, memory_order_acquire), 0))
        utc__spin_lock_wait(l);
}

static inline void utc__spin_unlock(utc__spinlock_t *l)
{
    atomic_store_explicit(&l->taken, 0, memory_order_release);
}

/*
 * An owner lock: a spin lock biased to one thread, its owner, who takes and gives it back
 * with plain stores. On the hot path of a thread that alone uses a lock, every locked
 * instruction waits for the stores before it, a message just published to another core's
 * cache among them; the owner's take has none. The first thread that takes the lock with
 * `claim` becomes its owner (unless the bias is off). Any other thread takes the spin lock
 * inside and then waits for the owner to be out: the owner stores `busy` and, after a
 * light fence, looks at the spin lock (and at `owner`); the other thread holds the spin
 * lock and, after a heavy fence (utc__fence_heavy), looks at `busy`: an asymmetric Dekker
 * pair, so one of them sees the other. A thread that takes it with `claim` while another
 * owns it ends the bias for good (owner UTC__OLOCK_SHARED: from then on the lock is its
 * spin lock for every thread), so two threads that both use a lock often pay one heavy
 * fence, once; a take without `claim` (the rare users: a shutdown, a destroy) keeps the
 * bias and pays a heavy fence each time. A thread is known by utc__olock_self(): the
 * task thread context it runs as (utc__olock_id, set by the tasks layer, so a share that
 * the caller of utc_task_wait runs for a thread keeps that thread's locks), else itself.
 */
typedef struct utc__olock {
    utc__spinlock_t lock;
    _Atomic(const void *) owner; /* NULL: none yet; UTC__OLOCK_SHARED: the bias is off */
    atomic_uint busy;            /* the owner holds it (stored by the owner only) */
    atomic_bool fast;            /* the holder took it by the owner's take (stored by the
                                  * holder only, while it holds it) */
} utc__olock_t;

#define UTC__OLOCK_INIT {UTC__SPINLOCK_INIT, NULL, 0, 0}
#define UTC__OLOCK_SHARED ((const void *)1)

/* The identity utc__olock_self() gives a thread: its task context, or NULL (the thread). */
extern _Thread_local const void *utc__olock_id;
extern _Thread_local char utc__olock_token;

static inline const void *utc__olock_self(void)
{
    const void *id = utc__olock_id;
    return id ? id : &utc__olock_token;
}

/* The owner's take, without a locked instruction: true when held. */
static inline bool utc__olock_owner_try(utc__olock_t *l, const void *me)
{
    /* relaxed: `owner` changes only under the spin lock, and the owner's own store is
     * its own to see; the look after the fence below catches an end of the bias */
    if (atomic_load_explicit(&l->owner, memory_order_relaxed) != me)
        return false;
    atomic_store_explicit(&l->busy, 1, memory_order_relaxed);
    utc__fence_light(); /* the light side: `busy` before the looks below */
    /* acquire: the writes of the last holder of the spin lock (its release) */
    if (!atomic_load_explicit(&l->lock.taken, memory_order_acquire) &&
        atomic_load_explicit(&l->owner, memory_order_relaxed) == me) {
        atomic_store_explicit(&l->fast, true, memory_order_relaxed); /* the holder's own */
        return true;
    }
    atomic_store_explicit(&l->busy, 0, memory_order_release);
    return false;
}

/* Under l's spin lock: a thread other than the owner waits for the owner to be out (the
 * heavy side); with `claim`, it becomes the owner of an unowned lock or ends the bias. */
void utc__olock_settle(utc__olock_t *l, const void *me, bool claim);

/* Take l (waiting for it). */
static inline void utc__olock_lock(utc__olock_t *l, bool claim)
{
    const void *me = utc__olock_self();
    if (__builtin_expect(utc__olock_owner_try(l, me), 1))
        return;
    utc__spin_lock(&l->lock);
    utc__olock_settle(l, me, claim);
    atomic_store_explicit(&l->fast, false, memory_order_relaxed);
}

/* Take l if no other thread holds it: true when taken. */
static inline bool utc__olock_trylock(utc__olock_t *l, bool claim)
{
    const void *me = utc__olock_self();
    if (__builtin_expect(utc__olock_owner_try(l, me), 1))
        return true;
    if (atomic_exchange_explicit(&l->lock.taken, 1, memory_order_acquire))
        return false;
    utc__olock_settle(l, me, claim);
    atomic_store_explicit(&l->fast, false, memory_order_relaxed);
    return true;
}

/* Give l back (the caller holds it). */
static inline void utc__olock_unlock(utc__olock_t *l)
{
    /* relaxed: the holder's own store (the owner's bias may have ended meanwhile: it
     * gives back what it took) */
    if (atomic_load_explicit(&l->fast, memory_order_relaxed)) {
        /* release: the critical section before the next holder's take */
        atomic_store_explicit(&l->busy, 0, memory_order_release);
        return;
    }
    utc__spin_unlock(&l->lock);
}

/* One CPU relax hint for spin loops. */
static inline void utc__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif /* UTC_BASE_SYNC_H */
