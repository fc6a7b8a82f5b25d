/*
 * Collective creation with ranks that disagree (issue 16): a different proc list, thread
 * count, ops table or options for utc_task_create; different ends, options, or bad
 * arguments on one rank for utc_conduit_create; different calls at the same point; sizes
 * for utc_gdata_create. Each returns UTC_ERR_MISMATCH on every rank, with a message naming
 * the call and the ranks that differ, and the runtime stays usable: a correct creation
 * right after works. At 2 and 3 ranks the last rank is the one that differs.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "utc_test.h"

static int ok_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    return 0;
}

static const utc_task_ops_t ops_a = {.name = "mm-a", .size = sizeof(utc_task_t), .run = ok_run};
static const utc_task_ops_t ops_b = {.name = "mm-b", .size = sizeof(utc_task_t), .run = ok_run};

static bool odd_one(void) { return utc_test_rank() == utc_test_nranks() - 1; }

/* UTC_ERR_MISMATCH with a message that names `fn`, the odd rank and `what`. */
static void expect_mismatch(int rc, const char *fn, const char *what)
{
    CU_ASSERT_EQUAL(rc, UTC_ERR_MISMATCH);
    const char *msg = utc_last_error();
    char rank[32];
    snprintf(rank, sizeof rank, "rank %d", utc_test_nranks() - 1);
    bool ok = strstr(msg, fn) && strstr(msg, rank) && strstr(msg, what) &&
              strstr(msg, "same order");
    if (utc_test_rank() == 0)
        printf("  rank 0 got: %s\n", msg);
    if (!ok)
        fprintf(stderr, "rank %d: message '%s' lacks '%s', '%s' or '%s'\n", utc_test_rank(), msg,
                fn, rank, what);
    CU_ASSERT(ok);
}

/* The runtime is still usable: a task on every rank, a conduit, one message, destroyed. */
static void still_usable(void)
{
    int n = utc_test_nranks();
    int procs[3] = {0, n > 1 ? 1 : 0, n > 2 ? 2 : 0};
    utc_task_t *a = NULL, *b = NULL;
    UTC_ASSERT_OK(utc_task_create(&ops_a, procs, n, NULL, &a));
    UTC_ASSERT_OK(utc_task_create(&ops_b, procs, n, NULL, &b));
    utc_conduit_t *c = NULL;
    UTC_ASSERT_OK(utc_conduit_create(a, b, NULL, &c));
    UTC_ASSERT_OK(utc_task_init(a, NULL));
    UTC_ASSERT_OK(utc_task_run(a, NULL));
    UTC_ASSERT_OK(utc_task_wait(a));
    UTC_ASSERT_OK(utc_conduit_destroy(c));
    UTC_ASSERT_OK(utc_task_destroy(b));
    UTC_ASSERT_OK(utc_task_destroy(a));
}

static void test_task_proc_list(void)
{
    /* the reported crash: rank 0 passes {0,0}, the odd rank {0,1} */
    int same[2] = {0, 0}, other[2] = {0, 1};
    utc_task_t *t = NULL;
    expect_mismatch(utc_task_create(&ops_a, odd_one() ? other : same, 2, NULL, &t),
                    "utc_task_create", "proc list");
    CU_ASSERT_PTR_NULL(t);
    still_usable();
}

static void test_task_thread_count(void)
{
    int procs[3] = {0, 0, 0};
    utc_task_t *t = NULL;
    expect_mismatch(utc_task_create(&ops_a, procs, odd_one() ? 3 : 2, NULL, &t),
                    "utc_task_create", "proc list");
    still_usable();
}

static void test_task_ops(void)
{
    /* tasks created in a different order: each rank's first call names another task */
    int procs[1] = {0};
    utc_task_t *t = NULL;
    expect_mismatch(utc_task_create(odd_one() ? &ops_b : &ops_a, procs, 1, NULL, &t),
                    "utc_task_create", "ops table");
    still_usable();
}

static void test_task_options(void)
{
    int procs[1] = {0};
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    if (odd_one())
        o.window_size = 4096;
    utc_task_t *t = NULL;
    expect_mismatch(utc_task_create(&ops_a, procs, 1, &o, &t), "utc_task_create", "options");
    still_usable();
}

static void test_task_bad_args_on_one_rank(void)
{
    int procs[1] = {0};
    utc_task_t *t = NULL;
    /* a NULL output on the odd rank: it alone would return at once; all must agree */
    expect_mismatch(utc_task_create(&ops_a, procs, 1, NULL, odd_one() ? NULL : &t),
                    "utc_task_create", "own checks");
    still_usable();
}

static void test_bad_args_everywhere(void)
{
    /* the same bad arguments on every rank: every rank gets the argument's own error */
    int procs[1] = {0};
    utc_task_t *t = NULL;
    CU_ASSERT_EQUAL(utc_task_create(&ops_a, procs, 0, NULL, &t), UTC_ERR_INVALID_ARG);
    still_usable();
}

