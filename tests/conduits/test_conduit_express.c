/*
 * The express path (conduits/transfer.c: a plain blocking write or read by a task's only thread on
 * its rank, on the route it took last) behaves as the general path does: once a first
 * call has set the route, every later call on it, good or bad, gets the same statuses and
 * messages, in-process and between ranks. Misuse on that route (bad tags, NULL buffers, a
 * capacity no buffer has, a short buffer, writing after a close), empty messages, a
 * message of each kind (small, large), a conduit destroyed or its other end failed; and
 * the express asynchronous write (a completed handle: tested, waited for, canceled, stale
 * after) in order with writes the general path queues; the express asynchronous read (a
 * solo request, with no count against its conduit) in order, truncated, tested, canceled,
 * stale after, pending when its conduit is destroyed, and waited for by another thread.
 */
#include "conduit_test_util.h"

static bool has(const char *needle)
{
    return strstr(utc_last_error(), needle) != NULL;
}

/* ---- misuse on a route already taken ---- */

static int misuse_w(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    int v = 1;
    CT_OK(utc_conduit_write(c, &v, sizeof v, 0)); /* sets the route */
    CT_EXPECT(utc_conduit_write(c, &v, sizeof v, -1), UTC_ERR_INVALID_ARG);
    CT_CHECK(has("negative"), "%s", utc_last_error());
    CT_EXPECT(utc_conduit_write(c, &v, sizeof v, UTC_CONDUIT_TAG_MAX + 1), UTC_ERR_INVALID_ARG);
    CT_CHECK(has("UTC_CONDUIT_TAG_MAX"), "%s", utc_last_error());
    CT_EXPECT(utc_conduit_write(c, NULL, 4, 0), UTC_ERR_INVALID_ARG);
    CT_CHECK(has("NULL"), "%s", utc_last_error());
    CT_EXPECT(utc_conduit_write(c, &v, (size_t)-4, 0), UTC_ERR_INVALID_ARG);
    CT_CHECK(has("larger than any buffer"), "%s", utc_last_error());
    /* nothing of the above was sent: the reader's next messages are these */
    CT_OK(utc_conduit_write(c, NULL, 0, 3)); /* empty, no buffer */
    char msg[100];
    for (int i = 0; i < 100; i++)
        msg[i] = (char)i;
    CT_OK(utc_conduit_write(c, msg, sizeof msg, 1));
    static unsigned char big[1 << 20]; /* reader-copies path in-process, two parts over MPI */
    ct_fill(big, sizeof big, 5);
    CT_OK(utc_conduit_write(c, big, sizeof big, 2));
    v = 9;
    CT_OK(utc_conduit_write(c, &v, sizeof v, 0));
    /* closed: the express path leaves it to the general one, which says why */
    CT_OK(utc_conduit_close(c));
    CT_EXPECT(utc_conduit_write(c, &v, sizeof v, 0), UTC_ERR_CLOSED);
    CT_CHECK(has("closed its writing side") && has("nothing was sent"), "%s", utc_last_error());
    return 0;
}

