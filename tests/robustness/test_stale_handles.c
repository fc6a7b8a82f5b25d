/*
 * Stale handles (issue 23 item 1): a handle kept after its object was destroyed is refused
 * with UTC_ERR_INVALID_HANDLE, on every rank, even when a newer object took its memory: a
 * task (the old address is never reused), a conduit (its pooled object is reused by the
 * next conduit, with a new generation), a request (its handle cell is reused by the next
 * request) and a global shared data object. The newer object is untouched.
 */
#include <stdio.h>
#include <string.h>

#include "../conduits/conduit_test_util.h"

static void expect_stale(int rc, const char *fn)
{
    CU_ASSERT_EQUAL(rc, UTC_ERR_INVALID_HANDLE);
    if (rc != UTC_ERR_INVALID_HANDLE || !strstr(utc_last_error(), fn))
        fprintf(stderr, "rank %d: %s gave %d: %s\n", utc_rank(), fn, rc, utc_last_error());
}

static void test_tasks(void)
{
    int procs[1] = {0};
    utc_task_t *old[50];
    for (int i = 0; i < 50; i++) {
        old[i] = ct_task_procs(&ct_ops_a, procs, 1);
        UTC_ASSERT_OK(utc_task_destroy(old[i]));
    }
    utc_task_t *fresh = ct_task_procs(&ct_ops_a, procs, 1);
    for (int i = 0; i < 50; i++) {
        CU_ASSERT_PTR_NOT_EQUAL(fresh, old[i]); /* a destroyed task's address stays its own */
        expect_stale(utc_task_destroy(old[i]), "utc_task_destroy");
    }
    CU_ASSERT(utc_task_id(fresh) >= 0); /* the new one is alive, on every rank */
    UTC_ASSERT_OK(utc_task_destroy(fresh));
}

static void test_conduits(void)
{
    int ra, rb;
    ct_pair_ranks(&ra, &rb);
    utc_task_t *a = ct_task(&ct_ops_a, ra, 1), *b = ct_task(&ct_ops_b, rb, 1);
    utc_conduit_t *old = NULL, *fresh = NULL;
    UTC_ASSERT_OK(utc_conduit_create(a, b, NULL, &old));
    UTC_ASSERT_OK(utc_conduit_destroy(old));
    UTC_ASSERT_OK(utc_conduit_create(a, b, NULL, &fresh)); /* takes the pooled object */
    CU_ASSERT_PTR_NOT_EQUAL(old, fresh);
    expect_stale(utc_conduit_destroy(old), "utc_conduit_destroy");
    CU_ASSERT(strstr(utc_last_error(), "stale") || strstr(utc_last_error(), "not a live"));
    expect_stale(utc_conduit_id(old), "utc_conduit_id");
    CU_ASSERT(utc_conduit_id(fresh) >= 0);
    UTC_ASSERT_OK(utc_conduit_destroy(fresh));
    UTC_ASSERT_OK(utc_task_destroy(b));
    UTC_ASSERT_OK(utc_task_destroy(a));
}

/* A task thread keeps the route of its last write and read on a conduit (conduits/route.c's
 * route memo): after that conduit is destroyed and a new one takes its pooled object, the
 * old handle from the same thread is still refused, and the new conduit carries the next
 * message. `data`: {old, fresh}; phase 0 uses old, phase 1 expects it stale. */
static int memo_phase;

static int memo_writer(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t **c = data;
    int v = 7 + memo_phase;
    if (memo_phase == 0) {
        CT_OK(utc_conduit_write(c[0], &v, sizeof v, 0));
        return 0;
    }
    utc_request_t *r = NULL;
    CT_EXPECT(utc_conduit_write(c[0], &v, sizeof v, 0), UTC_ERR_INVALID_HANDLE);
    CT_EXPECT(utc_conduit_iwrite(c[0], &v, sizeof v, 0, &r), UTC_ERR_INVALID_HANDLE);
    CT_CHECK(r == NULL, "a request was made on a stale handle");
    CT_OK(utc_conduit_write(c[1], &v, sizeof v, 0));
    return 0;
}

static int memo_reader(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t **c = data;
    int v = 0;
    size_t got = 0;
    if (memo_phase == 1) {
        utc_request_t *r = NULL;
        CT_EXPECT(utc_conduit_iread(c[0], &v, sizeof v, 0, &r), UTC_ERR_INVALID_HANDLE);
    }
    CT_OK(utc_conduit_read(c[memo_phase], &v, sizeof v, 0, &got));
    CT_CHECK(v == 7 + memo_phase && got == sizeof v, "got %d, expected %d", v, 7 + memo_phase);
    return 0;
}

