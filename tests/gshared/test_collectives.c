/* Task collectives: every operation, type and root against answers computed by hand, in
 * the all-threads form and the *_by form, in place, and with several threads per rank. */
#include <time.h>

#include "gs_test.h"

#define N 5 /* elements per rank */

static const utc_datatype_t types[] = {UTC_TYPE_INT,    UTC_TYPE_INT64,  UTC_TYPE_FLOAT,
                                       UTC_TYPE_DOUBLE, UTC_TYPE_BYTE,   UTC_TYPE_INT8,
                                       UTC_TYPE_UINT8,  UTC_TYPE_INT16,  UTC_TYPE_UINT16,
                                       UTC_TYPE_INT32,  UTC_TYPE_UINT32, UTC_TYPE_UINT64};
static const char *const type_names[] = {
    [UTC_TYPE_INT] = "int",       [UTC_TYPE_INT64] = "int64",   [UTC_TYPE_FLOAT] = "float",
    [UTC_TYPE_DOUBLE] = "double", [UTC_TYPE_BYTE] = "byte",     [UTC_TYPE_INT8] = "int8",
    [UTC_TYPE_UINT8] = "uint8",   [UTC_TYPE_INT16] = "int16",   [UTC_TYPE_UINT16] = "uint16",
    [UTC_TYPE_INT32] = "int32",   [UTC_TYPE_UINT32] = "uint32", [UTC_TYPE_UINT64] = "uint64"};

static bool is_unsigned(utc_datatype_t ty)
{
    return ty == UTC_TYPE_BYTE || ty == UTC_TYPE_UINT8 || ty == UTC_TYPE_UINT16 ||
           ty == UTC_TYPE_UINT32 || ty == UTC_TYPE_UINT64;
}

/* Rank-shared buffers (bytes enough for 3 ranks x N elements of 8 bytes, and more). */
typedef struct {
    unsigned char send[8 * 64];
    unsigned char recv[8 * 64];
} coll_bufs_t;

static void set_val(utc_datatype_t ty, void *buf, size_t i, long v)
{
    switch (ty) {
    case UTC_TYPE_INT:
        ((int *)buf)[i] = (int)v;
        break;
    case UTC_TYPE_INT64:
        ((int64_t *)buf)[i] = (int64_t)v * 1000000007LL;
        break;
    case UTC_TYPE_FLOAT:
        ((float *)buf)[i] = (float)v * 0.5f;
        break;
    case UTC_TYPE_DOUBLE:
        ((double *)buf)[i] = (double)v * 0.25;
        break;
    case UTC_TYPE_BYTE:
    case UTC_TYPE_UINT8:
        ((unsigned char *)buf)[i] = (unsigned char)v;
        break;
    case UTC_TYPE_INT8:
        ((int8_t *)buf)[i] = (int8_t)v;
        break;
    case UTC_TYPE_INT16:
        ((int16_t *)buf)[i] = (int16_t)(v * 301);
        break;
    case UTC_TYPE_UINT16:
        ((uint16_t *)buf)[i] = (uint16_t)(v * 301);
        break;
    case UTC_TYPE_INT32:
        ((int32_t *)buf)[i] = (int32_t)(v * 70001);
        break;
    case UTC_TYPE_UINT32:
        ((uint32_t *)buf)[i] = (uint32_t)(v * 70001);
        break;
    case UTC_TYPE_UINT64:
        ((uint64_t *)buf)[i] = (uint64_t)v * 4000000007ULL;
        break;
    }
}

/* Whether element i of buf holds what set_val(v) would store. */
static bool is_val(utc_datatype_t ty, const void *buf, size_t i, long v)
{
    unsigned char tmp[8];
    set_val(ty, tmp, 0, v);
    return memcmp((const unsigned char *)buf + i * utc_datatype_size(ty), tmp,
                  utc_datatype_size(ty)) == 0;
}

/* The value rank r contributes at element i: small integers (exact in float and in sums),
 * negative at odd i except for unsigned types. */
static long contrib(utc_datatype_t ty, int r, size_t i)
{
    long v = r * 3 + (long)i + 1;
    return !is_unsigned(ty) && i % 2 ? -v : v;
}

