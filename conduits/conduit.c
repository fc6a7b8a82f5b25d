/*
 * Conduits: the object, its registry, argument checking, transport selection, the
 * "every local thread calls, one transfers" protocol, requests and owned buffers.
 * The transports themselves live in shm/ (in-process rings) and mpi/ (MPI).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conduit_internal.h"
#include "conduits_module.h"
#include "service/req_handle.h"
#include "observe/trace.h"
#include "base/wait_hook.h"
#include "base/coll_check.h"
#include "base/handle.h"

/* ---- registry of live conduits ---- */

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static utc_conduit_t *registry; /* by address, in creation order */
static int next_id;
/* Bumped by every destroy. A thread caches the conduits it has found live with the epoch
 * it saw, so the hot path checks a handle without taking the lock. */
static atomic_uint reg_epoch;

#define REG_CACHE 4
static _Thread_local struct {
    const utc_conduit_t *h; /* a handle found current */
    unsigned epoch;
} reg_cache[REG_CACHE];
static _Thread_local unsigned reg_cache_next;

/* The conduit behind handle h (base/handle.h: the object's address and its generation),
 * or the error: a handle whose conduit was destroyed, even when its memory now holds a new
 * conduit, is refused. */
static utc_status_t conduit_get(const utc_conduit_t *h, const char *fn, utc_conduit_t **out)
{
    utc_status_t rc = utc__check_init(fn);
    if (rc != UTC_OK)
        return rc;
    if (!h)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: conduit is NULL", fn);
    utc_conduit_t *c = utc__handle_ptr(h);
    /* acquire: pairs with the release increment in utc_conduit_destroy; the epoch is read
     * before the lookup, so a destroy after it always changes what we cached */
    unsigned epoch = atomic_load_explicit(&reg_epoch, memory_order_acquire);
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

/* ---- creation and destruction ---- */

static bool transport_ok(const utc__transport_t *tp)
{
    const utc__transport_ops_t *o = tp->ops;
    return o && o->name && o->start && o->progress && o->wait && o->cancel && o->shutdown &&
           o->destroy;
}

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

static utc_conduit_t *conduit_alloc(void)
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
static void conduit_free(utc_conduit_t *c)
{
    if (atomic_exchange(&c->pooled, true))
        return; /* a late reference of a pooled object dropped to 0 again */
    pthread_mutex_lock(&reg_lock);
    closed_unlink(c);
    pthread_mutex_unlock(&reg_lock);
    if (c->local)
        c->local->ops->destroy(c->local);
    if (c->remote)
        c->remote->ops->destroy(c->remote);
    for (int i = 0; i < c->nends; i++) {
        utc__conduit_end_t *e = &c->ends[i];
        free(e->group_ranks);
        if (e->op_count) /* made with it (nlocal > 1) */
            utc__inflight_fini(&e->inflight);
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
static int req_end(const utc_request_t *req)
{
    return req->op == UTC__OP_SEND ? req->dir : 1 - req->dir;
}

/* A request of end e leaves; the last one after the destroy frees the conduit. seq_cst
 * throughout: with the destroy's store of `closed` and its look at both counts, one of
 * them sees the other's change. */
static void req_unref(utc_conduit_t *c, int e)
{
    if (atomic_fetch_sub(&c->nreq[e].n, 1) == 1 && atomic_load(&c->closed) &&
        atomic_load(&c->nreq[1 - e].n) == 0)
        conduit_free(c);
}

/* A request of end e is made; refused once the conduit is destroyed. */
static utc_status_t req_ref(utc_conduit_t *c, int e, const char *fn)
{
    atomic_fetch_add(&c->nreq[e].n, 1);
    if (atomic_load(&c->dead)) {
        req_unref(c, e);
        return utc__error(UTC_ERR_INVALID_HANDLE,
                          "%s: %p is not a live conduit (destroyed, or never created)", fn,
                          (void *)c);
    }
    return UTC_OK;
}

static utc_status_t check_options(const utc_conduit_options_t *o)
{
    if (o->mode != UTC_CONDUIT_SINGLE_ENTRY && o->mode != UTC_CONDUIT_FREE)
        return utc__error(UTC_ERR_INVALID_ARG, "utc_conduit_create: unknown mode %d",
                          (int)o->mode);
    if (o->inline_max > ((size_t)1 << 20))
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_conduit_create: inline_max %zu is above the 1 MiB limit",
                          o->inline_max);
    unsigned n = o->ring_slots;
    if (n < 2 || n > 65536 || (n & (n - 1)))
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_conduit_create: ring_slots %u is not a power of two in 2..65536", n);
    if ((size_t)n * o->inline_max > ((size_t)256 << 20))
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_conduit_create: ring_slots * inline_max = %zu bytes per direction "
                          "is above the 256 MiB limit", (size_t)n * o->inline_max);
    if (o->credits < 0 || o->credits > UTC_CONDUIT_CREDITS_MAX)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_conduit_create: credits %d is outside 0..%d (0: the default)",
                          o->credits, UTC_CONDUIT_CREDITS_MAX);
    return UTC_OK;
}

static utc_status_t end_init(utc__conduit_end_t *e, utc_task_t *task)
{
    struct utc__task *t = task->impl;
    e->task = task;
    utc__text_copy(e->name, sizeof e->name, utc__text_name(task->ops->name));
    e->nlocal = t->nlocal;
    e->entry_rank = t->entry_rank;
    e->ngroup = t->ngroup;
    atomic_init(&e->wclosed, false);
    if (!(e->group_ranks = malloc(sizeof(int) * (size_t)t->ngroup)))
        return utc__error(UTC_ERR_NO_MEMORY, "utc_conduit_create: out of memory");
    memcpy(e->group_ranks, t->group_ranks, sizeof(int) * (size_t)t->ngroup);
    if (e->nlocal > 1) {
        utc__barrier_init(&e->barrier, (unsigned)e->nlocal);
        if (!(e->op_count = calloc((size_t)e->nlocal, sizeof *e->op_count)))
            return utc__error(UTC_ERR_NO_MEMORY, "utc_conduit_create: out of memory");
        utc__inflight_init(&e->inflight);
    }
    return UTC_OK;
}

static bool in_group(const utc__conduit_end_t *e, int rank)
{
    for (int i = 0; i < e->ngroup; i++)
        if (e->group_ranks[i] == rank)
            return true;
    return false;
}

static utc_status_t check_create_args(utc_task_t *src, utc_task_t *dst,
                                      const utc_conduit_options_t *o, utc_conduit_t **out)
{
    utc_status_t rc;
    if ((rc = utc__task_check(src, "utc_conduit_create")) != UTC_OK ||
        (rc = utc__task_check(dst, "utc_conduit_create")) != UTC_OK)
        return rc;
    if (!out)
        return utc__error(UTC_ERR_INVALID_ARG, "utc_conduit_create: out is NULL");
    if ((rc = check_options(o)) != UTC_OK)
        return rc;
    if (o->credits != 0)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_conduit_create: credits %d: a credit window is for share-mode "
                          "shared conduits (utc_conduit_create_shared, UTC_SHARED_SHARE); leave "
                          "it 0 here", o->credits);
    if (src == dst && o->mode != UTC_CONDUIT_FREE)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_conduit_create: source and destination are the same task; a "
                          "conduit from a task to itself must be in free mode "
                          "(UTC_CONDUIT_FREE: its ranks name each other with _to/_from)");
    return UTC_OK;
}

/* What this rank passed, for the agreement check: the ends by their task ids (equal on
 * every rank for the same task), the options. Bad arguments by their status alone. */
static void describe_create(utc__coll_desc_t *d, utc_task_t *src, utc_task_t *dst,
                            const utc_conduit_options_t *o, utc_status_t args_rc)
{
    *d = (utc__coll_desc_t){.call = UTC__CALL_CONDUIT_CREATE, .args_rc = args_rc,
                            .part_name = {"ends (source and destination tasks)", "options"}};
    if (args_rc != UTC_OK)
        return;
    uint64_t h = utc__digest_u64(UTC__DIGEST_INIT, (uint64_t)utc_task_id(src));
    d->part[0] = utc__digest_u64(h, (uint64_t)utc_task_id(dst));
    h = utc__digest_u64(UTC__DIGEST_INIT, (uint64_t)o->mode);
    h = utc__digest_u64(h, o->inline_max);
    d->part[1] = utc__digest_u64(h, o->ring_slots);
}