static int misuse_r(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    int v = 0;
    size_t got = 1;
    CT_OK(utc_conduit_read(c, &v, sizeof v, 0, &got)); /* sets the route */
    CT_CHECK(v == 1 && got == sizeof v, "first message %d (%zu bytes)", v, got);
    CT_EXPECT(utc_conduit_read(c, &v, sizeof v, -5, &got), UTC_ERR_INVALID_ARG);
    CT_EXPECT(utc_conduit_read(c, NULL, 4, 0, &got), UTC_ERR_INVALID_ARG);
    CT_CHECK(has("NULL"), "%s", utc_last_error());
    CT_EXPECT(utc_conduit_read(c, &v, (size_t)-1, 0, &got), UTC_ERR_INVALID_ARG);
    CT_CHECK(has("larger than any buffer"), "%s", utc_last_error());
    got = 1;
    CT_OK(utc_conduit_read(c, NULL, 0, 3, &got));
    CT_CHECK(got == 0, "the empty message came as %zu bytes", got);
    /* a short buffer: truncation, the message kept first in line, both sizes said */
    char small[10], msg[100];
    CT_EXPECT(utc_conduit_read(c, small, sizeof small, 1, &got), UTC_ERR_TRUNCATE);
    CT_CHECK(got == 100, "truncation reports %zu bytes", got);
    CT_CHECK(has("100 bytes") && has("10-byte") && has("stays queued"), "%s",
             utc_last_error());
    CT_OK(utc_conduit_read(c, msg, sizeof msg, 1, &got));
    bool same = got == 100;
    for (int i = 0; i < 100 && same; i++)
        same = msg[i] == (char)i;
    CT_CHECK(same, "the kept message came back wrong (%zu bytes)", got);
    static unsigned char big[1 << 20];
    CT_EXPECT(utc_conduit_read(c, big, 1000, 2, &got), UTC_ERR_TRUNCATE);
    CT_CHECK(got == sizeof big, "large truncation reports %zu", got);
    CT_OK(utc_conduit_read(c, big, sizeof big, 2, &got));
    CT_CHECK(got == sizeof big && ct_verify(big, got, 5), "the large message");
    CT_OK(utc_conduit_read(c, &v, sizeof v, 0, &got));
    CT_CHECK(v == 9, "the last message is %d", v);
    /* the writer closed: end of stream */
    CT_EXPECT(utc_conduit_read(c, &v, sizeof v, 0, &got), UTC_ERR_CLOSED);
    CT_CHECK(has("end of stream"), "%s", utc_last_error());
    return 0;
}

static void test_misuse_on_route(void)
{
    ct_begin();
    ct_each_placement_run(1, misuse_w, 1, misuse_r);
    CT_END();
}

/* ---- many small messages both ways (the ping-pong the path is for) ---- */

enum { ROUNDS = 20000 };

static int ping(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    for (uint64_t i = 0; i < ROUNDS; i++) {
        uint64_t v = ct_mix(i), back = 0;
        size_t got = 0;
        if (!CT_OK(utc_conduit_write(c, &v, sizeof v, 0)) ||
            !CT_OK(utc_conduit_read(c, &back, sizeof back, 1, &got)))
            return 0;
        if (back != ct_mix(v) || got != sizeof back) {
            CT_CHECK(0, "round %llu: got %llx (%zu bytes)", (unsigned long long)i,
                     (unsigned long long)back, got);
            return 0;
        }
    }
    return 0;
}

static int pong(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    for (uint64_t i = 0; i < ROUNDS; i++) {
        uint64_t v = 0;
        size_t got = 0;
        if (!CT_OK(utc_conduit_read(c, &v, sizeof v, 0, &got)))
            return 0;
        if (v != ct_mix(i)) {
            CT_CHECK(0, "round %llu: got %llx", (unsigned long long)i, (unsigned long long)v);
            return 0;
        }
        v = ct_mix(v);
        if (!CT_OK(utc_conduit_write(c, &v, sizeof v, 1)))
            return 0;
    }
    return 0;
}

static void test_ping_pong(void)
{
    ct_begin();
    ct_each_placement_run(1, ping, 1, pong);
    CT_END();
}

/* ---- asynchronous writes: the express iwrite and the general one, in one stream ---- */

enum { ASYNC_SMALL = 64 };

static int async_w(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    uint64_t v = 11;
    utc_request_t *r = NULL, *copy;
    size_t got = 0;
    int done = 0;
    /* a small write, tested done with its size; the handle is stale afterwards */
    CT_OK(utc_conduit_iwrite(c, &v, sizeof v, 0, &r));
    copy = r;
    CT_OK(utc_request_test(&r, &done, &got));
    CT_CHECK(done == 1 && got == sizeof v && r == NULL, "done %d, %zu bytes", done, got);
    CT_EXPECT(utc_request_test(&copy, &done, &got), UTC_ERR_INVALID_HANDLE);
    CT_EXPECT(utc_request_wait(&copy, NULL), UTC_ERR_INVALID_HANDLE);
    /* waited for; canceled (a write completes as it would) then waited for */
    CT_OK(utc_conduit_iwrite(c, &v, sizeof v, 0, &r));
    CT_OK(utc_request_wait(&r, &got));
    CT_CHECK(got == sizeof v && r == NULL, "%zu bytes", got);
    CT_OK(utc_conduit_iwrite(c, NULL, 0, 0, &r));
    CT_OK(utc_request_cancel(&r));
    CT_OK(utc_request_wait(&r, &got));
    CT_CHECK(got == 0, "%zu bytes", got);
    /* a large write (queued where it goes in parts), then small ones behind it on the same
     * tag and another: they arrive after it, in order */
    static unsigned char big[4 << 20];
    ct_fill(big, sizeof big, 3);
    uint64_t small[ASYNC_SMALL];
    utc_request_t *rs[ASYNC_SMALL + 1] = {NULL};
    CT_OK(utc_conduit_iwrite(c, big, sizeof big, 1, &rs[0]));
    for (int i = 0; i < ASYNC_SMALL; i++) {
        small[i] = ct_mix((uint64_t)i);
        CT_OK(utc_conduit_iwrite(c, &small[i], sizeof small[i], 1 + (i & 1), &rs[i + 1]));
    }
    for (int i = 0; i <= ASYNC_SMALL; i++)
        CT_OK(utc_request_wait(&rs[i], NULL));
    return 0;
}

