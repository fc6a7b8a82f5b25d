/*
 * Conduits: one operation on the calling thread, from its start on the transport to its
 * result and error message: writes, reads, probes, the end of stream (close), owned
 * buffers handed over; and the express path of a plain write or read.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdint.h>

#include "conduit_internal.h"
#include "base/handle.h"
#include "service/req_handle.h"

/* A device conduit's error: the device layer's message (a CUDA call, a protocol error, a
 * reader's failed allocation) was set by the thread that moved the request, in the usual
 * case this one: keep its detail. */
static utc_status_t device_detail(const utc_request_t *req, const char *fn)
{
    char why[256];
    utc__text_copy(why, sizeof why, utc_last_error());
    return utc__error(req->status, "%s: %s", fn, why);
}

/* The status of a completed request, with the caller's error message. */
utc_status_t utc__conduit_req_result(const char *fn, const utc_request_t *req,
                                     size_t *received, void **obuf)
{
    if (req->status != UTC_OK && req->tp_err == UTC__TP_ERR_REST_MISSING)
        return utc__error(req->status, "%s: the writer on rank %d could not send the rest of a "
                          "%zu-byte message (tag %d; its write failed, see its error): the "
                          "message is lost", fn, req->peer, req->received, req->tag);
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
        return utc__mpi_error(req->tp_err, fn);
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
        if (req->conduit->opts.memory != UTC_CONDUIT_MEM_HOST)
            return device_detail(req, fn); /* whose memory: the device layer says */
        return utc__error(UTC_ERR_NO_MEMORY, "%s: out of memory for a %zu-byte message (tag %d)",
                          fn, req->op == UTC__OP_RECV ? req->received : req->size, req->tag);
    case UTC_ERR_PEER_FAILED:
        return utc__conduit_peer_failed(req->conduit, req->tp, fn);
    case UTC_ERR_CANCELED:
        if (!req->canceled_by_user && utc__transport_fail_status(req->tp) == UTC_ERR_CANCELED)
            return utc__conduit_peer_failed(req->conduit, req->tp, fn);
        return utc__error(UTC_ERR_CANCELED, "%s: %s (tag %d)", fn,
                          req->canceled_by_user ? "the request was canceled"
                                                : "the conduit was destroyed with this "
                                                  "operation in flight",
                          req->tag);
    default:
        if (req->conduit->opts.memory != UTC_CONDUIT_MEM_HOST)
            return device_detail(req, fn);
        return utc__error(req->status, "%s: %s", fn, utc_status_string(req->status));
    }
}

/* Hand `req` to its transport, the thread marked as starting (utc__call_starting): either
 * this start sees the conduit destroyed (the request ends with UTC_ERR_CANCELED) or the
 * destroy waits for it before the transports shut down. Between ranks, that keeps every
 * message ahead of the conduit's drain marks. */
utc_status_t utc__conduit_start(utc_conduit_t *c, const route_t *r, utc_request_t *req)
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
    utc__conduit_req_init(&req, c, x, r);
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
    return utc__conduit_req_result(x->fn, &req, NULL, NULL);
}

/* A write (or a close) after this rank's writers at the caller's end closed their side.
 * Checked by the thread that transfers (a sibling in an all-threads call gets its status
 * through the barrier): true with the error set. */
bool utc__conduit_closed_for_writes(utc_conduit_t *c, const xfer_t *x, const route_t *r,
                                    utc_status_t *rc)
{
    if (x->op != UTC__OP_SEND || !atomic_load_explicit(&r->e->wclosed, memory_order_relaxed))
        return false;
    *rc = utc__error(x->close ? UTC_ERR_STATE : UTC_ERR_CLOSED,
                     "%s: task '%s' closed its writing side of conduit %d on this rank "
                     "(utc_conduit_close)%s", x->fn, utc__conduit_label(r->e), c->id,
                     x->close ? " already" : "; nothing was sent");
    return true;
}