static long expected(utc_datatype_t ty, utc_reduce_op_t op, int nranks, size_t i)
{
    long acc = contrib(ty, 0, i);
    for (int r = 1; r < nranks; r++) {
        long v = contrib(ty, r, i);
        acc = op == UTC_OP_SUM   ? acc + v
              : op == UTC_OP_MIN ? (v < acc ? v : acc)
                                 : (v > acc ? v : acc);
    }
    return acc;
}

/*
 * One round of every collective for one type. `by` < 0: all local threads call; otherwise
 * only local thread `by` makes the call and the others only check the result after a local
 * barrier. Only local thread 0 fills and checks (buffers are the rank's).
 */
static void run_all(gs_task_t *t, utc_ctx_t *ctx, utc_datatype_t ty, int by)
{
    coll_bufs_t *b = t->shared;
    int n = ctx->group_size, me = ctx->group_rank;
    bool filler = ctx->local_id == 0;
    int bad = 0;

#define CALL(all_form, by_form) GS_COLL_CALL(by, all_form, by_form)
#define FILL(stmt)              GS_COLL_FILL(by, filler, stmt)

    for (int root = 0; root < n; root++) {
        /* broadcast */
        FILL(memset(b->recv, 0, sizeof b->recv); if (me == root) for (size_t i = 0; i < N; i++)
                 set_val(ty, b->recv, i, 40 + root + (long)i));
        CALL(utc_task_bcast(ctx, b->recv, N, ty, root),
             utc_task_bcast_by(ctx, by, b->recv, N, ty, root));
        if (filler)
            for (size_t i = 0; i < N; i++)
                bad += !is_val(ty, b->recv, i, 40 + root + (long)i);

        /* gather */
        FILL(memset(b->recv, 0, sizeof b->recv);
             for (size_t i = 0; i < N; i++) set_val(ty, b->send, i, contrib(ty, me, i)));
        CALL(utc_task_gather(ctx, b->send, me == root ? b->recv : NULL, N, ty, root),
             utc_task_gather_by(ctx, by, b->send, me == root ? b->recv : NULL, N, ty, root));
        if (filler && me == root)
            for (int r = 0; r < n; r++)
                for (size_t i = 0; i < N; i++)
                    bad += !is_val(ty, b->recv, (size_t)r * N + i, contrib(ty, r, i));

        /* scatter */
        FILL(memset(b->recv, 0, sizeof b->recv);
             if (me == root) for (int r = 0; r < n; r++) for (size_t i = 0; i < N; i++)
                 set_val(ty, b->send, (size_t)r * N + i, 100 * root + 10 * r + (long)i));
        CALL(utc_task_scatter(ctx, me == root ? b->send : NULL, b->recv, N, ty, root),
             utc_task_scatter_by(ctx, by, me == root ? b->send : NULL, b->recv, N, ty, root));
        if (filler)
            for (size_t i = 0; i < N; i++)
                bad += !is_val(ty, b->recv, i, 100 * root + 10 * me + (long)i);

        /* reduce, each op, then in place at the root */
        for (utc_reduce_op_t op = UTC_OP_SUM; op <= UTC_OP_MAX; op++) {
            FILL(memset(b->recv, 0, sizeof b->recv);
                 for (size_t i = 0; i < N; i++) set_val(ty, b->send, i, contrib(ty, me, i)));
            CALL(utc_task_reduce(ctx, b->send, b->recv, N, ty, op, root),
                 utc_task_reduce_by(ctx, by, b->send, b->recv, N, ty, op, root));
            if (filler && me == root)
                for (size_t i = 0; i < N; i++)
                    bad += !is_val(ty, b->recv, i, expected(ty, op, n, i));
        }
        FILL(for (size_t i = 0; i < N; i++) set_val(ty, b->send, i, contrib(ty, me, i)));
        CALL(utc_task_reduce(ctx, b->send, b->send, N, ty, UTC_OP_SUM, root),
             utc_task_reduce_by(ctx, by, b->send, b->send, N, ty, UTC_OP_SUM, root));
        if (filler && me == root)
            for (size_t i = 0; i < N; i++)
                bad += !is_val(ty, b->send, i, expected(ty, UTC_OP_SUM, n, i));
    }

    /* allreduce, each op, then in place */
    for (utc_reduce_op_t op = UTC_OP_SUM; op <= UTC_OP_MAX; op++) {
        FILL(memset(b->recv, 0, sizeof b->recv);
             for (size_t i = 0; i < N; i++) set_val(ty, b->send, i, contrib(ty, me, i)));
        CALL(utc_task_allreduce(ctx, b->send, b->recv, N, ty, op),
             utc_task_allreduce_by(ctx, by, b->send, b->recv, N, ty, op));
        if (filler)
            for (size_t i = 0; i < N; i++)
                bad += !is_val(ty, b->recv, i, expected(ty, op, n, i));
    }
    FILL(for (size_t i = 0; i < N; i++) set_val(ty, b->recv, i, contrib(ty, me, i)));
    CALL(utc_task_allreduce(ctx, b->recv, b->recv, N, ty, UTC_OP_MAX),
         utc_task_allreduce_by(ctx, by, b->recv, b->recv, N, ty, UTC_OP_MAX));
    if (filler)
        for (size_t i = 0; i < N; i++)
            bad += !is_val(ty, b->recv, i, expected(ty, UTC_OP_MAX, n, i));
    /* the filler's next FILL must not overwrite what another thread may still read */
    GS_OK(t, ctx, utc_ctx_barrier_local(ctx));
#undef CALL
#undef FILL

    if (bad)
        fprintf(stderr, "collectives %s (by %d): %d wrong elements\n", type_names[(int)ty], by,
                bad);
    GS_CHECK(t, ctx, bad == 0);
}

