/*
 * Conduits: requests. iwrite/iread start one (from a per-thread cache), test, wait and
 * cancel finish it; a request's handle goes stale once it has completed
 * (service/req_handle.h).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "conduit_internal.h"
#include "service/req_handle.h"
#include "base/handle.h"

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
                      "nothing was %s", x->fn, owner, utc__conduit_label(e), w ? "write" : "read",
                      k.buf, x->size, x->tag, r->peer, r->ctx->local_id, w ? "sent" : "posted");
}

/* Start an asynchronous operation; the caller's thread is marked as in a call on c. */
static utc_status_t start_marked(utc_conduit_t *h, const xfer_t *x, utc_request_t **out)
{
    route_t r;
    utc_status_t rc = utc__conduit_route(h, x, &r);
    utc_conduit_t *c = utc__handle_ptr(h);
    utc__inflight_entry_t *entry = NULL;
    if (rc == UTC_OK && utc__transport_marked(r.tp))
        rc = utc__conduit_peer_failed(c, r.tp, x->fn);
    if (rc != UTC_OK || utc__conduit_closed_for_writes(c, x, &r, &rc) ||
        (rc = inflight_check(x, &r, &entry)) != UTC_OK)
        return rc;
    if ((rc = utc__conduit_req_ref(c, r.end, x->fn)) != UTC_OK) {
        utc__inflight_remove(&r.e->inflight, entry);
        return rc;
    }
    utc_request_t *req = req_alloc();
    if (!req) {
        utc__inflight_remove(&r.e->inflight, entry);
        utc__conduit_req_unref(c, r.end);
        return utc__error(UTC_ERR_NO_MEMORY, "%s: out of memory", x->fn);
    }
    utc__conduit_req_init(req, c, x, &r);
    req->heap = true;
    req->inflight = entry;
    utc_request_t *rh = utc__req_handle_new(req);
    if (!rh || (rc = utc__conduit_start(c, &r, req)) != UTC_OK) {
        if (rh)
            utc__req_handle_retire(rh);
        else
            rc = utc__error(UTC_ERR_NO_MEMORY, "%s: out of memory", x->fn);
        utc__inflight_remove(&r.e->inflight, entry);
        req->magic = 0;
        req_release(req);
        utc__conduit_req_unref(c, r.end);
        return rc;
    }
    *out = rh;
    return UTC_OK;
}

utc_status_t utc__conduit_start_async(utc_conduit_t *c, const xfer_t *x, utc_request_t **out)
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

/*
 * The express path of a plain asynchronous read (utc_conduit_iread) by a task's only
 * thread on this rank, on the route this thread took last time (transfer.c's express
 * paths): a solo request. It comes from the thread's cache, as any; its handle is owned by
 * the thread (a claim by that thread takes no locked instruction: service/req_handle.h);
 * and it holds no count against its conduit, which would cost a locked add now and a
 * locked subtract at its end, on the hot path of a fine-grained exchange, where a locked
 * instruction after a message just published waits for that message's stores.
 *
 * Without the count, the conduit (and its transports) may be freed while the request is
 * out. So before a call on it touches its transport (solo_enter): the thread that started
 * it marks itself in a call on the conduit (utc__call_enter) and then looks whether the
 * conduit still lives (not destroyed, the same generation: the object is pooled, never
 * freed, so the look is safe), the Dekker pair of every blocking call with the destroy:
 * either it sees the conduit destroyed, or the destroy waits for its call to leave before
 * the transports go (registry.c, conduit_close). Any other thread takes the request's
 * count then (utc__conduit_req_ref, refused once destroyed), as a request of the general
 * path holds it from its start. A destroy ends the request first (its transport's
 * shutdown: UTC_ERR_CANCELED), so a call that finds the conduit gone finds it ended, or
 * about to be, and reports it without its transport (solo_gone_result).
 */