/* The end of stream of this rank's writers at end r->end: to every rank of the other task
 * it writes to (free mode: all of them; single-entry: the entry rank), behind everything
 * they started before. Marked as a start (see utc__conduit_start): it enters MPI before the
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
        utc__transport_t *tp = utc__conduit_tp(c, me, peer);
        if (c->shared) /* the shared transport ends this writer's stream to every reader */
            peer = r->member;
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
 * other end is checked here, by the thread that transfers, not in utc__conduit_route: checked by
 * each sibling of an all-threads call, a failure marked between two siblings' looks split
 * them (one returned, the other waited in the barrier for it); they get its status
 * through the barrier. */
utc_status_t utc__conduit_perform(utc_conduit_t *c, const xfer_t *x, const route_t *r,
                                  size_t *received, void **obuf)
{
    if (utc__transport_marked(r->tp))
        return utc__conduit_peer_failed(c, r->tp, x->fn);
    if (x->probe)
        return perform_probe(c, x, r);
    utc_status_t crc;
    if (utc__conduit_closed_for_writes(c, x, r, &crc))
        return crc;
    if (x->close)
        return perform_close(c, x, r);
    /* only the thread that transfers looks at an owned buffer: when all local threads call,
     * the others may arrive after thread 0 has handed it over (and the reader freed it);
     * they get thread 0's status through the barrier */
    /* (a device conduit's owned buffers are utc_gpu_malloc's: the device layer takes them) */
    bool host_owned = x->owned && c->opts.memory == UTC_CONDUIT_MEM_HOST;
    if (host_owned && x->op == UTC__OP_SEND) {
        utc_status_t brc = owned_hand_over(x);
        if (brc != UTC_OK)
            return brc;
    }
    uint64_t t0 = utc__prof_start();
    utc_request_t req;
    utc__conduit_req_init(&req, c, x, r);
    utc__transport_t *tp = r->tp;
    utc_status_t rc = utc__conduit_start(c, r, &req);
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
        rc = utc__conduit_req_result(x->fn, &req, received, obuf);
    if (x->info && (rc == UTC_OK || rc == UTC_ERR_TRUNCATE))
        *x->info = (utc_msg_info_t){.size = req.received, .tag = req.tag, .peer = req.peer};
    if (host_owned && x->op == UTC__OP_SEND && rc != UTC_OK)
        utc__buf_hand_back(x->sbuf); /* still the caller's (unless the transport freed it) */
    else if (host_owned && rc == UTC_OK && obuf && *obuf)
        utc__buf_received(*obuf); /* in-process: the writer's very buffer, now the reader's */
    UTC__PROF_END(utc__conduit_prof_event(&req, rc), t0, c->id, utc__conduit_prof_bytes(&req, rc),
                  x->tag, r->peer);
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
 * utc__conduit_req_init's, written out: building the xfer_t that those take, before this
 * path, made an in-process 8 B message 0.088 -> 0.106 us (measured), so keep the twins in
 * step.
 */
/* What the express paths share: the memo's route for a plain call of `op` by a task's
 * only thread, its arguments' checks, and the looks at the conduit and the transport that
 * a start needs. The calling thread is then in the call and starting
 * (utc__call_starting), with *ctxp its context; NULL, with nothing done, when the call is
 * not of that kind. */
const route_t *utc__conduit_express_enter(utc_conduit_t *h, utc__op_t op, const void *sbuf,
                                          const void *rbuf, size_t size, int tag, utc_ctx_t **ctxp)
{
    const route_memo_t *m = &utc__conduit_route_memo[op == UTC__OP_SEND];
    if (m->h != h || tag < 0 || tag > UTC_CONDUIT_TAG_MAX || size > (size_t)PTRDIFF_MAX ||
        (size && !(op == UTC__OP_SEND ? sbuf : rbuf)) ||
        (size >= UTC__DEVCHECK_MIN && utc__dev_in_use())) /* the general path looks */
        return NULL;
    /* acquire: as in route_memo_find */
    if (m->epoch != atomic_load_explicit(&utc__conduit_epoch, memory_order_acquire))
        return NULL;
    utc_ctx_t *ctx = utc_ctx_self();
    const route_t *r = &m->r;
    if (ctx != m->ctx || ctx->task != m->task || r->e->nlocal > 1 || UTC__PROF_ON())
        return NULL;
    utc_conduit_t *c = utc__handle_ptr(h);
    /* in the call and starting at once (utc__call_starting), then the looks the general
     * path makes before a start (utc__conduit_route, utc__conduit_perform, utc__conduit_start) */
    utc__call_starting(ctx, c);
    if (atomic_load_explicit(&c->dead, memory_order_relaxed) || utc__transport_marked(r->tp) ||
        (op == UTC__OP_SEND && atomic_load_explicit(&r->e->wclosed, memory_order_relaxed))) {
        utc__call_leave(ctx);
        return NULL;
    }
    *ctxp = ctx;
    return r;
}

bool utc__conduit_express(utc_conduit_t *h, utc__op_t op, const void *sbuf, void *rbuf,
                          size_t size, int tag, size_t *received, utc_status_t *rcp)
{
    utc_ctx_t *ctx;
    const route_t *r = utc__conduit_express_enter(h, op, sbuf, rbuf, size, tag, &ctx);
    if (!r)
        return false;
    utc_conduit_t *c = utc__handle_ptr(h);
    utc__transport_t *tp = r->tp;
    utc_request_t req;
    utc__conduit_express_req(&req, c, r, op, sbuf, rbuf, size, tag);
    utc_status_t rc = tp->ops->start(tp, &req);
    utc__call_started(ctx, c);
    if (rc == UTC_OK && utc__req_state(&req) != UTC__REQ_DONE)
        (void)UTC__WAIT_CALL(op == UTC__OP_SEND ? UTC__WAIT_CONDUIT_WRITE : UTC__WAIT_CONDUIT_READ,
                             c->id, tag, r->peer, NULL, tp->ops->wait(tp, &req, -1));
    if (rc == UTC_OK)
        rc = utc__conduit_req_result(op == UTC__OP_SEND ? "utc_conduit_write" : "utc_conduit_read",
                                     &req, received, NULL);
    utc__call_leave(ctx);
    *rcp = rc;
    return true;
}

/*
 * The express path of a plain asynchronous write (utc_conduit_iwrite) by a task's only
 * thread on this rank, as utc__conduit_express: when its transport sends it whole at once
 * (send_now), no request is made, and the handle given out is a completed one
 * (service/req_handle.h): no request to allocate, count against the conduit, complete and
 * free, the two locked counts a request costs (its conduit reference, taken and dropped)
 * not paid. False, with nothing done, when the call is not of that kind or the transport
 * cannot send it now: the general path makes it.
 */
bool utc__conduit_express_iwrite(utc_conduit_t *h, const void *sbuf, size_t size, int tag,
                                 utc_request_t **out)
{
    utc_ctx_t *ctx;
    const route_t *r = utc__conduit_express_enter(h, UTC__OP_SEND, sbuf, NULL, size, tag, &ctx);
    if (!r)
        return false;
    if (r->tp->ops->send_now == utc__transport_no_send_now) { /* no such path there */
        utc__call_leave(ctx);
        return false;
    }
    utc_request_t *done = utc__req_handle_new_done(size);
    utc_conduit_t *c = utc__handle_ptr(h);
    utc_request_t req;
    utc__conduit_express_req(&req, c, r, UTC__OP_SEND, sbuf, NULL, size, tag);
    bool sent = done && r->tp->ops->send_now(r->tp, &req);
    utc__call_leave(ctx);
    if (!sent) {
        if (done)
            utc__req_handle_retire(done);
        return false;
    }
    *out = done;
    return true;
}
