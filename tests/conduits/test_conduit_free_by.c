/*
 * The forms of one named thread beside the free mode's named peer (write_to_by,
 * read_from_by, read_from_timeout_by, and read_timeout_by in single-entry mode), the owned
 * read from a named peer (read_owned_from), and the hints the runtime gives when a call is
 * made the wrong way: each names a function that exists (the one-thread form of the call,
 * the owned read of the conduit's mode).
 */
#include "conduit_test_util.h"

typedef struct {
    utc_conduit_t *c;
    int n;
} fb_t;

enum { TAG_NEXT = 1, TAG_SELF = 2, TAG_LATE = 3, TAG_NEVER = 9, TAG_OWNED = 7, TAG_ENTRY = 8 };

/* A free-mode pair: each task has `per` threads on every rank (entries 0 and n-1). */
static ct_pair_t free_pair(int per)
{
    int n = utc_test_nranks(), pa[12], pb[12];
    for (int r = 0; r < n; r++)
        for (int t = 0; t < per; t++) {
            pa[per * r + t] = r;
            pb[per * r + t] = n - 1 - r;
        }
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.mode = UTC_CONDUIT_FREE;
    return ct_pair_open_procs(pa, per * n, pb, per * n, &o);
}

/* ---- write_to_by / read_from_by / read_from_timeout_by ---- */

/* A's threads on rank r do different things: thread 0 writes to B on rank r+1, thread 1
 * to B on this rank (in-process), then thread 1 a late message to rank r+1. */
static int by_a(utc_ctx_t *ctx, void *d)
{
    fb_t *k = d;
    int r = ctx->world_rank, next = (r + 1) % k->n;
    int v = 100 + r;
    if (ctx->local_id == 0) {
        CT_OK(utc_conduit_write_to_by(k->c, 0, next, &v, sizeof v, TAG_NEXT));
    } else {
        v = 200 + r;
        CT_OK(utc_conduit_write_to_by(k->c, 1, r, &v, sizeof v, TAG_SELF));
    }
    /* every thread may call a _by form: only the named one writes */
    v = 300 + r;
    CT_OK(utc_conduit_write_to_by(k->c, 1, next, &v, sizeof v, TAG_LATE));
    /* a thread id the task does not have on this rank */
    CT_EXPECT(utc_conduit_write_to_by(k->c, 2, next, &v, sizeof v, TAG_LATE), UTC_ERR_OUT_OF_RANGE);
    CT_CHECK(strstr(utc_last_error(), "utc_conduit_write_to_by: thread 2 is out of range"), "%s",
             utc_last_error());
    return 0;
}

static int by_b(utc_ctx_t *ctx, void *d)
{
    fb_t *k = d;
    int s = ctx->world_rank, prev = (s - 1 + k->n) % k->n;
    int v = -1;
    size_t got = 99;
    if (ctx->local_id == 0) {
        CT_OK(utc_conduit_read_from_by(k->c, 0, prev, &v, sizeof v, TAG_NEXT, &got));
        CT_CHECK(v == 100 + prev && got == sizeof v, "from rank %d: %d (%zu bytes)", prev, v, got);
        /* nothing of this tag ever comes: a look that does not wait */
        CT_EXPECT(
            utc_conduit_read_from_timeout_by(k->c, 0, prev, &v, sizeof v, TAG_NEVER, &got, 0.0),
            UTC_ERR_TIMEOUT);
    } else {
        CT_OK(utc_conduit_read_from_by(k->c, 1, s, &v, sizeof v, TAG_SELF, &got));
        CT_CHECK(v == 200 + s && got == sizeof v, "in-process from rank %d: %d", s, v);
    }
    v = -1;
    got = 99;
    /* both threads call; thread 1 waits (30 s at most) for the late message */
    CT_OK(utc_conduit_read_from_timeout_by(k->c, 1, prev, &v, sizeof v, TAG_LATE, &got, 30.0));
    if (ctx->local_id == 1)
        CT_CHECK(v == 300 + prev && got == sizeof v, "late message from %d: %d", prev, v);
    else
        CT_CHECK(v == -1 && got == 0, "thread 0 is not the named one: %d, %zu", v, got);
    return 0;
}

static void test_free_by(void)
{
    ct_begin();
    ct_pair_t p = free_pair(2);
    fb_t k = {p.c, utc_test_nranks()};
    ct_run2(p.a, by_a, &k, p.b, by_b, &k);
    ct_pair_close(&p);
    CT_END();
}

/* ---- read_timeout_by (single-entry) ---- */

/* A writes tag 5 (thread 1) only once B has looked for it in vain and said so (tag 4) */
static int tb_a(utc_ctx_t *ctx, void *d)
{
    utc_conduit_t *c = d;
    int v = 0;
    size_t got;
    CT_OK(utc_conduit_read_by(c, 0, &v, sizeof v, 4, &got));
    utc_ctx_barrier_local(ctx);
    v = 43;
    CT_OK(utc_conduit_write_by(c, 1, &v, sizeof v, 5));
    return 0;
}

