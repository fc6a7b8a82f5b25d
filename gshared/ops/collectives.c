/*
 * Task collectives on the task's own communicator. One thread per rank makes a nonblocking
 * MPI collective and waits on it with back-off (MPI's blocking collectives busy-poll); the
 * rank's other threads wait in the team barrier, asleep after a short spin. The ten public
 * calls are one path (coll): the plain forms are called by every local thread of the rank,
 * the _by forms by one of them; the kinds differ only in coll_kinds and the MPI call.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <utc/collectives.h>

#include "base/coll_check.h"
#include "base/wait_hook.h"
#include "observe/trace.h"
#include "core/window.h"

typedef enum { COLL_BCAST, COLL_GATHER, COLL_SCATTER, COLL_REDUCE, COLL_ALLREDUCE } coll_kind_t;

/* What sets the kinds apart, besides the MPI call itself (coll_run). */
static const struct {
    const char *fn, *fn_by; /* the public calls, as named in messages */
    const char *mpi;        /* the nonblocking MPI call, as named in messages */
    utc__ev_t ev;           /* trace event */
    bool reducing;          /* takes an op */
    bool rooted;            /* takes a root */
    utc__coll_call_t call;  /* in the cross-rank argument check */
} coll_kinds[] = {
    [COLL_BCAST] = {"utc_task_bcast", "utc_task_bcast_by", "MPI_Ibcast", UTC__EV_COLL_BCAST, false,
                    true, UTC__CALL_TASK_BCAST},
    [COLL_GATHER] = {"utc_task_gather", "utc_task_gather_by", "MPI_Igather", UTC__EV_COLL_GATHER,
                     false, true, UTC__CALL_TASK_GATHER},
    [COLL_SCATTER] = {"utc_task_scatter", "utc_task_scatter_by", "MPI_Iscatter",
                      UTC__EV_COLL_SCATTER, false, true, UTC__CALL_TASK_SCATTER},
    [COLL_REDUCE] = {"utc_task_reduce", "utc_task_reduce_by", "MPI_Ireduce", UTC__EV_COLL_REDUCE,
                     true, true, UTC__CALL_TASK_REDUCE},
    [COLL_ALLREDUCE] = {"utc_task_allreduce", "utc_task_allreduce_by", "MPI_Iallreduce",
                        UTC__EV_COLL_ALLREDUCE, true, false, UTC__CALL_TASK_ALLREDUCE},
};

/* Placeholders for the arguments a kind does not take (never read). */
#define COLL_NO_OP   UTC_OP_SUM
#define COLL_NO_ROOT 0

/* One collective call, as the caller wrote it. */
typedef struct {
    const char *fn;
    coll_kind_t kind;
    const void *sendbuf;
    void *recvbuf; /* bcast: the buffer */
    size_t count;
    utc_datatype_t type;
    utc_reduce_op_t op; /* reducing kinds only */
    int root;           /* rooted kinds only */
} coll_t;

size_t utc_datatype_size(utc_datatype_t type)
{
    switch (type) {
    case UTC_TYPE_INT:
        return sizeof(int);
    case UTC_TYPE_INT64:
        return sizeof(int64_t);
    case UTC_TYPE_FLOAT:
        return sizeof(float);
    case UTC_TYPE_DOUBLE:
        return sizeof(double);
    case UTC_TYPE_BYTE:
        return 1;
    }
    return 0;
}

static MPI_Datatype coll_mpi_type(utc_datatype_t type, bool reducing)
{
    switch (type) {
    case UTC_TYPE_INT:
        return MPI_INT;
    case UTC_TYPE_INT64:
        return MPI_INT64_T;
    case UTC_TYPE_FLOAT:
        return MPI_FLOAT;
    case UTC_TYPE_DOUBLE:
        return MPI_DOUBLE;
    case UTC_TYPE_BYTE:
        return reducing ? MPI_UINT8_T : MPI_BYTE; /* MPI_BYTE has no ops */
    }
    return MPI_DATATYPE_NULL;
}

static MPI_Op coll_mpi_op(utc_reduce_op_t op)
{
    switch (op) {
    case UTC_OP_SUM:
        return MPI_SUM;
    case UTC_OP_MIN:
        return MPI_MIN;
    case UTC_OP_MAX:
        return MPI_MAX;
    }
    return MPI_OP_NULL;
}

