/*
 * Conduits: where an operation goes. The caller's end, the peer and the transport (the
 * pick's, components.c), the checks of its arguments, and a thread's memo of its last
 * plain route (what the express path of transfer.c takes).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdint.h>

#include "conduit_internal.h"
#include "base/handle.h"

/* c's transport between this rank `me` and world rank `peer` (the pick's), or NULL; a
 * shared conduit's shared transport. */
utc__transport_t *utc__conduit_tp(const utc_conduit_t *c, int me, int peer)
{
    if (c->shared)
        return c->tp[UTC__CONDUIT_SHARED_TP];
    int k = utc__transport_pick(me, peer, &c->opts);
    return k < 0 ? NULL : c->tp[k];
}

/* The calling thread's member index in shared conduit c (*member), or why it may not make
 * this call: not a member, the wrong side, a call the shared conduit does not take. */
static utc_status_t shared_role(const utc_conduit_t *c, const xfer_t *x, const utc_ctx_t *ctx,
                                int *member)
{
    int m = ctx ? utc__conduit_end_of_task(c, ctx->task) : -1;
    if (m < 0)
        return utc__error(UTC_ERR_NOT_MEMBER, "%s: the calling thread is not a thread of a "
                          "writer or reader task of shared conduit %d", x->fn, c->id);
    bool writer = m < c->nwriters;
    if (writer != (x->op == UTC__OP_SEND))
        return utc__error(UTC_ERR_STATE, "%s: task '%s' is a %s of shared conduit %d: its "
                          "writers write and close, its readers read", x->fn,
                          utc__conduit_label(&c->ends[m]), writer ? "writer" : "reader", c->id);
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
 * call, whether its route comes from the memo or not. The express path (transfer.c) makes
 * a plain call's share of them itself (a check added here for plain calls goes there
 * too). */
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

utc_status_t utc__conduit_check_device_buffer(const utc_conduit_t *c, const xfer_t *x)
{
    if (c->opts.memory == UTC_CONDUIT_MEM_HOST || x->close)
        return UTC_OK;
    bool send = x->op == UTC__OP_SEND;
    if (x->owned && !send)
        return UTC_OK;
    return utc__device_check_buffer(x->fn, c->id, send ? x->sbuf : x->rbuf, x->size, send,
                                    x->owned);
}

/* The checks of an operation on device conduit c (opts.memory = UTC_CONDUIT_MEM_DEVICE):
 * its tags, its buffers (conduits/device/). An all-threads call's buffer is the
 * transferring thread's to check (all_threads.c): the others' buffers are not used, and
 * their devices may differ from its. */
static utc_status_t check_device_args(const utc_conduit_t *c, const xfer_t *x)
{
    if (x->tag > UTC_CONDUIT_DEVICE_TAG_MAX)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: tag %d is above UTC_CONDUIT_DEVICE_TAG_MAX "
                          "(%d): the top two tags of a device conduit are the device layer's",
                          x->fn, x->tag, UTC_CONDUIT_DEVICE_TAG_MAX);
    return x->all ? UTC_OK : utc__conduit_check_device_buffer(c, x);
}

/* A host conduit's buffer of UTC__DEVCHECK_MIN bytes or more, in a process that uses CUDA:
 * device memory there is refused, with the fix. */
static utc_status_t check_host_buffer(const utc_conduit_t *c, const xfer_t *x)
{
    const void *buf = x->op == UTC__OP_SEND ? x->sbuf : x->rbuf;
    if (x->owned || !utc__device_pointer(buf))
        return UTC_OK;
    return utc__error(UTC_ERR_INVALID_ARG, "%s: buffer %p is device memory, and conduit %d is "
                      "a host-memory conduit: create it with .memory = UTC_CONDUIT_MEM_DEVICE",
                      x->fn, buf, c->id);
}

/* The checks of an operation's buffers by the conduit's memory: one predictable branch for
 * a host conduit's small message. */
static inline utc_status_t check_memory(const utc_conduit_t *c, const xfer_t *x)
{
    if (c->opts.memory != UTC_CONDUIT_MEM_HOST)
        return check_device_args(c, x);
    if (x->size >= UTC__DEVCHECK_MIN && utc__dev_in_use())
        return check_host_buffer(c, x);
    return UTC_OK;
}

_Thread_local route_memo_t utc__conduit_route_memo[2]; /* [x->op == UTC__OP_SEND] */