utc_status_t utc_conduit_create(utc_task_t *src, utc_task_t *dst,
                                const utc_conduit_options_t *opts, utc_conduit_t **out)
{
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    if (opts)
        o = *opts;
    /* every rank compares what it passed before anything collective (base/coll_check.h):
     * ranks that disagree all return UTC_ERR_MISMATCH; ranks that agree on bad arguments
     * all return their error */
    utc_status_t args_rc = check_create_args(src, dst, &o, out);
    utc__coll_desc_t desc;
    describe_create(&desc, src, dst, &o, args_rc);
    utc_status_t rc = utc__coll_check(utc__world_comm(), utc__coll_world_seq(), NULL,
                                      "utc_conduit_create", &desc);
    if (rc != UTC_OK)
        return rc;
    if (args_rc != UTC_OK)
        return args_rc;

    int me = utc_rank(), nranks = utc_nranks();
    int *members = NULL;
    utc_conduit_t *c = conduit_alloc();
    if (!c)
        return utc__error(UTC_ERR_NO_MEMORY, "utc_conduit_create: out of memory");
    pthread_mutex_lock(&reg_lock);
    c->id = next_id++; /* every rank creates conduits in the same order: ids agree */
    pthread_mutex_unlock(&reg_lock);
    c->opts = o;
    c->ends = c->end;
    c->nends = 2;
    if ((rc = end_init(&c->end[0], src)) != UTC_OK || (rc = end_init(&c->end[1], dst)) != UTC_OK)
        goto fail;

    /* Which transports this rank needs. Every rank computes the same answer from the proc
     * lists, so the collective MPI_Comm_split below is entered by all or by none. */
    const utc__conduit_end_t *e0 = &c->end[0], *e1 = &c->end[1];
    bool need_local, need_remote;
    if (!(members = calloc((size_t)nranks, sizeof *members))) {
        rc = utc__error(UTC_ERR_NO_MEMORY, "utc_conduit_create: out of memory");
        goto fail;
    }
    int nmembers = 0;
    if (o.mode == UTC_CONDUIT_SINGLE_ENTRY) {
        need_local = e0->entry_rank == e1->entry_rank && me == e0->entry_rank;
        need_remote = e0->entry_rank != e1->entry_rank;
        for (int r = 0; r < nranks; r++)
            if (r == e0->entry_rank || r == e1->entry_rank)
                members[nmembers++] = r;
    } else {
        need_local = in_group(e0, me) && in_group(e1, me);
        need_remote = !(e0->ngroup == 1 && e1->ngroup == 1 &&
                        e0->group_ranks[0] == e1->group_ranks[0]);
        for (int r = 0; r < nranks; r++)
            if (in_group(e0, r) || in_group(e1, r))
                members[nmembers++] = r;
    }
    /* between ranks of one host: the node transport (shared memory), unless refused there
     * (UTC_ERR_UNSUPPORTED on every rank alike: then MPI) */
    bool node = false;
    if ((rc = utc__node_wanted("utc_conduit_create", members, nmembers, &node)) != UTC_OK)
        goto fail;
    if (need_remote && node) {
        utc__transport_args_t ta = {c->id, &c->opts, members, nmembers};
        rc = UTC__WAIT_CALL(UTC__WAIT_CONDUIT_SETUP, c->id, -1, -1, NULL,
                            utc__node_transport_create(&ta, &c->remote));
        if (rc != UTC_OK && rc != UTC_ERR_UNSUPPORTED)
            goto fail;
        node = rc == UTC_OK;
    }
    if (need_remote && !node &&
        (rc = UTC__WAIT_CALL(UTC__WAIT_CONDUIT_SETUP, c->id, -1, -1, NULL,
                           utc__mpi_transport_create(c->id, members, nmembers, &c->remote))) != UTC_OK)
        goto fail;
    if (need_local && (rc = utc__shm_transport_create(c->id, &c->opts, &c->local)) != UTC_OK)
        goto fail;
    if ((c->local && !transport_ok(c->local)) || (c->remote && !transport_ok(c->remote))) {
        rc = utc__error(UTC_ERR_INTERNAL, "utc_conduit_create: a transport has an incomplete "
                        "ops table");
        goto fail;
    }
    c->entry_transport = e0->entry_rank == e1->entry_rank ? UTC_CONDUIT_INPROC
                         : node                           ? UTC_CONDUIT_NODE
                                                          : UTC_CONDUIT_MPI;
    free(members);

    pthread_mutex_lock(&reg_lock);
    c->self = c;
    HASH_ADD_PTR(registry, self, c);
    pthread_mutex_unlock(&reg_lock);
    utc_log(UTC_LOG_DEBUG, "conduit %d: '%s' -> '%s', %s mode, %s between entries%s%s", c->id,
            utc_task_name(src), utc_task_name(dst),
            o.mode == UTC_CONDUIT_FREE ? "free" : "single-entry",
            c->entry_transport == UTC_CONDUIT_INPROC ? "in-process"
            : c->entry_transport == UTC_CONDUIT_NODE ? "node-local"
                                                     : "MPI",
            c->local ? "; rings here" : "",
            !c->remote ? "" : node ? "; node-local shared memory here" : "; MPI communicator here");
    *out = utc__handle_make(c, c->gen);
    return UTC_OK;
fail:
    free(members);
    conduit_free(c);
    return rc;
}

/* ---- shared conduits ---- */

static utc_status_t check_shared_args(utc_task_t *const *w, int nw, utc_task_t *const *rd,
                                      int nr, utc_shared_mode_t mode,
                                      const utc_conduit_options_t *o, utc_conduit_t **out)
{
    static const char fn[] = "utc_conduit_create_shared";
    if (!out)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: out is NULL", fn);
    if (!w || !rd)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: the %s array is NULL", fn,
                          !w ? "writers" : "readers");
    if (nw < 1 || nr < 1)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: %d %s: a shared conduit needs at least one "
                          "writer and one reader", fn, nw < 1 ? nw : nr,
                          nw < 1 ? "writers" : "readers");
    if (mode != UTC_SHARED_PUBLISH && mode != UTC_SHARED_SHARE)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: unknown mode %d (UTC_SHARED_PUBLISH or "
                          "UTC_SHARED_SHARE)", fn, (int)mode);
    utc_status_t rc = check_options(o);
    int credits;
    if (rc != UTC_OK || (rc = utc__shared_credits(o, mode, &credits)) != UTC_OK)
        return rc;
    if (o->mode != UTC_CONDUIT_SINGLE_ENTRY)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: a shared conduit is in single-entry mode "
                          "(each member transfers on its entry rank); free mode is not "
                          "supported", fn);
    int n = nw + nr;
    for (int i = 0; i < n; i++) {
        utc_task_t *t = i < nw ? w[i] : rd[i - nw];
        if ((rc = utc__task_check(t, fn)) != UTC_OK)
            return rc;
        for (int j = 0; j < i; j++) {
            utc_task_t *u = j < nw ? w[j] : rd[j - nw];
            if (u == t)
                return utc__error(UTC_ERR_INVALID_ARG, "%s: task '%s' is listed twice (%s %d "
                                  "and %s %d); each task is one writer or one reader", fn,
                                  utc_task_name(t), j < nw ? "writer" : "reader",
                                  j < nw ? j : j - nw, i < nw ? "writer" : "reader",
                                  i < nw ? i : i - nw);
        }
    }
    return UTC_OK;
}

utc_status_t utc_conduit_create_shared(utc_task_t *const *writers, int nwriters,
                                       utc_task_t *const *readers, int nreaders,
                                       utc_shared_mode_t mode,
                                       const utc_conduit_options_t *opts, utc_conduit_t **out)
{
    static const char fn[] = "utc_conduit_create_shared";
    utc_status_t rc = utc__check_init(fn);
    if (rc != UTC_OK)
        return rc;
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    if (opts)
        o = *opts;
    utc_status_t args_rc = check_shared_args(writers, nwriters, readers, nreaders, mode, &o,
                                             out);
    /* every rank compares what it passed before anything collective (base/coll_check.h) */
    utc__coll_desc_t d = {.call = UTC__CALL_SHARED_CREATE, .args_rc = args_rc,
                          .part_name = {"writer tasks", "reader tasks", "mode and options"}};
    if (args_rc == UTC_OK) {
        uint64_t h = utc__digest_u64(UTC__DIGEST_INIT, (uint64_t)nwriters);
        for (int i = 0; i < nwriters; i++)
            h = utc__digest_u64(h, (uint64_t)utc_task_id(writers[i]));
        d.part[0] = h;
        h = utc__digest_u64(UTC__DIGEST_INIT, (uint64_t)nreaders);
        for (int i = 0; i < nreaders; i++)
            h = utc__digest_u64(h, (uint64_t)utc_task_id(readers[i]));
        d.part[1] = h;
        h = utc__digest_u64(UTC__DIGEST_INIT, (uint64_t)mode);
        h = utc__digest_u64(h, o.inline_max);
        h = utc__digest_u64(h, (uint64_t)o.credits);
        d.part[2] = utc__digest_u64(h, o.ring_slots);
    }
    if ((rc = utc__coll_check(utc__world_comm(), utc__coll_world_seq(), NULL, fn, &d)) != UTC_OK)
        return rc;
    if (args_rc != UTC_OK)
        return args_rc;

    int n = nwriters + nreaders;
    int *entry = NULL;
    utc_conduit_t *c = conduit_alloc();
    if (!c)
        return utc__error(UTC_ERR_NO_MEMORY, "%s: out of memory", fn);
    pthread_mutex_lock(&reg_lock);
    c->id = next_id++; /* every rank creates conduits in the same order: ids agree */
    pthread_mutex_unlock(&reg_lock);
    c->opts = o;
    c->shared = true;
    c->shared_mode = mode;
    c->nwriters = nwriters;
    if (!(c->ends = calloc((size_t)n, sizeof *c->ends)) ||
        !(entry = malloc(sizeof(int) * (size_t)n))) {
        rc = utc__error(UTC_ERR_NO_MEMORY, "%s: out of memory", fn);
        goto fail;
    }
    for (int i = 0; i < n; i++, c->nends++) {
        if ((rc = end_init(&c->ends[i], i < nwriters ? writers[i] : readers[i - nwriters])) !=
            UTC_OK)
            goto fail;
        entry[i] = c->ends[i].entry_rank;
    }
    bool one_rank = true;
    for (int i = 1; i < n; i++)
        one_rank &= entry[i] == entry[0];
    c->entry_transport = one_rank ? UTC_CONDUIT_INPROC : UTC_CONDUIT_MPI;
    if ((rc = UTC__WAIT_CALL(UTC__WAIT_CONDUIT_SETUP, c->id, -1, -1, NULL,
                             utc__shared_transport_create(c->id, mode, entry, nwriters, nreaders,
                                                          &c->opts, &c->local))) != UTC_OK)
        goto fail;
    if (!transport_ok(c->local)) {
        rc = utc__error(UTC_ERR_INTERNAL, "%s: the shared transport has an incomplete ops "
                        "table", fn);
        goto fail;
    }
    free(entry);
    pthread_mutex_lock(&reg_lock);
    c->self = c;
    HASH_ADD_PTR(registry, self, c);
    pthread_mutex_unlock(&reg_lock);
    utc_log(UTC_LOG_DEBUG, "conduit %d: shared, %d writer(s) -> %d reader(s), %s mode, %s",
            c->id, nwriters, nreaders, mode == UTC_SHARED_PUBLISH ? "publish" : "share",
            one_rank ? "in-process" : "across ranks");
    *out = utc__handle_make(c, c->gen);
    return UTC_OK;
fail:
    free(entry);
    conduit_free(c);
    return rc;
}

