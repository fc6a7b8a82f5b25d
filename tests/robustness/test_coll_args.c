/*
 * Task collectives whose ranks disagree (issue 23, item 3). Every collective (bcast,
 * gather, scatter, reduce, allreduce) with each argument every rank can check (count,
 * datatype, reduce op, root) differing on the last rank returns UTC_ERR_MISMATCH on every
 * rank, with a message naming the call, the task and what differs; so do two different
 * collectives at the same point, and a bad argument only the root sees (a NULL buffer
 * there). After each, a correct collective on the same task works. At 1 rank nothing can
 * differ: the root-only cases give the argument's own error and the rest runs normally.
 * Each rank holds two threads of the task: the plain forms are called by both, the _by
 * forms by one.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "utc_test.h"

#define TASK_NAME "coll-args"

static atomic_int failures;
static atomic_int mismatches_seen;

static void fail(utc_ctx_t *ctx, int line, const char *what, int rc)
{
    fprintf(stderr, "rank %d thread %d, line %d: %s: got %d (%s): %s\n", ctx->world_rank,
            ctx->local_id, line, what, rc, utc_status_string(rc), utc_last_error());
    atomic_fetch_add(&failures, 1);
}

/* Rank-shared buffers: room for 3 ranks x 16 elements of 8 bytes. */
typedef struct {
    utc_task_t base;
    double send[64];
    double recv[64];
} args_task_t;

static bool odd(utc_ctx_t *ctx) { return ctx->world_rank == utc_nranks() - 1 && utc_nranks() > 1; }

/* rc is UTC_ERR_MISMATCH with a message naming the call, the task and `what` (at 1 rank:
 * `alone`, the status one rank gets by itself, UTC_OK when it may not fail at all). */
static void expect(utc_ctx_t *ctx, int line, int rc, const char *fn, const char *what,
                   int alone)
{
    if (utc_nranks() == 1) {
        if (rc != alone)
            fail(ctx, line, "one rank: not the expected status", rc);
        return;
    }
    if (rc != UTC_ERR_MISMATCH) {
        fail(ctx, line, "expected UTC_ERR_MISMATCH", rc);
        return;
    }
    const char *msg = utc_last_error();
    if (!strstr(msg, fn) || !strstr(msg, "task '" TASK_NAME "'") || !strstr(msg, what)) {
        fprintf(stderr, "message lacks '%s' or '%s': %s\n", fn, what, msg);
        fail(ctx, line, "message", rc);
        return;
    }
    if (ctx->world_rank == 0 && ctx->local_id == 0)
        printf("  %s\n", msg);
    atomic_fetch_add(&mismatches_seen, 1);
}

/* The task is usable: a correct allreduce gives the right sum, and a correct collective
 * of the kind that just failed works. */
static void usable(utc_ctx_t *ctx, args_task_t *t, int line)
{
    int n = utc_nranks();
    int one = ctx->world_rank + 1, sum = 0;
    int rc = utc_task_allreduce_by(ctx, 0, &one, &sum, 1, UTC_TYPE_INT, UTC_OP_SUM);
    if (rc != UTC_OK)
        fail(ctx, line, "allreduce after the mismatch", rc);
    else if (ctx->local_id == 0 && sum != n * (n + 1) / 2)
        fail(ctx, line, "allreduce after the mismatch: wrong sum", sum);
    if (utc_ctx_barrier_local(ctx) != UTC_OK) /* thread 0's call is over */
        fail(ctx, line, "local barrier", -1);
    if (ctx->local_id == 0)
        t->recv[0] = ctx->world_rank == 0 ? 42.0 : 0.0;
    if ((rc = utc_task_bcast(ctx, t->recv, 1, UTC_TYPE_DOUBLE, 0)) != UTC_OK)
        fail(ctx, line, "bcast after the mismatch", rc);
    else if (t->recv[0] != 42.0)
        fail(ctx, line, "bcast after the mismatch: wrong value", (int)t->recv[0]);
    if (utc_ctx_barrier_local(ctx) != UTC_OK)
        fail(ctx, line, "local barrier", -1);
}

