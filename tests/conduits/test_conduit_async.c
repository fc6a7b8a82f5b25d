/*
 * Asynchronous requests: iread/iwrite with utc_request_test / utc_request_wait; reads of
 * one tag matched in the order they were started whatever order they are waited in;
 * many writes in flight with a tiny ring (progress without the writer testing); large
 * messages; truncation reported at completion; blocking and asynchronous reads mixed;
 * in one process, a large read started first and waited for last while its writer waits
 * for its copy (the wait for the later read copies it).
 */
#include <unistd.h>

#include "conduit_test_util.h"

#define NREQ 10

static int order_w(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    usleep(20000); /* let the reads be posted first */
    for (int i = 0; i < NREQ; i++)
        CT_OK(utc_conduit_write(c, &i, sizeof i, 1));
    return 0;
}

static int order_r(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    int v[NREQ];
    utc_request_t *req[NREQ];
    for (int i = 0; i < NREQ; i++) {
        v[i] = -1;
        if (!CT_OK(utc_conduit_iread(c, &v[i], sizeof v[i], 1, &req[i])))
            return -1;
    }
    for (int i = NREQ - 1; i >= 0; i--) { /* wait in reverse */
        size_t got = 0;
        CT_OK(utc_request_wait(&req[i], &got));
        CT_CHECK(req[i] == NULL, "request %d not cleared", i);
        CT_CHECK(v[i] == i && got == sizeof(int), "read %d got %d (%zu bytes)", i, v[i], got);
    }
    return 0;
}

/* ---- many writes in flight, tiny ring: the reader's progress flushes them ---- */

#define NW 200

static int many_w(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    static int vals[NW];
    utc_request_t *req[NW];
    for (int i = 0; i < NW; i++) {
        vals[i] = i * 3;
        if (!CT_OK(utc_conduit_iwrite(c, &vals[i], sizeof vals[i], 2, &req[i])))
            return -1;
    }
    /* the reader reads them all without our help; then we collect the requests */
    int back = 0;
    CT_OK(utc_conduit_read(c, &back, sizeof back, 3, NULL));
    CT_CHECK(back == NW, "reader reported %d", back);
    /* every message has been read: each write completes by testing alone (between ranks
     * MPI may need a few tests to hand a send's completion back; in-process the first) */
    for (int i = 0; i < NW; i++) {
        int done = 0;
        double t0 = utc_wtime();
        while (CT_OK(utc_request_test(&req[i], &done, NULL)) && !done && utc_wtime() - t0 < 10)
            ;
        CT_CHECK(done == 1 && req[i] == NULL, "write %d not done after it was read", i);
    }
    return 0;
}

static int many_r(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    int n = 0;
    for (int i = 0; i < NW; i++) {
        int v = -1;
        CT_OK(utc_conduit_read(c, &v, sizeof v, 2, NULL));
        CT_CHECK(v == i * 3, "message %d is %d", i, v);
        n += v == i * 3;
    }
    CT_OK(utc_conduit_write(c, &n, sizeof n, 3));
    return 0;
}

/* ---- polling with test; large messages both ways ---- */

#define BIG (6 << 20)

typedef struct {
    utc_conduit_t *c;
    unsigned char *out, *in;
} big_t;

static int big_side(utc_ctx_t *ctx, void *d, int me)
{
    (void)ctx;
    big_t *k = d;
    ct_fill(k->out, BIG, 40 + me);
    utc_request_t *w, *r;
    if (!CT_OK(utc_conduit_iread(k->c, k->in, BIG, 4, &r)))
        return -1;
    if (!CT_OK(utc_conduit_iwrite(k->c, k->out, BIG, 4, &w)))
        return -1;
    /* both directions at once, each side polling both requests */
    int wdone = 0, rdone = 0, polls = 0;
    size_t got = 0;
    while (!(wdone && rdone)) {
        if (!wdone)
            CT_OK(utc_request_test(&w, &wdone, NULL));
        if (!rdone)
            CT_OK(utc_request_test(&r, &rdone, &got));
        if (++polls > 20000000) {
            CT_CHECK(0, "requests never completed");
            return -1;
        }
        if (polls > 1000)
            usleep(50);
    }
    CT_CHECK(got == BIG && ct_verify(k->in, BIG, 40 + !me), "large message (%zu bytes)", got);
    return 0;
}

static int big_a(utc_ctx_t *ctx, void *d) { return big_side(ctx, d, 0); }
static int big_b(utc_ctx_t *ctx, void *d) { return big_side(ctx, d, 1); }

/* ---- truncation reported at completion; blocking and async reads mixed ---- */

static int mix_w(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    char big[100];
    memset(big, 'x', sizeof big);
    CT_OK(utc_conduit_write(c, big, sizeof big, 5));
    for (int i = 1; i <= 2; i++)
        CT_OK(utc_conduit_write(c, &i, sizeof i, 6));
    return 0;
}

