/* A task thread: start-up (binding, extensions), the command loop, and the thread context. */
#include <limits.h>
#include <stdio.h>

#include "base/errors.h"
#include "base/mpi_wait.h"
#include "base/text.h"
#include "base/wait_hook.h"
#include "context/binding.h"
#include "observe/trace.h"
#include "observe/watchdog.h"
#include "tasks/mailbox.h"
#include "tasks/thread.h"

static _Thread_local utc_ctx_t *self_ctx;

void utc__thread_set_self(utc_ctx_t *ctx)
{
    self_ctx = ctx;
    utc__olock_id = ctx; /* owner locks (base/sync.h) know the thread by its context */
}
utc_ctx_t *utc_ctx_self(void) { return self_ctx; }

utc_ctx_t *utc__ctx_of(const utc_task_t *task)
{
    return self_ctx && self_ctx->task == task ? self_ctx : NULL;
}

utc_status_t utc__ctx_check(utc_ctx_t *ctx, const char *fn)
{
    if (!ctx)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: ctx is NULL", fn);
    if (ctx != self_ctx)
        return utc__error(UTC_ERR_NOT_MEMBER,
                          "%s: ctx is not the calling thread's own (call it from a task thread "
                          "with the ctx its task function received)", fn);
    return UTC_OK;
}

static void report_start(struct utc__task *t, int local_id, utc_status_t rc)
{
    if (rc != UTC_OK) {
        int expected = UTC_OK;
        /* the thread's own message (CUDA's, for a GPU thread) goes to the creator; a
         * GPU's failure is the device's or the driver's: logged too */
        if (rc == UTC_ERR_GPU)
            utc_log(UTC_LOG_WARN, "task %s thread %d could not start: %s",
                    utc__text_name(t->ops->name), local_id, utc_last_error());
        if (atomic_compare_exchange_strong(&t->start_rc, &expected, (int)rc)) {
            utc__text_copy(t->start_msg, sizeof t->start_msg, utc_last_error());
            t->start_thread = local_id;
        }
    }
    atomic_fetch_add(&t->started, 1); /* seq_cst: the creator reads start_rc after */
    utc__futex_wake(&t->started, INT_MAX);
}

/* The extensions' per-thread start for th's ctx, in slot order, on the calling thread;
 * *nstarted_ext counts those that started (thread_stop undoes them). */
static utc_status_t exts_start(struct utc__thread *th, int *nstarted_ext)
{
    for (*nstarted_ext = 0; *nstarted_ext < UTC__EXT_COUNT; (*nstarted_ext)++) {
        const utc__task_ext_t *ext = utc__task_ext(*nstarted_ext);
        utc_status_t rc;
        if (ext->thread_start && (rc = ext->thread_start(&th->ctx)) != UTC_OK)
            return rc;
    }
    return UTC_OK;
}

static utc_status_t thread_start(struct utc__thread *th, int slot, int *nstarted_ext)
{
    struct utc__task *t = th->task;
    utc_status_t rc = utc__bind_self(&t->opts, th->ctx.local_id, slot);
    if (rc != UTC_OK)
        return rc;
    return exts_start(th, nstarted_ext);
}

static void thread_stop(struct utc__thread *th, int nstarted_ext)
{
    for (int i = nstarted_ext - 1; i >= 0; i--)
        if (utc__task_ext(i)->thread_stop)
            utc__task_ext(i)->thread_stop(&th->ctx);
}