static int args_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    args_task_t *t = (args_task_t *)self;
    int last = utc_nranks() - 1;
    bool o = odd(ctx);
    size_t cnt = o ? 4 : 8;                              /* count differs */
    utc_datatype_t ty = o ? UTC_TYPE_INT : UTC_TYPE_DOUBLE; /* datatype differs */
    utc_reduce_op_t op = o ? UTC_OP_MAX : UTC_OP_SUM;     /* op differs */
    int root = o ? last : 0;                              /* root differs */
    double *s = t->send, *r = t->recv;
    int rc;

    /* bcast: count, datatype, root */
    expect(ctx, __LINE__, utc_task_bcast(ctx, r, cnt, UTC_TYPE_DOUBLE, 0), "utc_task_bcast",
           "count (rank 0: 8", UTC_OK);
    usable(ctx, t, __LINE__);
    expect(ctx, __LINE__, utc_task_bcast(ctx, r, 4, ty, 0), "utc_task_bcast",
           "datatype (rank 0: UTC_TYPE_DOUBLE", UTC_OK);
    usable(ctx, t, __LINE__);
    expect(ctx, __LINE__, utc_task_bcast(ctx, r, 4, UTC_TYPE_DOUBLE, root), "utc_task_bcast",
           "root (rank 0: 0", UTC_OK);
    usable(ctx, t, __LINE__);

    /* gather */
    expect(ctx, __LINE__, utc_task_gather(ctx, s, r, cnt, UTC_TYPE_DOUBLE, 0),
           "utc_task_gather", "in the count", UTC_OK);
    usable(ctx, t, __LINE__);
    expect(ctx, __LINE__, utc_task_gather(ctx, s, r, 4, ty, 0), "utc_task_gather",
           "in the datatype", UTC_OK);
    usable(ctx, t, __LINE__);
    expect(ctx, __LINE__, utc_task_gather(ctx, s, r, 4, UTC_TYPE_DOUBLE, root),
           "utc_task_gather", "in the root", UTC_OK);
    usable(ctx, t, __LINE__);

    /* scatter */
    expect(ctx, __LINE__, utc_task_scatter(ctx, s, r, cnt, UTC_TYPE_DOUBLE, 0),
           "utc_task_scatter", "in the count", UTC_OK);
    usable(ctx, t, __LINE__);
    expect(ctx, __LINE__, utc_task_scatter(ctx, s, r, 4, ty, 0), "utc_task_scatter",
           "in the datatype", UTC_OK);
    usable(ctx, t, __LINE__);
    expect(ctx, __LINE__, utc_task_scatter(ctx, s, r, 4, UTC_TYPE_DOUBLE, root),
           "utc_task_scatter", "in the root", UTC_OK);
    usable(ctx, t, __LINE__);

    /* reduce: count, datatype, op, root */
    expect(ctx, __LINE__, utc_task_reduce(ctx, s, r, cnt, UTC_TYPE_DOUBLE, UTC_OP_SUM, 0),
           "utc_task_reduce", "in the count", UTC_OK);
    usable(ctx, t, __LINE__);
    expect(ctx, __LINE__, utc_task_reduce(ctx, s, r, 4, ty, UTC_OP_SUM, 0), "utc_task_reduce",
           "in the datatype", UTC_OK);
    usable(ctx, t, __LINE__);
    expect(ctx, __LINE__, utc_task_reduce(ctx, s, r, 4, UTC_TYPE_DOUBLE, op, 0),
           "utc_task_reduce", "reduce op (rank 0: UTC_OP_SUM", UTC_OK);
    usable(ctx, t, __LINE__);
    expect(ctx, __LINE__, utc_task_reduce(ctx, s, r, 4, UTC_TYPE_DOUBLE, UTC_OP_SUM, root),
           "utc_task_reduce", "in the root", UTC_OK);
    usable(ctx, t, __LINE__);

    /* allreduce: count, datatype, op (the reported 4-vs-8 abort) */
    expect(ctx, __LINE__, utc_task_allreduce(ctx, s, r, cnt, UTC_TYPE_DOUBLE, UTC_OP_SUM),
           "utc_task_allreduce", "in the count", UTC_OK);
    usable(ctx, t, __LINE__);
    expect(ctx, __LINE__, utc_task_allreduce(ctx, s, r, 4, ty, UTC_OP_SUM), "utc_task_allreduce",
           "in the datatype", UTC_OK);
    usable(ctx, t, __LINE__);
    expect(ctx, __LINE__, utc_task_allreduce(ctx, s, r, 4, UTC_TYPE_DOUBLE, op),
           "utc_task_allreduce", "in the reduce op", UTC_OK);
    usable(ctx, t, __LINE__);

    /* the _by forms take the same path: count differs, one thread per rank calls */
    rc = utc_task_allreduce_by(ctx, 1, s, r, cnt, UTC_TYPE_DOUBLE, UTC_OP_SUM);
    if (ctx->local_id == 1)
        expect(ctx, __LINE__, rc, "utc_task_allreduce_by", "in the count", UTC_OK);
    else if (rc != UTC_OK)
        fail(ctx, __LINE__, "_by form on another thread", rc);
    /* the other thread returned at once: let thread 1's call end before the next one */
    if (utc_ctx_barrier_local(ctx) != UTC_OK)
        fail(ctx, __LINE__, "local barrier", -1);
    usable(ctx, t, __LINE__);

    /* two different collectives at the same point */
    rc = o ? utc_task_gather(ctx, s, r, 4, UTC_TYPE_DOUBLE, 0)
           : utc_task_bcast(ctx, r, 4, UTC_TYPE_DOUBLE, 0);
    expect(ctx, __LINE__, rc, o ? "utc_task_gather" : "utc_task_bcast",
           "made another collective call here", UTC_OK);
    usable(ctx, t, __LINE__);

    /* bad arguments only the root sees: the reported hang and the reported lost data */
    expect(ctx, __LINE__, utc_task_bcast(ctx, ctx->world_rank == 0 ? NULL : r, 4,
                                         UTC_TYPE_DOUBLE, 0),
           "utc_task_bcast", "own checks", UTC_ERR_INVALID_ARG);
    usable(ctx, t, __LINE__);
    expect(ctx, __LINE__, utc_task_gather(ctx, s, ctx->world_rank == 0 ? NULL : r, 4,
                                          UTC_TYPE_DOUBLE, 0),
           "utc_task_gather", "own checks", UTC_ERR_INVALID_ARG);
    usable(ctx, t, __LINE__);
    expect(ctx, __LINE__, utc_task_scatter(ctx, ctx->world_rank == 0 ? NULL : s, r, 4,
                                           UTC_TYPE_DOUBLE, 0),
           "utc_task_scatter", "own checks", UTC_ERR_INVALID_ARG);
    usable(ctx, t, __LINE__);
    expect(ctx, __LINE__, utc_task_reduce(ctx, s, ctx->world_rank == 0 ? NULL : r, 4,
                                          UTC_TYPE_DOUBLE, UTC_OP_SUM, 0),
           "utc_task_reduce", "own checks", UTC_ERR_INVALID_ARG);
    usable(ctx, t, __LINE__);
    /* a root out of range on one rank only */
    expect(ctx, __LINE__, utc_task_bcast(ctx, r, 4, UTC_TYPE_DOUBLE, o ? 7 : 0),
           "utc_task_bcast", "own checks", UTC_OK);
    usable(ctx, t, __LINE__);

    /* the same bad argument everywhere: its own error on every rank, no mismatch */
    rc = utc_task_allreduce(ctx, s, r, 4, (utc_datatype_t)99, UTC_OP_SUM);
    if (rc != UTC_ERR_INVALID_ARG)
        fail(ctx, __LINE__, "unknown datatype everywhere", rc);
    usable(ctx, t, __LINE__);
    return 0;
}

static const utc_task_ops_t args_ops = {
    .name = TASK_NAME, .size = sizeof(args_task_t), .run = args_run};

static void test_every_collective(void)
{
    int n = utc_test_nranks();
    int procs[6];
    for (int i = 0; i < 2 * n; i++)
        procs[i] = i / 2; /* two threads on each rank */
    utc_task_t *t = NULL;
    UTC_ASSERT_OK(utc_task_create(&args_ops, procs, 2 * n, NULL, &t));
    UTC_ASSERT_OK(utc_task_run(t, NULL));
    UTC_ASSERT_OK(utc_task_wait(t));
    UTC_ASSERT_OK(utc_task_destroy(t));
    CU_ASSERT_EQUAL(atomic_load(&failures), 0);
    /* 23 mismatches, each seen by both threads of the rank (the _by one by one thread) */
    CU_ASSERT_EQUAL(atomic_load(&mismatches_seen), n > 1 ? 2 * 23 - 1 : 0);
}

static const utc_test_case_t cases[] = {
    {"every collective, each argument differing on one rank; root-only bad arguments",
     test_every_collective},
    UTC_TEST_END};

int main(int argc, char **argv)
{
    return utc_test_main(argc, argv, "collective arguments", cases);
}