static int mix_r(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    char small[10], big[100];
    utc_request_t *r;
    size_t got = 0;
    CT_OK(utc_conduit_iread(c, small, sizeof small, 5, &r));
    CT_EXPECT(utc_request_wait(&r, &got), UTC_ERR_TRUNCATE);
    CT_CHECK(got == 100 && r == NULL, "truncated read reports %zu bytes", got);
    CT_OK(utc_conduit_read(c, big, sizeof big, 5, &got));
    CT_CHECK(got == 100 && big[0] == 'x' && big[99] == 'x', "message kept after truncation");
    /* an async read started first takes the first message; the blocking one the second */
    int v1 = 0, v2 = 0;
    CT_OK(utc_conduit_iread(c, &v1, sizeof v1, 6, &r));
    CT_OK(utc_conduit_read(c, &v2, sizeof v2, 6, NULL));
    CT_OK(utc_request_wait(&r, NULL));
    CT_CHECK(v1 == 1 && v2 == 2, "async read got %d, blocking read got %d", v1, v2);
    return 0;
}

/* A pair of one-thread tasks, a conduit with opts, fa and fb run with it as their data. */
typedef struct {
    const utc_conduit_options_t *opts;
    ct_fn_t fa, fb;
} case_t;

static void run_case(int ra, int rb, void *arg)
{
    const case_t *k = arg;
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, k->opts);
    ct_pair_run(&p, k->fa, k->fb);
    ct_pair_close(&p);
}

/* In-process, then between ranks where there are several. */
static void both_placements(case_t k)
{
    ct_begin();
    ct_each_placement(true, run_case, &k);
    CT_END();
}

static void big_case(int ra, int rb, void *arg)
{
    (void)arg;
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, NULL);
    big_t ka = {p.c, malloc(BIG), malloc(BIG)}, kb = {p.c, malloc(BIG), malloc(BIG)};
    ct_run2(p.a, big_a, &ka, p.b, big_b, &kb);
    free(ka.out), free(ka.in), free(kb.out), free(kb.in);
    ct_pair_close(&p);
}

static void test_order(void) { both_placements((case_t){NULL, order_w, order_r}); }

/* ---- a later read waited for first, behind a large one (in one process) ---- */

#define LATE_BIG ((size_t)1 << 20)

/* A blocking write of a large message (it waits for its reader's copy), then a small one
 * of another tag. */
static int late_w(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    unsigned char *b = malloc(LATE_BIG);
    if (!b)
        return -1;
    ct_fill(b, LATE_BIG, 41);
    CT_OK(utc_conduit_write(d, b, LATE_BIG, 0));
    int x = 7;
    CT_OK(utc_conduit_write(d, &x, sizeof x, 1));
    free(b);
    return 0;
}

/* The large read started first, the small one next; waited for in the other order (a
 * blocking read the second time). */
static int late_r(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    unsigned char *b = malloc(LATE_BIG);
    if (!b)
        return -1;
    for (int blocking = 0; blocking < 2; blocking++) {
        utc_request_t *big = NULL, *small = NULL;
        int x = 0;
        size_t got = 0;
        memset(b, 0, LATE_BIG);
        CT_OK(utc_conduit_iread(d, b, LATE_BIG, 0, &big));
        if (blocking) {
            CT_OK(utc_conduit_read(d, &x, sizeof x, 1, NULL));
        } else {
            CT_OK(utc_conduit_iread(d, &x, sizeof x, 1, &small));
            CT_OK(utc_request_wait(&small, NULL));
        }
        CT_OK(utc_request_wait(&big, &got));
        CT_CHECK(x == 7 && got == LATE_BIG && ct_verify(b, LATE_BIG, 41),
                 "round %d: small %d, large %zu bytes", blocking, x, got);
    }
    free(b);
    return 0;
}

static int late_w2(utc_ctx_t *ctx, void *d)
{
    return late_w(ctx, d) || late_w(ctx, d);
}

static void test_later_read_first(void)
{
    ct_begin();
    run_case(0, 0, &(case_t){NULL, late_w2, late_r});
    CT_END();
}

static void test_many_in_flight(void)
{
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.ring_slots = 4;
    both_placements((case_t){&o, many_w, many_r});
}

static void test_big_both_ways(void)
{
    ct_begin();
    ct_each_placement(true, big_case, NULL);
    CT_END();
}

static void test_truncate_and_mix(void) { both_placements((case_t){NULL, mix_w, mix_r}); }