static int async_r(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    uint64_t v = 0;
    size_t got = 0;
    for (int i = 0; i < 3; i++) {
        v = 0;
        CT_OK(utc_conduit_read(c, &v, sizeof v, 0, &got));
        CT_CHECK(got == (i < 2 ? sizeof v : 0) && (i == 2 || v == 11), "message %d: %llu, %zu "
                 "bytes", i, (unsigned long long)v, got);
    }
    static unsigned char big[4 << 20];
    CT_OK(utc_conduit_read(c, big, sizeof big, 1, &got));
    CT_CHECK(got == sizeof big && ct_verify(big, sizeof big, 3), "large message (%zu bytes)",
             got);
    for (int i = 0; i < ASYNC_SMALL; i++) {
        CT_OK(utc_conduit_read(c, &v, sizeof v, 1 + (i & 1), &got));
        if (v != ct_mix((uint64_t)i)) {
            CT_CHECK(0, "small message %d out of order: %llx", i, (unsigned long long)v);
            return 0;
        }
    }
    return 0;
}

static void test_async_writes(void)
{
    ct_begin();
    ct_each_placement_run(1, async_w, 1, async_r);
    CT_END();
}

/* ---- the route's conduit destroyed, and a new one at the same address ---- */

static int one_write(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    int v = 4;
    CT_OK(utc_conduit_write(d, &v, sizeof v, 0));
    return 0;
}

static int one_read(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    int v = 0;
    CT_OK(utc_conduit_read(d, &v, sizeof v, 0, NULL));
    CT_CHECK(v == 4, "read %d", v);
    return 0;
}

static utc_conduit_t *stale;

static int write_stale(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    (void)d;
    int v = 4;
    CT_EXPECT(utc_conduit_write(stale, &v, sizeof v, 0), UTC_ERR_INVALID_HANDLE);
    return 0;
}

static int read_stale(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    (void)d;
    int v = 0;
    CT_EXPECT(utc_conduit_read(stale, &v, sizeof v, 0, NULL), UTC_ERR_INVALID_HANDLE);
    return 0;
}

static void destroyed_case(int ra, int rb, void *arg)
{
    (void)arg;
    utc_task_t *a = ct_task(&ct_ops_a, ra, 1), *b = ct_task(&ct_ops_b, rb, 1);
    utc_conduit_t *c;
    CU_ASSERT_EQUAL_FATAL(utc_conduit_create(a, b, NULL, &c), UTC_OK);
    ct_run2(a, one_write, c, b, one_read, c); /* the threads' routes: this conduit */
    CU_ASSERT_EQUAL(utc_conduit_destroy(c), UTC_OK);
    stale = c;
    ct_run2(a, write_stale, NULL, b, read_stale, NULL);
    /* a new conduit between the same tasks (its memory may be the old one's) */
    CU_ASSERT_EQUAL_FATAL(utc_conduit_create(a, b, NULL, &c), UTC_OK);
    ct_run2(a, one_write, c, b, one_read, c);
    ct_run2(a, one_write, c, b, one_read, c);
    CU_ASSERT_EQUAL(utc_conduit_destroy(c), UTC_OK);
    CU_ASSERT_EQUAL(utc_task_destroy(a), UTC_OK);
    CU_ASSERT_EQUAL(utc_task_destroy(b), UTC_OK);
}