static int tb_b(utc_ctx_t *ctx, void *d)
{
    utc_conduit_t *c = d;
    int v = -1;
    size_t got = 99;
    /* nothing yet: thread 1 looks without waiting; thread 0 returns at once */
    utc_status_t rc = utc_conduit_read_timeout_by(c, 1, &v, sizeof v, 5, &got, 0.0);
    CT_CHECK(rc == (ctx->local_id == 1 ? UTC_ERR_TIMEOUT : UTC_OK), "thread %d: %d (%s)",
             ctx->local_id, rc, utc_last_error());
    utc_ctx_barrier_local(ctx);
    int go = 1;
    CT_OK(utc_conduit_write_by(c, 0, &go, sizeof go, 4));
    CT_OK(utc_conduit_read_timeout_by(c, 1, &v, sizeof v, 5, &got, 30.0));
    if (ctx->local_id == 1)
        CT_CHECK(v == 43 && got == sizeof v, "message %d (%zu bytes)", v, got);
    else
        CT_CHECK(got == 0, "thread 0 received %zu", got);
    CT_EXPECT(utc_conduit_read_timeout_by(c, -1, &v, sizeof v, 5, &got, 0.0), UTC_ERR_OUT_OF_RANGE);
    double nan = 0.0 / 0.0;
    CT_EXPECT(utc_conduit_read_timeout_by(c, 1, &v, sizeof v, 5, &got, nan), UTC_ERR_INVALID_ARG);
    /* naming a peer needs a free-mode conduit */
    CT_EXPECT(utc_conduit_read_from_by(c, 0, 0, &v, sizeof v, 5, &got), UTC_ERR_STATE);
    CT_EXPECT(utc_conduit_write_to_by(c, 0, 0, &v, sizeof v, 5), UTC_ERR_STATE);
    return 0;
}

static void place_timeout_by(int ra, int rb, void *arg)
{
    (void)arg;
    ct_pair_t p = ct_pair_open(ra, 2, rb, 2, NULL);
    ct_pair_run(&p, tb_a, tb_b);
    ct_pair_close(&p);
}

static void test_timeout_by(void)
{
    ct_begin();
    ct_each_placement(false, place_timeout_by, NULL);
    CT_END();
}

/* ---- read_owned_from ---- */

enum { OWNED_BASE = 5000 };

/* A on rank r: a message to B on rank r+1 (all threads call, thread 0 writes), and an
 * owned buffer to B's entry rank. */
static int ow_a(utc_ctx_t *ctx, void *d)
{
    fb_t *k = d;
    int r = ctx->world_rank, next = (r + 1) % k->n;
    static _Thread_local char msg[OWNED_BASE + 64];
    size_t n = OWNED_BASE + (size_t)r;
    ct_fill(msg, n, 70 + (uint64_t)r);
    CT_OK(utc_conduit_write_to(k->c, next, msg, n, TAG_OWNED));
    if (ctx->local_id == 0) {
        char *buf = utc_buf_alloc(n);
        CT_CHECK(buf != NULL, "utc_buf_alloc");
        ct_fill(buf, n, 80 + (uint64_t)r);
        /* owned writes go to the other task's entry rank; one thread writes (the task
         * has one thread per rank in this case) */
        CT_OK(utc_conduit_write_owned(k->c, buf, n, TAG_ENTRY));
    }
    return 0;
}

static int ow_b(utc_ctx_t *ctx, void *d)
{
    fb_t *k = d;
    int s = ctx->world_rank, prev = (s - 1 + k->n) % k->n;
    void *buf = NULL;
    size_t size = 0;
    CT_OK(utc_conduit_read_owned_from(k->c, prev, TAG_OWNED, &buf, &size));
    CT_CHECK(buf && size == OWNED_BASE + (size_t)prev && ct_verify(buf, size, 70 + (uint64_t)prev),
             "owned read from rank %d: %zu bytes", prev, size);
    utc_buf_free(buf);
    if (s == utc_task_entry_rank(ctx->task)) {
        /* every rank of A handed a buffer to this entry: read each by its rank, last first */
        for (int r = k->n - 1; r >= 0; r--) {
            buf = NULL;
            CT_OK(utc_conduit_read_owned_from(k->c, r, TAG_ENTRY, &buf, &size));
            CT_CHECK(buf && size == OWNED_BASE + (size_t)r &&
                         ct_verify(buf, size, 80 + (uint64_t)r),
                     "owned buffer of rank %d: %zu bytes", r, size);
            utc_buf_free(buf);
        }
    }
    CT_EXPECT(utc_conduit_read_owned_from(k->c, k->n, TAG_OWNED, &buf, &size),
              UTC_ERR_OUT_OF_RANGE);
    CT_EXPECT(utc_conduit_read_owned_from(k->c, prev, TAG_OWNED, NULL, &size), UTC_ERR_INVALID_ARG);
    return 0;
}