/* Everything checked before any thread waits or any MPI call is made. */
static utc_status_t coll_check(const utc__gs_task_t *gs, const coll_t *c)
{
    if (utc_datatype_size(c->type) == 0)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: unknown datatype %d", c->fn, (int)c->type);
    if (coll_kinds[c->kind].reducing && coll_mpi_op(c->op) == MPI_OP_NULL)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: unknown reduce op %d", c->fn, (int)c->op);
    if (coll_kinds[c->kind].rooted && (c->root < 0 || c->root >= gs->nranks))
        return utc__error(UTC_ERR_OUT_OF_RANGE,
                          "%s: root %d is not a rank of task '%s' (group ranks 0 .. %d)", c->fn,
                          c->root, utc_task_name(gs->task), gs->nranks - 1);
    if (c->count > INT_MAX)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: count %zu is larger than INT_MAX", c->fn,
                          c->count);
    if (c->count == 0)
        return UTC_OK;
    bool root = gs->rank == c->root;
    bool need_send = c->kind == COLL_SCATTER ? root : c->kind != COLL_BCAST;
    bool need_recv = c->kind == COLL_GATHER || c->kind == COLL_REDUCE ? root : true;
    if (need_send && !c->sendbuf)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: sendbuf is NULL", c->fn);
    if (need_recv && !c->recvbuf)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: %s is NULL", c->fn,
                          c->kind == COLL_BCAST ? "buf" : "recvbuf");
    return UTC_OK;
}

/* The compared parts of a call, as the mismatch message shows them. */
enum { PART_COUNT, PART_TYPE, PART_OP, PART_ROOT };

static void coll_show(int p, uint64_t v, char *buf, size_t cap)
{
    static const char *const types[] = {[UTC_TYPE_INT] = "UTC_TYPE_INT",
                                        [UTC_TYPE_INT64] = "UTC_TYPE_INT64",
                                        [UTC_TYPE_FLOAT] = "UTC_TYPE_FLOAT",
                                        [UTC_TYPE_DOUBLE] = "UTC_TYPE_DOUBLE",
                                        [UTC_TYPE_BYTE] = "UTC_TYPE_BYTE"};
    static const char *const ops[] = {[UTC_OP_SUM] = "UTC_OP_SUM", [UTC_OP_MIN] = "UTC_OP_MIN",
                                      [UTC_OP_MAX] = "UTC_OP_MAX"};
    const char *name = NULL;
    if (p == PART_TYPE && v < sizeof types / sizeof *types)
        name = types[v];
    else if (p == PART_OP && v < sizeof ops / sizeof *ops)
        name = ops[v];
    if (name)
        snprintf(buf, cap, "%s", name);
    else if (p == PART_COUNT)
        snprintf(buf, cap, "%llu", (unsigned long long)v);
    else
        snprintf(buf, cap, "%lld", (long long)(int64_t)v);
}

/*
 * The cross-rank argument check (base/coll_check.h), made by the thread of each rank that
 * then makes the MPI call: what every rank can check (count, datatype, op, root) and the
 * status of this rank's own checks (`local`) are compared in one small allreduce on the
 * task's communicator. So a bad argument that only the root sees (a NULL buffer there) or
 * a count that differs on one rank ends the call on every rank with UTC_ERR_MISMATCH
 * before any data moves, and the next collective agrees again. With UTC_CHECK=0 nothing
 * is compared: a local error is returned on its rank alone and the others may wait.
 */
static utc_status_t coll_agree(utc__gs_task_t *gs, const coll_t *c, utc_status_t local)
{
    if (gs->nranks == 1)
        return local; /* nothing to compare with */
    bool reducing = coll_kinds[c->kind].reducing, rooted = coll_kinds[c->kind].rooted;
    utc__coll_desc_t d = {.call = coll_kinds[c->kind].call,
                          .args_rc = local,
                          .part_name = {[PART_COUNT] = "count",
                                        [PART_TYPE] = "datatype",
                                        [PART_OP] = reducing ? "reduce op" : NULL,
                                        [PART_ROOT] = rooted ? "root" : NULL},
                          .part = {[PART_COUNT] = c->count,
                                   [PART_TYPE] = (uint64_t)c->type,
                                   [PART_OP] = (uint64_t)c->op,
                                   [PART_ROOT] = (uint64_t)(int64_t)c->root},
                          .show = coll_show};
    char fn[160];
    snprintf(fn, sizeof fn, "%s on task '%s'", c->fn, utc_task_name(gs->task));
    utc_status_t rc =
        utc__coll_check(gs->comm, &gs->coll_seq, gs->task->impl->group_ranks, fn, &d);
    return rc != UTC_OK ? rc : local; /* every rank failed its own check alike, or none */
}

