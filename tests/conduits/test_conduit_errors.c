/*
 * Every misuse gets a clear status and message, loses nothing and hangs nothing:
 * truncation (message kept, both sizes reported), a thread that is not an end, bad tags,
 * NULL buffers, use after destroy, *_by thread ids out of range, naming peers on a
 * single-entry conduit, bad creation arguments.
 */
#include "conduit_test_util.h"

static bool has(const char *needle)
{
    return strstr(utc_last_error(), needle) != NULL;
}

/* ---- truncation keeps the message ---- */

static int trunc_w(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    char msg[100];
    for (int i = 0; i < 100; i++)
        msg[i] = (char)i;
    CT_OK(utc_conduit_write(c, msg, sizeof msg, 1));
    int after = 7;
    CT_OK(utc_conduit_write(c, &after, sizeof after, 1));
    /* a large one too (reader-copies path in-process, rendezvous over MPI) */
    static unsigned char big[1 << 20];
    ct_fill(big, sizeof big, 3);
    CT_OK(utc_conduit_write(c, big, sizeof big, 2));
    return 0;
}

static int trunc_r(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    static char small[10], msg[100]; /* shared by the reader's threads */
    size_t got = 0;
    CT_EXPECT(utc_conduit_read(c, small, sizeof small, 1, &got), UTC_ERR_TRUNCATE);
    CT_CHECK(got == 100, "truncation reports %zu bytes", got);
    CT_CHECK(has("100 bytes") && has("10-byte"), "message: %s", utc_last_error());
    CT_CHECK(has("stays queued"), "message: %s", utc_last_error());
    /* a second short read fails the same way: still first in line */
    CT_EXPECT(utc_conduit_read(c, small, sizeof small, 1, &got), UTC_ERR_TRUNCATE);
    CT_OK(utc_conduit_read(c, msg, sizeof msg, 1, &got));
    bool same = got == 100;
    for (int i = 0; i < 100 && same; i++)
        same = msg[i] == (char)i;
    CT_CHECK(same, "the kept message came back wrong (%zu bytes)", got);
    static int after;
    CT_OK(utc_conduit_read(c, &after, sizeof after, 1, &got));
    CT_CHECK(after == 7, "the next message is %d", after);
    static unsigned char big[1 << 20];
    CT_EXPECT(utc_conduit_read(c, big, 1000, 2, &got), UTC_ERR_TRUNCATE);
    CT_CHECK(got == sizeof big, "large truncation reports %zu", got);
    CT_OK(utc_conduit_read(c, big, sizeof big, 2, &got));
    CT_CHECK(got == sizeof big && ct_verify(big, got, 3), "large kept message");
    return 0;
}

static void test_truncate(void)
{
    ct_begin();
    ct_each_placement_run(1, trunc_w, 2, trunc_r);
    CT_END();
}

/* ---- argument errors, from a thread of the source task ---- */

static int bad_args(utc_ctx_t *ctx, void *d)
{
    utc_conduit_t *c = d;
    int v = 1;
    size_t got;
    CT_EXPECT(utc_conduit_write(c, &v, sizeof v, -1), UTC_ERR_INVALID_ARG);
    CT_CHECK(has("negative"), "%s", utc_last_error());
    CT_EXPECT(utc_conduit_read(c, &v, sizeof v, -5, &got), UTC_ERR_INVALID_ARG);
    CT_EXPECT(utc_conduit_write(c, &v, sizeof v, UTC_CONDUIT_TAG_MAX + 1), UTC_ERR_INVALID_ARG);
    CT_CHECK(has("UTC_CONDUIT_TAG_MAX"), "%s", utc_last_error());
    CT_EXPECT(utc_conduit_write(c, NULL, 4, 0), UTC_ERR_INVALID_ARG);
    CT_CHECK(has("NULL"), "%s", utc_last_error());
    CT_EXPECT(utc_conduit_read(c, NULL, 4, 0, &got), UTC_ERR_INVALID_ARG);
    CT_EXPECT(utc_conduit_write_by(c, -1, &v, sizeof v, 0), UTC_ERR_OUT_OF_RANGE);
    CT_EXPECT(utc_conduit_write_by(c, ctx->local_count, &v, sizeof v, 0), UTC_ERR_OUT_OF_RANGE);
    CT_CHECK(has("out of range"), "%s", utc_last_error());
    CT_EXPECT(utc_conduit_read_by(c, 99, &v, sizeof v, 0, &got), UTC_ERR_OUT_OF_RANGE);
    CT_EXPECT(utc_conduit_write_to(c, 0, &v, sizeof v, 0), UTC_ERR_STATE);
    CT_CHECK(has("single-entry"), "%s", utc_last_error());
    CT_EXPECT(utc_conduit_read_from(c, 0, &v, sizeof v, 0, &got), UTC_ERR_STATE);
    utc_request_t *r = (utc_request_t *)&v;
    CT_EXPECT(utc_conduit_iwrite(c, &v, sizeof v, -2, &r), UTC_ERR_INVALID_ARG);
    CT_CHECK(r == (utc_request_t *)&v, "request output changed on an error");
    CT_EXPECT(utc_conduit_iread(c, &v, sizeof v, 0, NULL), UTC_ERR_INVALID_ARG);
    /* NULL with size 0 is a valid empty message */
    CT_OK(utc_conduit_write(c, NULL, 0, 3));
    return 0;
}

