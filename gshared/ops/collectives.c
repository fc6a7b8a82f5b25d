/*
 * Task collectives on the task's own communicator. One thread per rank makes a nonblocking
 * MPI collective (all-to-all: its messages, coll_exchange) and waits on it with back-off
 * (MPI's blocking collectives busy-poll); the rank's other threads wait in the team
 * barrier, asleep after a short spin. The public
 * calls are one path (coll): the plain forms are called by every local thread of the rank,
 * the _by forms by one of them; the kinds differ only in coll_kinds, their argument checks
 * and the MPI call. While a call waits, the watchdog can ask it which ranks have not
 * arrived (coll_describe): each rank's leader stores the call's number on the task's
 * board (core/board.h) as it starts, and only a report reads the other ranks' numbers.
 */
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utc/collectives.h>

#include "base/coll_check.h"
#include "base/text.h"
#include "base/wait_hook.h"
#include "observe/trace.h"
#include "core/window.h"

typedef enum {
    COLL_BCAST,
    COLL_GATHER,
    COLL_SCATTER,
    COLL_REDUCE,
    COLL_ALLREDUCE,
    COLL_ALLGATHER,
    COLL_ALLGATHERV,
    COLL_ALLTOALL,
    COLL_ALLTOALLV,
    COLL_SCAN,
    COLL_EXSCAN
} coll_kind_t;

/* What sets the kinds apart, besides the MPI call itself (coll_run) and the argument
 * checks of the newer kinds (coll_check_all). The trace has no events of their own for
 * allgather(v), alltoall(v) and the scans yet: they are recorded as gather, scatter and
 * allreduce (the nearest in what moves). */
static const struct {
    const char *fn, *fn_by; /* the public calls, as named in messages */
    const char *mpi;        /* the nonblocking MPI call, as named in messages */
    utc__ev_t ev;           /* trace event */
    bool reducing;          /* takes an op */
    bool rooted;            /* takes a root */
    bool vector;            /* takes a count per rank (no single count to compare) */
    utc__coll_call_t call;  /* in the cross-rank argument check */
} coll_kinds[] = {
    [COLL_BCAST] = {"utc_task_bcast", "utc_task_bcast_by", "MPI_Ibcast", UTC__EV_COLL_BCAST, false,
                    true, false, UTC__CALL_TASK_BCAST},
    [COLL_GATHER] = {"utc_task_gather", "utc_task_gather_by", "MPI_Igather", UTC__EV_COLL_GATHER,
                     false, true, false, UTC__CALL_TASK_GATHER},
    [COLL_SCATTER] = {"utc_task_scatter", "utc_task_scatter_by", "MPI_Iscatter",
                      UTC__EV_COLL_SCATTER, false, true, false, UTC__CALL_TASK_SCATTER},
    [COLL_REDUCE] = {"utc_task_reduce", "utc_task_reduce_by", "MPI_Ireduce", UTC__EV_COLL_REDUCE,
                     true, true, false, UTC__CALL_TASK_REDUCE},
    [COLL_ALLREDUCE] = {"utc_task_allreduce", "utc_task_allreduce_by", "MPI_Iallreduce",
                        UTC__EV_COLL_ALLREDUCE, true, false, false, UTC__CALL_TASK_ALLREDUCE},
    [COLL_ALLGATHER] = {"utc_task_allgather", "utc_task_allgather_by", "MPI_Iallgather",
                        UTC__EV_COLL_ALLGATHER, false, false, false, UTC__CALL_TASK_ALLGATHER},
    [COLL_ALLGATHERV] = {"utc_task_allgatherv", "utc_task_allgatherv_by", "MPI_Iallgatherv",
                         UTC__EV_COLL_ALLGATHER, false, false, true, UTC__CALL_TASK_ALLGATHERV},
    [COLL_ALLTOALL] = {"utc_task_alltoall", "utc_task_alltoall_by",
                       "MPI_Isend/MPI_Irecv (in place: MPI_Ialltoall)", UTC__EV_COLL_ALLTOALL, false,
                       false, false, UTC__CALL_TASK_ALLTOALL},
    [COLL_ALLTOALLV] = {"utc_task_alltoallv", "utc_task_alltoallv_by",
                        "MPI_Isend/MPI_Irecv (in place: MPI_Ialltoallv)", UTC__EV_COLL_ALLTOALL,
                        false, false, true, UTC__CALL_TASK_ALLTOALLV},
    [COLL_SCAN] = {"utc_task_scan", "utc_task_scan_by", "MPI_Iscan", UTC__EV_COLL_SCAN, true,
                   false, false, UTC__CALL_TASK_SCAN},
    [COLL_EXSCAN] = {"utc_task_exscan", "utc_task_exscan_by", "MPI_Iexscan", UTC__EV_COLL_SCAN,
                     true, false, false, UTC__CALL_TASK_EXSCAN},
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
    size_t count;  /* allgatherv: the sendcount; alltoallv: unused */
    utc_datatype_t type;
    utc_reduce_op_t op;       /* reducing kinds only */
    int root;                 /* rooted kinds only */
    const size_t *sendcounts; /* alltoallv */
    const size_t *sdispls;    /* alltoallv (NULL: packed) */
    const size_t *recvcounts; /* the v-forms */
    const size_t *rdispls;    /* the v-forms (NULL: packed) */
} coll_t;