static void test_bad_requests(void)
{
    size_t got;
    int done;
    utc_request_t *none = NULL;
    CU_ASSERT_EQUAL(utc_request_wait(NULL, &got), UTC_ERR_INVALID_ARG);
    CU_ASSERT_EQUAL(utc_request_wait(&none, &got), UTC_ERR_INVALID_ARG);
    CU_ASSERT_EQUAL(utc_request_test(&none, &done, &got), UTC_ERR_INVALID_ARG);
    uint64_t junk[32] = {0};
    utc_request_t *fake = (utc_request_t *)junk;
    CU_ASSERT_EQUAL(utc_request_wait(&fake, &got), UTC_ERR_INVALID_ARG);
    CU_ASSERT(strstr(utc_last_error(), "not a request") != NULL);
}

/* ---- one message per call: a sibling thread's second start of it is refused ---- */

static uint64_t dup_word = 0x5eed; /* the one buffer both writer threads name */

/* Two writer threads. Thread 0 starts the write; thread 1 then starts the very same one
 * (same buffer, size, tag and reader) while it is in flight: refused, nothing sent. Other
 * tags, or the same write once thread 0's completed, are new messages. */
static int dup_w(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    utc_request_t *r = NULL;
    if (ctx->local_id == 0)
        CT_OK(utc_conduit_iwrite(c, &dup_word, sizeof dup_word, 4, &r));
    CT_OK(utc_ctx_barrier_local(ctx));
    if (ctx->local_id == 1) {
        utc_request_t *twice = NULL;
        CT_EXPECT(utc_conduit_iwrite(c, &dup_word, sizeof dup_word, 4, &twice), UTC_ERR_STATE);
        CT_CHECK(strstr(utc_last_error(), "one message per call") != NULL, "message: %s",
                 utc_last_error());
        CT_CHECK(twice == NULL, "a refused iwrite gave a request");
        CT_OK(utc_conduit_iwrite(c, &dup_word, sizeof dup_word, 5, &r)); /* another tag */
    }
    CT_OK(utc_ctx_barrier_local(ctx)); /* thread 0's write stays in flight until here */
    CT_OK(utc_request_wait(&r, NULL));
    CT_OK(utc_ctx_barrier_local(ctx));
    if (ctx->local_id == 1) { /* thread 0's write is done: this one is a new message */
        CT_OK(utc_conduit_iwrite(c, &dup_word, sizeof dup_word, 4, &r));
        CT_OK(utc_request_wait(&r, NULL));
    }
    return 0;
}

/* Two reader threads: the same rule for reads into one buffer; then the messages. */
static uint64_t dup_in[3];

static int dup_r(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    uint64_t *v = dup_in; /* one buffer for both threads */
    utc_request_t *r = NULL;
    if (ctx->local_id == 0)
        CT_OK(utc_conduit_iread(c, &v[0], sizeof v[0], 4, &r));
    CT_OK(utc_ctx_barrier_local(ctx));
    if (ctx->local_id == 1) {
        utc_request_t *twice = NULL;
        CT_EXPECT(utc_conduit_iread(c, &v[0], sizeof v[0], 4, &twice), UTC_ERR_STATE);
        CT_CHECK(twice == NULL, "a refused iread gave a request");
        CT_OK(utc_conduit_iread(c, &v[1], sizeof v[1], 5, &r));
    }
    CT_OK(utc_ctx_barrier_local(ctx));
    CT_OK(utc_request_wait(&r, NULL));
    CT_OK(utc_ctx_barrier_local(ctx));
    if (ctx->local_id == 0) {
        CT_OK(utc_conduit_read_by(c, 0, &v[2], sizeof v[2], 4, NULL));
        CT_CHECK(v[0] == dup_word && v[2] == dup_word, "tag 4: %#llx %#llx",
                 (unsigned long long)v[0], (unsigned long long)v[2]);
        int found = 1;
        utc_msg_info_t info;
        utc_status_t rc = utc_conduit_iprobe(c, UTC_ANY_TAG, &found, &info);
        CT_CHECK(rc == UTC_OK && !found, "a fourth message (tag %d): sent twice?", info.tag);
    } else {
        CT_CHECK(v[1] == dup_word, "tag 5: %#llx", (unsigned long long)v[1]);
    }
    return 0;
}

static void dup_placement(int ra, int rb, void *arg)
{
    (void)arg;
    ct_pair_t p = ct_pair_open(ra, 2, rb, 2, NULL);
    memset(dup_in, 0, sizeof dup_in);
    ct_pair_run(&p, dup_w, dup_r);
    ct_pair_close(&p);
}

static void test_sibling_duplicate(void)
{
    ct_begin();
    ct_each_placement(false, dup_placement, NULL);
    CT_END();
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"reads matched in the order started", test_order},
        {"in one process: a later read waited for first, behind a large one",
         test_later_read_first},
        {"200 writes in flight through a 4-slot ring", test_many_in_flight},
        {"6 MiB both ways at once, polling with test", test_big_both_ways},
        {"truncation at completion; async and blocking reads mixed", test_truncate_and_mix},
        {"bad request handles", test_bad_requests},
        {"a sibling thread's second start of an async operation is refused",
         test_sibling_duplicate},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "conduit async", cases);
}
