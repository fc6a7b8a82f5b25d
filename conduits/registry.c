/*
 * Conduits: the registry of live conduits (a handle's lookup, with a per-thread cache),
 * the conduit objects' pool, and their lifetime: requests' counts, destroy (collective),
 * utc_finalize's clean-up (doc/guide/lifetimes.md).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "conduit_internal.h"
#include "conduits_module.h"
#include "base/handle.h"

/* ---- registry of live conduits ---- */

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static utc_conduit_t *registry; /* by address, in creation order */
static int next_id;
/* Bumped by every destroy. A thread caches the conduits it has found live with the epoch
 * it saw, so the hot path checks a handle without taking the lock. */
atomic_uint utc__conduit_epoch;

#define REG_CACHE 4
static _Thread_local struct {
    const utc_conduit_t *h; /* a handle found current */
    unsigned epoch;
} reg_cache[REG_CACHE];
static _Thread_local unsigned reg_cache_next;

/* The conduit behind handle h (base/handle.h: the object's address and its generation),
 * or the error: a handle whose conduit was destroyed, even when its memory now holds a new
 * conduit, is refused. */
utc_status_t utc__conduit_get(const utc_conduit_t *h, const char *fn, utc_conduit_t **out)
{
    utc_status_t rc = utc__check_init(fn);
    if (rc != UTC_OK)
        return rc;
    if (!h)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: conduit is NULL", fn);
    utc_conduit_t *c = utc__handle_ptr(h);
    /* acquire: pairs with the release increment in utc_conduit_destroy; the epoch is read
     * before the lookup, so a destroy after it always changes what we cached */
    unsigned epoch = atomic_load_explicit(&utc__conduit_epoch, memory_order_acquire);
    for (int i = 0; i < REG_CACHE; i++) {
        if (reg_cache[i].h == h && reg_cache[i].epoch == epoch) {
            *out = c;
            return UTC_OK;
        }
    }
    utc_conduit_t *found;
    pthread_mutex_lock(&reg_lock);
    HASH_FIND_PTR(registry, &c, found);
    bool current = found && found->gen == utc__handle_gen(h);
    pthread_mutex_unlock(&reg_lock);
    if (!found)
        return utc__error(UTC_ERR_INVALID_HANDLE,
                          "%s: %p is not a live conduit (destroyed, or never created)", fn,
                          (const void *)h);
    if (!current)
        return utc__error(UTC_ERR_INVALID_HANDLE,
                          "%s: %p is a stale handle: its conduit was destroyed (the memory now "
                          "holds conduit %d, created later)", fn, (const void *)h, found->id);
    unsigned slot = reg_cache_next++ % REG_CACHE;
    reg_cache[slot].h = h;
    reg_cache[slot].epoch = epoch;
    *out = c;
    return UTC_OK;
}

int utc__conduit_new_id(void)
{
    pthread_mutex_lock(&reg_lock);
    int id = next_id++;
    pthread_mutex_unlock(&reg_lock);
    return id;
}

void utc__conduit_register(utc_conduit_t *c)
{
    pthread_mutex_lock(&reg_lock);
    c->self = c;
    HASH_ADD_PTR(registry, self, c);
    pthread_mutex_unlock(&reg_lock);
}

void utc__conduits_each(void (*fn)(utc_conduit_t *c, void *arg), void *arg)
{
    pthread_mutex_lock(&reg_lock);
    utc_conduit_t *c, *tmp;
    HASH_ITER(hh, registry, c, tmp) {
        fn(c, arg);
    }
    pthread_mutex_unlock(&reg_lock);
}

/* ---- the objects' pool and lifetime ---- */

/* Conduit objects are kept for reuse (under reg_lock) rather than freed: see `nreq`. */
static utc_conduit_t *pool;
/* Destroyed conduits that operations still refer to (under reg_lock); utc_finalize frees
 * what is left of them after the tasks are gone. */
static utc_conduit_t *closed_list;

static void closed_unlink(utc_conduit_t *c)
{
    if (!c->in_closed)
        return;
    if (c->closed_prev)
        c->closed_prev->closed_next = c->closed_next;
    else
        closed_list = c->closed_next;
    if (c->closed_next)
        c->closed_next->closed_prev = c->closed_prev;
    c->in_closed = false;
}