/* The index in c->ends of `task`'s end (the first), or -1. */
static int end_of_task(const utc_conduit_t *c, const utc_task_t *task)
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
    if (c->local)
        c->local->ops->shutdown(c->local, UTC_ERR_CANCELED);
    if (c->remote)
        c->remote->ops->shutdown(c->remote, UTC_ERR_CANCELED);
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
    atomic_store(&c->closed, true); /* seq_cst: see req_unref */
    if (conduit_unused(c))
        conduit_free(c);
}

utc_status_t utc_conduit_destroy(utc_conduit_t *handle)
{
    utc_conduit_t *conduit;
    utc_status_t rc = conduit_get(handle, "utc_conduit_destroy", &conduit);
    if (rc != UTC_OK)
        return rc;
    utc_ctx_t *ctx = utc_ctx_self();
    if (ctx && end_of_task(conduit, ctx->task) >= 0)
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
    atomic_fetch_add_explicit(&reg_epoch, 1, memory_order_release);
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
    atomic_fetch_add_explicit(&reg_epoch, 1, memory_order_release); /* as in registry_remove */
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
        conduit_free(z);
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
    utc__node_engine_finalize(); /* after the last conduit */
}

int utc_conduit_id(const utc_conduit_t *handle)
{
    utc_conduit_t *c;
    utc_status_t rc = conduit_get(handle, "utc_conduit_id", &c);
    return rc != UTC_OK ? (int)rc : c->id;
}

utc_conduit_transport_t utc_conduit_transport(const utc_conduit_t *handle)
{
    utc_conduit_t *c;
    if (conduit_get(handle, "utc_conduit_transport", &c) != UTC_OK)
        return UTC_CONDUIT_NONE;
    return c->entry_transport;
}

/* ---- operations ---- */

/* One operation as the public API asked for it. */
typedef struct xfer {
    const char *fn;
    const char *solo; /* an all-threads call's form for one named thread (NULL: none) */
    utc__op_t op;
    bool owned;
    bool all;        /* every local thread calls; thread 0 transfers */
    bool by;         /* *_by: only `thread` transfers */
    bool named_peer; /* _to/_from: `peer` named; else the other task's entry rank */
    bool timed;      /* read_timeout: `timeout` applies */
    bool any_tag;    /* read_any, probes: UTC_ANY_TAG is a tag */
    bool probe;      /* a probe: look, take nothing */
    bool nowait;     /* iprobe: none there is UTC_ERR_TIMEOUT, with no message */
    bool close;      /* utc_conduit_close: the end of stream, no message */
    int thread;
    int peer;
    int tag;
    const void *sbuf;
    void *rbuf;
    size_t size;     /* send: message size; recv: capacity */
    double timeout;  /* seconds */
    utc_msg_info_t *info; /* read_any, probes: what the message is (the caller's) */
} xfer_t;

/* Where an operation goes, once its arguments have been checked. */
typedef struct route {
    utc_ctx_t *ctx;
    int end;        /* the caller's role: 0 source task (a shared conduit's writer), 1
                     * destination task (a reader) */
    int member;     /* the caller's end in c->ends (= end, but in a shared conduit) */
    utc__conduit_end_t *e; /* that end */
    int peer;       /* world rank of the other end (a shared conduit: the first member on
                     * the other side; its waits name them all) */
    utc__transport_t *tp;
    bool skip;      /* *_by called by a thread other than the named one */
} route_t;

static const char *task_label(const utc__conduit_end_t *e) { return e->name; }

/* End `i` of c (a failure's fail_end comes from another thread: kept in range). */
static const utc__conduit_end_t *end_at(const utc_conduit_t *c, int i)
{
    return &c->ends[(unsigned)i % (unsigned)c->nends];
}

/* UTC_ERR_PEER_FAILED, naming the task that failed, its rank and its error; or
 * UTC_ERR_CANCELED, naming the task being destroyed. */
static utc_status_t peer_failed_error(const utc_conduit_t *c, utc__transport_t *tp,
                                      const char *fn)
{
    int end = atomic_load(&tp->fail_end), rank = atomic_load(&tp->fail_rank);
    int rc = atomic_load(&tp->fail_rc);
    if (atomic_load(&tp->fail_why) == UTC_ERR_CANCELED)
        return utc__error(UTC_ERR_CANCELED,
                          "%s: task '%s', an end of conduit %d, is destroyed (utc_task_destroy "
                          "on rank %d) with this operation in flight", fn,
                          task_label(end_at(c, end)), c->id, rank);
    return utc__error(UTC_ERR_PEER_FAILED,
                      "%s: task '%s' at the other end of conduit %d failed on rank %d (its run "
                      "returned %d, %s); operations on the conduit fail until a run of that "
                      "task is queued on this rank", fn,
                      task_label(end_at(c, end)), c->id, rank, rc, utc_status_string(rc));
}

/* The calling thread's member index in shared conduit c (*member), or why it may not make
 * this call: not a member, the wrong side, a call the shared conduit does not take. */
static utc_status_t shared_role(const utc_conduit_t *c, const xfer_t *x, const utc_ctx_t *ctx,
                                int *member)
{
    int m = ctx ? end_of_task(c, ctx->task) : -1;
    if (m < 0)
        return utc__error(UTC_ERR_NOT_MEMBER, "%s: the calling thread is not a thread of a "
                          "writer or reader task of shared conduit %d", x->fn, c->id);
    bool writer = m < c->nwriters;
    if (writer != (x->op == UTC__OP_SEND))
        return utc__error(UTC_ERR_STATE, "%s: task '%s' is a %s of shared conduit %d: its "
                          "writers write and close, its readers read", x->fn,
                          task_label(&c->ends[m]), writer ? "writer" : "reader", c->id);
    if (x->named_peer)
        return utc__error(UTC_ERR_STATE, "%s: shared conduit %d is in single-entry mode; its "
                          "members transfer on their entry ranks, without naming a peer",
                          x->fn, c->id);
    if (c->shared_mode == UTC_SHARED_SHARE && (x->probe || x->tag == UTC_ANY_TAG))
        return utc__error(UTC_ERR_STATE, "%s: shared conduit %d is in share mode, where a read "
                          "asks the writers for a message of its tag: read a tag (probes and "
                          "any-tag reads are for publish mode)", x->fn, c->id);
    *member = m;
    return UTC_OK;
}

/* The checks of an operation's own arguments (tag, buffer, size, timeout): made on every
 * call, whether its route comes from the memo or not. express() makes a plain call's
 * share of them itself (a check added here for plain calls goes there too). */
static utc_status_t check_args(const xfer_t *x)
{
    if (x->tag < 0 && !(x->tag == UTC_ANY_TAG && x->any_tag))
        return utc__error(UTC_ERR_INVALID_ARG, "%s: tag %d is negative (tags are 0..%d; "
                          "UTC_ANY_TAG is for utc_conduit_read_any and the probes)", x->fn,
                          x->tag, UTC_CONDUIT_TAG_MAX);
    if (x->any_tag && !x->info) /* read_any and the probes say what they found there */
        return utc__error(UTC_ERR_INVALID_ARG, "%s: info (the output) is NULL", x->fn);
    if (x->tag > UTC_CONDUIT_TAG_MAX)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: tag %d is above UTC_CONDUIT_TAG_MAX (%d)",
                          x->fn, x->tag, UTC_CONDUIT_TAG_MAX);
    if (x->op == UTC__OP_SEND && !x->sbuf && x->size)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: buffer is NULL but size is %zu", x->fn,
                          x->size);
    if (x->op == UTC__OP_RECV && !x->owned && !x->rbuf && x->size)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: buffer is NULL but capacity is %zu", x->fn,
                          x->size);
    /* no buffer has more than PTRDIFF_MAX bytes (pointer differences within one object
     * must fit a ptrdiff_t): a larger size or capacity is a negative number cast, on either
     * transport (an owned read's own capacity, SIZE_MAX, means "any") */
    if (x->size > (size_t)PTRDIFF_MAX && !(x->op == UTC__OP_RECV && x->owned))
        return utc__error(UTC_ERR_INVALID_ARG, "%s: %s %zu bytes is larger than any buffer can "
                          "be (PTRDIFF_MAX, %td): a negative size converted?", x->fn,
                          x->op == UTC__OP_SEND ? "size" : "capacity", x->size, PTRDIFF_MAX);
    if (x->timeout != x->timeout) /* NaN: neither a limit nor "for ever" */
        return utc__error(UTC_ERR_INVALID_ARG, "%s: the timeout is NaN (give seconds >= 0, or "
                          "a negative value to wait for ever)", x->fn);
    return UTC_OK;
}

/*
 * A thread's last route of a plain operation (no _by, no named peer) on a two-task conduit,
 * one per kind (write, read): a fine-grained exchange makes the same call on the same
 * conduit over and over, and finding the caller's end and peer again each time was most of
 * a call's own cost. It holds while the handle is current (reg_epoch moves on every destroy
 * of a conduit) and the caller is the same thread context of the same task (a destroyed
 * task's address is never another task's before utc_finalize: task.c's tombs).
 */
typedef struct route_memo {
    const utc_conduit_t *h;
    unsigned epoch;
    const utc_ctx_t *ctx;
    const utc_task_t *task;
    route_t r;
} route_memo_t;

static _Thread_local route_memo_t route_memo[2]; /* [x->op == UTC__OP_SEND] */

static bool route_memo_find(const utc_conduit_t *h, const xfer_t *x, route_t *r)
{
    const route_memo_t *m = &route_memo[x->op == UTC__OP_SEND];
    if (!h || m->h != h || x->by || x->named_peer)
        return false;
    /* acquire: as in conduit_get; a destroy after this load changes what the memo holds */
    if (m->epoch != atomic_load_explicit(&reg_epoch, memory_order_acquire))
        return false;
    const utc_ctx_t *ctx = utc_ctx_self();
    if (ctx != m->ctx || ctx->task != m->task)
        return false;
    *r = m->r;
    return true;
}

static void route_memo_keep(const utc_conduit_t *h, const utc_conduit_t *c, const xfer_t *x,
                            unsigned epoch, const route_t *r)
{
    if (x->by || x->named_peer || c->shared)
        return;
    route_memo_t *m = &route_memo[x->op == UTC__OP_SEND];
    m->h = h;
    m->epoch = epoch;
    m->ctx = r->ctx;
    m->task = r->ctx->task;
    m->r = *r;
}