static int empty_r(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    size_t got = 99;
    CT_OK(utc_conduit_read(c, NULL, 0, 3, &got));
    CT_CHECK(got == 0, "empty message arrived as %zu bytes", got);
    return 0;
}

/* a thread of a third task is not an end */
static int outsider(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    int v = 0;
    CT_EXPECT(utc_conduit_write(c, &v, sizeof v, 0), UTC_ERR_NOT_MEMBER);
    CT_CHECK(has("not a thread of task"), "%s", utc_last_error());
    CT_EXPECT(utc_conduit_read(c, &v, sizeof v, 0, NULL), UTC_ERR_NOT_MEMBER);
    CT_EXPECT(utc_conduit_write_by(c, 0, &v, sizeof v, 0), UTC_ERR_NOT_MEMBER);
    utc_request_t *r;
    CT_EXPECT(utc_conduit_iread(c, &v, sizeof v, 0, &r), UTC_ERR_NOT_MEMBER);
    return 0;
}

static void bad_arguments_at(int ra, int rb, void *arg)
{
    (void)arg;
    ct_pair_t p = ct_pair_open(ra, 2, rb, 1, NULL);
    utc_task_t *x = ct_task(&ct_ops_c, rb, 1);
    ct_pair_run(&p, bad_args, empty_r);
    ct_run1(x, outsider, p.c);
    UTC_ASSERT_OK(utc_task_destroy(x));
    ct_pair_close(&p);
}

static void test_bad_arguments(void)
{
    ct_begin();
    ct_each_placement(false, bad_arguments_at, NULL);
    CT_END();
}

/* the main thread is not a task thread */
static void test_not_a_task_thread(void)
{
    ct_pair_t p = ct_pair_open(0, 1, 0, 1, NULL);
    int v = 0;
    CU_ASSERT_EQUAL(utc_conduit_write(p.c, &v, sizeof v, 0), UTC_ERR_NOT_MEMBER);
    CU_ASSERT(has("not a thread of task 'task-a' or 'task-b'"));
    CU_ASSERT_EQUAL(utc_conduit_read(p.c, &v, sizeof v, 0, NULL), UTC_ERR_NOT_MEMBER);
    ct_pair_close(&p);
}

/* ---- use after destroy ---- */

static int after_destroy(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    int v = 0;
    CT_EXPECT(utc_conduit_write(c, &v, sizeof v, 0), UTC_ERR_INVALID_HANDLE);
    CT_CHECK(has("not a live conduit"), "%s", utc_last_error());
    CT_EXPECT(utc_conduit_read(c, &v, sizeof v, 0, NULL), UTC_ERR_INVALID_HANDLE);
    CT_EXPECT(utc_conduit_write_by(c, 0, &v, sizeof v, 0), UTC_ERR_INVALID_HANDLE);
    return 0;
}

static int use_once(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    int v = 1;
    CT_OK(utc_conduit_write(c, &v, sizeof v, 0)); /* caches the handle as live */
    return 0;
}

static void test_use_after_destroy(void)
{
    ct_begin();
    utc_task_t *a = ct_task(&ct_ops_a, 0, 1), *b = ct_task(&ct_ops_b, 0, 1);
    utc_conduit_t *c;
    UTC_ASSERT_OK(utc_conduit_create(a, b, NULL, &c));
    ct_run2(a, use_once, c, b, ct_idle, NULL);
    UTC_ASSERT_OK(utc_conduit_destroy(c));
    CU_ASSERT_EQUAL(utc_conduit_destroy(c), UTC_ERR_INVALID_HANDLE);
    CU_ASSERT(has("not a live conduit"));
    CU_ASSERT(utc_conduit_id(c) == UTC_ERR_INVALID_HANDLE);
    CU_ASSERT_EQUAL(utc_conduit_transport(c), UTC_CONDUIT_NONE);
    CU_ASSERT_EQUAL(utc_conduit_destroy(NULL), UTC_ERR_INVALID_ARG);
    ct_run2(a, after_destroy, c, b, ct_idle, NULL);
    UTC_ASSERT_OK(utc_task_destroy(a));
    UTC_ASSERT_OK(utc_task_destroy(b));
    CT_END();
}