static void test_destroyed(void)
{
    ct_begin();
    ct_each_placement(false, destroyed_case, NULL);
    CT_END();
}

/* ---- asynchronous reads: the express path's solo requests (conduits/async.c) ---- */

#define AREADS 64

static int aread_w(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    uint64_t v = 1;
    CT_OK(utc_conduit_write(c, &v, sizeof v, 0)); /* the reader's route */
    for (int i = 0; i < AREADS; i++) {
        v = ct_mix((uint64_t)i);
        CT_OK(utc_conduit_write(c, &v, sizeof v, 1 + (i & 1)));
    }
    char msg[100];
    ct_fill(msg, sizeof msg, 7);
    CT_OK(utc_conduit_write(c, msg, sizeof msg, 3)); /* read short first: truncated */
    v = 77;
    CT_OK(utc_conduit_write(c, &v, sizeof v, 4)); /* for a test loop */
    return 0;
}

static int aread_r(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    uint64_t v = 0, got_v[AREADS];
    size_t got = 0;
    CT_OK(utc_conduit_read(c, &v, sizeof v, 0, NULL)); /* sets the route */
    utc_request_t *r[AREADS];
    for (int i = 0; i < AREADS; i++) /* posted in order, some before their message */
        CT_OK(utc_conduit_iread(c, &got_v[i], sizeof got_v[i], 1 + (i & 1), &r[i]));
    for (int i = AREADS - 1; i >= 0; i--) { /* waited for in any order */
        utc_request_t *copy = r[i];
        CT_OK(utc_request_wait(&r[i], &got));
        CT_CHECK(r[i] == NULL && got == sizeof v, "read %d: %zu bytes", i, got);
        CT_EXPECT(utc_request_wait(&copy, NULL), UTC_ERR_INVALID_HANDLE); /* stale */
        CT_CHECK(has("stale"), "%s", utc_last_error());
    }
    for (int i = 0; i < AREADS; i++)
        CT_CHECK(got_v[i] == ct_mix((uint64_t)i), "read %d out of order", i);
    /* truncated: the message stays for the next read of its tag */
    char small[10], msg[100];
    utc_request_t *t;
    CT_OK(utc_conduit_iread(c, small, sizeof small, 3, &t));
    CT_EXPECT(utc_request_wait(&t, &got), UTC_ERR_TRUNCATE);
    CT_CHECK(got == sizeof msg && has("100 bytes"), "%zu: %s", got, utc_last_error());
    CT_OK(utc_conduit_iread(c, msg, sizeof msg, 3, &t));
    CT_OK(utc_request_wait(&t, &got));
    CT_CHECK(got == sizeof msg && ct_verify(msg, sizeof msg, 7), "kept message: %zu", got);
    /* tested until done */
    int done = 0;
    CT_OK(utc_conduit_iread(c, &v, sizeof v, 4, &t));
    while (!done)
        CT_OK(utc_request_test(&t, &done, &got));
    CT_CHECK(t == NULL && v == 77 && got == sizeof v, "tested read: %llu", (unsigned long long)v);
    /* canceled: no message of tag 9 ever comes */
    CT_OK(utc_conduit_iread(c, &v, sizeof v, 9, &t));
    CT_OK(utc_request_cancel(&t));
    CT_EXPECT(utc_request_wait(&t, NULL), UTC_ERR_CANCELED);
    CT_CHECK(has("canceled"), "%s", utc_last_error());
    return 0;
}

static void test_async_reads(void)
{
    ct_begin();
    ct_each_placement_run(1, aread_w, 1, aread_r);
    CT_END();
}

/* A solo read pending when its conduit is destroyed (ended by the destroy, waited for
 * afterwards by its thread), and one waited for by the main thread, not its task's. */
static utc_request_t *pending;
static uint64_t pending_v;

static int post_pending(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    uint64_t v = 0;
    CT_OK(utc_conduit_read(d, &v, sizeof v, 0, NULL)); /* sets the route */
    CT_OK(utc_conduit_iread(d, &pending_v, sizeof pending_v, 5, &pending));
    return 0;
}

static int wait_destroyed(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    (void)d;
    utc_request_t *copy = pending;
    CT_EXPECT(utc_request_wait(&pending, NULL), UTC_ERR_CANCELED);
    CT_CHECK(has("destroyed"), "%s", utc_last_error());
    CT_EXPECT(utc_request_wait(&copy, NULL), UTC_ERR_INVALID_HANDLE);
    return 0;
}