utc_conduit_t *utc__conduit_alloc(void)
{
    pthread_mutex_lock(&reg_lock);
    utc_conduit_t *c = pool;
    if (c)
        pool = c->pool_next;
    pthread_mutex_unlock(&reg_lock);
    if (!c) {
        if (!(c = aligned_alloc(64, (sizeof *c + 63) & ~(size_t)63)))
            return NULL;
        /* a pooled one keeps its counts: a late request through a stale handle may still
         * be on its way out of them */
        atomic_init(&c->nreq[0].n, 0);
        atomic_init(&c->nreq[1].n, 0);
        /* an address malloc had before may come back: start each object elsewhere */
        static uint16_t fresh_gen;
        c->gen = fresh_gen = (uint16_t)(fresh_gen + 0x9e37);
    }
    /* a reused object's old handles no longer match (0 where the address has no room) */
    c->gen = utc__handle_taggable(c) ? (uint16_t)(c->gen + 1) : 0;
    memset(c, 0, offsetof(utc_conduit_t, nreq));
    c->pool_next = c->closed_prev = c->closed_next = NULL;
    c->in_closed = false;
    atomic_store(&c->dead, false);
    atomic_store(&c->closed, false);
    atomic_store(&c->pooled, false);
    return c;
}

/* Free what the conduit holds and put the object back in the pool. */
void utc__conduit_free(utc_conduit_t *c)
{
    if (atomic_exchange(&c->pooled, true))
        return; /* a late reference of a pooled object dropped to 0 again */
    pthread_mutex_lock(&reg_lock);
    closed_unlink(c);
    pthread_mutex_unlock(&reg_lock);
    for (int i = 0; i <= UTC__CONDUIT_SHARED_TP; i++)
        if (c->tp[i])
            c->tp[i]->ops->destroy(c->tp[i]);
    for (int i = 0; i < c->nends; i++) {
        utc__conduit_end_t *e = &c->ends[i];
        free(e->group_ranks);
        if (e->op_count) { /* made with it (nlocal > 1) */
            utc__inflight_fini(&e->inflight);
            utc__device_fence_drop(e->fence[0]);
            utc__device_fence_drop(e->fence[1]);
        }
        free(e->op_count);
    }
    if (c->shared)
        free(c->ends);
    memset(c, 0, offsetof(utc_conduit_t, nreq));
    atomic_store(&c->dead, true);
    pthread_mutex_lock(&reg_lock);
    c->pool_next = pool;
    pool = c;
    pthread_mutex_unlock(&reg_lock);
}

static bool conduit_unused(utc_conduit_t *c)
{
    return atomic_load(&c->nreq[0].n) == 0 && atomic_load(&c->nreq[1].n) == 0;
}

/* The end whose count a request is in: its caller's. */
int utc__conduit_req_end(const utc_request_t *req)
{
    return req->op == UTC__OP_SEND ? req->dir : 1 - req->dir;
}

/* A request of end e leaves; the last one after the destroy frees the conduit. seq_cst
 * throughout: with the destroy's store of `closed` and its look at both counts, one of
 * them sees the other's change. */
void utc__conduit_req_unref(utc_conduit_t *c, int e)
{
    if (atomic_fetch_sub(&c->nreq[e].n, 1) == 1 && atomic_load(&c->closed) &&
        atomic_load(&c->nreq[1 - e].n) == 0)
        utc__conduit_free(c);
}

bool utc__conduit_req_ref_quiet(utc_conduit_t *c, int e)
{
    atomic_fetch_add(&c->nreq[e].n, 1);
    if (atomic_load(&c->dead)) {
        utc__conduit_req_unref(c, e);
        return false;
    }
    return true;
}

/* A request of end e is made; refused once the conduit is destroyed. */
utc_status_t utc__conduit_req_ref(utc_conduit_t *c, int e, const char *fn)
{
    if (!utc__conduit_req_ref_quiet(c, e))
        return utc__error(UTC_ERR_INVALID_HANDLE,
                          "%s: %p is not a live conduit (destroyed, or never created)", fn,
                          (void *)c);
    return UTC_OK;
}

/* The index in c->ends of `task`'s end (the first), or -1. */
int utc__conduit_end_of_task(const utc_conduit_t *c, const utc_task_t *task)
{
    for (int i = 0; i < c->nends; i++)
        if (c->ends[i].task == task)
            return i;
    return -1;
}

/* End the conduit's life: refuse new operations, end the pending ones with
 * UTC_ERR_CANCELED, wait for the calls still inside; free it now, or leave that to the last
 * request (it stays on the closed list until then, for utc_finalize). */
