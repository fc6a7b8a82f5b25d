/*
 * gshared core: waking signal waiters across the processes of a node (core/wake.c owns it).
 *
 * On a window in shared memory (all the task's ranks on one node) each rank's window
 * memory ends, past the `size` bytes the allocator hands out, with one wake record that
 * every rank maps (core/window.c reserves it). A thread that waits for an element of its
 * rank's part (ops/signal.c) and has polled long enough sleeps on a slot of that record,
 * a futex word picked by the element's place, shared between processes; a rank that
 * stores the element bumps the word and wakes the slot when the record says someone
 * sleeps there. A 64-bit element cannot be a futex word itself (futexes are 32-bit and
 * compare one half only), hence the separate word.
 *
 * The protocol is a Dekker pair. The sleeper reads the slot's seq, counts itself in the
 * slot's (and the record's) sleepers, then, after a heavy global fence, looks at the
 * element once more and sleeps only while seq is unchanged. The waker stores the element,
 * then, after a light global fence, reads sleepers, and if there are any bumps seq and
 * wakes. Either the sleeper's look sees the store, or the waker sees the sleeper counted
 * and its bump either keeps the sleeper from sleeping or wakes it: no wake-up is lost.
 * The fences are base/sync.h's asymmetric pair across processes: the waker's, on every
 * signal, costs a compiler barrier (a full fence, or a seq_cst store, waits for the
 * store buffer to drain behind the block just copied: ~10 ns, 1.7% of a Task Bench step
 * at 2 ranks and -iter 256); the sleeper's, once per sleep, is a membarrier system call.
 */
#ifndef UTC_GSHARED_CORE_WAKE_H
#define UTC_GSHARED_CORE_WAKE_H

#include <stdatomic.h>
#include <stddef.h>

#include "base/sync.h"
#include "core/window.h"

/* Slots per rank: elements whose displacement (in 8-byte words) differs modulo this never
 * share one. */
#define UTC__GS_WAKE_SLOTS 64

typedef struct utc__gs_wake_slot {
    atomic_uint seq;      /* the futex word: bumped by each waker that finds sleepers */
    atomic_uint sleepers; /* threads of this rank asleep on it, or about to be */
} utc__gs_wake_slot_t;

typedef struct utc__gs_wake {
    /* all the slots' sleepers: for a waker that does not know which element it stored
     * (utc_gdata_quiet after rstores) */
    atomic_uint sleepers;
    char pad[60];
    utc__gs_wake_slot_t slot[UTC__GS_WAKE_SLOTS];
} utc__gs_wake_t;

/* Bytes a shared window reserves for it on each rank (a multiple of 64). */
#define UTC__GS_WAKE_BYTES ((sizeof(utc__gs_wake_t) + 63) / 64 * 64)

/* Rank `rank`'s wake record, or NULL when the window is not in shared memory. */
static inline utc__gs_wake_t *utc__gs_wake_of(const utc__gs_task_t *gs, int rank)
{
    return gs->wake_off ? (utc__gs_wake_t *)(gs->peer_base[rank] + gs->wake_off) : NULL;
}

/* The slot of the element at byte displacement `disp` of a rank's window. */
static inline utc__gs_wake_slot_t *utc__gs_wake_slot(utc__gs_wake_t *w, size_t disp)
{
    return &w->slot[(disp / 8) % UTC__GS_WAKE_SLOTS];
}

/* The out-of-line part of utc__gs_wake: bump the slot's word and wake its sleepers. */
void utc__gs_wake_slow(utc__gs_wake_slot_t *s);

/* The waker's half, after a store of the element: wake the slot's sleepers, if any. The
 * common case, nobody asleep, is a compiler barrier and one load. */
static inline void utc__gs_wake(utc__gs_wake_slot_t *s)
{
    /* the light side of the pair with utc__gs_sleep's heavy fence: the store before the
     * read of the sleepers */
    utc__fence_global_light();
    /* relaxed: ordered by the fences */
    if (__builtin_expect(atomic_load_explicit(&s->sleepers, memory_order_relaxed) != 0, 0))
        utc__gs_wake_slow(s);
}

/* Wake every sleeper of every rank of gs (after stores whose elements the caller does not
 * know). No-op on a window outside shared memory. */
void utc__gs_wake_all(const utc__gs_task_t *gs);

/*
 * The sleeper's half, once it has polled long enough: sleep on the slot of the element at
 * displacement `disp` (`elem`, in this rank's part; w this rank's record) while the
 * element still holds `old`, at most max_s seconds: a sleep is bounded so that stores
 * that do not wake (a local store, through utc_gdata_ptr) are still seen. May return
 * early. The caller looks at the element again.
 */
void utc__gs_sleep(utc__gs_wake_t *w, size_t disp, const _Atomic int64_t *elem, int64_t old,
                   double max_s);

#endif /* UTC_GSHARED_CORE_WAKE_H */
