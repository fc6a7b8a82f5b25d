/* Misuse of global shared data and task collectives: each gets its status and a message,
 * and nothing is issued (a bad remote store does not touch the neighbouring object). */
#include <limits.h>

#include "gs_test.h"

#define COUNT 4

/* Out-of-range indices, blocks and ranks; NULL buffers; atomics on the wrong size. */
static void body_bounds(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    int n = ctx->group_size;
    utc_gdata_t *a = NULL, *b = NULL, *small = NULL;
    GS_OK(t, ctx, utc_gdata_create(ctx, sizeof(int64_t), COUNT, &a));
    GS_OK(t, ctx, utc_gdata_create(ctx, sizeof(int64_t), COUNT, &b)); /* right after a */
    GS_OK(t, ctx, utc_gdata_create(ctx, sizeof(int32_t), COUNT, &small));
    if (!a || !b || !small)
        return;
    int64_t v = 0x5555, blk[COUNT + 2] = {1, 2, 3, 4, 5, 6};

    GS_ERROR(t, ctx, utc_gdata_load(a, COUNT, &v), UTC_ERR_OUT_OF_RANGE, "out of range");
    GS_ERROR(t, ctx, utc_gdata_store(a, COUNT, &v), UTC_ERR_OUT_OF_RANGE, "4 elements");
    GS_ERROR(t, ctx, utc_gdata_load_block(a, 1, COUNT, blk), UTC_ERR_OUT_OF_RANGE, "n = 4");
    GS_ERROR(t, ctx, utc_gdata_store_block(a, SIZE_MAX, 2, blk), UTC_ERR_OUT_OF_RANGE,
             "out of range");
    GS_ERROR(t, ctx, utc_gdata_load_block(a, COUNT + 1, 0, blk), UTC_ERR_OUT_OF_RANGE,
             "out of range");
    GS_OK(t, ctx, utc_gdata_load_block(a, COUNT, 0, NULL)); /* empty block at the end */
    for (int q = 0; q < n; q++) {
        GS_ERROR(t, ctx, utc_gdata_rload(a, q, COUNT, &v), UTC_ERR_OUT_OF_RANGE, "out of range");
        GS_ERROR(t, ctx, utc_gdata_rstore(a, q, COUNT, &v), UTC_ERR_OUT_OF_RANGE, "out of range");
        GS_ERROR(t, ctx, utc_gdata_rstore_block(a, q, 2, COUNT, blk), UTC_ERR_OUT_OF_RANGE,
                 "out of range");
        GS_ERROR(t, ctx, utc_gdata_rstore_block(a, q, 1, SIZE_MAX, blk), UTC_ERR_OUT_OF_RANGE,
                 "out of range");
        GS_ERROR(t, ctx, utc_gdata_rload_block(a, q, 0, COUNT + 2, blk), UTC_ERR_OUT_OF_RANGE,
                 "out of range");
        GS_ERROR(t, ctx, utc_gdata_fetch_add(a, q, COUNT, 1, NULL), UTC_ERR_OUT_OF_RANGE,
                 "out of range");
        GS_ERROR(t, ctx, utc_gdata_compare_swap(a, q, COUNT, 0, 1, NULL), UTC_ERR_OUT_OF_RANGE,
                 "out of range");
    }
    for (int q = -1; q <= n; q += n + 1) {
        GS_ERROR(t, ctx, utc_gdata_rload(a, q, 0, &v), UTC_ERR_OUT_OF_RANGE,
                 "is not a rank of task 'gs_test'");
        GS_ERROR(t, ctx, utc_gdata_rstore(a, q, 0, &v), UTC_ERR_OUT_OF_RANGE, "group ranks");
        GS_ERROR(t, ctx, utc_gdata_rload_block(a, q, 0, 1, blk), UTC_ERR_OUT_OF_RANGE,
                 "not a rank");
        GS_ERROR(t, ctx, utc_gdata_rstore_block(a, q, 0, 1, blk), UTC_ERR_OUT_OF_RANGE,
                 "not a rank");
        GS_ERROR(t, ctx, utc_gdata_fetch_add(a, q, 0, 1, NULL), UTC_ERR_OUT_OF_RANGE, "not a rank");
        GS_ERROR(t, ctx, utc_gdata_compare_swap(a, q, 0, 0, 1, NULL), UTC_ERR_OUT_OF_RANGE,
                 "not a rank");
    }
    GS_ERROR(t, ctx, utc_gdata_load(a, 0, NULL), UTC_ERR_INVALID_ARG, "NULL");
    GS_ERROR(t, ctx, utc_gdata_rstore(a, 0, 0, NULL), UTC_ERR_INVALID_ARG, "NULL");
    GS_ERROR(t, ctx, utc_gdata_rload_block(a, 0, 0, 2, NULL), UTC_ERR_INVALID_ARG, "NULL");
    GS_ERROR(t, ctx, utc_gdata_fetch_add(small, 0, 0, 1, NULL), UTC_ERR_INVALID_ARG, "8-byte");
    GS_ERROR(t, ctx, utc_gdata_compare_swap(small, 0, 0, 0, 1, NULL), UTC_ERR_INVALID_ARG,
             "8-byte");

    /* none of that reached memory: b (right after a in the window) and a are still zero */
    GS_OK(t, ctx, utc_gdata_barrier(a));
    int64_t got[COUNT];
    for (int q = 0; q < n; q++) {
        GS_OK(t, ctx, utc_gdata_rload_block(b, q, 0, COUNT, got));
        for (int i = 0; i < COUNT; i++)
            GS_CHECK(t, ctx, got[i] == 0);
        GS_OK(t, ctx, utc_gdata_rload_block(a, q, 0, COUNT, got));
        for (int i = 0; i < COUNT; i++)
            GS_CHECK(t, ctx, got[i] == 0);
    }
    GS_OK(t, ctx, utc_gdata_barrier(a));
    GS_OK(t, ctx, utc_gdata_destroy(ctx, small));
    GS_OK(t, ctx, utc_gdata_destroy(ctx, b));
    GS_OK(t, ctx, utc_gdata_destroy(ctx, a));
}