static void test_conduit_memo(void)
{
    ct_begin();
    int ra, rb;
    ct_pair_ranks(&ra, &rb);
    utc_task_t *a = ct_task(&ct_ops_a, ra, 1), *b = ct_task(&ct_ops_b, rb, 1);
    utc_conduit_t *c[2] = {NULL, NULL};
    UTC_ASSERT_OK(utc_conduit_create(a, b, NULL, &c[0]));
    memo_phase = 0;
    ct_run2(a, memo_writer, c, b, memo_reader, c);
    UTC_ASSERT_OK(utc_conduit_destroy(c[0]));
    UTC_ASSERT_OK(utc_conduit_create(a, b, NULL, &c[1])); /* takes the pooled object */
    memo_phase = 1;
    ct_run2(a, memo_writer, c, b, memo_reader, c);
    UTC_ASSERT_OK(utc_conduit_destroy(c[1]));
    UTC_ASSERT_OK(utc_task_destroy(b));
    UTC_ASSERT_OK(utc_task_destroy(a));
    CT_END();
}

/* writer: a request waited for, then its handle (a kept copy) used again while a newer
 * request holds the same cell */
static int stale_writer(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    int v = 1;
    utc_request_t *r = NULL, *copy;
    CT_OK(utc_conduit_iwrite(c, &v, sizeof v, 0, &r));
    copy = r;
    CT_OK(utc_request_wait(&r, NULL));
    CT_EXPECT(utc_request_wait(&copy, NULL), UTC_ERR_INVALID_HANDLE);
    CT_CHECK(strstr(utc_last_error(), "stale") != NULL, "message: %s", utc_last_error());
    int w = 2;
    utc_request_t *newer = NULL;
    CT_OK(utc_conduit_iwrite(c, &w, sizeof w, 0, &newer)); /* likely the same cell */
    int done = 0;
    CT_EXPECT(utc_request_test(&copy, &done, NULL), UTC_ERR_INVALID_HANDLE);
    CT_EXPECT(utc_request_cancel(&copy), UTC_ERR_INVALID_HANDLE);
    CT_OK(utc_request_wait(&newer, NULL)); /* untouched by the stale calls */
    return 0;
}

static int two_reads(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    for (int want = 1; want <= 2; want++) {
        int v = 0;
        size_t got = 0;
        CT_OK(utc_conduit_read(c, &v, sizeof v, 0, &got));
        CT_CHECK(v == want && got == sizeof v, "got %d, expected %d", v, want);
    }
    return 0;
}

static void test_requests(void)
{
    ct_begin();
    ct_each_placement_run(1, stale_writer, 1, two_reads);
    CT_END();
}

/* gdata: an object destroyed, a new one created; the old handle is refused */
static int gdata_job(utc_ctx_t *ctx, void *data)
{
    (void)data;
    utc_gdata_t *old = NULL, *fresh = NULL;
    if (!CT_OK(utc_gdata_create(ctx, sizeof(double), 16, &old)) ||
        !CT_OK(utc_gdata_destroy(ctx, old)) ||
        !CT_OK(utc_gdata_create(ctx, sizeof(double), 16, &fresh)))
        return 0;
    CT_CHECK(old != fresh, "a destroyed object's handle was handed out again");
    CT_EXPECT(utc_gdata_destroy(ctx, old), UTC_ERR_INVALID_HANDLE);
    double x = 1.5;
    CT_EXPECT(utc_gdata_store(old, 0, &x), UTC_ERR_INVALID_HANDLE);
    CT_OK(utc_gdata_destroy(ctx, fresh));
    return 0;
}

static void test_gdata(void)
{
    ct_begin();
    int n = utc_nranks(), procs[3] = {0, n > 1 ? 1 : 0, n > 2 ? 2 : 0};
    utc_task_t *t = ct_task_procs(&ct_ops_a, procs, n);
    ct_run1(t, gdata_job, NULL);
    UTC_ASSERT_OK(utc_task_destroy(t));
    CT_END();
}

static const utc_test_case_t cases[] = {
    {"tasks: destroyed handles refused, addresses not reused", test_tasks},
    {"conduits: a stale handle to a reused object", test_conduits},
    {"conduits: a stale handle from a thread that used it", test_conduit_memo},
    {"requests: a kept copy after the wait, its cell reused", test_requests},
    {"global shared data: a destroyed object's handle", test_gdata},
    UTC_TEST_END};

int main(int argc, char **argv) { return utc_test_main(argc, argv, "stale handles", cases); }