/* An MPI failure as a status naming the UTC call and the task (MPI_ERRORS_RETURN is set on
 * the task communicator, core/window.c: no MPI error aborts the job). */
static utc_status_t coll_mpi_failed(const utc__gs_task_t *gs, const coll_t *c, int err)
{
    char what[192];
    snprintf(what, sizeof what, "%s on task '%s': %s", c->fn, utc_task_name(gs->task),
             coll_kinds[c->kind].mpi);
    return utc__mpi_error(err, what);
}

/* The MPI part, made by one thread of the rank, after the cross-rank check. */
static utc_status_t coll_run(utc__gs_task_t *gs, const coll_t *c, utc_status_t local)
{
    utc_status_t rc = coll_agree(gs, c, local);
    if (rc != UTC_OK)
        return rc;
    MPI_Datatype dt = coll_mpi_type(c->type, coll_kinds[c->kind].reducing);
    int n = (int)c->count;
    bool root = gs->rank == c->root;
    const void *send = c->sendbuf;
    MPI_Request req;
    int err = MPI_SUCCESS;
    switch (c->kind) {
    case COLL_BCAST:
        err = MPI_Ibcast(c->recvbuf, n, dt, c->root, gs->comm, &req);
        break;
    case COLL_GATHER:
        err = MPI_Igather(send, n, dt, c->recvbuf, n, dt, c->root, gs->comm, &req);
        break;
    case COLL_SCATTER:
        err = MPI_Iscatter(send, n, dt, c->recvbuf, n, dt, c->root, gs->comm, &req);
        break;
    case COLL_REDUCE:
        if (root && send == c->recvbuf)
            send = MPI_IN_PLACE;
        err = MPI_Ireduce(send, c->recvbuf, n, dt, coll_mpi_op(c->op), c->root, gs->comm, &req);
        break;
    case COLL_ALLREDUCE:
        if (send == c->recvbuf)
            send = MPI_IN_PLACE;
        err = MPI_Iallreduce(send, c->recvbuf, n, dt, coll_mpi_op(c->op), gs->comm, &req);
        break;
    }
    if (err != MPI_SUCCESS)
        return coll_mpi_failed(gs, c, err);
    rc = UTC__WAIT_CALL(UTC__WAIT_COLLECTIVE, gs->task->impl->id, -1, -1,
                        gs->task->impl->ops->name, utc__mpi_wait(&req, MPI_STATUS_IGNORE, -1.0));
    if (rc != UTC_OK) { /* name the call and the task in front of the wait's message */
        char why[256];
        snprintf(why, sizeof why, "%s", utc_last_error());
        return utc__error(rc, "%s on task '%s': %s", c->fn, utc_task_name(gs->task), why);
    }
    return UTC_OK;
}

/* The trace record's size and peer. */
static size_t coll_bytes(const coll_t *c)
{
    return c->count * utc_datatype_size(c->type);
}

static int coll_peer(const coll_t *c)
{
    return coll_kinds[c->kind].rooted ? c->root : -1;
}

/* Every local thread calls; one makes the MPI call. */
static utc_status_t coll_all(utc_ctx_t *ctx, const coll_t *c)
{
    utc__gs_task_t *gs;
    utc_status_t rc = utc__gs_ctx_state(ctx, c->fn, &gs);
    if (rc != UTC_OK)
        return rc;
    /* a bad argument still takes part: the other ranks learn of it in the check */
    utc_status_t local = coll_check(gs, c);
    uint64_t prof_t0 = utc__prof_stamp();
    bool leader = utc__gs_team_enter(gs);
    if (leader)
        rc = coll_run(gs, c, local);
    return UTC__PROF_LEAF_VAL(coll_kinds[c->kind].ev, prof_t0, gs->task->impl->id, coll_bytes(c),
                              -1, coll_peer(c), utc__gs_team_leave(gs, leader, rc));
}