static void conduit_close(utc_conduit_t *c)
{
    atomic_store(&c->dead, true);
    utc__fence_heavy(); /* pairs with the threads' utc__call_enter */
    /* a start past its look at c->dead finishes before the transports shut down */
    for (int i = 0; i < c->nends; i++)
        if (utc__task_check(c->ends[i].task, "utc_conduit_destroy") == UTC_OK)
            utc__task_wait_starts_left(c->ends[i].task, c);
    for (int i = 0; i <= UTC__CONDUIT_SHARED_TP; i++)
        if (c->tp[i])
            c->tp[i]->ops->shutdown(c->tp[i], UTC_ERR_CANCELED);
    for (int i = 0; i < c->nends; i++)
        if (utc__task_check(c->ends[i].task, "utc_conduit_destroy") == UTC_OK)
            utc__task_wait_calls_left(c->ends[i].task, c);
    unsigned out = atomic_load(&c->nreq[0].n) + atomic_load(&c->nreq[1].n);
    if (out)
        utc_log(UTC_LOG_DEBUG, "conduit %d: destroyed with %u request(s) not yet waited for; "
                "they end with UTC_ERR_CANCELED", c->id, out);
    pthread_mutex_lock(&reg_lock);
    c->closed_prev = NULL;
    c->closed_next = closed_list;
    if (closed_list)
        closed_list->closed_prev = c;
    closed_list = c;
    c->in_closed = true;
    pthread_mutex_unlock(&reg_lock);
    atomic_store(&c->closed, true); /* seq_cst: see utc__conduit_req_unref */
    if (conduit_unused(c))
        utc__conduit_free(c);
}

utc_status_t utc_conduit_destroy(utc_conduit_t *handle)
{
    utc_conduit_t *conduit;
    utc_status_t rc = utc__conduit_get(handle, "utc_conduit_destroy", &conduit);
    if (rc != UTC_OK)
        return rc;
    utc_ctx_t *ctx = utc_ctx_self();
    if (ctx && utc__conduit_end_of_task(conduit, ctx->task) >= 0)
        return utc__error(UTC_ERR_DEADLOCK,
                          "utc_conduit_destroy: called from a thread of task '%s', an end of "
                          "conduit %d (destroy it from the main thread)",
                          utc_task_name(ctx->task), conduit->id);
    pthread_mutex_lock(&reg_lock);
    utc_conduit_t *found;
    HASH_FIND_PTR(registry, &conduit, found);
    if (found)
        HASH_DEL(registry, conduit);
    /* release: pairs with the acquire in conduit_check */
    atomic_fetch_add_explicit(&utc__conduit_epoch, 1, memory_order_release);
    pthread_mutex_unlock(&reg_lock);
    if (!found) /* a destroy from another thread won */
        return utc__error(UTC_ERR_INVALID_HANDLE, "utc_conduit_destroy: %p is not a live "
                          "conduit (destroyed, or never created)", (void *)handle);
    conduit_close(conduit);
    return UTC_OK;
}

void utc__conduits_finalize(void)
{
    utc_conduit_t *c, *tmp, *rev = NULL;
    pthread_mutex_lock(&reg_lock);
    HASH_ITER(hh, registry, c, tmp) {
        HASH_DEL(registry, c);
        c->hh.next = rev;
        rev = c;
    }
    /* release: as in utc_conduit_destroy */
    atomic_fetch_add_explicit(&utc__conduit_epoch, 1, memory_order_release);
    pthread_mutex_unlock(&reg_lock);
    while (rev) { /* newest first */
        c = rev;
        rev = c->hh.next;
        utc_log(UTC_LOG_DEBUG, "utc_finalize: destroying conduit %d left alive", c->id);
        conduit_close(c);
    }
}

void utc__conduits_release(void)
{
    /* requests never waited for still hold these: the tasks are gone, nothing can wait
     * on them any more */
    for (;;) {
        pthread_mutex_lock(&reg_lock);
        utc_conduit_t *z = closed_list;
        if (z)
            closed_unlink(z);
        pthread_mutex_unlock(&reg_lock);
        if (!z)
            break;
        utc_log(UTC_LOG_DEBUG, "utc_finalize: conduit %d had %u request(s) never waited for",
                z->id, atomic_load(&z->nreq[0].n) + atomic_load(&z->nreq[1].n));
        utc__conduit_free(z);
    }
    pthread_mutex_lock(&reg_lock);
    utc_conduit_t *c = pool;
    pool = NULL;
    pthread_mutex_unlock(&reg_lock);
    while (c) {
        utc_conduit_t *next = c->pool_next;
        free(c);
        c = next;
    }
    utc__transport_components_finalize(); /* after the last conduit */
}