bool utc__conduit_express_iread(utc_conduit_t *h, void *rbuf, size_t size, int tag,
                                utc_request_t **out, utc_status_t *rcp)
{
    utc_ctx_t *ctx;
    const route_t *r = utc__conduit_express_enter(h, UTC__OP_RECV, NULL, rbuf, size, tag, &ctx);
    if (!r)
        return false;
    if (!r->tp->ops->solo_reads) { /* its reads must hold the conduit's count */
        utc__call_leave(ctx);
        return false;
    }
    utc_conduit_t *c = utc__handle_ptr(h);
    /* a generation of 0 (an address without room for one) tells no reuse: the general path */
    utc_request_t *req = c->gen ? req_alloc() : NULL;
    utc_request_t *rh = req ? utc__req_handle_new_owned(req) : NULL;
    if (!rh) {
        if (req)
            req_release(req);
        utc__call_leave(ctx);
        return false; /* the general path says what is amiss */
    }
    utc__conduit_express_req(req, c, r, UTC__OP_RECV, NULL, rbuf, size, tag);
    req->heap = true;
    req->solo = true;
    req->cgen = c->gen;
    req->sctx = ctx;
    utc_status_t rc = r->tp->ops->start(r->tp, req);
    utc__call_started(ctx, c);
    utc__call_leave(ctx);
    if (rc != UTC_OK) {
        utc__req_handle_retire(rh);
        req->magic = 0;
        req_release(req);
    } else {
        *out = rh;
    }
    *rcp = rc;
    return true;
}

/* Whether solo request r's conduit still lives: not destroyed, and not pooled and made
 * again (its generation). */
static bool solo_alive(const utc_request_t *r)
{
    const utc_conduit_t *c = r->conduit;
    /* acquire: a reuse stores the new generation before it clears `dead` (registry.c) */
    return !atomic_load_explicit(&c->dead, memory_order_acquire) && c->gen == r->cgen;
}

/* How a call may touch solo request r's transport (see utc__conduit_express_iread). */
typedef enum {
    SOLO_IN_CALL, /* the starting thread, marked in a call on the conduit: leave after */
    SOLO_COUNTED, /* another thread holding the request's count: drop it after */
    SOLO_GONE     /* the conduit is gone: r has ended (or is ending) without a transport */
} solo_t;

static solo_t solo_enter(utc_request_t *r)
{
    utc_conduit_t *c = r->conduit;
    utc_ctx_t *ctx = utc_ctx_self();
    if (ctx && ctx == r->sctx) {
        utc__call_enter(ctx, c);
        /* (the context may be a later task's at the same address: its task must be the
         * end's, whose calls a destroy waits for) */
        if (solo_alive(r) && c->ends[r->member].task == ctx->task)
            return SOLO_IN_CALL;
        utc__call_leave(ctx);
    }
    if (!solo_alive(r))
        return SOLO_GONE;
    int e = utc__conduit_req_end(r);
    if (utc__conduit_req_ref_quiet(c, e)) {
        if (solo_alive(r)) /* the count is this conduit's, not a later one's */
            return SOLO_COUNTED;
        utc__conduit_req_unref(c, e);
    }
    return SOLO_GONE;
}

/* The end of a call on a solo request of conduit c and end e that solo_enter let in. */
static void solo_leave(utc_conduit_t *c, int e, solo_t how)
{
    if (how == SOLO_IN_CALL)
        utc__call_leave(utc_ctx_self());
    else if (how == SOLO_COUNTED)
        utc__conduit_req_unref(c, e);
}

/* The result of solo request r, ended, whose conduit is gone (its transport freed): what
 * utc__conduit_req_result says, without a look at the conduit or the transport. */