size_t utc_datatype_size(utc_datatype_t type)
{
    switch (type) {
    case UTC_TYPE_BYTE:
    case UTC_TYPE_INT8:
    case UTC_TYPE_UINT8:
        return 1;
    case UTC_TYPE_INT16:
    case UTC_TYPE_UINT16:
        return 2;
    case UTC_TYPE_INT:
        return sizeof(int);
    case UTC_TYPE_FLOAT:
        return sizeof(float);
    case UTC_TYPE_INT32:
    case UTC_TYPE_UINT32:
        return 4;
    case UTC_TYPE_DOUBLE:
        return sizeof(double);
    case UTC_TYPE_INT64:
    case UTC_TYPE_UINT64:
        return 8;
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
    case UTC_TYPE_INT8:
        return MPI_INT8_T;
    case UTC_TYPE_UINT8:
        return MPI_UINT8_T;
    case UTC_TYPE_INT16:
        return MPI_INT16_T;
    case UTC_TYPE_UINT16:
        return MPI_UINT16_T;
    case UTC_TYPE_INT32:
        return MPI_INT32_T;
    case UTC_TYPE_UINT32:
        return MPI_UINT32_T;
    case UTC_TYPE_UINT64:
        return MPI_UINT64_T;
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

/* An element of any type, for the identities below. */
typedef union {
    int i;
    int8_t i8;
    uint8_t u8;
    int16_t i16;
    uint16_t u16;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f;
    double d;
} coll_elem_t;

/* Each type's smallest and largest value: the identities of MAX and MIN. */
static const coll_elem_t coll_lowest[] = {
    [UTC_TYPE_INT] = {.i = INT_MIN},     [UTC_TYPE_INT64] = {.i64 = INT64_MIN},
    [UTC_TYPE_FLOAT] = {.f = -INFINITY}, [UTC_TYPE_DOUBLE] = {.d = -(double)INFINITY},
    [UTC_TYPE_BYTE] = {.u8 = 0},         [UTC_TYPE_INT8] = {.i8 = INT8_MIN},
    [UTC_TYPE_UINT8] = {.u8 = 0},        [UTC_TYPE_INT16] = {.i16 = INT16_MIN},
    [UTC_TYPE_UINT16] = {.u16 = 0},      [UTC_TYPE_INT32] = {.i32 = INT32_MIN},
    [UTC_TYPE_UINT32] = {.u32 = 0},      [UTC_TYPE_UINT64] = {.u64 = 0}};
static const coll_elem_t coll_highest[] = {
    [UTC_TYPE_INT] = {.i = INT_MAX},         [UTC_TYPE_INT64] = {.i64 = INT64_MAX},
    [UTC_TYPE_FLOAT] = {.f = INFINITY},      [UTC_TYPE_DOUBLE] = {.d = (double)INFINITY},
    [UTC_TYPE_BYTE] = {.u8 = UINT8_MAX},     [UTC_TYPE_INT8] = {.i8 = INT8_MAX},
    [UTC_TYPE_UINT8] = {.u8 = UINT8_MAX},    [UTC_TYPE_INT16] = {.i16 = INT16_MAX},
    [UTC_TYPE_UINT16] = {.u16 = UINT16_MAX}, [UTC_TYPE_INT32] = {.i32 = INT32_MAX},
    [UTC_TYPE_UINT32] = {.u32 = UINT32_MAX}, [UTC_TYPE_UINT64] = {.u64 = UINT64_MAX}};

/* `count` elements of the identity of `op` (what an exclusive scan gives group rank 0):
 * 0 for a sum, the type's largest value for a minimum and its smallest for a maximum. */
static void coll_identity(utc_datatype_t type, utc_reduce_op_t op, void *buf, size_t count)
{
    size_t size = utc_datatype_size(type);
    if (op == UTC_OP_SUM) {
        memset(buf, 0, count * size); /* 0 in every type, 0.0 included */
        return;
    }
    const coll_elem_t *v = op == UTC_OP_MAX ? &coll_lowest[type] : &coll_highest[type];
    for (size_t i = 0; i < count; i++)
        memcpy((char *)buf + i * size, v, size);
}

/* Where group rank r's block of a v-form starts: displs[r], or packed after the blocks of
 * the ranks before it. */
static size_t coll_displ(const size_t *counts, const size_t *displs, int r)
{
    if (displs)
        return displs[r];
    size_t at = 0;
    for (int k = 0; k < r; k++)
        at += counts[k];
    return at;
}

/* Whether the call is in place (see collectives.h: sendbuf names this rank's own block in
 * recvbuf, or recvbuf itself). Needs the arguments checked first for the v-forms. */
static bool coll_in_place(const utc__gs_task_t *gs, const coll_t *c)
{
    if (!c->sendbuf || !c->recvbuf)
        return false;
    size_t at;
    switch (c->kind) {
    case COLL_ALLGATHER:
        at = (size_t)gs->rank * c->count;
        break;
    case COLL_ALLGATHERV:
        at = coll_displ(c->recvcounts, c->rdispls, gs->rank);
        break;
    default:
        return c->sendbuf == c->recvbuf;
    }
    return c->sendbuf == (const char *)c->recvbuf + at * utc_datatype_size(c->type);
}

/* A v-form's counts and displacements: each fits an int (MPI's), and the elements its
 * blocks span from the buffer's start into *span. */
static utc_status_t coll_blocks(const utc__gs_task_t *gs, const coll_t *c, const size_t *counts,
                                const size_t *displs, const char *cname, const char *dname,
                                size_t *span)
{
    size_t end = 0;
    for (int r = 0; r < gs->nranks; r++) {
        if (counts[r] > INT_MAX)
            return utc__error(UTC_ERR_INVALID_ARG, "%s: %s[%d] = %zu is larger than INT_MAX", c->fn,
                              cname, r, counts[r]);
        if (displs && displs[r] > INT_MAX)
            return utc__error(UTC_ERR_INVALID_ARG, "%s: %s[%d] = %zu is larger than INT_MAX", c->fn,
                              dname, r, displs[r]);
        size_t at = displs ? displs[r] : end;
        if (counts[r] && at + counts[r] > end)
            end = at + counts[r];
        if (!displs && end > INT_MAX)
            return utc__error(UTC_ERR_INVALID_ARG,
                              "%s: the %s add up to more than INT_MAX elements: MPI's "
                              "displacements are ints (pass %s of your own below INT_MAX)",
                              c->fn, cname, dname);
    }
    *span = end;
    return UTC_OK;
}

/* The argument checks of allgather(v), alltoall(v) and the scans: the arrays, their
 * counts, NULL buffers where something moves, and send and receive areas that overlap
 * other than in place. */
static utc_status_t coll_check_all(const utc__gs_task_t *gs, const coll_t *c)
{
    size_t n = (size_t)gs->nranks, send = 0, recv = 0; /* elements read and written */
    utc_status_t rc = UTC_OK;
    switch (c->kind) {
    case COLL_ALLGATHER:
        send = c->count, recv = n * c->count;
        break;
    case COLL_ALLTOALL:
        send = recv = n * c->count;
        break;
    case COLL_SCAN:
    case COLL_EXSCAN:
        send = recv = c->count;
        break;
    case COLL_ALLGATHERV:
        send = c->count;
        if (!c->recvcounts)
            return utc__error(UTC_ERR_INVALID_ARG,
                              "%s: recvcounts is NULL (one count per "
                              "rank of the task)",
                              c->fn);
        rc = coll_blocks(gs, c, c->recvcounts, c->rdispls, "recvcounts", "displs", &recv);
        break;
    case COLL_ALLTOALLV:
        if (!c->recvcounts)
            return utc__error(UTC_ERR_INVALID_ARG,
                              "%s: recvcounts is NULL (one count per "
                              "rank of the task)",
                              c->fn);
        if ((rc = coll_blocks(gs, c, c->recvcounts, c->rdispls, "recvcounts", "rdispls", &recv)) !=
            UTC_OK)
            return rc;
        if (c->sendbuf && c->sendbuf == c->recvbuf)
            return UTC_OK; /* in place: recvcounts and rdispls say what is sent */
        if (!c->sendcounts)
            return utc__error(UTC_ERR_INVALID_ARG,
                              "%s: sendcounts is NULL (one count per "
                              "rank of the task)",
                              c->fn);
        rc = coll_blocks(gs, c, c->sendcounts, c->sdispls, "sendcounts", "sdispls", &send);
        break;
    default:
        return UTC_OK;
    }
    if (rc != UTC_OK)
        return rc;
    /* what a rank sends itself: with other ranks, checked with every pair (coll_agree) */
    if (gs->nranks == 1 && c->kind == COLL_ALLGATHERV && c->count != c->recvcounts[0])
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: sendcount %zu is not recvcounts[0] = %zu "
                          "(what this rank contributes)",
                          c->fn, c->count, c->recvcounts[0]);
    if (gs->nranks == 1 && c->kind == COLL_ALLTOALLV && c->sendcounts[0] != c->recvcounts[0])
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: sendcounts[0] = %zu is not recvcounts[0] = "
                          "%zu (what this rank sends itself)",
                          c->fn, c->sendcounts[0], c->recvcounts[0]);
    if (send && !c->sendbuf)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: sendbuf is NULL", c->fn);
    if (recv && !c->recvbuf)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: recvbuf is NULL", c->fn);
    size_t size = utc_datatype_size(c->type);
    const char *s = c->sendbuf, *r = c->recvbuf;
    if (send && recv && s < r + recv * size && r < s + send * size && !coll_in_place(gs, c))
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: sendbuf and recvbuf overlap (%zu and %zu bytes at %p and %p); "
                          "for in place pass %s",
                          c->fn, send * size, recv * size, (const void *)s, (const void *)r,
                          c->kind == COLL_ALLGATHER || c->kind == COLL_ALLGATHERV
                              ? "this rank's block of recvbuf as sendbuf"
                              : "recvbuf as sendbuf");
    return UTC_OK;
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
        return utc__error(UTC_ERR_INVALID_ARG, "%s: %s %zu is larger than INT_MAX", c->fn,
                          c->kind == COLL_ALLGATHERV ? "sendcount" : "count", c->count);
    if (c->kind >= COLL_ALLGATHER)
        return coll_check_all(gs, c);
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
    static const char *const types[] = {
        [UTC_TYPE_INT] = "UTC_TYPE_INT",       [UTC_TYPE_INT64] = "UTC_TYPE_INT64",
        [UTC_TYPE_FLOAT] = "UTC_TYPE_FLOAT",   [UTC_TYPE_DOUBLE] = "UTC_TYPE_DOUBLE",
        [UTC_TYPE_BYTE] = "UTC_TYPE_BYTE",     [UTC_TYPE_INT8] = "UTC_TYPE_INT8",
        [UTC_TYPE_UINT8] = "UTC_TYPE_UINT8",   [UTC_TYPE_INT16] = "UTC_TYPE_INT16",
        [UTC_TYPE_UINT16] = "UTC_TYPE_UINT16", [UTC_TYPE_INT32] = "UTC_TYPE_INT32",
        [UTC_TYPE_UINT32] = "UTC_TYPE_UINT32", [UTC_TYPE_UINT64] = "UTC_TYPE_UINT64"};
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

