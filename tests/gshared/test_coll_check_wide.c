/*
 * The cross-rank check of the task collectives above 8 ranks (base/coll_check.h): there it
 * is one nonblocking allreduce of each rank's description instead of direct messages, and
 * all-to-all's data moves after it. Run at 9 ranks (the suites of 1-3 ranks never take
 * this form). An alltoallv that agrees delivers its data; counts that disagree on one
 * pair, and a count that differs on one rank, end in UTC_ERR_MISMATCH on every rank naming
 * the pair or the rank, and the next collective works. At fewer ranks it checks the same
 * through the direct form.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utc_test.h"

#define TASK_NAME "coll-wide"

enum { COUNT = 256, ROUNDS = 3 }; /* ints per pair: 1 KiB */

static atomic_int failures;

static void fail(utc_ctx_t *ctx, int line, const char *what, int rc)
{
    fprintf(stderr, "rank %d, line %d: %s: got %d (%s): %s\n", ctx->world_rank, line, what, rc,
            utc_status_string(rc), utc_last_error());
    atomic_fetch_add(&failures, 1);
}

/* rc is UTC_ERR_MISMATCH, with `what` in the message (at 1 rank: nothing can differ). */
static void expect_mismatch(utc_ctx_t *ctx, int line, int rc, const char *what)
{
    if (ctx->group_size == 1)
        return;
    if (rc != UTC_ERR_MISMATCH) {
        fail(ctx, line, "expected UTC_ERR_MISMATCH", rc);
        return;
    }
    if (!strstr(utc_last_error(), what) || !strstr(utc_last_error(), "task '" TASK_NAME "'")) {
        fprintf(stderr, "rank %d: message lacks '%s': %s\n", ctx->world_rank, what,
                utc_last_error());
        atomic_fetch_add(&failures, 1);
    }
}

static int wide_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)arg;
    int n = ctx->group_size, me = ctx->group_rank, last = n - 1;
    /* s holds one element more than the agreeing calls send: the mismatch case below
     * declares one more, and its blocks (displacements from the counts) reach that far */
    int *s = malloc(sizeof *s * (COUNT * (size_t)n + 1)),
        *r = malloc(sizeof *r * COUNT * (size_t)n);
    size_t *sc = malloc(sizeof *sc * (size_t)n), *rc = malloc(sizeof *rc * (size_t)n);
    char what[160];
    if (!s || !r || !sc || !rc) {
        fail(ctx, __LINE__, "out of memory", 0);
        goto out;
    }
    for (int round = 0; round < ROUNDS; round++) {
        for (int j = 0; j < n; j++) {
            sc[j] = rc[j] = COUNT;
            for (int i = 0; i < COUNT; i++)
                s[(size_t)j * COUNT + i] = me * 100000 + j * 1000 + i + round;
        }
        memset(r, 0, sizeof *r * COUNT * (size_t)n);
        int e = utc_task_alltoallv(ctx, s, sc, NULL, r, rc, NULL, UTC_TYPE_INT);
        if (e != UTC_OK)
            fail(ctx, __LINE__, "alltoallv that agrees", e);
        int bad = 0;
        for (int i = 0; i < n; i++)
            for (int k = 0; k < COUNT; k++)
                bad += r[(size_t)i * COUNT + k] != i * 100000 + me * 1000 + k + round;
        if (bad)
            fail(ctx, __LINE__, "alltoallv: wrong data", bad);
        /* the last rank sends rank 0 one element more than rank 0 expects */
        if (me == last)
            sc[0] = COUNT + 1;
        e = utc_task_alltoallv(ctx, s, sc, NULL, r, rc, NULL, UTC_TYPE_INT);
        snprintf(what, sizeof what, "rank %d sends %d elements to rank 0", last, COUNT + 1);
        expect_mismatch(ctx, __LINE__, e, what);
        /* the last rank passes another count */
        e = utc_task_alltoall(ctx, s, r, me == last ? 3 : 2, UTC_TYPE_INT);
        snprintf(what, sizeof what, "rank %d differs from rank 0 in the count", last);
        expect_mismatch(ctx, __LINE__, e, what);
        /* and the task's collectives work again */
        for (int j = 0; j < n; j++)
            s[j * 2] = s[j * 2 + 1] = me * 1000 + j;
        if ((e = utc_task_alltoall(ctx, s, r, 2, UTC_TYPE_INT)) != UTC_OK)
            fail(ctx, __LINE__, "alltoall after the mismatches", e);
        for (int i = 0; e == UTC_OK && i < n; i++)
            if (r[i * 2] != i * 1000 + me || r[i * 2 + 1] != i * 1000 + me)
                fail(ctx, __LINE__, "alltoall after the mismatches: wrong data", r[i * 2]);
    }
out:
    free(s), free(r), free(sc), free(rc);
    return 0;
}

static const utc_task_ops_t wide_ops = {
    .name = TASK_NAME, .size = sizeof(utc_task_t), .run = wide_run};

static void test_wide(void)
{
    int n = utc_test_nranks();
    int *procs = malloc(sizeof *procs * (size_t)n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(procs);
    for (int r = 0; r < n; r++)
        procs[r] = r;
    utc_task_t *t = NULL;
    UTC_ASSERT_OK(utc_task_create(&wide_ops, procs, n, NULL, &t));
    UTC_ASSERT_OK(utc_task_run(t, NULL));
    UTC_ASSERT_OK(utc_task_wait(t));
    UTC_ASSERT_OK(utc_task_destroy(t));
    free(procs);
    CU_ASSERT_EQUAL(atomic_load(&failures), 0);
}

static const utc_test_case_t cases[] = {
    {"all-to-all's check by allreduce (above 8 ranks): data, pair and count mismatches", test_wide},
    UTC_TEST_END};

int main(int argc, char **argv)
{
    return utc_test_main(argc, argv, "coll_check_wide", cases);
}
