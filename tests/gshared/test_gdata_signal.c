/* Global shared data: signals. A producer hands blocks to the next rank, either with
 * utc_gdata_rstore_signal or with a store, a quiet and a store of the signal element; the
 * consumer waits on the element (utc_gdata_wait_until) and then reads the block with local
 * loads. Timeouts, every comparison and bad arguments. */
#include <math.h>

#include "gs_test.h"

#define BLOCK  32  /* elements of one handed-over block */
#define ROUNDS 300
/* this rank's part: [0, BLOCK) the block from the previous rank, BLOCK: its signal (the
 * round), BLOCK + 1: the ack of the next rank (the last round it has read) */
#define SIG (BLOCK)
#define ACK (BLOCK + 1)

static int64_t item(int src, int round, size_t i)
{
    return ((int64_t)(src + 1) << 40) | ((int64_t)round << 12) | (int64_t)i;
}

/* One thread per rank hands ROUNDS blocks to the next rank (in a ring; to itself with one
 * rank) and checks each block from the previous one, reading it locally after the wait.
 * *arg: 1 to store with utc_gdata_rstore_signal, 0 with rstore_block, quiet, rstore. */
static void body_handoff(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    int with_signal = *(const int *)arg;
    int n = ctx->group_size, me = ctx->group_rank;
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    utc_gdata_t *gd = NULL;
    GS_OK(t, ctx, utc_gdata_create(ctx, sizeof(int64_t), BLOCK + 2, &gd));
    if (!gd)
        return;
    int64_t *part = utc_gdata_ptr(gd);
    GS_CHECK(t, ctx, part != NULL);
    int bad = 0;
    for (int r = 1; r <= ROUNDS && part; r++) {
        /* the next rank has read the previous block: its slot may be overwritten */
        GS_OK(t, ctx, utc_gdata_wait_until(gd, ACK, UTC_CMP_GE, r - 1, 10.0, NULL));
        int64_t blk[BLOCK], sig = r;
        for (size_t i = 0; i < BLOCK; i++)
            blk[i] = item(me, r, i);
        if (with_signal) {
            GS_OK(t, ctx, utc_gdata_rstore_signal(gd, next, 0, BLOCK, blk, SIG, sig));
        } else {
            GS_OK(t, ctx, utc_gdata_rstore_block(gd, next, 0, BLOCK, blk));
            GS_OK(t, ctx, utc_gdata_quiet(gd));
            GS_OK(t, ctx, utc_gdata_rstore(gd, next, SIG, &sig));
            GS_OK(t, ctx, utc_gdata_quiet(gd));
        }
        /* the previous rank's block of this round */
        int64_t seen = -1;
        GS_OK(t, ctx, utc_gdata_wait_until(gd, SIG, UTC_CMP_GE, r, 10.0, &seen));
        GS_CHECK(t, ctx, seen == r);
        for (size_t i = 0; i < BLOCK; i++)
            bad += part[i] != item(prev, r, i);
        if (with_signal) {
            GS_OK(t, ctx, utc_gdata_rstore_signal(gd, prev, 0, 0, NULL, ACK, r));
        } else {
            int64_t ack = r;
            GS_OK(t, ctx, utc_gdata_rstore(gd, prev, ACK, &ack));
            GS_OK(t, ctx, utc_gdata_quiet(gd));
        }
    }
    GS_CHECK(t, ctx, bad == 0);
    GS_OK(t, ctx, utc_gdata_barrier(gd));
    GS_OK(t, ctx, utc_gdata_destroy(ctx, gd));
}

static void test_handoff(void)
{
    static const int quiet = 0;
    gs_run(body_handoff, 1, UTC_WINDOW_DEFAULT, (void *)&quiet);
}

static void test_handoff_rstore_signal(void)
{
    static const int with_signal = 1;
    gs_run(body_handoff, 1, UTC_WINDOW_DEFAULT, (void *)&with_signal);
}

/* Every comparison, against a value stored locally; a wait that cannot be met times out
 * with the value seen and a message that says why. */
