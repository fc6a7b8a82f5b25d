/*
 * Conduits: "every local thread calls, thread 0 transfers". A blocking call of a task's
 * threads on one rank: thread 0 performs it (transfer.c), the others wait in the end's
 * barrier and return its results; a _by call is made by the named thread alone.
 */
#define _GNU_SOURCE
#include "conduit_internal.h"
#include "base/handle.h"

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
    utc_status_t rc = utc__conduit_route(h, x, &r);
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
        return x->all && (rc = utc__conduit_check_device_buffer(c, x)) != UTC_OK
                   ? rc
                   : utc__conduit_perform(c, x, &r, received, obuf);
    /* every local thread is here; thread 0 transfers, the others sleep in the barrier.
     * A sibling that has already returned from the run never will be. */
    int gone_id = -1;
    if (utc__sibling_gone(r.ctx, &gone_id))
        return all_threads_error(c, x, r.ctx, gone_id, false);
    unsigned k = e->op_count[r.ctx->local_id]++ & 1;
    bool device = c->opts.memory == UTC_CONDUIT_MEM_DEVICE;
    if (r.ctx->local_id == 0) {
        size_t got = 0;
        void *ob = NULL;
        if (device) { /* slot k's last fence: every sibling has waited for it (see above) */
            utc__device_fence_drop(e->fence[k]);
            e->fence[k] = NULL;
        }
        /* a device buffer is checked here, by the thread whose buffer is used: a failed
         * check reaches every thread as the call's status, as a failed transfer does */
        rc = utc__conduit_check_device_buffer(c, x);
        if (rc == UTC_OK)
            rc = utc__conduit_perform(c, x, &r, &got, &ob);
        /* the others' streams are ordered after this thread's transfer, as its own is */
        if (rc == UTC_OK && device)
            rc = utc__device_fence_take(c->id, &e->fence[k]);
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
    if (rc == UTC_OK && r.ctx->local_id != 0 && e->fence[k])
        rc = utc__device_fence_wait(c->id, e->fence[k]);
    return rc;
}

utc_status_t utc__conduit_run_op(utc_conduit_t *h, const xfer_t *x, size_t *received, void **obuf)
{
    utc_ctx_t *ctx = utc_ctx_self();
    if (ctx) /* the object's address: what a destroy looks for */
        utc__call_enter(ctx, utc__handle_ptr(h));
    utc_status_t rc = run_op_marked(h, x, received, obuf);
    if (ctx)
        utc__call_leave(ctx);
    return rc;
}