/* The v-forms' counts, pair by pair (base/coll_check.h): what this rank sends to group
 * rank j and what it expects from group rank i. In place, alltoallv sends what recvcounts
 * says. */
static uint64_t coll_sends(const void *arg, int j)
{
    const coll_t *c = arg;
    if (c->kind == COLL_ALLGATHERV)
        return c->count;
    return c->sendbuf && c->sendbuf == c->recvbuf ? c->recvcounts[j] : c->sendcounts[j];
}

static uint64_t coll_expects(const void *arg, int i)
{
    return ((const coll_t *)arg)->recvcounts[i];
}

/*
 * The cross-rank argument check (base/coll_check.h), made by the thread of each rank that
 * then makes the MPI call: what every rank can check (count, datatype, op, root; for the
 * v-forms, that the counts match pair by pair) and the status of this rank's own checks
 * (`local`) are compared in one small exchange on the task's communicator. So a bad
 * argument that only the root sees (a NULL buffer there) or a count that differs on one
 * rank ends the call on every rank with UTC_ERR_MISMATCH before the data lands anywhere
 * (all-to-all's data, `data`, leaves with the check up to 8 ranks: on a mismatch it is
 * dropped), and the next collective agrees again. With UTC_CHECK=0 nothing is compared: a
 * local error is returned on its rank alone and the others may wait.
 */