static void body_all_forms(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        run_all(t, ctx, types[k], -1);
}

static void body_by_forms(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    int by = ctx->local_count - 1; /* not the filler when there are several threads */
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        run_all(t, ctx, types[k], by);
}

static void run_with_bufs(gs_body_t body, int per_rank, size_t window)
{
    gs_run_shared(body, per_rank, window, sizeof(coll_bufs_t));
}

static void test_all_threads_form(void)
{
    run_with_bufs(body_all_forms, 3, UTC_WINDOW_DEFAULT);
}

static void test_by_form(void)
{
    run_with_bufs(body_by_forms, 2, 0); /* and no window needed */
}

/* Bytes reduce as unsigned 8-bit: sums wrap modulo 256. */
static void body_byte_wrap(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    coll_bufs_t *b = t->shared;
    if (ctx->local_id == 0)
        b->send[0] = 200, b->send[1] = 255;
    GS_OK(t, ctx, utc_task_allreduce(ctx, b->send, b->recv, 2, UTC_TYPE_BYTE, UTC_OP_SUM));
    int n = ctx->group_size;
    GS_CHECK(t, ctx, b->recv[0] == (unsigned char)(200 * n));
    GS_CHECK(t, ctx, b->recv[1] == (unsigned char)(255 * n));
    GS_OK(t, ctx, utc_task_allreduce(ctx, b->send, b->recv, 2, UTC_TYPE_BYTE, UTC_OP_MAX));
    GS_CHECK(t, ctx, b->recv[1] == 255);
}

static void test_byte_wrap(void)
{
    run_with_bufs(body_byte_wrap, 1, UTC_WINDOW_DEFAULT);
}

/* Threads waiting for the one making the call sleep: a long broadcast (the root arrives
 * late) costs the waiters little CPU. */
static void body_sleepy(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    coll_bufs_t *b = t->shared;
    if (ctx->group_rank == 0 && ctx->local_id == 0) {
        struct timespec ts = {0, 300 * 1000 * 1000};
        nanosleep(&ts, NULL);
        b->recv[0] = 77;
    }
    GS_OK(t, ctx, utc_task_bcast(ctx, b->recv, 1, UTC_TYPE_BYTE, 0));
    GS_CHECK(t, ctx, b->recv[0] == 77);
}

static void test_waiters_sleep(void)
{
    double cpu0 = utc_test_cpu_seconds(), wall0 = utc_wtime();
    run_with_bufs(body_sleepy, 4, 0);
    double cpu = utc_test_cpu_seconds() - cpu0, wall = utc_wtime() - wall0;
    /* 4 threads (3 on rank 0) waited ~0.3 s: spinning would cost ~0.3 s of CPU each */
    if (cpu > 0.5 * wall)
        fprintf(stderr, "rank %d: %.3f s CPU in %.3f s\n", utc_test_rank(), cpu, wall);
    CU_ASSERT(cpu < 0.5 * wall);
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"every collective, type and root (all threads call)", test_all_threads_form},
        {"every collective, type and root (*_by form)", test_by_form},
        {"bytes reduce as uint8", test_byte_wrap},
        {"waiting threads sleep", test_waiters_sleep},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "gshared: collectives", cases);
}