static bool route_memo_find(const utc_conduit_t *h, const xfer_t *x, route_t *r)
{
    const route_memo_t *m = &utc__conduit_route_memo[x->op == UTC__OP_SEND];
    if (!h || m->h != h || x->by || x->named_peer)
        return false;
    /* acquire: as in utc__conduit_get; a destroy after this load changes what the memo
     * holds */
    if (m->epoch != atomic_load_explicit(&utc__conduit_epoch, memory_order_acquire))
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
    if (x->by || x->named_peer || c->shared || c->opts.memory != UTC_CONDUIT_MEM_HOST)
        return; /* (device conduits: never the express path, which skips their checks) */
    route_memo_t *m = &utc__conduit_route_memo[x->op == UTC__OP_SEND];
    m->h = h;
    m->epoch = epoch;
    m->ctx = r->ctx;
    m->task = r->ctx->task;
    m->r = *r;
}

utc_status_t utc__conduit_route(const utc_conduit_t *h, const xfer_t *x, route_t *r)
{
    utc_status_t rc = utc__check_init(x->fn);
    if (rc != UTC_OK)
        return rc;
    bool memo = route_memo_find(h, x, r);
    unsigned epoch = 0;
    utc_conduit_t *c = utc__handle_ptr(h);
    if (!memo) {
        epoch = atomic_load_explicit(&utc__conduit_epoch, memory_order_acquire);
        if ((rc = utc__conduit_get(h, x->fn, &c)) != UTC_OK)
            return rc;
    }
    /* after the caller's utc__call_enter (see conduit_close) */
    if (atomic_load_explicit(&c->dead, memory_order_relaxed))
        return utc__error(UTC_ERR_INVALID_HANDLE, "%s: %p is not a live conduit (destroyed, "
                          "or never created)", x->fn, (void *)c);
    if (memo) {
        r->skip = false;
        rc = check_args(x);
        return rc == UTC_OK ? check_memory(c, x) : rc;
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
                              "the two ends of conduit %d", x->fn, utc__conduit_label(&c->end[0]),
                              utc__conduit_label(&c->end[1]), c->id);
        member = end;
    }
    if ((rc = check_args(x)) != UTC_OK || (rc = check_memory(c, x)) != UTC_OK)
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
                              "rank %d (0..%d)", x->fn, x->thread,
                              utc__conduit_label(&c->ends[member]), ctx->local_count,
                              ctx->world_rank, ctx->local_count - 1);
        if (ctx->local_id != x->thread) {
            r->skip = true;
            return UTC_OK;
        }
    }
    r->skip = false;
    utc__conduit_end_t *mine = &c->ends[member];
    const utc__conduit_end_t *other = &c->end[1 - end];
    int me = ctx->world_rank, peer;
    if (c->shared) {
        /* single-entry: each member transfers on its entry rank, with every other member
         * through the shared transport */
        if (me != mine->entry_rank)
            return utc__error(UTC_ERR_NOT_MEMBER,
                              "%s: in shared conduit %d task '%s' transfers on its entry rank "
                              "%d, and this is rank %d", x->fn, c->id, utc__conduit_label(mine),
                              mine->entry_rank, me);
        /* one of several */
        peer = utc__shared_transport_peer(c->tp[UTC__CONDUIT_SHARED_TP], member);
    } else if (c->opts.mode == UTC_CONDUIT_SINGLE_ENTRY) {
        if (me != mine->entry_rank)
            return utc__error(UTC_ERR_NOT_MEMBER,
                              "%s: conduit %d is in single-entry mode: only task '%s''s entry "
                              "rank %d transfers, and this is rank %d (gather the data on "
                              "rank %d, or use a free-mode conduit)", x->fn, c->id,
                              utc__conduit_label(mine), mine->entry_rank, me, mine->entry_rank);
        peer = other->entry_rank;
    } else {
        peer = x->named_peer ? x->peer : other->entry_rank;
        if (!utc__conduit_in_group(other, peer))
            return utc__error(UTC_ERR_OUT_OF_RANGE,
                              "%s: rank %d holds no thread of task '%s', the other end of "
                              "conduit %d", x->fn, peer, utc__conduit_label(other), c->id);
    }
    utc__transport_t *tp = utc__conduit_tp(c, me, peer);
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

/* (the express path, utc__conduit_express, sets the same fields for its plain calls: keep
 * the two in step) */
void utc__conduit_req_init(utc_request_t *req, utc_conduit_t *c, const xfer_t *x, const route_t *r)
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