static utc_status_t coll_agree(utc__gs_task_t *gs, const coll_t *c, utc_status_t local,
                               utc__coll_data_t *data)
{
    if (gs->nranks == 1) {
        gs->coll_seq++; /* numbered all the same, for the watchdog */
        return local;   /* nothing to compare with */
    }
    bool reducing = coll_kinds[c->kind].reducing, rooted = coll_kinds[c->kind].rooted;
    bool vector = coll_kinds[c->kind].vector;
    const utc__coll_pairs_t pairs = {.sends_name =
                                         c->kind == COLL_ALLGATHERV ? "sendcount" : "sendcounts",
                                     .expects_name = "recvcounts",
                                     .sends_one = c->kind == COLL_ALLGATHERV,
                                     .sends = coll_sends,
                                     .expects = coll_expects,
                                     .arg = c};
    utc__coll_desc_t d = {.call = coll_kinds[c->kind].call,
                          .args_rc = local,
                          .part_name = {[PART_COUNT] = vector ? NULL : "count",
                                        [PART_TYPE] = "datatype",
                                        [PART_OP] = reducing ? "reduce op" : NULL,
                                        [PART_ROOT] = rooted ? "root" : NULL},
                          .part = {[PART_COUNT] = c->count,
                                   [PART_TYPE] = (uint64_t)c->type,
                                   [PART_OP] = (uint64_t)c->op,
                                   [PART_ROOT] = (uint64_t)(int64_t)c->root},
                          .show = coll_show,
                          .pairs = vector ? &pairs : NULL,
                          /* the live task's name as utc_task_name gives it, without the
                           * handle's check (a lock and a lookup, ~20 ns of every call) */
                          .task = utc__text_name(gs->task->impl->ops->name),
                          .data = data,
                          .nodata_name = c->kind == COLL_ALLTOALL || c->kind == COLL_ALLTOALLV
                                             ? "passing recvbuf as sendbuf (in place)"
                                             : NULL};
    utc_status_t rc =
        utc__coll_check(gs->comm, &gs->coll_seq, gs->task->impl->group_ranks, c->fn, &d);
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

/* A v-form's counts and displacements as MPI's ints, into out[0 .. 2n) (checked to fit). */
static void coll_ints(int n, const size_t *counts, const size_t *displs, int *out)
{
    size_t at = 0;
    for (int r = 0; r < n; r++) {
        out[r] = (int)counts[r];
        out[n + r] = (int)(displs ? displs[r] : at);
        at += counts[r];
    }
}

/*
 * All-to-all by point-to-point messages on the task communicator (tag COLL_TAG, which no
 * other message there uses): a receive from every other rank, then a send to every other,
 * in rank order starting after this rank's, and this rank's own block copied. Open MPI's
 * nonblocking MPI_Ialltoallv sends the same messages (its linear schedule) but costs
 * ~0.25 us more per call at 2 ranks here, a third of a 1 KiB exchange (doc/PERFORMANCE.md).
 * Every pair's message is sent, empty ones too, so that counts that disagree (UTC_CHECK=0)
 * end in short data, not a wait. The counts and displacements are ints[0 .. 4n): send
 * counts, send displacements, receive counts, receive displacements. No message for the
 * blocks that went with the cross-rank check (bit r of inlined_to: the block to group rank
 * r; of inlined_from: the block from r; base/coll_check.h). Requests into reqs (2 (n-1)),
 * their number into *nreq; MPI's error code.
 */
enum { COLL_TAG = 0x7c4d };

static int coll_exchange(utc__gs_task_t *gs, const coll_t *c, MPI_Datatype dt, const int *ints,
                         unsigned inlined_to, unsigned inlined_from, MPI_Request *reqs, int *nreq)
{
    int n = gs->nranks, me = gs->rank, err = MPI_SUCCESS, k = 0;
    size_t size = utc_datatype_size(c->type);
    const int *sc = ints, *sd = ints + n, *rc = ints + 2 * n, *rd = ints + 3 * n;
    const char *send = c->sendbuf;
    char *recv = c->recvbuf;
    for (int step = 1; step < n && err == MPI_SUCCESS; step++) {
        int from = (me + n - step) % n;
        if (inlined_from >> from & 1u)
            continue;
        err = MPI_Irecv(recv ? recv + (size_t)rd[from] * size : NULL, rc[from], dt, from, COLL_TAG,
                        gs->comm, &reqs[k++]);
    }
    for (int step = 1; step < n && err == MPI_SUCCESS; step++) {
        int to = (me + step) % n;
        if (inlined_to >> to & 1u)
            continue;
        err = MPI_Isend(send ? send + (size_t)sd[to] * size : NULL, sc[to], dt, to, COLL_TAG,
                        gs->comm, &reqs[k++]);
    }
    int own = sc[me] < rc[me] ? sc[me] : rc[me];
    if (err == MPI_SUCCESS && own > 0)
        memcpy(recv + (size_t)rd[me] * size, send + (size_t)sd[me] * size, (size_t)own * size);
    *nreq = err == MPI_SUCCESS ? k : k - 1;
    return err;
}

/* Start the MPI part of call c (arguments agreed on every rank): its requests into reqs
 * (up to 2 group_size), their number into *nreq. All-to-all posts nothing for the blocks
 * that went with the check (coll_exchange). */
static int coll_start(utc__gs_task_t *gs, const coll_t *c, unsigned inlined_to,
                      unsigned inlined_from, MPI_Request *reqs, int *nreq)
{
    MPI_Datatype dt = coll_mpi_type(c->type, coll_kinds[c->kind].reducing);
    MPI_Op op = coll_mpi_op(c->op);
    MPI_Comm comm = gs->comm;
    int n = (int)c->count, nr = gs->nranks, *ints = gs->coll_ints;
    bool in_place = coll_in_place(gs, c);
    const void *send = in_place ? MPI_IN_PLACE : c->sendbuf;
    void *recv = c->recvbuf;
    MPI_Request *req = reqs;
    *nreq = 1;
    switch (c->kind) {
    case COLL_BCAST:
        return MPI_Ibcast(recv, n, dt, c->root, comm, req);
    case COLL_GATHER:
        return MPI_Igather(c->sendbuf, n, dt, recv, n, dt, c->root, comm, req);
    case COLL_SCATTER:
        return MPI_Iscatter(c->sendbuf, n, dt, recv, n, dt, c->root, comm, req);
    case COLL_REDUCE: /* in place at the root only */
        return MPI_Ireduce(gs->rank == c->root ? send : c->sendbuf, recv, n, dt, op, c->root, comm,
                           req);
    case COLL_ALLREDUCE:
        return MPI_Iallreduce(send, recv, n, dt, op, comm, req);
    case COLL_ALLGATHER:
        return MPI_Iallgather(send, n, dt, recv, n, dt, comm, req);
    case COLL_ALLGATHERV:
        coll_ints(nr, c->recvcounts, c->rdispls, ints);
        return MPI_Iallgatherv(send, n, dt, recv, ints, ints + nr, dt, comm, req);
    case COLL_ALLTOALL:
        if (in_place) /* MPI keeps a copy of what is sent */
            return MPI_Ialltoall(send, n, dt, recv, n, dt, comm, req);
        for (int r = 0; r < nr; r++) {
            ints[r] = ints[2 * nr + r] = n;
            ints[nr + r] = ints[3 * nr + r] = r * n;
        }
        return coll_exchange(gs, c, dt, ints, inlined_to, inlined_from, reqs, nreq);
    case COLL_ALLTOALLV:
        coll_ints(nr, c->recvcounts, c->rdispls, ints + 2 * nr);
        if (in_place)
            return MPI_Ialltoallv(send, ints, ints + nr, dt, recv, ints + 2 * nr, ints + 3 * nr, dt,
                                  comm, req);
        coll_ints(nr, c->sendcounts, c->sdispls, ints);
        return coll_exchange(gs, c, dt, ints, inlined_to, inlined_from, reqs, nreq);
    case COLL_SCAN:
        return MPI_Iscan(send, recv, n, dt, op, comm, req);
    case COLL_EXSCAN:
        return MPI_Iexscan(send, recv, n, dt, op, comm, req);
    }
    return MPI_ERR_INTERN;
}

/* coll_start as the data that moves with the cross-rank check (utc__coll_data_t). */
typedef struct {
    utc__gs_task_t *gs;
    const coll_t *c;
} coll_call_t;

static int coll_start_data(void *arg, unsigned inlined_to, unsigned inlined_from,
                           MPI_Request *reqs, int *nreq)
{
    const coll_call_t *call = arg;
    return coll_start(call->gs, call->c, inlined_to, inlined_from, reqs, nreq);
}

/* All-to-all's block for group rank `peer` (send) or from it, for the check to carry when
 * small (utc__coll_data_t): where it is and its bytes (the counts passed the local checks). */
static size_t coll_block(void *arg, int peer, bool send, void **at)
{
    const coll_call_t *call = arg;
    const coll_t *c = call->c;
    size_t size = utc_datatype_size(c->type), count = c->count, displ = (size_t)peer * count;
    if (c->kind == COLL_ALLTOALLV) {
        const size_t *counts = send ? c->sendcounts : c->recvcounts;
        const size_t *displs = send ? c->sdispls : c->rdispls;
        count = counts[peer];
        displ = 0;
        for (int r = 0; !displs && r < peer; r++)
            displ += counts[r];
        if (displs)
            displ = displs[peer];
    }
    *at = (send ? (char *)(uintptr_t)c->sendbuf : (char *)c->recvbuf) + displ * size;
    return count * size;
}

/*
 * The MPI part, made by one thread of the rank, with the cross-rank check. All-to-all's
 * messages (not in place: coll_exchange) leave right behind the check's record, so the
 * check costs no round trip before the data moves (~0.25 us of a 1 KiB exchange at 2
 * ranks); the other kinds start once the check agreed.
 */
static utc_status_t coll_run(utc__gs_task_t *gs, const coll_t *c, utc_status_t local)
{
    utc__gs_board_set(&gs->board, gs->coll_seq + 1); /* this rank has arrived */
    bool with = (c->kind == COLL_ALLTOALL || c->kind == COLL_ALLTOALLV) && local == UTC_OK &&
                gs->nranks > 1 && !coll_in_place(gs, c);
    coll_call_t call = {gs, c};
    utc__coll_data_t data = {
        .tag = COLL_TAG,
        .start = coll_start_data,
        .block = coll_block,
        .arg = &call,
        .reqs = gs->coll_reqs};
    utc_status_t rc = coll_agree(gs, c, local, with ? &data : NULL);
    int nreq = with ? data.nreq : 0; /* started with the check */
    int err = with ? data.err : MPI_SUCCESS;
    if (rc != UTC_OK) {
        for (int k = 0; k < nreq; k++) /* only after an MPI failure in the check */
            MPI_Wait(&gs->coll_reqs[k], MPI_STATUS_IGNORE);
        return rc;
    }
    if (!gs->board_tried) /* a task with no window, at its first collective */
        utc__gs_board_window(gs);
    char why[256];
    if (!with)
        err = coll_start(gs, c, 0, 0, gs->coll_reqs, &nreq);
    /* every request, also after a failed one (a receive cut short when counts disagree
     * with UTC_CHECK=0) and those started before a failure: none is left behind */
    for (int k = 0; k < nreq; k++) {
        utc_status_t wrc = utc__mpi_wait(&gs->coll_reqs[k], MPI_STATUS_IGNORE, -1.0);
        if (rc == UTC_OK && wrc != UTC_OK) {
            rc = wrc;
            utc__text_copy(why, sizeof why, utc_last_error());
        }
    }
    if (err != MPI_SUCCESS)
        return coll_mpi_failed(gs, c, err);
    if (rc != UTC_OK) /* name the call and the task in front of the wait's message */
        return utc__error(rc, "%s on task '%s': %s", c->fn, utc_task_name(gs->task), why);
    if (c->kind == COLL_EXSCAN && gs->rank == 0 && c->count) /* MPI leaves it undefined */
        coll_identity(c->type, c->op, c->recvbuf, c->count);
    return UTC_OK;
}

/* The trace record's size (what this rank sends) and peer. */
static size_t coll_bytes(const utc__gs_task_t *gs, const coll_t *c)
{
    size_t elems = c->count;
    if (c->kind == COLL_ALLTOALL)
        elems *= (size_t)gs->nranks;
    else if (c->kind == COLL_ALLTOALLV) {
        const size_t *counts = c->sendbuf == c->recvbuf ? c->recvcounts : c->sendcounts;
        elems = 0;
        for (int r = 0; counts && r < gs->nranks; r++)
            elems += counts[r];
    }
    return elems * utc_datatype_size(c->type);
}

static int coll_peer(const coll_t *c)
{
    return coll_kinds[c->kind].rooted ? c->root : -1;
}

/*
 * What a thread in a collective waits on, for the watchdog (base/wait_hook.h): the call
 * and its number, and when it reports the wait, which ranks have not arrived. The number
 * is read before the thread enters the team step: the leader that advances it is chosen
 * only once every thread of the rank has entered, and the last leader wrote it before the
 * team step that ended the last collective.
 */
typedef struct {
    utc__wait_detail_t base; /* first: what the watchdog holds */
    utc__gs_task_t *gs;
    const char *fn;
    uint64_t seq;
} coll_wait_t;

/* Up to 8 ranks named, then how many more: " 1 (at #16) and 2 (none yet)". */
static void coll_describe_ranks(const utc__gs_task_t *gs, const uint64_t *vals, const int *list,
                                int count, bool with_at, char *buf, size_t cap)
{
    for (int k = 0; k < count && k < 8; k++) {
        size_t len = strlen(buf);
        int r = list[k], w = gs->task->impl->group_ranks[r];
        const char *sep = k == 0 ? " " : k == count - 1 || k == 7 ? " and " : ", ";
        if (!with_at)
            snprintf(buf + len, cap - len, "%s%d", sep, w);
        else if (vals[r] == 0)
            snprintf(buf + len, cap - len, "%s%d (no collective of this task yet)", sep, w);
        else
            snprintf(buf + len, cap - len, "%s%d (still at #%llu)", sep, w,
                     (unsigned long long)vals[r]);
    }
    if (count > 8) {
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, " (and %d more)", count - 8);
    }
}