/* Run one INIT or RUN command of thread th on the calling thread, inside its span. */
static utc_status_t execute(struct utc__thread *th, utc__cmd_kind_t kind, void *cmd_arg)
{
    struct utc__task *t = th->task;
    utc_ctx_t *ctx = &th->ctx;
    const utc_task_ops_t *ops = t->ops;
    utc_status_t rc = UTC_OK;
    uint64_t prof_t0 = utc__prof_start();
    int raw = 0; /* the user's own value, for the messages */
    /* the message of this call's own failure, not one left from an earlier call */
    utc__error_clear();
    if (kind == UTC__CMD_INIT) {
        if (ops->init)
            rc = utc__user_status(raw = ops->init(ctx->task, ctx, cmd_arg));
    } else {
        rc = utc__user_status(raw = t->body[ctx->kind](ctx->task, ctx, cmd_arg));
    }
    UTC__PROF_END(kind == UTC__CMD_INIT ? UTC__EV_TASK_INIT : UTC__EV_TASK_RUN, prof_t0, t->id,
                  -1, -1, -1);
    if (rc != UTC_OK) {
        /* the last error, where the function returned its status: an error it handled
         * before returning another value is not why it failed */
        const char *msg = raw == (int)utc__error_status() ? utc_last_error() : "";
        /* a GPU error is the device's or the driver's, not the program's flow: say it */
        utc_log(rc == UTC_ERR_GPU ? UTC_LOG_WARN : UTC_LOG_INFO,
                "task %s (id %d) thread %d: %s returned %d (%s)%s%s", utc__text_name(ops->name),
                t->id, ctx->global_id, kind == UTC__CMD_INIT ? "init" : "run", raw,
                utc_status_string(rc), *msg ? ": " : "", msg);
        utc__mailbox_note_user(t->mailbox, rc, raw, ctx->global_id, msg);
        /* tell those blocked on this task (its conduits' other ends) */
        if (kind == UTC__CMD_RUN && utc__task_hooks->run_failed)
            utc__task_hooks->run_failed(ctx->task, rc, ctx->global_id);
    }
    return rc;
}

void utc__thread_run_share(struct utc__task *t, int i, uint64_t seq, void *cmd_arg)
{
    struct utc__thread *th = &t->threads[i];
    /* for the length of the run, the calling thread is thread i: its context, and its
     * extensions' per-thread state (left as it found it afterwards) */
    utc_ctx_t *prev = utc_ctx_self();
    /* a pinned thread's share runs where that thread would run it */
    void *binding = utc__bind_as(&t->opts, i, th->bind_slot);
    utc__thread_set_self(&th->ctx);
    utc__wd_thread_identity(t->id, t->ops->name, th->ctx.global_id);
    int nstarted_ext;
    utc_status_t rc = exts_start(th, &nstarted_ext);
    if (rc == UTC_OK) {
        th->cur_seq = seq;
        rc = execute(th, UTC__CMD_RUN, cmd_arg);
    }
    atomic_store_explicit(&th->done_seq, seq + 1, memory_order_release);
    thread_stop(th, nstarted_ext);
    utc__bind_restore(binding);
    utc__thread_set_self(prev);
    if (prev)
        utc__wd_thread_identity(prev->impl->task->id, prev->impl->task->ops->name,
                                prev->global_id);
    else
        utc__wd_thread_identity(-1, NULL, -1);
    utc__mailbox_done(t->mailbox, seq, rc);
}

bool utc__thread_lend(struct utc__task *t)
{
    uint64_t seq;
    void *cmd_arg;
    if (!utc__mailbox_lendable(t->mailbox, &seq, &cmd_arg))
        return false;
    for (int i = t->nlocal - 1; i >= 0; i--)
        if (utc__mailbox_claim(t->mailbox, i, seq)) { /* else that thread has it already */
            utc__thread_run_share(t, i, seq, cmd_arg);
            return true;
        }
    return false;
}