static utc_status_t route_op(const utc_conduit_t *h, const xfer_t *x, route_t *r)
{
    utc_status_t rc = utc__check_init(x->fn);
    if (rc != UTC_OK)
        return rc;
    bool memo = route_memo_find(h, x, r);
    unsigned epoch = 0;
    utc_conduit_t *c = utc__handle_ptr(h);
    if (!memo) {
        epoch = atomic_load_explicit(&reg_epoch, memory_order_acquire);
        if ((rc = conduit_get(h, x->fn, &c)) != UTC_OK)
            return rc;
    }
    /* after the caller's utc__call_enter (see conduit_close) */
    if (atomic_load_explicit(&c->dead, memory_order_relaxed))
        return utc__error(UTC_ERR_INVALID_HANDLE, "%s: %p is not a live conduit (destroyed, "
                          "or never created)", x->fn, (void *)c);
    if (memo) {
        r->skip = false;
        return check_args(x);
    }
    utc_ctx_t *ctx = utc_ctx_self();
    int end, member = -1;
    if (c->shared) {
        if ((rc = shared_role(c, x, ctx, &member)) != UTC_OK)
            return rc;
        end = member < c->nwriters ? 0 : 1;
    } else {
        end = !ctx ? -1 : ctx->task == c->end[0].task ? 0 : ctx->task == c->end[1].task ? 1 : -1;
        /* a task's conduit to itself (free mode): it writes as the source and reads as the
         * destination, so its ranks' messages to each other all go one way */
        if (end == 0 && c->end[1].task == c->end[0].task)
            end = x->op == UTC__OP_SEND ? 0 : 1;
        if (end < 0)
            return utc__error(UTC_ERR_NOT_MEMBER,
                              "%s: the calling thread is not a thread of task '%s' or '%s', "
                              "the two ends of conduit %d", x->fn, task_label(&c->end[0]),
                              task_label(&c->end[1]), c->id);
        member = end;
    }
    if ((rc = check_args(x)) != UTC_OK)
        return rc;
    /* before a _by form's other threads leave: a misuse every caller hears of */
    if (x->named_peer && !c->shared && c->opts.mode == UTC_CONDUIT_SINGLE_ENTRY)
        return utc__error(UTC_ERR_STATE,
                          "%s: conduit %d is in single-entry mode; naming a peer rank needs "
                          "a conduit created with mode UTC_CONDUIT_FREE", x->fn, c->id);
    if (x->by) {
        if (x->thread < 0 || x->thread >= ctx->local_count)
            return utc__error(UTC_ERR_OUT_OF_RANGE,
                              "%s: thread %d is out of range: task '%s' has %d thread(s) on "
                              "rank %d (0..%d)", x->fn, x->thread, task_label(&c->ends[member]),
                              ctx->local_count, ctx->world_rank, ctx->local_count - 1);
        if (ctx->local_id != x->thread) {
            r->skip = true;
            return UTC_OK;
        }
    }
    r->skip = false;
    utc__conduit_end_t *mine = &c->ends[member];
    const utc__conduit_end_t *other = &c->end[1 - end];
    int me = ctx->world_rank, peer;
    utc__transport_t *tp = c->local;
    if (c->shared) {
        /* single-entry: each member transfers on its entry rank, with every other member
         * through the shared transport */
        if (me != mine->entry_rank)
            return utc__error(UTC_ERR_NOT_MEMBER,
                              "%s: in shared conduit %d task '%s' transfers on its entry rank "
                              "%d, and this is rank %d", x->fn, c->id, task_label(mine),
                              mine->entry_rank, me);
        peer = utc__shared_transport_peer(c->local, member); /* one of several */
    } else if (c->opts.mode == UTC_CONDUIT_SINGLE_ENTRY) {
        if (me != mine->entry_rank)
            return utc__error(UTC_ERR_NOT_MEMBER,
                              "%s: conduit %d is in single-entry mode: only task '%s''s entry "
                              "rank %d transfers, and this is rank %d (gather the data on "
                              "rank %d, or use a free-mode conduit)", x->fn, c->id,
                              task_label(mine), mine->entry_rank, me, mine->entry_rank);
        peer = other->entry_rank;
    } else {
        peer = x->named_peer ? x->peer : other->entry_rank;
        if (!in_group(other, peer))
            return utc__error(UTC_ERR_OUT_OF_RANGE,
                              "%s: rank %d holds no thread of task '%s', the other end of "
                              "conduit %d", x->fn, peer, task_label(other), c->id);
    }
    if (!c->shared && peer != me)
        tp = c->remote;
    if (!tp)
        return utc__error(UTC_ERR_INTERNAL, "%s: conduit %d has no transport from rank %d to %d",
                          x->fn, c->id, me, peer);
    r->ctx = ctx;
    r->end = end;
    r->member = member;
    r->e = mine;
    r->peer = peer;
    r->tp = tp;
    route_memo_keep(h, c, x, epoch, r);
    return UTC_OK;
}

/* (express() sets the same fields for its plain calls: keep the two in step) */
static void req_init(utc_request_t *req, utc_conduit_t *c, const xfer_t *x, const route_t *r)
{
    /* a writer at end e sends in direction e; a reader at end e takes direction 1 - e */
    utc__req_prepare(req, x->op, x->op == UTC__OP_SEND ? r->end : 1 - r->end, x->tag, r->peer,
                     r->tp);
    req->owned = x->owned;
    req->conduit = c;
    req->member = r->member;
    req->sbuf = x->sbuf;
    req->rbuf = x->rbuf;
    req->size = x->size;
}

/* What a wait on c says beyond its peer: a shared conduit's members on the other side and
 * a reader's asks, told only when the watchdog reports the wait. NULL for two tasks. */
static const utc__wait_detail_t *wait_detail(const utc_conduit_t *c, int member, int tag,
                                             utc__shared_wait_t *w)
{
    if (!c->shared)
        return NULL;
    utc__shared_wait_init(w, c->local, member, tag);
    return &w->base;
}

/* UTC__WAIT_CALL with wait_detail's account of a wait by `member` of conduit c. */
#define CONDUIT_WAIT_CALL(kind, c, member, tag, peer, name, call)                           \
    __extension__({                                                                        \
        utc__shared_wait_t cw_detail_;                                                     \
        UTC__WAIT_CALL_DETAIL(kind, (c)->id, tag, peer, name,                              \
                              wait_detail(c, member, tag, &cw_detail_), call);             \
    })

/* The status of a completed request, with the caller's error message. */
static utc_status_t req_result(const char *fn, const utc_request_t *req, size_t *received,
                               void **obuf)
{
    switch (req->status) {
    case UTC_OK:
        if (received)
            *received = req->op == UTC__OP_RECV ? req->received : req->size;
        if (obuf)
            *obuf = req->owned_buf;
        return UTC_OK;
    case UTC_ERR_TRUNCATE:
        if (received)
            *received = req->received;
        return utc__error(UTC_ERR_TRUNCATE,
                          "%s: the next message with tag %d is %zu bytes, larger than the "
                          "%zu-byte buffer; nothing was received and the message stays queued "
                          "for the next read of tag %d (use a buffer of at least %zu bytes, or "
                          "%s, which never truncates)", fn, req->tag, req->received, req->size,
                          req->tag, req->received,
                          req->conduit->opts.mode == UTC_CONDUIT_FREE
                              ? "utc_conduit_read_owned_from"
                              : "utc_conduit_read_owned");
    case UTC_ERR_MPI:
        if (req->mpi_err == UTC__MPI_REST_MISSING)
            return utc__error(UTC_ERR_MPI, "%s: the writer on rank %d could not send the rest "
                              "of a %zu-byte message (tag %d; its write failed, see its "
                              "error): the message is lost", fn, req->peer, req->received,
                              req->tag);
        return utc__mpi_error(req->mpi_err, fn);
    case UTC_ERR_CLOSED:
        if (req->conduit->shared)
            return utc__error(UTC_ERR_CLOSED, "%s: end of stream: every writer of shared "
                              "conduit %d closed its side (utc_conduit_close) and no message "
                              "%s is left for this reader", fn, req->conduit->id,
                              req->tag == UTC_ANY_TAG ? "of any tag" : "of this tag");
        return utc__error(UTC_ERR_CLOSED, "%s: end of stream: the writers of conduit %d on rank "
                          "%d closed their side (utc_conduit_close) and no message %s is left",
                          fn, req->conduit->id, req->peer,
                          req->tag == UTC_ANY_TAG ? "of any tag" : "of this tag");
    case UTC_ERR_NO_MEMORY:
        return utc__error(UTC_ERR_NO_MEMORY, "%s: out of memory for a %zu-byte message (tag %d)",
                          fn, req->op == UTC__OP_RECV ? req->received : req->size, req->tag);
    case UTC_ERR_PEER_FAILED:
        return peer_failed_error(req->conduit, req->tp, fn);
    case UTC_ERR_CANCELED:
        if (!req->canceled_by_user && atomic_load(&req->tp->failed) &&
            atomic_load(&req->tp->fail_why) == UTC_ERR_CANCELED)
            return peer_failed_error(req->conduit, req->tp, fn);
        return utc__error(UTC_ERR_CANCELED, "%s: %s (tag %d)", fn,
                          req->canceled_by_user ? "the request was canceled"
                                                : "the conduit was destroyed with this "
                                                  "operation in flight",
                          req->tag);
    default:
        return utc__error(req->status, "%s: %s", fn, utc_status_string(req->status));
    }
}

/* The profiling event of a finished operation: a transfer when it moved a message. */
static utc__ev_t prof_event(const utc_request_t *req, utc_status_t rc)
{
    if (rc != UTC_OK)
        return UTC__EV_CONDUIT_WAIT;
    return req->op == UTC__OP_SEND ? UTC__EV_CONDUIT_WRITE : UTC__EV_CONDUIT_READ;
}