static void test_owned_from(void)
{
    ct_begin();
    ct_pair_t p = free_pair(1);
    fb_t k = {p.c, utc_test_nranks()};
    ct_run2(p.a, ow_a, &k, p.b, ow_b, &k);
    ct_pair_close(&p);
    CT_END();
}

static int owned_single_entry(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    void *buf;
    CT_EXPECT(utc_conduit_read_owned_from(d, 0, 1, &buf, NULL), UTC_ERR_STATE);
    CT_CHECK(strstr(utc_last_error(), "UTC_CONDUIT_FREE"), "%s", utc_last_error());
    return 0;
}

static void test_owned_from_single_entry(void)
{
    ct_begin();
    ct_pair_t p = ct_pair_open(0, 1, 0, 1, NULL);
    ct_pair_run(&p, ct_idle, owned_single_entry);
    ct_pair_close(&p);
    CT_END();
}

/* ---- the hints name functions that exist ---- */

/* Thread 1 of A leaves its run at once; thread 0 then makes all-threads calls, which can
 * only fail: the message names the call's one-thread form, or says it has none. */
static int lone_a(utc_ctx_t *ctx, void *d)
{
    fb_t *k = d;
    if (ctx->local_id != 0)
        return 0;
    int r = ctx->world_rank, v = 1;
    size_t got;
    CT_EXPECT(utc_conduit_write_to(k->c, r, &v, sizeof v, 1), UTC_ERR_DEADLOCK);
    CT_CHECK(strstr(utc_last_error(), "or name the one that calls with utc_conduit_write_to_by"),
             "%s", utc_last_error());
    CT_EXPECT(utc_conduit_read_from_timeout(k->c, r, &v, sizeof v, 1, &got, 0.0), UTC_ERR_DEADLOCK);
    CT_CHECK(strstr(utc_last_error(), "with utc_conduit_read_from_timeout_by "), "%s",
             utc_last_error());
    CT_EXPECT(utc_conduit_read_timeout(k->c, &v, sizeof v, 1, &got, 0.0), UTC_ERR_DEADLOCK);
    CT_CHECK(strstr(utc_last_error(), "with utc_conduit_read_timeout_by "), "%s", utc_last_error());
    void *buf;
    CT_EXPECT(utc_conduit_read_owned_from(k->c, r, 1, &buf, &got), UTC_ERR_DEADLOCK);
    CT_CHECK(strstr(utc_last_error(), "it has no form for one thread") &&
                 !strstr(utc_last_error(), "_by"),
             "%s", utc_last_error());
    return 0;
}

/* B on rank s: a message too large for the buffer, from its own rank: the hint names the
 * owned read of a free-mode conduit, which can name the peer. */
static int trunc_a(utc_ctx_t *ctx, void *d)
{
    fb_t *k = d;
    char big[64] = {0};
    CT_OK(utc_conduit_write_to(k->c, ctx->world_rank, big, sizeof big, 6));
    return 0;
}

static int trunc_b(utc_ctx_t *ctx, void *d)
{
    fb_t *k = d;
    char small[8];
    size_t got = 0;
    int s = ctx->world_rank;
    CT_EXPECT(utc_conduit_read_from(k->c, s, small, sizeof small, 6, &got), UTC_ERR_TRUNCATE);
    CT_CHECK(got == 64 && strstr(utc_last_error(), "or utc_conduit_read_owned_from, which"),
             "%zu: %s", got, utc_last_error());
    void *buf = NULL;
    CT_OK(utc_conduit_read_owned_from(k->c, s, 6, &buf, &got)); /* as the hint says */
    CT_CHECK(buf && got == 64, "owned read after the hint: %zu bytes", got);
    utc_buf_free(buf);
    return 0;
}

static void test_hints(void)
{
    ct_begin();
    /* A with two threads per rank, one of which leaves */
    int n = utc_test_nranks(), pa[6], pb[3];
    for (int r = 0; r < n; r++) {
        pa[2 * r] = pa[2 * r + 1] = r;
        pb[r] = r;
    }
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.mode = UTC_CONDUIT_FREE;
    ct_pair_t p = ct_pair_open_procs(pa, 2 * n, pb, n, &o);
    fb_t k = {p.c, n};
    ct_run2(p.a, lone_a, &k, p.b, ct_idle, &k);
    ct_pair_close(&p);

    p = free_pair(1);
    k.c = p.c;
    ct_run2(p.a, trunc_a, &k, p.b, trunc_b, &k);
    ct_pair_close(&p);
    CT_END();
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"free mode: write_to_by, read_from_by, read_from_timeout_by", test_free_by},
        {"single-entry: read_timeout_by; named peers refused", test_timeout_by},
        {"free mode: read_owned_from, by peer rank", test_owned_from},
        {"single-entry: read_owned_from refused", test_owned_from_single_entry},
        {"hints name the one-thread form and the owned read that exist", test_hints},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "conduit free-mode _by and owned forms", cases);
}