void *utc__thread_main(void *arg)
{
    struct utc__thread *th = arg;
    struct utc__task *t = th->task;
    utc_ctx_t *ctx = &th->ctx;
    utc__thread_set_self(ctx);
    utc__prof_thread_start(t->id, t->ops->name, ctx->global_id, ctx->local_id);
    utc__wd_thread_identity(t->id, t->ops->name, ctx->global_id);

    int nstarted_ext = 0;
    report_start(t, ctx->local_id, thread_start(th, th->bind_slot, &nstarted_ext));

    const utc_task_ops_t *ops = t->ops;
    /* Where the caller of utc_task_wait lends its core, the last local thread does not
     * spin for its next command: the caller takes its share, and a spinning thread would
     * only keep a core from the others */
    bool spin = !(t->lend && ctx->local_id == t->nlocal - 1);
    for (uint64_t seq = 0;; seq++) {
        utc__cmd_kind_t kind;
        void *cmd_arg;
        utc__mailbox_take(t->mailbox, seq, spin);
        if (!utc__mailbox_claim(t->mailbox, ctx->local_id, seq))
            continue; /* the owner ran this thread's share (utc__thread_lend) */
        utc__mailbox_command(t->mailbox, seq, &kind, &cmd_arg);
        if (kind == UTC__CMD_EXIT) {
            uint64_t prof_t0 = utc__prof_start();
            if (ops->fini && t->initialized)
                ops->fini(ctx->task, ctx);
            UTC__PROF_END(UTC__EV_TASK_FINI, prof_t0, t->id, -1, -1, -1);
            thread_stop(th, nstarted_ext);
            utc__thread_set_self(NULL);
            utc__mailbox_done(t->mailbox, seq, UTC_OK);
            return NULL;
        }
        th->cur_seq = seq;
        utc_status_t rc = execute(th, kind, cmd_arg);
        /* release: a sibling that sees it knows this share is over */
        atomic_store_explicit(&th->done_seq, seq + 1, memory_order_release);
        utc__mailbox_done(t->mailbox, seq, rc);
    }
}

/* ---- barriers and the "one thread does it" helper ---- */

utc_status_t utc_ctx_barrier_local(utc_ctx_t *ctx)
{
    utc_status_t rc = utc__ctx_check(ctx, "utc_ctx_barrier_local");
    if (rc != UTC_OK)
        return rc;
    struct utc__task *t = ctx->impl->task;
    UTC__PROF_CALL(UTC__EV_BARRIER_LOCAL, t->id, -1, -1, -1,
                   UTC__WAIT_CALL(UTC__WAIT_BARRIER_LOCAL, t->id, -1, -1, t->ops->name,
                                utc__barrier_wait(&t->barrier)));
    return UTC_OK;
}

int utc_ctx_single(utc_ctx_t *ctx, int thread, int (*fn)(utc_ctx_t *, void *), void *arg)
{
    utc_status_t rc = utc__ctx_check(ctx, "utc_ctx_single");
    if (rc != UTC_OK)
        return rc;
    if (!fn)
        return utc__error(UTC_ERR_INVALID_ARG, "utc_ctx_single: fn is NULL");
    if (thread < 0 || thread >= ctx->local_count)
        return utc__error(UTC_ERR_OUT_OF_RANGE,
                          "utc_ctx_single: thread %d is not a local thread (0..%d)", thread,
                          ctx->local_count - 1);
    struct utc__task *t = ctx->impl->task;
    /* first barrier: what the others wrote before the call is visible to fn */
    utc__barrier_wait(&t->barrier);
    if (ctx->local_id == thread)
        /* relaxed: the barrier below orders it before the others' loads */
        atomic_store_explicit(&t->single_rc, fn(ctx, arg), memory_order_relaxed);
    utc__barrier_wait(&t->barrier);
    /* relaxed: ordered by the barrier; the next call's first barrier keeps the next
     * writer from overwriting it before every thread has read it */
    return atomic_load_explicit(&t->single_rc, memory_order_relaxed);
}

static int group_barrier(utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    struct utc__task *t = ctx->impl->task;
    if (t->ngroup <= 1)
        return UTC_OK;
    MPI_Request req;
    int err = MPI_Ibarrier(t->comm, &req);
    if (err != MPI_SUCCESS)
        return utc__mpi_error(err, "MPI_Ibarrier (task barrier)");
    return utc__mpi_wait(&req, MPI_STATUS_IGNORE, -1);
}

utc_status_t utc_ctx_barrier(utc_ctx_t *ctx)
{
    utc_status_t rc = utc__ctx_check(ctx, "utc_ctx_barrier");
    if (rc != UTC_OK)
        return rc;
    struct utc__task *t = ctx->impl->task;
    return UTC__PROF_CALL(UTC__EV_BARRIER, t->id, -1, -1, -1,
                          UTC__WAIT_CALL(UTC__WAIT_BARRIER, t->id, -1, -1, t->ops->name,
                                       (utc_status_t)utc_ctx_single(ctx, 0, group_barrier,
                                                                    NULL)));
}