static int64_t prof_bytes(const utc_request_t *req, utc_status_t rc)
{
    if (rc != UTC_OK)
        return 0;
    return (int64_t)(req->op == UTC__OP_SEND ? req->size : req->received);
}

/* Hand `req` to its transport, the thread marked as starting (utc__call_starting): either
 * this start sees the conduit destroyed (the request ends with UTC_ERR_CANCELED) or the
 * destroy waits for it before the transports shut down. Between ranks, that keeps every
 * message ahead of the conduit's drain marks. */
static utc_status_t transport_start(utc_conduit_t *c, const route_t *r, utc_request_t *req)
{
    utc_status_t rc = UTC_OK;
    utc__call_starting(r->ctx, c);
    if (atomic_load_explicit(&c->dead, memory_order_relaxed))
        utc__req_finish(req, UTC_ERR_CANCELED);
    else
        rc = r->tp->ops->start(r->tp, req);
    utc__call_started(r->ctx, c);
    return rc;
}

/*
 * Mark the buffer of an owned write handed over, or say why it cannot be: the same
 * statuses and messages on both transports. A buffer written twice is refused whether the
 * first write's message still waits in-process (the buffer is marked handed over) or went
 * to another rank (the runtime freed it, and the quarantine of service/buffer.c keeps its
 * address from being reused for a while).
 */
static utc_status_t owned_hand_over(const xfer_t *x)
{
    size_t cap = 0;
    switch (utc__buf_hand_over(x->sbuf, &cap)) {
    case UTC__BUF_OK:
        break;
    case UTC__BUF_UNKNOWN:
        return utc__error(UTC_ERR_INVALID_ARG, "%s: buffer %p does not come from utc_buf_alloc",
                          x->fn, x->sbuf);
    case UTC__BUF_HANDED:
    case UTC__BUF_FREED_HANDED:
        return utc__error(UTC_ERR_INVALID_HANDLE, "%s: buffer %p was handed over already by an "
                          "earlier utc_conduit_write_owned and is no longer the caller's (the "
                          "reader owns, and frees, what it reads)", x->fn, x->sbuf);
    case UTC__BUF_FREED:
        return utc__error(UTC_ERR_INVALID_HANDLE, "%s: buffer %p was freed with utc_buf_free",
                          x->fn, x->sbuf);
    }
    if (x->size > cap) {
        utc__buf_hand_back(x->sbuf);
        return utc__error(UTC_ERR_INVALID_ARG, "%s: size %zu is larger than the buffer (%zu "
                          "bytes)", x->fn, x->size, cap);
    }
    return UTC_OK;
}

/* Probe until a message is there (or, nowait, once): the transport's status. */
static utc_status_t probe_loop(const xfer_t *x, utc__transport_t *tp, utc_request_t *req)
{
    utc__poll_t p = UTC__POLL_INIT;
    utc_status_t rc;
    while ((rc = tp->ops->probe(tp, req)) == UTC_ERR_TIMEOUT && !x->nowait)
        utc__poll_step(&p);
    return rc;
}

/* A probe: x->info says what the message is, when one is there. */
static utc_status_t perform_probe(utc_conduit_t *c, const xfer_t *x, const route_t *r)
{
    utc_request_t req;
    req_init(&req, c, x, r);
    utc_status_t rc = x->nowait ? probe_loop(x, r->tp, &req)
                                : CONDUIT_WAIT_CALL(UTC__WAIT_CONDUIT_READ, c, r->member, x->tag,
                                                    r->peer, NULL, probe_loop(x, r->tp, &req));
    if (rc == UTC_OK) {
        *x->info = (utc_msg_info_t){.size = req.received, .tag = req.tag, .peer = req.peer};
        return UTC_OK;
    }
    if (rc == UTC_ERR_TIMEOUT) /* iprobe: none yet (not an error: no message) */
        return rc;
    req.status = rc;
    return req_result(x->fn, &req, NULL, NULL);
}

/* A write (or a close) after this rank's writers at the caller's end closed their side.
 * Checked by the thread that transfers (a sibling in an all-threads call gets its status
 * through the barrier): true with the error set. */
static bool closed_for_writes(utc_conduit_t *c, const xfer_t *x, const route_t *r,
                              utc_status_t *rc)
{
    if (x->op != UTC__OP_SEND || !atomic_load_explicit(&r->e->wclosed, memory_order_relaxed))
        return false;
    *rc = utc__error(x->close ? UTC_ERR_STATE : UTC_ERR_CLOSED,
                     "%s: task '%s' closed its writing side of conduit %d on this rank "
                     "(utc_conduit_close)%s", x->fn, task_label(r->e), c->id,
                     x->close ? " already" : "; nothing was sent");
    return true;
}

/* The end of stream of this rank's writers at end r->end: to every rank of the other task
 * it writes to (free mode: all of them; single-entry: the entry rank), behind everything
 * they started before. Marked as a start (see transport_start): it enters MPI before the
 * destroy's drain marks, or not at all. */
static utc_status_t perform_close(utc_conduit_t *c, const xfer_t *x, const route_t *r)
{
    atomic_store(&r->e->wclosed, true); /* writes from now on are refused */
    const utc__conduit_end_t *other = &c->end[1 - r->end];
    bool free_mode = c->opts.mode == UTC_CONDUIT_FREE;
    int n = free_mode ? other->ngroup : 1, me = r->ctx->world_rank;
    utc_status_t rc = UTC_OK;
    for (int i = 0; i < n && rc == UTC_OK; i++) {
        int peer = free_mode ? other->group_ranks[i] : r->peer;
        utc__transport_t *tp = peer == me ? c->local : c->remote;
        if (c->shared) /* the shared transport ends this writer's stream to every reader */
            peer = r->member, tp = c->local;
        utc__call_starting(r->ctx, c);
        rc = atomic_load(&c->dead) ? UTC_ERR_CANCELED
                                   : tp ? tp->ops->close(tp, r->end, peer) : UTC_ERR_INTERNAL;
        utc__call_started(r->ctx, c);
    }
    if (rc != UTC_OK)
        return utc__error(rc, "%s: the end of stream of conduit %d could not be sent (%s)",
                          x->fn, c->id, utc_status_string(rc));
    return UTC_OK;
}

/* Run one operation to completion on the calling thread. Blocks. A failed task at the
 * other end is checked here, by the thread that transfers, not in route_op: checked by
 * each sibling of an all-threads call, a failure marked between two siblings' looks split
 * them (one returned, the other waited in the barrier for it); they get its status
 * through the barrier. */
static utc_status_t perform(utc_conduit_t *c, const xfer_t *x, const route_t *r,
                            size_t *received, void **obuf)
{
    if (atomic_load_explicit(&r->tp->failed, memory_order_relaxed))
        return peer_failed_error(c, r->tp, x->fn);
    if (x->probe)
        return perform_probe(c, x, r);
    utc_status_t crc;
    if (closed_for_writes(c, x, r, &crc))
        return crc;
    if (x->close)
        return perform_close(c, x, r);
    /* only the thread that transfers looks at an owned buffer: when all local threads call,
     * the others may arrive after thread 0 has handed it over (and the reader freed it);
     * they get thread 0's status through the barrier */
    if (x->owned && x->op == UTC__OP_SEND) {
        utc_status_t brc = owned_hand_over(x);
        if (brc != UTC_OK)
            return brc;
    }
    uint64_t t0 = utc__prof_start();
    utc_request_t req;
    req_init(&req, c, x, r);
    utc__transport_t *tp = r->tp;
    utc_status_t rc = transport_start(c, r, &req);
    utc__wait_kind_t wk = x->op == UTC__OP_SEND ? UTC__WAIT_CONDUIT_WRITE : UTC__WAIT_CONDUIT_READ;
    if (rc == UTC_OK && !CONDUIT_WAIT_CALL(wk, c, r->member, x->tag, r->peer, NULL,
                                         tp->ops->wait(tp, &req, x->timed ? x->timeout : -1))) {
        if (tp->ops->cancel(tp, &req))
            rc = utc__error(UTC_ERR_TIMEOUT, "%s: no message with tag %d arrived within %.3f s",
                            x->fn, x->tag, x->timeout);
        else
            tp->ops->wait(tp, &req, -1); /* matched meanwhile: it is arriving */
    }
    if (rc == UTC_OK)
        rc = req_result(x->fn, &req, received, obuf);
    if (x->info && (rc == UTC_OK || rc == UTC_ERR_TRUNCATE))
        *x->info = (utc_msg_info_t){.size = req.received, .tag = req.tag, .peer = req.peer};
    if (x->owned && x->op == UTC__OP_SEND && rc != UTC_OK)
        utc__buf_hand_back(x->sbuf); /* still the caller's (unless the transport freed it) */
    else if (x->owned && rc == UTC_OK && obuf && *obuf)
        utc__buf_received(*obuf); /* in-process: the writer's very buffer, now the reader's */
    UTC__PROF_END(prof_event(&req, rc), t0, c->id, prof_bytes(&req, rc), x->tag, r->peer);
    return rc;
}

static bool sibling_gone(void *ctx)
{
    int who;
    return utc__sibling_gone(ctx, &who);
}

/* An all-threads call that local thread `gone_id` can no longer join: it has returned from
 * the run. `done`: this thread made the transfer before it found out. */
static utc_status_t all_threads_error(const utc_conduit_t *c, const xfer_t *x, utc_ctx_t *ctx,
                                      int gone_id, bool done)
{
    const char *made = done ? "; this call's transfer was made" : "";
    if (x->solo)
        return utc__error(UTC_ERR_DEADLOCK,
                          "%s: thread %d of task '%s' on this rank has returned from its run "
                          "without calling it; every local thread of the task must call %s "
                          "(one of them transfers), or name the one that calls with %s "
                          "(conduit %d%s)",
                          x->fn, gone_id, utc_task_name(ctx->task), x->fn, x->solo, c->id, made);
    return utc__error(UTC_ERR_DEADLOCK,
                      "%s: thread %d of task '%s' on this rank has returned from its run "
                      "without calling it; every local thread of the task must call %s (one of "
                      "them transfers; it has no form for one thread) (conduit %d%s)",
                      x->fn, gone_id, utc_task_name(ctx->task), x->fn, c->id, made);
}