static void test_bounds_ranks_buffers(void)
{
    gs_run(body_bounds, 2, UTC_WINDOW_DEFAULT, NULL);
}

/* Bad create arguments: checked before anything is shared. */
static void body_create_args(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    utc_gdata_t *gd = NULL;
    GS_ERROR(t, ctx, utc_gdata_create(ctx, 0, 4, &gd), UTC_ERR_INVALID_ARG, "must be > 0");
    GS_ERROR(t, ctx, utc_gdata_create(ctx, 8, 0, &gd), UTC_ERR_INVALID_ARG, "must be > 0");
    GS_ERROR(t, ctx, utc_gdata_create(ctx, 8, SIZE_MAX / 4, &gd), UTC_ERR_INVALID_ARG, "overflows");
    GS_ERROR(t, ctx, utc_gdata_create(ctx, 8, 4, NULL), UTC_ERR_INVALID_ARG, "gd");
    GS_CHECK(t, ctx, gd == NULL);
    GS_ERROR(t, ctx, utc_gdata_destroy(ctx, NULL), UTC_ERR_INVALID_HANDLE, "NULL");
    GS_ERROR(t, ctx, utc_gdata_load(NULL, 0, &gd), UTC_ERR_INVALID_HANDLE, "NULL");
    GS_ERROR(t, ctx, utc_gdata_quiet(NULL), UTC_ERR_INVALID_HANDLE, "NULL");
    GS_ERROR(t, ctx, utc_gdata_barrier(NULL), UTC_ERR_INVALID_HANDLE, "NULL");
    GS_CHECK(t, ctx, utc_gdata_ptr(NULL) == NULL);
    GS_CHECK(t, ctx, utc_gdata_count(NULL) == 0 && utc_gdata_elem_size(NULL) == 0);
    GS_CHECK(t, ctx, utc_gdata_nranks(NULL) == UTC_ERR_INVALID_HANDLE);
    /* a ctx that is not the caller's */
    if (ctx->local_count > 1) {
        if (ctx->local_id == 0)
            t->shared = ctx;
        GS_OK(t, ctx, utc_ctx_barrier_local(ctx));
        utc_ctx_t *other = t->shared;
        if (ctx->local_id == 1)
            GS_ERROR(t, ctx, utc_gdata_create(other, 8, 4, &gd), UTC_ERR_NOT_MEMBER,
                     "not the calling thread's own");
        GS_OK(t, ctx, utc_ctx_barrier_local(ctx));
    }
}