static int write_five(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    uint64_t v = 55;
    CT_OK(utc_conduit_write(d, &v, sizeof v, 5));
    return 0;
}

static void pending_case(int ra, int rb, void *arg)
{
    (void)arg;
    utc_task_t *a = ct_task(&ct_ops_a, ra, 1), *b = ct_task(&ct_ops_b, rb, 1);
    utc_conduit_t *c;
    /* destroyed under a pending read */
    CU_ASSERT_EQUAL_FATAL(utc_conduit_create(a, b, NULL, &c), UTC_OK);
    ct_run2(a, one_write, c, b, post_pending, c);
    CU_ASSERT_EQUAL(utc_conduit_destroy(c), UTC_OK);
    ct_run1(b, wait_destroyed, NULL);
    /* waited for by the main thread, tested first */
    CU_ASSERT_EQUAL_FATAL(utc_conduit_create(a, b, NULL, &c), UTC_OK);
    ct_run2(a, one_write, c, b, post_pending, c);
    if (utc_rank() == rb) {
        int done = 1;
        CU_ASSERT_EQUAL(utc_request_test(&pending, &done, NULL), UTC_OK);
        CU_ASSERT_EQUAL(done, 0); /* nothing written yet */
    }
    UTC_ASSERT_OK(utc_barrier()); /* (the write comes after the test) */
    ct_run1(a, write_five, c);
    if (utc_rank() == rb) {
        size_t got = 0;
        CU_ASSERT_EQUAL(utc_request_wait(&pending, &got), UTC_OK);
        CU_ASSERT(got == sizeof pending_v && pending_v == 55);
    }
    UTC_ASSERT_OK(utc_barrier());
    CU_ASSERT_EQUAL(utc_conduit_destroy(c), UTC_OK);
    CU_ASSERT_EQUAL(utc_task_destroy(a), UTC_OK);
    CU_ASSERT_EQUAL(utc_task_destroy(b), UTC_OK);
}

static void test_pending_reads(void)
{
    ct_begin();
    ct_each_placement(false, pending_case, NULL);
    CT_END();
}

/* ---- the other end failed: its status, not a hang (a read after a failure fails even
 * with messages left: test_conduit_lifetime) ---- */

static int fail_after_one(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    int v = 4;
    CT_OK(utc_conduit_write(d, &v, sizeof v, 0));
    CT_OK(utc_conduit_read(d, &v, sizeof v, 1, NULL)); /* the reader has it */
    return UTC_ERR_IO; /* this run fails */
}

static int read_then_peer_failed(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    int v = 0;
    CT_OK(utc_conduit_read(d, &v, sizeof v, 0, NULL)); /* sets the route */
    CT_OK(utc_conduit_write(d, &v, sizeof v, 1));
    /* blocked when the writer fails, or started after: released either way */
    utc_status_t rc = utc_conduit_read(d, &v, sizeof v, 0, NULL);
    CT_CHECK(rc == UTC_ERR_PEER_FAILED, "read after the writer failed: %d (%s): %s", rc,
             utc_status_string(rc), utc_last_error());
    CT_CHECK(has("failed"), "%s", utc_last_error());
    return 0;
}

static void failed_case(int ra, int rb, void *arg)
{
    (void)arg;
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, NULL);
    ct_pair_run_failing(&p, fail_after_one, UTC_ERR_IO, read_then_peer_failed);
    ct_pair_close(&p);
}

static void test_peer_failed(void)
{
    ct_begin();
    ct_each_placement(false, failed_case, NULL);
    CT_END();
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"misuse on a route already taken: the general path's errors", test_misuse_on_route},
        {"20,000 ping-pong rounds of 8 bytes", test_ping_pong},
        {"asynchronous writes: completed at once or queued, in order", test_async_writes},
        {"the route's conduit destroyed, then a new one", test_destroyed},
        {"asynchronous reads: in order, truncated, tested, canceled, stale after",
         test_async_reads},
        {"a read pending at its conduit's destroy, and one waited for by the main thread",
         test_pending_reads},
        {"the other end failed after a message: PEER_FAILED, no hang", test_peer_failed},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "conduit express path", cases);
}