/* A blocking operation: all local threads (thread 0 transfers) or one named thread. The
 * caller's thread is marked as in a call on c (see conduit_close). */
static utc_status_t run_op_marked(utc_conduit_t *h, const xfer_t *x, size_t *received,
                                  void **obuf)
{
    route_t r;
    utc_status_t rc = route_op(h, x, &r);
    if (rc != UTC_OK)
        return rc;
    utc_conduit_t *c = utc__handle_ptr(h);
    if (r.skip) {
        if (received)
            *received = 0;
        return UTC_OK;
    }
    utc__conduit_end_t *e = r.e;
    if (!x->all || e->nlocal <= 1)
        return perform(c, x, &r, received, obuf);
    /* every local thread is here; thread 0 transfers, the others sleep in the barrier.
     * A sibling that has already returned from the run never will be. */
    int gone_id = -1;
    if (utc__sibling_gone(r.ctx, &gone_id))
        return all_threads_error(c, x, r.ctx, gone_id, false);
    unsigned k = e->op_count[r.ctx->local_id]++ & 1;
    if (r.ctx->local_id == 0) {
        size_t got = 0;
        void *ob = NULL;
        rc = perform(c, x, &r, &got, &ob);
        e->rc[k] = rc;
        e->received[k] = got;
        e->obuf[k] = ob;
        if (x->info)
            e->info[k] = *x->info;
        if (rc != UTC_OK)
            utc__text_copy(e->errmsg[k], sizeof e->errmsg[k], utc_last_error());
    }
    uint64_t t0 = utc__prof_start();
    /* orders thread 0's results before our reads */
    int joined = CONDUIT_WAIT_CALL(
        x->op == UTC__OP_SEND ? UTC__WAIT_CONDUIT_WRITE : UTC__WAIT_CONDUIT_READ, c, r.member,
        x->tag, r.peer, NULL, utc__barrier_wait_or(&e->barrier, sibling_gone, r.ctx));
    UTC__PROF_END(UTC__EV_CONDUIT_WAIT, t0, c->id, 0, x->tag, r.peer);
    if (joined < 0) {
        (void)utc__sibling_gone(r.ctx, &gone_id);
        return all_threads_error(c, x, r.ctx, gone_id, r.ctx->local_id == 0);
    }
    rc = e->rc[k];
    if (rc == UTC_OK || rc == UTC_ERR_TRUNCATE) {
        if (received)
            *received = e->received[k];
        if (obuf && rc == UTC_OK)
            *obuf = e->obuf[k];
        if (x->info)
            *x->info = e->info[k];
    }
    if (rc != UTC_OK && !(x->nowait && rc == UTC_ERR_TIMEOUT) && r.ctx->local_id != 0)
        utc__error(rc, "%s", e->errmsg[k]);
    return rc;
}

static utc_status_t run_op(utc_conduit_t *h, const xfer_t *x, size_t *received, void **obuf)
{
    utc_ctx_t *ctx = utc_ctx_self();
    if (ctx) /* the object's address: what a destroy looks for */
        utc__call_enter(ctx, utc__handle_ptr(h));
    utc_status_t rc = run_op_marked(h, x, received, obuf);
    if (ctx)
        utc__call_leave(ctx);
    return rc;
}

/*
 * The express path of a plain blocking write or read (utc_conduit_write, utc_conduit_read)
 * by a task's only thread on this rank, on the route this thread took last time (its
 * memo): the arguments' checks, the looks at the conduit and the transport that a start
 * needs, the request, the transport. In a fine-grained exchange the time from a message's
 * arrival to the next message's departure is the reader's return plus the writer's way to
 * its transport, so each instruction there counts. False, with nothing done, when the call
 * is not of that kind (or something is amiss: the conduit destroyed, the other end
 * failed, the side closed, profiling on): the general path then makes it, with its
 * messages. Its argument checks are check_args' for a plain call, and its request is
 * req_init's, written out: building the xfer_t that those take, before this path, made an
 * in-process 8 B message 0.088 -> 0.106 us (measured), so keep the twins in step.
 */
static bool express(utc_conduit_t *h, utc__op_t op, const void *sbuf, void *rbuf, size_t size,
                    int tag, size_t *received, utc_status_t *rcp)
{
    const route_memo_t *m = &route_memo[op == UTC__OP_SEND];
    if (m->h != h || tag < 0 || tag > UTC_CONDUIT_TAG_MAX || size > (size_t)PTRDIFF_MAX ||
        (size && !(op == UTC__OP_SEND ? sbuf : rbuf)))
        return false;
    /* acquire: as in route_memo_find */
    if (m->epoch != atomic_load_explicit(&reg_epoch, memory_order_acquire))
        return false;
    utc_ctx_t *ctx = utc_ctx_self();
    const route_t *r = &m->r;
    if (ctx != m->ctx || ctx->task != m->task || r->e->nlocal > 1 || UTC__PROF_ON())
        return false;
    utc_conduit_t *c = utc__handle_ptr(h);
    utc__transport_t *tp = r->tp;
    /* in the call and starting at once (utc__call_starting), then the looks the general
     * path makes before a start (route_op, perform, transport_start) */
    utc__call_starting(ctx, c);
    if (atomic_load_explicit(&c->dead, memory_order_relaxed) ||
        atomic_load_explicit(&tp->failed, memory_order_relaxed) ||
        (op == UTC__OP_SEND && atomic_load_explicit(&r->e->wclosed, memory_order_relaxed))) {
        utc__call_leave(ctx);
        return false;
    }
    utc_request_t req;
    utc__req_prepare(&req, op, op == UTC__OP_SEND ? r->end : 1 - r->end, tag, r->peer, tp);
    req.conduit = c;
    req.member = r->member;
    req.sbuf = sbuf;
    req.rbuf = rbuf;
    req.size = size;
    utc_status_t rc = tp->ops->start(tp, &req);
    utc__call_started(ctx, c);
    if (rc == UTC_OK && utc__req_state(&req) != UTC__REQ_DONE)
        (void)UTC__WAIT_CALL(op == UTC__OP_SEND ? UTC__WAIT_CONDUIT_WRITE : UTC__WAIT_CONDUIT_READ,
                             c->id, tag, r->peer, NULL, tp->ops->wait(tp, &req, -1));
    if (rc == UTC_OK)
        rc = req_result(op == UTC__OP_SEND ? "utc_conduit_write" : "utc_conduit_read", &req,
                        received, NULL);
    utc__call_leave(ctx);
    *rcp = rc;
    return true;
}

#define XFER(...) ((xfer_t){__VA_ARGS__})

utc_status_t utc_conduit_write(utc_conduit_t *conduit, const void *buf, size_t size, int tag)
{
    utc_status_t rc;
    if (express(conduit, UTC__OP_SEND, buf, NULL, size, tag, NULL, &rc))
        return rc;
    xfer_t x = XFER(.fn = "utc_conduit_write", .solo = "utc_conduit_write_by",
                    .op = UTC__OP_SEND, .all = true, .tag = tag, .sbuf = buf, .size = size);
    return run_op(conduit, &x, NULL, NULL);
}

utc_status_t utc_conduit_read(utc_conduit_t *conduit, void *buf, size_t capacity, int tag,
                              size_t *received)
{
    utc_status_t rc;
    if (express(conduit, UTC__OP_RECV, NULL, buf, capacity, tag, received, &rc))
        return rc;
    xfer_t x = XFER(.fn = "utc_conduit_read", .solo = "utc_conduit_read_by", .op = UTC__OP_RECV,
                    .all = true, .tag = tag, .rbuf = buf, .size = capacity);
    return run_op(conduit, &x, received, NULL);
}

utc_status_t utc_conduit_read_timeout(utc_conduit_t *conduit, void *buf, size_t capacity,
                                      int tag, size_t *received, double timeout_s)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_timeout",
                    .solo = "utc_conduit_read_timeout_by", .op = UTC__OP_RECV, .all = true,
                    .tag = tag, .rbuf = buf, .size = capacity, .timed = timeout_s >= 0,
                    .timeout = timeout_s);
    return run_op(conduit, &x, received, NULL);
}

utc_status_t utc_conduit_write_by(utc_conduit_t *conduit, int thread, const void *buf,
                                  size_t size, int tag)
{
    xfer_t x = XFER(.fn = "utc_conduit_write_by", .op = UTC__OP_SEND, .by = true,
                    .thread = thread, .tag = tag, .sbuf = buf, .size = size);
    return run_op(conduit, &x, NULL, NULL);
}

utc_status_t utc_conduit_read_by(utc_conduit_t *conduit, int thread, void *buf,
                                 size_t capacity, int tag, size_t *received)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_by", .op = UTC__OP_RECV, .by = true,
                    .thread = thread, .tag = tag, .rbuf = buf, .size = capacity);
    return run_op(conduit, &x, received, NULL);
}

utc_status_t utc_conduit_read_timeout_by(utc_conduit_t *conduit, int thread, void *buf,
                                         size_t capacity, int tag, size_t *received,
                                         double timeout_s)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_timeout_by", .op = UTC__OP_RECV, .by = true,
                    .thread = thread, .tag = tag, .rbuf = buf, .size = capacity,
                    .timed = timeout_s >= 0, .timeout = timeout_s);
    return run_op(conduit, &x, received, NULL);
}

utc_status_t utc_conduit_write_owned(utc_conduit_t *conduit, void *buf, size_t size, int tag)
{
    xfer_t x = XFER(.fn = "utc_conduit_write_owned", .op = UTC__OP_SEND, .owned = true,
                    .all = true, .tag = tag, .sbuf = buf, .size = size);
    if (!buf)
        return utc__error(UTC_ERR_INVALID_ARG, "utc_conduit_write_owned: buffer is NULL");
    return run_op(conduit, &x, NULL, NULL);
}

utc_status_t utc_conduit_read_owned(utc_conduit_t *conduit, int tag, void **buf, size_t *size)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_owned", .op = UTC__OP_RECV, .owned = true,
                    .all = true, .tag = tag, .size = SIZE_MAX);
    if (!buf)
        return utc__error(UTC_ERR_INVALID_ARG, "utc_conduit_read_owned: buf (the output) is NULL");
    return run_op(conduit, &x, size, buf);
}

