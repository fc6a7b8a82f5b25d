/* Waking signal waiters across the processes of a node: the futex slots of a shared
 * window's wake records (core/wake.h says how). */
#include <limits.h>

#include "core/wake.h"

void utc__gs_wake_slow(utc__gs_wake_slot_t *s)
{
    /* seq_cst: a sleeper that read seq before this bump either sees the new value in the
     * kernel's check and does not sleep, or is queued already and woken below */
    atomic_fetch_add(&s->seq, 1);
    utc__futex_wake_shared(&s->seq, INT_MAX);
}

void utc__gs_wake_all(const utc__gs_task_t *gs)
{
    if (!gs->wake_off)
        return;
    /* the light side of the pair, as in utc__gs_wake */
    utc__fence_global_light();
    for (int r = 0; r < gs->nranks; r++) {
        utc__gs_wake_t *w = utc__gs_wake_of(gs, r);
        /* relaxed: ordered by the fences */
        if (atomic_load_explicit(&w->sleepers, memory_order_relaxed) == 0)
            continue;
        for (int i = 0; i < UTC__GS_WAKE_SLOTS; i++)
            if (atomic_load_explicit(&w->slot[i].sleepers, memory_order_relaxed) != 0)
                utc__gs_wake_slow(&w->slot[i]);
    }
}

void utc__gs_sleep(utc__gs_wake_t *w, size_t disp, const _Atomic int64_t *elem, int64_t old,
                   double max_s)
{
    utc__gs_wake_slot_t *s = utc__gs_wake_slot(w, disp);
    unsigned seq = atomic_load(&s->seq);
    atomic_fetch_add(&w->sleepers, 1);
    atomic_fetch_add(&s->sleepers, 1);
    /* the heavy side of the pair: our counts before the look, and any waker's store of the
     * element before its read of the counts */
    utc__fence_global_heavy();
    if (atomic_load(elem) == old)
        utc__futex_wait_shared(&s->seq, seq, max_s);
    atomic_fetch_sub(&s->sleepers, 1);
    atomic_fetch_sub(&w->sleepers, 1);
}