static void body_compare(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    utc_gdata_t *gd = NULL;
    GS_OK(t, ctx, utc_gdata_create(ctx, sizeof(int64_t), 4, &gd));
    if (!gd)
        return;
    if (ctx->local_id == 0) {
        int64_t v = 5;
        GS_OK(t, ctx, utc_gdata_store(gd, 2, &v));
        static const struct {
            utc_cmp_t cmp;
            int64_t value;
            int met;
        } cases[] = {{UTC_CMP_EQ, 5, 1}, {UTC_CMP_EQ, 4, 0}, {UTC_CMP_NE, 4, 1},
                     {UTC_CMP_NE, 5, 0}, {UTC_CMP_GT, 4, 1}, {UTC_CMP_GT, 5, 0},
                     {UTC_CMP_GE, 5, 1}, {UTC_CMP_GE, 6, 0}, {UTC_CMP_LT, 6, 1},
                     {UTC_CMP_LT, 5, 0}, {UTC_CMP_LE, 5, 1}, {UTC_CMP_LE, 4, 0}};
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            int64_t seen = -1;
            int rc = utc_gdata_wait_until(gd, 2, cases[i].cmp, cases[i].value, 0.01, &seen);
            GS_CHECK(t, ctx, rc == (cases[i].met ? UTC_OK : UTC_ERR_TIMEOUT));
            GS_CHECK(t, ctx, seen == 5);
        }
        double t0 = utc_wtime();
        GS_ERROR(t, ctx, utc_gdata_wait_until(gd, 2, UTC_CMP_GE, 100, 0.05, NULL),
                 UTC_ERR_TIMEOUT, "is 5, which did not become >= 100 within 0.050 s");
        double took = utc_wtime() - t0;
        GS_CHECK(t, ctx, took >= 0.045 && took < 5.0);
    }
    GS_OK(t, ctx, utc_gdata_barrier(gd));
    GS_OK(t, ctx, utc_gdata_destroy(ctx, gd));
}

static void test_compare_and_timeout(void)
{
    gs_run(body_compare, 2, UTC_WINDOW_DEFAULT, NULL);
}

/* Bad arguments: a clear error, and no wait. */
static void body_bad(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    utc_gdata_t *gd = NULL, *small = NULL;
    GS_OK(t, ctx, utc_gdata_create(ctx, sizeof(int64_t), 4, &gd));
    GS_OK(t, ctx, utc_gdata_create(ctx, sizeof(int32_t), 4, &small));
    if (!gd || !small)
        return;
    GS_ERROR(t, ctx, utc_gdata_wait_until(small, 0, UTC_CMP_EQ, 0, -1, NULL),
             UTC_ERR_INVALID_ARG, "8-byte (int64_t) element; this object's are 4 bytes");
    GS_ERROR(t, ctx, utc_gdata_wait_until(gd, 0, (utc_cmp_t)99, 0, -1, NULL),
             UTC_ERR_INVALID_ARG, "unknown comparison 99");
    GS_ERROR(t, ctx, utc_gdata_wait_until(gd, 4, UTC_CMP_EQ, 0, -1, NULL),
             UTC_ERR_OUT_OF_RANGE, "out of range");
    GS_EXPECT(t, ctx, utc_gdata_wait_until(NULL, 0, UTC_CMP_EQ, 0, -1, NULL),
              UTC_ERR_INVALID_HANDLE);
    GS_ERROR(t, ctx, utc_gdata_wait_until(gd, 0, UTC_CMP_EQ, 1, NAN, NULL), UTC_ERR_INVALID_ARG,
             "the timeout is NaN");
    int64_t blk[2] = {1, 2};
    GS_ERROR(t, ctx, utc_gdata_rstore_signal(small, 0, 0, 1, blk, 2, 1), UTC_ERR_INVALID_ARG,
             "8-byte (int64_t) element");
    GS_ERROR(t, ctx, utc_gdata_rstore_signal(gd, ctx->group_size, 0, 1, blk, 2, 1),
             UTC_ERR_OUT_OF_RANGE, "is not a rank of task");
    GS_ERROR(t, ctx, utc_gdata_rstore_signal(gd, 0, 3, 2, blk, 0, 1), UTC_ERR_OUT_OF_RANGE,
             "out of range");
    GS_ERROR(t, ctx, utc_gdata_rstore_signal(gd, 0, 0, 1, blk, 4, 1), UTC_ERR_OUT_OF_RANGE,
             "out of range");
    GS_ERROR(t, ctx, utc_gdata_rstore_signal(gd, 0, 0, 2, NULL, 3, 1), UTC_ERR_INVALID_ARG,
             "NULL");
    GS_ERROR(t, ctx, utc_gdata_rstore_signal(gd, 0, 0, 2, blk, 1, 1), UTC_ERR_INVALID_ARG,
             "inside the block");
    GS_EXPECT(t, ctx, utc_gdata_rstore_signal(NULL, 0, 0, 0, NULL, 0, 1),
              UTC_ERR_INVALID_HANDLE);
    GS_OK(t, ctx, utc_gdata_barrier(gd));
    GS_OK(t, ctx, utc_gdata_destroy(ctx, small));
    GS_OK(t, ctx, utc_gdata_destroy(ctx, gd));
}

static void test_bad_arguments(void)
{
    gs_run(body_bad, 2, UTC_WINDOW_DEFAULT, NULL);
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"a signal hands blocks around the ranks (store, quiet, store)", test_handoff},
        {"rstore_signal hands blocks around the ranks", test_handoff_rstore_signal},
        {"every comparison, and a timeout", test_compare_and_timeout},
        {"bad arguments get a clear error", test_bad_arguments},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "gshared: signals", cases);
}