/* The watchdog's question: one line on what the collective waits for. */
static void coll_describe(const utc__wait_detail_t *self, char *buf, size_t cap)
{
    const coll_wait_t *w = (const coll_wait_t *)self;
    utc__gs_task_t *gs = w->gs;
    int n = gs->nranks;
    snprintf(buf, cap, "%s #%llu", w->fn, (unsigned long long)w->seq);
    size_t len = strlen(buf);
    if (utc__gs_board_get_mine(&gs->board) < w->seq) { /* its leader has not started */
        /* relaxed: a count for a message, ordered with nothing */
        unsigned in = atomic_load_explicit(&gs->barrier.arrived, memory_order_relaxed);
        snprintf(buf + len, cap - len,
                 ": waiting for this rank's threads of the task (%u of "
                 "%d here)",
                 in, gs->nlocal);
        return;
    }
    if (n == 1) {
        snprintf(buf + len, cap - len, ": the task's only rank");
        return;
    }
    uint64_t *vals = malloc(sizeof *vals * (size_t)n);
    bool *known = malloc(sizeof *known * (size_t)n);
    int *late = malloc(sizeof *late * (size_t)n), *mute = malloc(sizeof *mute * (size_t)n);
    if (!vals || !known || !late || !mute) {
        snprintf(buf + len, cap - len, ": (no memory to ask the other ranks)");
        goto out;
    }
    if (!utc__gs_board_read(&gs->board, w->seq, 1.0, vals, known)) {
        snprintf(buf + len, cap - len,
                 ": which ranks have not arrived cannot be told (a task "
                 "with no window can tell from its second collective on)");
        goto out;
    }
    int nlate = 0, nmute = 0;
    for (int r = 0; r < n; r++) {
        if (!known[r])
            mute[nmute++] = r;
        else if (vals[r] < w->seq)
            late[nlate++] = r;
    }
    if (nlate) {
        snprintf(buf + len, cap - len, ": waiting for rank%s", nlate > 1 ? "s" : "");
        coll_describe_ranks(gs, vals, late, nlate, true, buf, cap);
    } else if (!nmute) {
        snprintf(buf + len, cap - len, ": every rank has arrived (the data is on its way)");
    }
    if (nmute) {
        len = strlen(buf);
        snprintf(buf + len, cap - len, "%s rank%s", nlate ? "; no answer from" : ": no answer from",
                 nmute > 1 ? "s" : "");
        coll_describe_ranks(gs, vals, mute, nmute, false, buf, cap);
        len = strlen(buf);
        /* a rank that has arrived tests its request, which lets MPI answer */
        snprintf(buf + len, cap - len,
                 " within 1 s: not in an MPI call, so most likely not "
                 "arrived");
    }
out:
    free(vals), free(known), free(late), free(mute);
}