utc_status_t utc_conduit_read_owned_from(utc_conduit_t *conduit, int peer, int tag, void **buf,
                                         size_t *size)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_owned_from", .op = UTC__OP_RECV, .owned = true,
                    .all = true, .tag = tag, .named_peer = true, .peer = peer, .size = SIZE_MAX);
    if (!buf)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_conduit_read_owned_from: buf (the output) is NULL");
    return run_op(conduit, &x, size, buf);
}

utc_status_t utc_conduit_write_to(utc_conduit_t *conduit, int peer, const void *buf, size_t size,
                                  int tag)
{
    xfer_t x = XFER(.fn = "utc_conduit_write_to", .solo = "utc_conduit_write_to_by",
                    .op = UTC__OP_SEND, .all = true, .tag = tag,
                    .named_peer = true, .peer = peer, .sbuf = buf, .size = size);
    return run_op(conduit, &x, NULL, NULL);
}

utc_status_t utc_conduit_read_from(utc_conduit_t *conduit, int peer, void *buf, size_t capacity,
                                   int tag, size_t *received)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_from", .solo = "utc_conduit_read_from_by",
                    .op = UTC__OP_RECV, .all = true, .tag = tag,
                    .named_peer = true, .peer = peer, .rbuf = buf, .size = capacity);
    return run_op(conduit, &x, received, NULL);
}

utc_status_t utc_conduit_read_from_timeout(utc_conduit_t *conduit, int peer, void *buf,
                                           size_t capacity, int tag, size_t *received,
                                           double timeout_s)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_from_timeout",
                    .solo = "utc_conduit_read_from_timeout_by", .op = UTC__OP_RECV, .all = true,
                    .tag = tag, .named_peer = true, .peer = peer, .rbuf = buf, .size = capacity,
                    .timed = timeout_s >= 0, .timeout = timeout_s);
    return run_op(conduit, &x, received, NULL);
}

utc_status_t utc_conduit_write_to_by(utc_conduit_t *conduit, int thread, int peer,
                                     const void *buf, size_t size, int tag)
{
    xfer_t x = XFER(.fn = "utc_conduit_write_to_by", .op = UTC__OP_SEND, .by = true,
                    .thread = thread, .tag = tag, .named_peer = true, .peer = peer, .sbuf = buf,
                    .size = size);
    return run_op(conduit, &x, NULL, NULL);
}

utc_status_t utc_conduit_read_from_by(utc_conduit_t *conduit, int thread, int peer, void *buf,
                                      size_t capacity, int tag, size_t *received)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_from_by", .op = UTC__OP_RECV, .by = true,
                    .thread = thread, .tag = tag, .named_peer = true, .peer = peer, .rbuf = buf,
                    .size = capacity);
    return run_op(conduit, &x, received, NULL);
}

utc_status_t utc_conduit_read_from_timeout_by(utc_conduit_t *conduit, int thread, int peer,
                                              void *buf, size_t capacity, int tag,
                                              size_t *received, double timeout_s)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_from_timeout_by", .op = UTC__OP_RECV, .by = true,
                    .thread = thread, .tag = tag, .named_peer = true, .peer = peer, .rbuf = buf,
                    .size = capacity, .timed = timeout_s >= 0, .timeout = timeout_s);
    return run_op(conduit, &x, received, NULL);
}

utc_status_t utc_conduit_close(utc_conduit_t *conduit)
{
    xfer_t x = XFER(.fn = "utc_conduit_close", .op = UTC__OP_SEND, .all = true, .close = true);
    return run_op(conduit, &x, NULL, NULL);
}

/* ---- probes and any-tag reads ---- */

/* A probe is no transfer: any thread may call one, alone, and each call looks for itself
 * (no "every local thread calls" rule, no barrier). */
static utc_status_t probe(utc_conduit_t *conduit, xfer_t *x, int *found)
{
    if (x->nowait && !found)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: found (the output) is NULL", x->fn);
    utc_status_t rc = run_op(conduit, x, NULL, NULL);
    if (found)
        *found = rc == UTC_OK;
    return rc == UTC_ERR_TIMEOUT && x->nowait ? UTC_OK : rc;
}

utc_status_t utc_conduit_probe(utc_conduit_t *conduit, int tag, utc_msg_info_t *info)
{
    xfer_t x = XFER(.fn = "utc_conduit_probe", .op = UTC__OP_RECV, .tag = tag, .any_tag = true,
                    .probe = true, .info = info);
    return probe(conduit, &x, NULL);
}

utc_status_t utc_conduit_iprobe(utc_conduit_t *conduit, int tag, int *found,
                                utc_msg_info_t *info)
{
    xfer_t x = XFER(.fn = "utc_conduit_iprobe", .op = UTC__OP_RECV, .tag = tag, .any_tag = true,
                    .probe = true, .nowait = true, .info = info);
    return probe(conduit, &x, found);
}

utc_status_t utc_conduit_probe_from(utc_conduit_t *conduit, int peer, int tag,
                                    utc_msg_info_t *info)
{
    xfer_t x = XFER(.fn = "utc_conduit_probe_from", .op = UTC__OP_RECV, .tag = tag,
                    .named_peer = true, .peer = peer, .any_tag = true, .probe = true,
                    .info = info);
    return probe(conduit, &x, NULL);
}

utc_status_t utc_conduit_iprobe_from(utc_conduit_t *conduit, int peer, int tag, int *found,
                                     utc_msg_info_t *info)
{
    xfer_t x = XFER(.fn = "utc_conduit_iprobe_from", .op = UTC__OP_RECV, .tag = tag,
                    .named_peer = true, .peer = peer, .any_tag = true, .probe = true,
                    .nowait = true, .info = info);
    return probe(conduit, &x, found);
}

utc_status_t utc_conduit_read_any(utc_conduit_t *conduit, void *buf, size_t capacity,
                                  utc_msg_info_t *info)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_any", .op = UTC__OP_RECV, .all = true,
                    .tag = UTC_ANY_TAG, .any_tag = true, .rbuf = buf, .size = capacity,
                    .info = info);
    return run_op(conduit, &x, NULL, NULL);
}

utc_status_t utc_conduit_read_any_from(utc_conduit_t *conduit, int peer, void *buf,
                                       size_t capacity, utc_msg_info_t *info)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_any_from", .op = UTC__OP_RECV, .all = true,
                    .tag = UTC_ANY_TAG, .any_tag = true, .named_peer = true, .peer = peer,
                    .rbuf = buf, .size = capacity, .info = info);
    return run_op(conduit, &x, NULL, NULL);
}

/* ---- asynchronous operations ---- */

/*
 * Requests of iwrite/iread come from a small per-thread cache, so a fine-grained exchange
 * (a request per message) does not pay malloc and free each time. A thread's cache is
 * freed when the thread exits (a key destructor).
 */
#define REQ_CACHE 16
typedef struct req_cache {
    int n;
    bool keyed;
    utc_request_t *r[REQ_CACHE];
} req_cache_t;

static _Thread_local req_cache_t req_cache;
static pthread_key_t req_cache_key;
static pthread_once_t req_cache_once = PTHREAD_ONCE_INIT;

static void req_cache_drop(void *p)
{
    req_cache_t *c = p;
    while (c->n > 0)
        free(c->r[--c->n]);
}

static void req_cache_key_make(void) { (void)pthread_key_create(&req_cache_key, req_cache_drop); }

static utc_request_t *req_alloc(void)
{
    req_cache_t *c = &req_cache;
    return c->n > 0 ? c->r[--c->n] : malloc(sizeof(utc_request_t));
}

static void req_release(utc_request_t *r)
{
    req_cache_t *c = &req_cache;
    if (!c->keyed) {
        pthread_once(&req_cache_once, req_cache_key_make);
        c->keyed = pthread_setspecific(req_cache_key, c) == 0;
    }
    if (c->keyed && c->n < REQ_CACHE)
        c->r[c->n++] = r;
    else
        free(r);
}

/* An asynchronous operation of a multi-threaded end: recorded in the end's in-flight set,
 * or refused when a sibling thread has the same one in flight (inflight.h). *entry: the
 * record, or NULL. */
static utc_status_t inflight_check(const xfer_t *x, const route_t *r,
                                   utc__inflight_entry_t **entry)
{
    utc__conduit_end_t *e = r->e;
    *entry = NULL;
    if (e->nlocal <= 1)
        return UTC_OK;
    utc__inflight_key_t k = {x->op == UTC__OP_SEND ? x->sbuf : x->rbuf, x->size, x->op, r->peer,
                             x->tag, 0};
    int owner = -1;
    if ((*entry = utc__inflight_add(&e->inflight, &k, r->ctx->local_id, &owner)) || owner < 0)
        return UTC_OK;
    bool w = x->op == UTC__OP_SEND;
    return utc__error(UTC_ERR_STATE,
                      "%s: thread %d of task '%s' on this rank already has this very %s in "
                      "flight (buffer %p, %zu bytes, tag %d, rank %d), and this is thread %d: "
                      "an asynchronous call is one message per call, not one per task as a "
                      "blocking call, so one thread starts it (e.g. if (ctx->local_id == 0)); "
                      "nothing was %s", x->fn, owner, task_label(e), w ? "write" : "read",
                      k.buf, x->size, x->tag, r->peer, r->ctx->local_id, w ? "sent" : "posted");
}