static utc_status_t solo_gone_result(const char *fn, const utc_request_t *r, size_t *received)
{
    switch (r->status) {
    case UTC_OK:
        if (received)
            *received = r->received;
        return UTC_OK;
    case UTC_ERR_TRUNCATE:
        if (received)
            *received = r->received;
        return utc__error(UTC_ERR_TRUNCATE,
                          "%s: the next message with tag %d is %zu bytes, "
                          "larger than the %zu-byte buffer; nothing was received (and the "
                          "conduit is destroyed since)",
                          fn, r->tag, r->received, r->size);
    case UTC_ERR_CANCELED:
        return utc__error(UTC_ERR_CANCELED, "%s: %s (tag %d)", fn,
                          r->canceled_by_user ? "the request was canceled"
                                              : "the conduit was destroyed with this operation "
                                                "in flight",
                          r->tag);
    default:
        return utc__error(r->status, "%s: %s (tag %d; the conduit is destroyed since)", fn,
                          utc_status_string(r->status), r->tag);
    }
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

/* Claimed handle *req is a completed-at-start write's (utc__req_done): it goes stale. */
static utc_status_t complete_done(utc_request_t **req, size_t *received)
{
    if (received)
        *received = utc__req_handle_done_size(*req);
    utc__req_handle_retire(*req);
    *req = NULL;
    return UTC_OK;
}

/* The claimed request r behind *req is done: the handle goes stale, r is released. A solo
 * request: `how`, from solo_enter. */
static utc_status_t complete_async(utc_request_t **req, utc_request_t *r, const char *fn,
                                   size_t *received, solo_t how)
{
    bool solo = r->solo;
    utc_status_t rc = solo && how == SOLO_GONE ? solo_gone_result(fn, r, received)
                                               : utc__conduit_req_result(fn, r, received, NULL);
    utc_conduit_t *c = r->conduit;
    int e = utc__conduit_req_end(r);
    if (r->inflight)
        utc__inflight_remove(&c->ends[r->member].inflight, r->inflight);
    utc__req_handle_retire(*req);
    *req = NULL;
    r->magic = 0;
    req_release(r);
    if (solo)
        solo_leave(c, e, how);
    else
        utc__conduit_req_unref(c, e); /* the request's count */
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
    if (r == &utc__req_done) {
        *done = 1;
        return complete_done(req, received);
    }
    solo_t how = r->solo ? solo_enter(r) : SOLO_IN_CALL;
    if (how == SOLO_GONE && utc__req_state(r) != UTC__REQ_DONE) {
        *done = 0; /* its destroy ends it */
        utc__req_handle_unclaim(*req);
        return UTC_OK;
    }
    uint64_t t0 = utc__prof_start();
    bool complete = how == SOLO_GONE || r->tp->ops->progress(r->tp, r);
    /* the test that completes a moved message records the transfer; others a wait */
    UTC__PROF_END(complete ? utc__conduit_prof_event(r, r->status) : UTC__EV_CONDUIT_WAIT, t0,
                  r->conduit->id, complete ? utc__conduit_prof_bytes(r, r->status) : 0, r->tag,
                  r->peer);
    if (!complete) {
        if (r->solo)
            solo_leave(r->conduit, utc__conduit_req_end(r), how);
        *done = 0;
        utc__req_handle_unclaim(*req);
        return UTC_OK;
    }
    *done = 1;
    return complete_async(req, r, "utc_request_test", received, how);
}

utc_status_t utc_request_wait(utc_request_t **req, size_t *received)
{
    utc_request_t *r;
    utc_status_t rc = claim_request(req, "utc_request_wait", &r);
    if (rc != UTC_OK)
        return rc;
    if (r == &utc__req_done)
        return complete_done(req, received);
    solo_t how = r->solo ? solo_enter(r) : SOLO_IN_CALL;
    if (how == SOLO_GONE) { /* its destroy ends it, if it has not yet */
        while (utc__req_state(r) != UTC__REQ_DONE)
            sched_yield();
        return complete_async(req, r, "utc_request_wait", received, how);
    }
    uint64_t t0 = utc__prof_start();
    /* one look first: a request done by then costs no wait record (base/wait_hook.h) */
    if (!r->tp->ops->progress(r->tp, r))
        CONDUIT_WAIT_CALL(UTC__WAIT_CONDUIT_REQ, r->conduit, r->member, r->tag, r->peer,
                          r->op == UTC__OP_SEND ? "write" : "read", r->tp->ops->wait(r->tp, r, -1));
    UTC__PROF_END(utc__conduit_prof_event(r, r->status), t0, r->conduit->id,
                  utc__conduit_prof_bytes(r, r->status), r->tag, r->peer);
    return complete_async(req, r, "utc_request_wait", received, how);
}

utc_status_t utc_request_cancel(utc_request_t **req)
{
    utc_request_t *r;
    utc_status_t rc = claim_request(req, "utc_request_cancel", &r);
    if (rc != UTC_OK)
        return rc;
    /* a read with no message yet is withdrawn; anything else completes as it would (a
     * solo one whose conduit is gone is ended by its destroy) */
    solo_t how = r->solo ? solo_enter(r) : SOLO_IN_CALL;
    if (how != SOLO_GONE && r->op == UTC__OP_RECV && utc__req_state(r) == UTC__REQ_PENDING &&
        r->tp->ops->cancel(r->tp, r)) {
        r->canceled_by_user = true;
        utc__req_finish(r, UTC_ERR_CANCELED);
    }
    if (r->solo)
        solo_leave(r->conduit, utc__conduit_req_end(r), how);
    utc__req_handle_unclaim(*req);
    return UTC_OK;
}