/* Tell the wait hook this thread waits in call c (until utc__wait_end). */
static void coll_wait_begin(coll_wait_t *w, utc__gs_task_t *gs, const coll_t *c)
{
    *w = (coll_wait_t){
        .base.describe = coll_describe, .gs = gs, .fn = c->fn, .seq = gs->coll_seq + 1};
    utc__wait_begin_detail(UTC__WAIT_COLLECTIVE, gs->task->impl->id, -1, -1,
                           gs->task->impl->ops->name, &w->base);
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
    coll_wait_t w;
    coll_wait_begin(&w, gs, c);
    bool leader = utc__gs_team_enter(gs);
    if (leader)
        rc = coll_run(gs, c, local);
    rc = utc__gs_team_leave(gs, leader, rc);
    utc__wait_end();
    return UTC__PROF_LEAF_VAL(coll_kinds[c->kind].ev, prof_t0, gs->task->impl->id,
                              coll_bytes(gs, c), -1, coll_peer(c), rc);
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
    coll_wait_t w;
    coll_wait_begin(&w, gs, c);
    rc = UTC__PROF_CALL(coll_kinds[c->kind].ev, gs->task->impl->id, coll_bytes(gs, c), -1,
                        coll_peer(c), coll_run(gs, c, local));
    utc__wait_end();
    return rc;
}