/* Start an asynchronous operation; the caller's thread is marked as in a call on c. */
static utc_status_t start_marked(utc_conduit_t *h, const xfer_t *x, utc_request_t **out)
{
    route_t r;
    utc_status_t rc = route_op(h, x, &r);
    utc_conduit_t *c = utc__handle_ptr(h);
    utc__inflight_entry_t *entry = NULL;
    if (rc == UTC_OK && atomic_load_explicit(&r.tp->failed, memory_order_relaxed))
        rc = peer_failed_error(c, r.tp, x->fn);
    if (rc != UTC_OK || closed_for_writes(c, x, &r, &rc) ||
        (rc = inflight_check(x, &r, &entry)) != UTC_OK)
        return rc;
    if ((rc = req_ref(c, r.end, x->fn)) != UTC_OK) {
        utc__inflight_remove(&r.e->inflight, entry);
        return rc;
    }
    utc_request_t *req = req_alloc();
    if (!req) {
        utc__inflight_remove(&r.e->inflight, entry);
        req_unref(c, r.end);
        return utc__error(UTC_ERR_NO_MEMORY, "%s: out of memory", x->fn);
    }
    req_init(req, c, x, &r);
    req->heap = true;
    req->inflight = entry;
    utc_request_t *rh = utc__req_handle_new(req);
    if (!rh || (rc = transport_start(c, &r, req)) != UTC_OK) {
        if (rh)
            utc__req_handle_retire(rh);
        else
            rc = utc__error(UTC_ERR_NO_MEMORY, "%s: out of memory", x->fn);
        utc__inflight_remove(&r.e->inflight, entry);
        req->magic = 0;
        req_release(req);
        req_unref(c, r.end);
        return rc;
    }
    *out = rh;
    return UTC_OK;
}

static utc_status_t start_async(utc_conduit_t *c, const xfer_t *x, utc_request_t **out)
{
    if (!out)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: req (the output) is NULL", x->fn);
    utc_ctx_t *ctx = utc_ctx_self();
    if (ctx) /* the object's address: what a destroy looks for */
        utc__call_enter(ctx, utc__handle_ptr(c));
    utc_status_t rc = start_marked(c, x, out);
    if (ctx)
        utc__call_leave(ctx);
    return rc;
}

utc_status_t utc_conduit_iwrite(utc_conduit_t *conduit, const void *buf, size_t size, int tag,
                                utc_request_t **req)
{
    xfer_t x = XFER(.fn = "utc_conduit_iwrite", .op = UTC__OP_SEND, .tag = tag, .sbuf = buf,
                    .size = size);
    return start_async(conduit, &x, req);
}

utc_status_t utc_conduit_iread(utc_conduit_t *conduit, void *buf, size_t capacity, int tag,
                               utc_request_t **req)
{
    xfer_t x = XFER(.fn = "utc_conduit_iread", .op = UTC__OP_RECV, .tag = tag, .rbuf = buf,
                    .size = capacity);
    return start_async(conduit, &x, req);
}

utc_status_t utc_conduit_iwrite_to(utc_conduit_t *conduit, int peer, const void *buf, size_t size,
                                   int tag, utc_request_t **req)
{
    xfer_t x = XFER(.fn = "utc_conduit_iwrite_to", .op = UTC__OP_SEND, .tag = tag,
                    .named_peer = true, .peer = peer, .sbuf = buf, .size = size);
    return start_async(conduit, &x, req);
}

utc_status_t utc_conduit_iread_from(utc_conduit_t *conduit, int peer, void *buf, size_t capacity,
                                    int tag, utc_request_t **req)
{
    xfer_t x = XFER(.fn = "utc_conduit_iread_from", .op = UTC__OP_RECV, .tag = tag,
                    .named_peer = true, .peer = peer, .rbuf = buf, .size = capacity);
    return start_async(conduit, &x, req);
}

/* Claim the request behind handle *req for this call (service/req_handle.h): *out the
 * request, or the error. */
static utc_status_t claim_request(utc_request_t **req, const char *fn, utc_request_t **out)
{
    utc_status_t rc = utc__check_init(fn);
    if (rc != UTC_OK)
        return rc;
    if (!req || !*req)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: request is NULL", fn);
    utc__claim_t why = UTC__CLAIM_OK;
    utc_request_t *r = utc__req_handle_claim(*req, &why);
    if (!r && why == UTC__CLAIM_STALE)
        return utc__error(UTC_ERR_INVALID_HANDLE,
                          "%s: %p is a stale request handle: its request has completed (it was "
                          "waited for, or tested done) and the handle may not be used again",
                          fn, (void *)*req);
    if (!r && why == UTC__CLAIM_BUSY)
        return utc__error(UTC_ERR_STATE,
                          "%s: another thread is waiting on or testing request %p; a request "
                          "is waited for by one thread at a time (the others get this error)",
                          fn, (void *)*req);
    if (!r || r->magic != UTC__REQ_MAGIC || !r->heap) {
        if (r)
            utc__req_handle_unclaim(*req);
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: %p is not a request from utc_conduit_iwrite/iread", fn,
                          (void *)*req);
    }
    *out = r;
    return UTC_OK;
}

/* The claimed request r behind *req is done: the handle goes stale, r is released. */
static utc_status_t complete_async(utc_request_t **req, utc_request_t *r, const char *fn,
                                   size_t *received)
{
    utc_status_t rc = req_result(fn, r, received, NULL);
    utc_conduit_t *c = r->conduit;
    int e = req_end(r);
    utc__inflight_remove(&c->ends[r->member].inflight, r->inflight);
    utc__req_handle_retire(*req);
    *req = NULL;
    r->magic = 0;
    req_release(r);
    req_unref(c, e); /* the request's count */
    return rc;
}

utc_status_t utc_request_test(utc_request_t **req, int *done, size_t *received)
{
    if (!done) /* before the claim: nothing to give back */
        return utc__error(UTC_ERR_INVALID_ARG, "utc_request_test: done (the output) is NULL");
    utc_request_t *r;
    utc_status_t rc = claim_request(req, "utc_request_test", &r);
    if (rc != UTC_OK)
        return rc;
    uint64_t t0 = utc__prof_start();
    bool complete = r->tp->ops->progress(r->tp, r);
    /* the test that completes a moved message records the transfer; others a wait */
    UTC__PROF_END(complete ? prof_event(r, r->status) : UTC__EV_CONDUIT_WAIT, t0, r->conduit->id,
                  complete ? prof_bytes(r, r->status) : 0, r->tag, r->peer);
    if (!complete) {
        *done = 0;
        utc__req_handle_unclaim(*req);
        return UTC_OK;
    }
    *done = 1;
    return complete_async(req, r, "utc_request_test", received);
}

utc_status_t utc_request_wait(utc_request_t **req, size_t *received)
{
    utc_request_t *r;
    utc_status_t rc = claim_request(req, "utc_request_wait", &r);
    if (rc != UTC_OK)
        return rc;
    uint64_t t0 = utc__prof_start();
    CONDUIT_WAIT_CALL(UTC__WAIT_CONDUIT_REQ, r->conduit, r->member, r->tag, r->peer,
                      r->op == UTC__OP_SEND ? "write" : "read", r->tp->ops->wait(r->tp, r, -1));
    UTC__PROF_END(prof_event(r, r->status), t0, r->conduit->id, prof_bytes(r, r->status), r->tag,
                  r->peer);
    return complete_async(req, r, "utc_request_wait", received);
}

utc_status_t utc_request_cancel(utc_request_t **req)
{
    utc_request_t *r;
    utc_status_t rc = claim_request(req, "utc_request_cancel", &r);
    if (rc != UTC_OK)
        return rc;
    /* a read with no message yet is withdrawn; anything else completes as it would */
    if (r->op == UTC__OP_RECV && utc__req_state(r) == UTC__REQ_PENDING &&
        r->tp->ops->cancel(r->tp, r)) {
        r->canceled_by_user = true;
        utc__req_finish(r, UTC_ERR_CANCELED);
    }
    utc__req_handle_unclaim(*req);
    return UTC_OK;
}

/* ---- failed tasks (hooks of the tasks layer, installed by utc_init) ---- */

/* Mark the conduits that have `task` as an end failed here (its error `rc`; operations end
 * with `status`) and end their pending reads. A run that failed (global_thread >= 0) also
 * tells the conduits' other ranks, and says so in the log. */
static void mark_task_failed(utc_task_t *task, utc_status_t rc, utc_status_t status,
                             int global_thread)
{
    pthread_mutex_lock(&reg_lock);
    utc_conduit_t *c, *tmp;
    HASH_ITER(hh, registry, c, tmp) {
        for (int e = 0; e < c->nends; e++) {
            if (c->ends[e].task != task)
                continue;
            utc__transport_t *tps[2] = {c->local, c->remote};
            bool told = false;
            for (int i = 0; i < 2; i++) {
                utc__transport_t *tp = tps[i];
                if (!tp || !utc__transport_mark_failed(tp, e, utc_rank(), (int)rc, status))
                    continue;
                tp->ops->fail(tp, status);
                if (global_thread >= 0 && tp->ops->notify_failed)
                    tp->ops->notify_failed(tp, e, rc);
                told = true;
            }
            if (told && global_thread >= 0)
                utc_log(UTC_LOG_INFO, "conduit %d: task '%s' failed here (thread %d: %s); "
                        "operations on the conduit end with UTC_ERR_PEER_FAILED", c->id,
                        task_label(&c->ends[e]), global_thread, utc_status_string(rc));
        }
    }
    pthread_mutex_unlock(&reg_lock);
}

void utc__conduits_run_failed(utc_task_t *task, utc_status_t rc, int global_thread)
{
    mark_task_failed(task, rc, UTC_ERR_PEER_FAILED, global_thread);
}

void utc__conduits_run_queued(utc_task_t *task)
{
    pthread_mutex_lock(&reg_lock);
    utc_conduit_t *c, *tmp;
    HASH_ITER(hh, registry, c, tmp) {
        utc__transport_t *tps[2] = {c->local, c->remote};
        for (int i = 0; i < 2; i++)
            if (tps[i] && atomic_load(&tps[i]->failed) &&
                end_at(c, atomic_load(&tps[i]->fail_end))->task == task)
                atomic_store(&tps[i]->failed, 0); /* the failed task runs again */
    }
    pthread_mutex_unlock(&reg_lock);
}

void utc__conduits_task_destroyed(utc_task_t *task)
{
    /* the conduits joined to it end the operations pending on them (a run blocked on one
     * returns), here; every rank destroys the task, so no notice is sent */
    mark_task_failed(task, UTC_OK, UTC_ERR_CANCELED, -1);
}