static void test_create_arguments(void)
{
    gs_run(body_create_args, 2, UTC_WINDOW_DEFAULT, NULL);
}

/* A task created with window_size 0 has no global shared data (but has collectives). */
static void body_no_window(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    utc_gdata_t *gd = NULL;
    GS_ERROR(t, ctx, utc_gdata_create(ctx, 8, 4, &gd), UTC_ERR_STATE, "window_size 0");
    GS_CHECK(t, ctx, gd == NULL);
    if (ctx->local_id == 0)
        t->buf[0] = ctx->group_rank + 1;
    GS_OK(t, ctx, utc_task_allreduce(ctx, &t->buf[0], &t->buf[1], 1, UTC_TYPE_INT64, UTC_OP_SUM));
    GS_CHECK(t, ctx, t->buf[1] == (int64_t)ctx->group_size * (ctx->group_size + 1) / 2);
}

static void test_no_window(void)
{
    gs_run(body_no_window, 2, 0, NULL);
}

/* Outside a task thread: the main thread, and a thread of another task. */
static void body_make(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    utc_gdata_t *gd = NULL;
    GS_OK(t, ctx, utc_gdata_create(ctx, sizeof(int64_t), COUNT, &gd));
    if (ctx->local_id == 0)
        t->gd = gd;
}

static void body_foreign(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    utc_gdata_t *gd = arg; /* belongs to another task */
    int64_t v = 7;
    GS_ERROR(t, ctx, utc_gdata_load(gd, 0, &v), UTC_ERR_NOT_MEMBER, "not a thread of task");
    GS_ERROR(t, ctx, utc_gdata_rstore(gd, 0, 0, &v), UTC_ERR_NOT_MEMBER, "not a thread");
    GS_ERROR(t, ctx, utc_gdata_fetch_add(gd, 0, 0, 1, NULL), UTC_ERR_NOT_MEMBER, "not a thread");
    GS_ERROR(t, ctx, utc_gdata_barrier(gd), UTC_ERR_NOT_MEMBER, "not a thread");
    GS_ERROR(t, ctx, utc_gdata_destroy(ctx, gd), UTC_ERR_NOT_MEMBER, "not a thread");
    GS_CHECK(t, ctx, utc_gdata_ptr(gd) == NULL);
}

static void body_check_untouched(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    for (int q = 0; q < ctx->group_size; q++) {
        int64_t v = -1;
        GS_OK(t, ctx, utc_gdata_rload(t->gd, q, 0, &v));
        GS_CHECK(t, ctx, v == 0);
    }
    GS_OK(t, ctx, utc_gdata_destroy(ctx, t->gd));
}

static void expect(int rc, int want, const char *needle)
{
    CU_ASSERT_EQUAL(rc, want);
    if (!strstr(utc_last_error(), needle))
        fprintf(stderr, "last error '%s' lacks '%s'\n", utc_last_error(), needle);
    CU_ASSERT_PTR_NOT_NULL(strstr(utc_last_error(), needle));
}