static void test_different_calls(void)
{
    int n = utc_test_nranks();
    int procs[3] = {0, n > 1 ? 1 : 0, n > 2 ? 2 : 0};
    utc_task_t *a = NULL, *b = NULL;
    UTC_ASSERT_OK(utc_task_create(&ops_a, procs, n, NULL, &a));
    UTC_ASSERT_OK(utc_task_create(&ops_b, procs, n, NULL, &b));
    /* the odd rank creates a conduit where the others create a task */
    int rc;
    if (odd_one()) {
        utc_conduit_t *c = NULL;
        rc = utc_conduit_create(a, b, NULL, &c);
    } else {
        utc_task_t *t = NULL;
        rc = utc_task_create(&ops_a, procs, 1, NULL, &t);
    }
    expect_mismatch(rc, odd_one() ? "utc_conduit_create" : "utc_task_create",
                    "another collective call");
    UTC_ASSERT_OK(utc_task_destroy(b));
    UTC_ASSERT_OK(utc_task_destroy(a));
    still_usable();
}

static void test_conduit_ends_and_options(void)
{
    int n = utc_test_nranks();
    int procs[3] = {0, n > 1 ? 1 : 0, n > 2 ? 2 : 0};
    utc_task_t *a = NULL, *b = NULL, *c3 = NULL;
    UTC_ASSERT_OK(utc_task_create(&ops_a, procs, n, NULL, &a));
    UTC_ASSERT_OK(utc_task_create(&ops_b, procs, n, NULL, &b));
    UTC_ASSERT_OK(utc_task_create(&ops_b, procs, 1, NULL, &c3));
    utc_conduit_t *c = NULL;
    /* different ends: the odd rank joins a to c3 */
    expect_mismatch(utc_conduit_create(a, odd_one() ? c3 : b, NULL, &c), "utc_conduit_create",
                    "ends");
    CU_ASSERT_PTR_NULL(c);
    /* different options */
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    if (odd_one())
        o.mode = UTC_CONDUIT_FREE;
    expect_mismatch(utc_conduit_create(a, b, &o, &c), "utc_conduit_create", "options");
    /* a bad argument on one rank only: source and destination the same task */
    expect_mismatch(utc_conduit_create(a, odd_one() ? a : b, NULL, &c), "utc_conduit_create",
                    "own checks");
    /* and then a good one */
    UTC_ASSERT_OK(utc_conduit_create(a, b, NULL, &c));
    UTC_ASSERT_OK(utc_conduit_destroy(c));
    UTC_ASSERT_OK(utc_task_destroy(c3));
    UTC_ASSERT_OK(utc_task_destroy(b));
    UTC_ASSERT_OK(utc_task_destroy(a));
    still_usable();
}

/* gdata: the task's threads (one per rank) create objects whose sizes differ on one rank */
static int gdata_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)arg;
    utc_gdata_t *gd = NULL;
    size_t count = ctx->world_rank == utc_nranks() - 1 ? 200 : 100;
    int rc = utc_gdata_create(ctx, sizeof(double), count, &gd);
    if (rc != UTC_ERR_MISMATCH || !strstr(utc_last_error(), "utc_gdata_create")) {
        fprintf(stderr, "rank %d: utc_gdata_create gave %d: %s\n", ctx->world_rank, rc,
                utc_last_error());
        return UTC_ERR_INTERNAL;
    }
    /* still usable: the same object on every rank */
    if ((rc = utc_gdata_create(ctx, sizeof(double), 100, &gd)) != UTC_OK)
        return rc;
    return utc_gdata_destroy(ctx, gd);
}

static const utc_task_ops_t gdata_ops = {.name = "mm-gdata", .size = sizeof(utc_task_t),
                                         .run = gdata_run};

static void test_gdata_sizes(void)
{
    int n = utc_test_nranks();
    int procs[3] = {0, n > 1 ? 1 : 0, n > 2 ? 2 : 0};
    utc_task_t *t = NULL;
    UTC_ASSERT_OK(utc_task_create(&gdata_ops, procs, n, NULL, &t));
    UTC_ASSERT_OK(utc_task_run(t, NULL));
    UTC_ASSERT_OK(utc_task_wait(t));
    UTC_ASSERT_OK(utc_task_destroy(t));
}

static const utc_test_case_t cases[] = {
    {"task: proc lists differ", test_task_proc_list},
    {"task: thread counts differ", test_task_thread_count},
    {"task: ops tables differ (creation order)", test_task_ops},
    {"task: options differ", test_task_options},
    {"task: bad arguments on one rank", test_task_bad_args_on_one_rank},
    {"task: the same bad arguments everywhere", test_bad_args_everywhere},
    {"different collective calls at the same point", test_different_calls},
    {"conduit: ends, options, bad arguments on one rank", test_conduit_ends_and_options},
    {"gdata: sizes differ", test_gdata_sizes},
    UTC_TEST_END};

int main(int argc, char **argv)
{
    return utc_test_main(argc, argv, "collective mismatch", cases);
}