/* ---- creation ---- */

static void test_create_errors(void)
{
    utc_task_t *a = ct_task(&ct_ops_a, 0, 1), *b = ct_task(&ct_ops_b, 0, 1);
    utc_conduit_t *c = (utc_conduit_t *)&a;
    CU_ASSERT_EQUAL(utc_conduit_create(NULL, b, NULL, &c), UTC_ERR_INVALID_ARG);
    CU_ASSERT_EQUAL(utc_conduit_create(a, b, NULL, NULL), UTC_ERR_INVALID_ARG);
    CU_ASSERT_EQUAL(utc_conduit_create(a, a, NULL, &c), UTC_ERR_INVALID_ARG);
    CU_ASSERT(has("same task"));
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.mode = 7;
    CU_ASSERT_EQUAL(utc_conduit_create(a, b, &o, &c), UTC_ERR_INVALID_ARG);
    o = (utc_conduit_options_t)UTC_CONDUIT_OPTIONS_INIT;
    o.ring_slots = 3;
    CU_ASSERT_EQUAL(utc_conduit_create(a, b, &o, &c), UTC_ERR_INVALID_ARG);
    CU_ASSERT(has("power of two"));
    o = (utc_conduit_options_t)UTC_CONDUIT_OPTIONS_INIT;
    o.inline_max = 2 << 20;
    CU_ASSERT_EQUAL(utc_conduit_create(a, b, &o, &c), UTC_ERR_INVALID_ARG);
    CU_ASSERT(c == (utc_conduit_t *)&a); /* output untouched on errors */
    utc_task_t *dead = ct_task(&ct_ops_c, 0, 1);
    UTC_ASSERT_OK(utc_task_destroy(dead));
    CU_ASSERT_EQUAL(utc_conduit_create(a, dead, NULL, &c), UTC_ERR_INVALID_HANDLE);
    UTC_ASSERT_OK(utc_task_destroy(a));
    UTC_ASSERT_OK(utc_task_destroy(b));
}

/* ---- single-entry mode: a rank that is not the entry ---- */

static int non_entry(utc_ctx_t *ctx, void *d)
{
    utc_conduit_t *c = d;
    int v = 5;
    if (ctx->world_rank == utc_task_entry_rank(ctx->task)) {
        CT_OK(utc_conduit_write(c, &v, sizeof v, 0));
    } else {
        CT_EXPECT(utc_conduit_write(c, &v, sizeof v, 0), UTC_ERR_NOT_MEMBER);
        CT_CHECK(has("single-entry") && has("entry rank"), "%s", utc_last_error());
    }
    return 0;
}

static int entry_reader(utc_ctx_t *ctx, void *d)
{
    utc_conduit_t *c = d;
    int v = 0;
    if (ctx->world_rank == utc_task_entry_rank(ctx->task)) {
        CT_OK(utc_conduit_read(c, &v, sizeof v, 0, NULL));
        CT_CHECK(v == 5, "read %d", v);
    } else {
        CT_EXPECT(utc_conduit_read(c, &v, sizeof v, 0, NULL), UTC_ERR_NOT_MEMBER);
    }
    return 0;
}

static void test_single_entry_non_entry_rank(void)
{
    int n = utc_test_nranks();
    if (n < 2) {
        printf("\n    one rank: every rank is the entry");
        return;
    }
    ct_begin();
    int pa[2] = {0, 1}, pb[2] = {n - 1, 0};
    ct_pair_t p = ct_pair_open_procs(pa, 2, pb, 2, NULL);
    ct_pair_run(&p, non_entry, entry_reader);
    ct_pair_close(&p);
    CT_END();
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"truncation: both sizes reported, message kept", test_truncate},
        {"bad tags, NULL buffers, thread ids, peers; non-member task", test_bad_arguments},
        {"the main thread is not an end", test_not_a_task_thread},
        {"use after destroy", test_use_after_destroy},
        {"creation errors", test_create_errors},
        {"single-entry mode: calls on a non-entry rank", test_single_entry_non_entry_rank},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "conduit errors", cases);
}