static void test_outside_task_threads(void)
{
    gs_task_t *t = gs_task_create(2, UTC_WINDOW_DEFAULT);
    gs_task_exec(t, body_make, NULL);
    utc_gdata_t *gd = t->gd, *out = NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(gd);

    /* the main thread */
    int64_t v = 1;
    expect(utc_gdata_create(NULL, 8, 4, &out), UTC_ERR_NOT_MEMBER, "ctx is NULL");
    CU_ASSERT_PTR_NULL(out);
    expect(utc_gdata_load(gd, 0, &v), UTC_ERR_NOT_MEMBER, "not a thread of task 'gs_test'");
    expect(utc_gdata_store(gd, 0, &v), UTC_ERR_NOT_MEMBER, "not a thread");
    expect(utc_gdata_rload(gd, 0, 0, &v), UTC_ERR_NOT_MEMBER, "not a thread");
    expect(utc_gdata_rstore(gd, 0, 0, &v), UTC_ERR_NOT_MEMBER, "not a thread");
    expect(utc_gdata_rstore_block(gd, 0, 0, 1, &v), UTC_ERR_NOT_MEMBER, "not a thread");
    expect(utc_gdata_compare_swap(gd, 0, 0, 0, 1, NULL), UTC_ERR_NOT_MEMBER, "not a thread");
    expect(utc_gdata_quiet(gd), UTC_ERR_NOT_MEMBER, "not a thread");
    expect(utc_gdata_barrier(gd), UTC_ERR_NOT_MEMBER, "not a thread");
    expect(utc_gdata_destroy(NULL, gd), UTC_ERR_NOT_MEMBER, "ctx is NULL");
    CU_ASSERT_PTR_NULL(utc_gdata_ptr(gd));
    expect(utc_task_bcast(NULL, &v, 1, UTC_TYPE_INT64, 0), UTC_ERR_NOT_MEMBER, "ctx is NULL");
    CU_ASSERT_EQUAL(utc_gdata_count(gd), COUNT); /* plain properties need no thread */

    /* a thread of another task */
    gs_task_t *other = gs_task_create(1, UTC_WINDOW_DEFAULT);
    gs_task_exec(other, body_foreign, gd);
    UTC_ASSERT_OK(utc_task_destroy(&other->base));

    gs_task_exec(t, body_check_untouched, NULL);
    UTC_ASSERT_OK(utc_task_destroy(&t->base));
}

/* Collectives: bad root, type, op, thread and count. */
static void body_coll_errors(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    int n = ctx->group_size;
    int64_t *b = t->buf;
    GS_ERROR(t, ctx, utc_task_bcast(ctx, b, 1, UTC_TYPE_INT64, n), UTC_ERR_OUT_OF_RANGE, "root");
    GS_ERROR(t, ctx, utc_task_gather(ctx, b, b + 8, 1, UTC_TYPE_INT64, -1), UTC_ERR_OUT_OF_RANGE,
             "root -1");
    GS_ERROR(t, ctx, utc_task_scatter(ctx, b, b + 8, 1, (utc_datatype_t)42, 0), UTC_ERR_INVALID_ARG,
             "datatype");
    GS_ERROR(t, ctx, utc_task_reduce(ctx, b, b + 8, 1, UTC_TYPE_INT, (utc_reduce_op_t)9, 0),
             UTC_ERR_INVALID_ARG, "op");
    GS_ERROR(t, ctx,
             utc_task_allreduce(ctx, b, b + 8, (size_t)INT_MAX + 1, UTC_TYPE_BYTE, UTC_OP_SUM),
             UTC_ERR_INVALID_ARG, "INT_MAX");
    GS_ERROR(t, ctx, utc_task_allreduce(ctx, NULL, b, 1, UTC_TYPE_INT, UTC_OP_MAX),
             UTC_ERR_INVALID_ARG, "sendbuf");
    GS_ERROR(t, ctx, utc_task_bcast(ctx, NULL, 1, UTC_TYPE_INT, 0), UTC_ERR_INVALID_ARG, "buf");
    GS_ERROR(t, ctx, utc_task_bcast_by(ctx, ctx->local_count, b, 1, UTC_TYPE_INT, 0),
             UTC_ERR_OUT_OF_RANGE, "not a local thread");
    GS_ERROR(t, ctx, utc_task_allreduce_by(ctx, -1, b, b, 1, UTC_TYPE_INT, UTC_OP_SUM),
             UTC_ERR_OUT_OF_RANGE, "thread -1");
    /* count 0 is fine, and every thread is still in step after all that */
    GS_OK(t, ctx, utc_task_bcast(ctx, NULL, 0, UTC_TYPE_INT, 0));
    GS_OK(t, ctx, utc_ctx_barrier(ctx));
}

static void test_collective_errors(void)
{
    gs_run(body_coll_errors, 2, 0, NULL);
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"indices, blocks and ranks out of range; NULL buffers", test_bounds_ranks_buffers},
        {"bad create arguments and handles", test_create_arguments},
        {"a task with no window", test_no_window},
        {"outside a task thread", test_outside_task_threads},
        {"collectives: bad arguments", test_collective_errors},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "gshared: errors", cases);
}