/* The one path of all the public calls: `by` NULL for the plain forms (every local thread
 * calls), else the _by forms' thread. The call's record is the caller's compound literal,
 * named here in place: copying it (16-byte loads of what was just stored 8 bytes at a time)
 * stalled store forwarding, ~15 ns of a 1 KiB all-to-all (doc/PERFORMANCE.md). */
static utc_status_t coll(utc_ctx_t *ctx, const int *by, coll_t *c)
{
    c->fn = by ? coll_kinds[c->kind].fn_by : coll_kinds[c->kind].fn;
    return by ? coll_by(ctx, *by, c) : coll_all(ctx, c);
}

/* The calls with one count, as coll_t: what each public call passes. */
#define COLL_ONE(kind_, send_, recv_, count_, type_, op_, root_)                                   \
    (&(coll_t){.kind = (kind_),                                                                    \
               .sendbuf = (send_),                                                                 \
               .recvbuf = (recv_),                                                                 \
               .count = (count_),                                                                  \
               .type = (type_),                                                                    \
               .op = (op_),                                                                        \
               .root = (root_)})

/* The v-forms, as coll_t (count: allgatherv's sendcount). */
#define COLL_V(kind_, send_, scounts_, sdispls_, count_, recv_, rcounts_, rdispls_, type_)         \
    (&(coll_t){.kind = (kind_),                                                                    \
               .sendbuf = (send_),                                                                 \
               .sendcounts = (scounts_),                                                           \
               .sdispls = (sdispls_),                                                              \
               .count = (count_),                                                                  \
               .recvbuf = (recv_),                                                                 \
               .recvcounts = (rcounts_),                                                           \
               .rdispls = (rdispls_),                                                              \
               .type = (type_)})

utc_status_t utc_task_bcast(utc_ctx_t *ctx, void *buf, size_t count, utc_datatype_t type, int root)
{
    return coll(ctx, NULL, COLL_ONE(COLL_BCAST, NULL, buf, count, type, COLL_NO_OP, root));
}

utc_status_t utc_task_gather(utc_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t count,
                             utc_datatype_t type, int root)
{
    return coll(ctx, NULL, COLL_ONE(COLL_GATHER, sendbuf, recvbuf, count, type, COLL_NO_OP, root));
}

utc_status_t utc_task_scatter(utc_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t count,
                              utc_datatype_t type, int root)
{
    return coll(ctx, NULL, COLL_ONE(COLL_SCATTER, sendbuf, recvbuf, count, type, COLL_NO_OP, root));
}

utc_status_t utc_task_reduce(utc_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t count,
                             utc_datatype_t type, utc_reduce_op_t op, int root)
{
    return coll(ctx, NULL, COLL_ONE(COLL_REDUCE, sendbuf, recvbuf, count, type, op, root));
}

utc_status_t utc_task_allreduce(utc_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t count,
                                utc_datatype_t type, utc_reduce_op_t op)
{
    return coll(ctx, NULL,
                COLL_ONE(COLL_ALLREDUCE, sendbuf, recvbuf, count, type, op, COLL_NO_ROOT));
}

utc_status_t utc_task_allgather(utc_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t count,
                                utc_datatype_t type)
{
    return coll(ctx, NULL,
                COLL_ONE(COLL_ALLGATHER, sendbuf, recvbuf, count, type, COLL_NO_OP, COLL_NO_ROOT));
}