/* Only local thread `thread` makes the call; the others return at once. */
static utc_status_t coll_by(utc_ctx_t *ctx, int thread, const coll_t *c)
{
    utc__gs_task_t *gs;
    utc_status_t rc = utc__gs_ctx_state(ctx, c->fn, &gs);
    if (rc != UTC_OK)
        return rc;
    if (thread < 0 || thread >= ctx->local_count)
        return utc__error(UTC_ERR_OUT_OF_RANGE,
                          "%s: thread %d is not a local thread of task '%s' (0 .. %d)", c->fn,
                          thread, utc_task_name(ctx->task), ctx->local_count - 1);
    if (ctx->local_id != thread)
        return UTC_OK;
    utc_status_t local = coll_check(gs, c);
    return UTC__PROF_CALL(coll_kinds[c->kind].ev, gs->task->impl->id, coll_bytes(c), -1,
                          coll_peer(c), coll_run(gs, c, local));
}

/* The one path of all ten public calls: `by` NULL for the plain forms (every local thread
 * calls), else the _by forms' thread. */
static utc_status_t coll(utc_ctx_t *ctx, const int *by, coll_kind_t kind, const void *sendbuf,
                         void *recvbuf, size_t count, utc_datatype_t type, utc_reduce_op_t op,
                         int root)
{
    const coll_t c = {.fn = by ? coll_kinds[kind].fn_by : coll_kinds[kind].fn,
                      .kind = kind,
                      .sendbuf = sendbuf,
                      .recvbuf = recvbuf,
                      .count = count,
                      .type = type,
                      .op = op,
                      .root = root};
    return by ? coll_by(ctx, *by, &c) : coll_all(ctx, &c);
}

utc_status_t utc_task_bcast(utc_ctx_t *ctx, void *buf, size_t count, utc_datatype_t type, int root)
{
    return coll(ctx, NULL, COLL_BCAST, NULL, buf, count, type, COLL_NO_OP, root);
}

utc_status_t utc_task_gather(utc_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t count,
                             utc_datatype_t type, int root)
{
    return coll(ctx, NULL, COLL_GATHER, sendbuf, recvbuf, count, type, COLL_NO_OP, root);
}

utc_status_t utc_task_scatter(utc_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t count,
                              utc_datatype_t type, int root)
{
    return coll(ctx, NULL, COLL_SCATTER, sendbuf, recvbuf, count, type, COLL_NO_OP, root);
}

utc_status_t utc_task_reduce(utc_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t count,
                             utc_datatype_t type, utc_reduce_op_t op, int root)
{
    return coll(ctx, NULL, COLL_REDUCE, sendbuf, recvbuf, count, type, op, root);
}

utc_status_t utc_task_allreduce(utc_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t count,
                                utc_datatype_t type, utc_reduce_op_t op)
{
    return coll(ctx, NULL, COLL_ALLREDUCE, sendbuf, recvbuf, count, type, op, COLL_NO_ROOT);
}

utc_status_t utc_task_bcast_by(utc_ctx_t *ctx, int thread, void *buf, size_t count,
                               utc_datatype_t type, int root)
{
    return coll(ctx, &thread, COLL_BCAST, NULL, buf, count, type, COLL_NO_OP, root);
}

utc_status_t utc_task_gather_by(utc_ctx_t *ctx, int thread, const void *sendbuf, void *recvbuf,
                                size_t count, utc_datatype_t type, int root)
{
    return coll(ctx, &thread, COLL_GATHER, sendbuf, recvbuf, count, type, COLL_NO_OP, root);
}

utc_status_t utc_task_scatter_by(utc_ctx_t *ctx, int thread, const void *sendbuf, void *recvbuf,
                                 size_t count, utc_datatype_t type, int root)
{
    return coll(ctx, &thread, COLL_SCATTER, sendbuf, recvbuf, count, type, COLL_NO_OP, root);
}

utc_status_t utc_task_reduce_by(utc_ctx_t *ctx, int thread, const void *sendbuf, void *recvbuf,
                                size_t count, utc_datatype_t type, utc_reduce_op_t op, int root)
{
    return coll(ctx, &thread, COLL_REDUCE, sendbuf, recvbuf, count, type, op, root);
}

utc_status_t utc_task_allreduce_by(utc_ctx_t *ctx, int thread, const void *sendbuf, void *recvbuf,
                                   size_t count, utc_datatype_t type, utc_reduce_op_t op)
{
    return coll(ctx, &thread, COLL_ALLREDUCE, sendbuf, recvbuf, count, type, op, COLL_NO_ROOT);
}