utc_status_t utc_task_allgatherv(utc_ctx_t *ctx, const void *sendbuf, size_t sendcount,
                                 void *recvbuf, const size_t *recvcounts, const size_t *displs,
                                 utc_datatype_t type)
{
    return coll(
        ctx, NULL,
        COLL_V(COLL_ALLGATHERV, sendbuf, NULL, NULL, sendcount, recvbuf, recvcounts, displs, type));
}

utc_status_t utc_task_alltoall(utc_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t count,
                               utc_datatype_t type)
{
    return coll(ctx, NULL,
                COLL_ONE(COLL_ALLTOALL, sendbuf, recvbuf, count, type, COLL_NO_OP, COLL_NO_ROOT));
}

utc_status_t utc_task_alltoallv(utc_ctx_t *ctx, const void *sendbuf, const size_t *sendcounts,
                                const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                const size_t *rdispls, utc_datatype_t type)
{
    return coll(ctx, NULL,
                COLL_V(COLL_ALLTOALLV, sendbuf, sendcounts, sdispls, 0, recvbuf, recvcounts,
                       rdispls, type));
}

utc_status_t utc_task_scan(utc_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t count,
                           utc_datatype_t type, utc_reduce_op_t op)
{
    return coll(ctx, NULL, COLL_ONE(COLL_SCAN, sendbuf, recvbuf, count, type, op, COLL_NO_ROOT));
}

utc_status_t utc_task_exscan(utc_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t count,
                             utc_datatype_t type, utc_reduce_op_t op)
{
    return coll(ctx, NULL, COLL_ONE(COLL_EXSCAN, sendbuf, recvbuf, count, type, op, COLL_NO_ROOT));
}

utc_status_t utc_task_bcast_by(utc_ctx_t *ctx, int thread, void *buf, size_t count,
                               utc_datatype_t type, int root)
{
    return coll(ctx, &thread, COLL_ONE(COLL_BCAST, NULL, buf, count, type, COLL_NO_OP, root));
}

utc_status_t utc_task_gather_by(utc_ctx_t *ctx, int thread, const void *sendbuf, void *recvbuf,
                                size_t count, utc_datatype_t type, int root)
{
    return coll(ctx, &thread,
                COLL_ONE(COLL_GATHER, sendbuf, recvbuf, count, type, COLL_NO_OP, root));
}

utc_status_t utc_task_scatter_by(utc_ctx_t *ctx, int thread, const void *sendbuf, void *recvbuf,
                                 size_t count, utc_datatype_t type, int root)
{
    return coll(ctx, &thread,
                COLL_ONE(COLL_SCATTER, sendbuf, recvbuf, count, type, COLL_NO_OP, root));
}

utc_status_t utc_task_reduce_by(utc_ctx_t *ctx, int thread, const void *sendbuf, void *recvbuf,
                                size_t count, utc_datatype_t type, utc_reduce_op_t op, int root)
{
    return coll(ctx, &thread, COLL_ONE(COLL_REDUCE, sendbuf, recvbuf, count, type, op, root));
}

utc_status_t utc_task_allreduce_by(utc_ctx_t *ctx, int thread, const void *sendbuf, void *recvbuf,
                                   size_t count, utc_datatype_t type, utc_reduce_op_t op)
{
    return coll(ctx, &thread,
                COLL_ONE(COLL_ALLREDUCE, sendbuf, recvbuf, count, type, op, COLL_NO_ROOT));
}

utc_status_t utc_task_allgather_by(utc_ctx_t *ctx, int thread, const void *sendbuf, void *recvbuf,
                                   size_t count, utc_datatype_t type)
{
    return coll(ctx, &thread,
                COLL_ONE(COLL_ALLGATHER, sendbuf, recvbuf, count, type, COLL_NO_OP, COLL_NO_ROOT));
}

utc_status_t utc_task_allgatherv_by(utc_ctx_t *ctx, int thread, const void *sendbuf,
                                    size_t sendcount, void *recvbuf, const size_t *recvcounts,
                                    const size_t *displs, utc_datatype_t type)
{
    return coll(
        ctx, &thread,
        COLL_V(COLL_ALLGATHERV, sendbuf, NULL, NULL, sendcount, recvbuf, recvcounts, displs, type));
}

utc_status_t utc_task_alltoall_by(utc_ctx_t *ctx, int thread, const void *sendbuf, void *recvbuf,
                                  size_t count, utc_datatype_t type)
{
    return coll(ctx, &thread,
                COLL_ONE(COLL_ALLTOALL, sendbuf, recvbuf, count, type, COLL_NO_OP, COLL_NO_ROOT));
}

utc_status_t utc_task_alltoallv_by(utc_ctx_t *ctx, int thread, const void *sendbuf,
                                   const size_t *sendcounts, const size_t *sdispls, void *recvbuf,
                                   const size_t *recvcounts, const size_t *rdispls,
                                   utc_datatype_t type)
{
    return coll(ctx, &thread,
                COLL_V(COLL_ALLTOALLV, sendbuf, sendcounts, sdispls, 0, recvbuf, recvcounts,
                       rdispls, type));
}

utc_status_t utc_task_scan_by(utc_ctx_t *ctx, int thread, const void *sendbuf, void *recvbuf,
                              size_t count, utc_datatype_t type, utc_reduce_op_t op)
{
    return coll(ctx, &thread, COLL_ONE(COLL_SCAN, sendbuf, recvbuf, count, type, op, COLL_NO_ROOT));
}

utc_status_t utc_task_exscan_by(utc_ctx_t *ctx, int thread, const void *sendbuf, void *recvbuf,
                                size_t count, utc_datatype_t type, utc_reduce_op_t op)
{
    return coll(ctx, &thread,
                COLL_ONE(COLL_EXSCAN, sendbuf, recvbuf, count, type, op, COLL_NO_ROOT));
}
