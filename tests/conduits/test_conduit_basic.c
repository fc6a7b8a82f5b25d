/* Conduit basics: creation, transport choice, round trips of many sizes both ways,
 * the all-threads and by-thread forms, independent directions, read with a timeout,
 * ring options (inline threshold, a full ring). */
#include <unistd.h>

#include "conduit_test_util.h"

static const size_t sizes[] = {0, 1, 7, 8, 100, 4095, 4096, 4097, 65536, (1 << 20) + 3, 3 << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define MAXSZ (3 << 20)

typedef struct {
    utc_conduit_t *c;
    unsigned char *buf; /* one per task: its threads share it */
    int tag;
} rt_t;

/* A: write each size, read the echo, check it. */
static int rt_a(utc_ctx_t *ctx, void *d)
{
    rt_t *r = d;
    for (size_t i = 0; i < NSIZES; i++) {
        if (ctx->local_id == 0)
            ct_fill(r->buf, sizes[i], 100 + i);
        utc_ctx_barrier_local(ctx);
        if (!CT_OK(utc_conduit_write(r->c, r->buf, sizes[i], r->tag)))
            return -1;
        size_t got = 12345;
        if (!CT_OK(utc_conduit_read(r->c, r->buf, MAXSZ, r->tag + 1, &got)))
            return -1;
        CT_CHECK(got == sizes[i], "echo of size %zu came back as %zu", sizes[i], got);
        if (ctx->local_id == 0)
            CT_CHECK(ct_verify(r->buf, sizes[i], 200 + i), "echo of size %zu corrupt", sizes[i]);
    }
    return 0;
}

/* B: read each message, check it, send back a different pattern of the same size. */
static int rt_b(utc_ctx_t *ctx, void *d)
{
    rt_t *r = d;
    for (size_t i = 0; i < NSIZES; i++) {
        size_t got = 12345;
        if (!CT_OK(utc_conduit_read(r->c, r->buf, MAXSZ, r->tag, &got)))
            return -1;
        CT_CHECK(got == sizes[i], "message of size %zu arrived as %zu", sizes[i], got);
        if (ctx->local_id == 0) {
            CT_CHECK(ct_verify(r->buf, got, 100 + i), "message of size %zu corrupt", sizes[i]);
            ct_fill(r->buf, sizes[i], 200 + i);
        }
        utc_ctx_barrier_local(ctx);
        if (!CT_OK(utc_conduit_write(r->c, r->buf, sizes[i], r->tag + 1)))
            return -1;
    }
    return 0;
}

static void round_trip(int ra, int rb, int threads, const utc_conduit_options_t *opts,
                       utc_conduit_transport_t expect)
{
    ct_begin();
    ct_pair_t p = ct_pair_open(ra, threads, rb, threads, opts);
    CU_ASSERT_EQUAL(utc_conduit_transport(p.c), expect);
    rt_t da = {p.c, malloc(MAXSZ), 10}, db = {p.c, malloc(MAXSZ), 10};
    ct_run2(p.a, rt_a, &da, p.b, rt_b, &db);
    free(da.buf);
    free(db.buf);
    ct_pair_close(&p);
    CT_END();
}

static void test_create_destroy(void)
{
    utc_task_t *a = ct_task(&ct_ops_a, 0, 1), *b = ct_task(&ct_ops_b, 0, 1);
    utc_conduit_t *c1, *c2;
    UTC_ASSERT_OK(utc_conduit_create(a, b, NULL, &c1));
    UTC_ASSERT_OK(utc_conduit_create(b, a, NULL, &c2));
    CU_ASSERT_EQUAL(utc_conduit_transport(c1), UTC_CONDUIT_INPROC);
    int id = utc_conduit_id(c1), lo, hi;
    CU_ASSERT(id >= 0);
    CU_ASSERT_EQUAL(utc_conduit_id(c2), id + 1);
    MPI_Allreduce(&id, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&id, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CU_ASSERT_EQUAL(lo, hi); /* ids agree on all ranks */
    UTC_ASSERT_OK(utc_conduit_destroy(c1));
    UTC_ASSERT_OK(utc_conduit_destroy(c2));
    if (utc_test_nranks() >= 2) {
        utc_task_t *r = ct_task(&ct_ops_c, utc_test_nranks() - 1, 1);
        UTC_ASSERT_OK(utc_conduit_create(a, r, NULL, &c1));
        CU_ASSERT_EQUAL(utc_conduit_transport(c1), utc_test_transport(0, utc_test_nranks() - 1));
        UTC_ASSERT_OK(utc_conduit_destroy(c1));
        UTC_ASSERT_OK(utc_task_destroy(r));
    }
    UTC_ASSERT_OK(utc_task_destroy(a));
    UTC_ASSERT_OK(utc_task_destroy(b));
}

static void test_round_trip_inproc(void) { round_trip(0, 0, 1, NULL, UTC_CONDUIT_INPROC); }

static void test_round_trip_remote(void)
{
    int ra, rb;
    ct_pair_ranks(&ra, &rb);
    round_trip(ra, rb, 1, NULL, utc_test_transport(ra, rb));
}

static void test_round_trip_threads(void)
{
    int ra, rb;
    ct_pair_ranks(&ra, &rb);
    round_trip(0, 0, 3, NULL, UTC_CONDUIT_INPROC);
    round_trip(ra, rb, 3, NULL, utc_test_transport(ra, rb));
}

static void test_round_trip_options(void)
{
    /* everything through the reader-copies path, then big inline slots in a tiny ring */
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.inline_max = 0;
    round_trip(0, 0, 2, &o, UTC_CONDUIT_INPROC);
    o.inline_max = 1 << 20;
    o.ring_slots = 2;
    round_trip(0, 0, 2, &o, UTC_CONDUIT_INPROC);
}

/* ---- every thread calls, one transfers: all see the same result ---- */

typedef struct {
    utc_conduit_t *c;
    char buf[64];
    size_t got[8];
} coll_t;

static int coll_w(utc_ctx_t *ctx, void *d)
{
    coll_t *k = d;
    if (ctx->local_id == 0)
        strcpy(k->buf, "hello conduit");
    utc_ctx_barrier_local(ctx);
    for (int i = 0; i < 50; i++)
        CT_OK(utc_conduit_write(k->c, k->buf, 14 + (size_t)i % 3, 3));
    return 0;
}

static int coll_r(utc_ctx_t *ctx, void *d)
{
    coll_t *k = d;
    for (int i = 0; i < 50; i++) {
        size_t got = 999;
        CT_OK(utc_conduit_read(k->c, k->buf, sizeof k->buf, 3, &got));
        CT_CHECK(got == 14 + (size_t)i % 3, "thread %d got %zu", ctx->local_id, got);
        CT_CHECK(strcmp(k->buf, "hello conduit") == 0, "thread %d sees '%s'", ctx->local_id,
                 k->buf);
        utc_ctx_barrier_local(ctx); /* before anyone reads into buf again */
    }
    return 0;
}

static void all_threads_at(int ra, int rb, void *arg)
{
    (void)arg;
    ct_pair_t p = ct_pair_open(ra, 4, rb, 3, NULL);
    coll_t ka = {.c = p.c}, kb = {.c = p.c};
    ct_run2(p.a, coll_w, &ka, p.b, coll_r, &kb);
    ct_pair_close(&p);
}

static void test_all_threads_same_result(void)
{
    ct_begin();
    ct_each_placement(false, all_threads_at, NULL);
    CT_END();
}

/* ---- by-thread forms ---- */

static int by_w(utc_ctx_t *ctx, void *d)
{
    utc_conduit_t *c = d;
    int v = 1000 + ctx->local_id;
    /* every thread calls; only thread 1 sends (its own value) */
    for (int i = 0; i < 20; i++)
        CT_OK(utc_conduit_write_by(c, 1, &v, sizeof v, 4));
    return 0;
}

static int by_r(utc_ctx_t *ctx, void *d)
{
    utc_conduit_t *c = d;
    for (int i = 0; i < 20; i++) {
        int v = -1;
        size_t got = 77;
        CT_OK(utc_conduit_read_by(c, 2, &v, sizeof v, 4, &got));
        if (ctx->local_id == 2) {
            CT_CHECK(got == sizeof v && v == 1001, "reader got %d (%zu bytes)", v, got);
        } else {
            CT_CHECK(got == 0 && v == -1, "thread %d was not named but got %zu bytes",
                     ctx->local_id, got);
        }
    }
    return 0;
}

static void test_by_thread(void)
{
    ct_begin();
    int ra, rb;
    ct_pair_ranks(&ra, &rb);
    ct_pair_t p = ct_pair_open(ra, 3, rb, 3, NULL);
    ct_pair_run(&p, by_w, by_r);
    ct_pair_close(&p);
    CT_END();
}

/* ---- the two directions are independent ---- */

#define BIG (8 << 20)

typedef struct {
    utc_conduit_t *c;
    unsigned char *big;
} dir_t;

/* A: thread 0 writes a large message forward, which blocks until B reads it at the very
 * end; meanwhile thread 1 exchanges 200 messages backward with B's thread 1. */
static int dir_a(utc_ctx_t *ctx, void *d)
{
    dir_t *k = d;
    if (ctx->local_id == 0) {
        ct_fill(k->big, BIG, 5);
        CT_OK(utc_conduit_write_by(k->c, 0, k->big, BIG, 1));
    } else {
        for (int i = 0; i < 200; i++) {
            int v = -1;
            CT_OK(utc_conduit_read_by(k->c, 1, &v, sizeof v, 2, NULL));
            CT_CHECK(v == i, "backward message %d is %d", i, v);
        }
        int done = 1;
        CT_OK(utc_conduit_write_by(k->c, 1, &done, sizeof done, 3));
    }
    return 0;
}

static int dir_b(utc_ctx_t *ctx, void *d)
{
    dir_t *k = d;
    if (ctx->local_id == 1) {
        for (int i = 0; i < 200; i++)
            CT_OK(utc_conduit_write_by(k->c, 1, &i, sizeof i, 2));
    } else {
        int done = 0;
        CT_OK(utc_conduit_read_by(k->c, 0, &done, sizeof done, 3, NULL));
        CT_CHECK(done == 1, "handshake %d", done);
        size_t got = 0;
        CT_OK(utc_conduit_read_by(k->c, 0, k->big, BIG, 1, &got));
        CT_CHECK(got == BIG && ct_verify(k->big, BIG, 5), "large forward message (%zu bytes)",
                 got);
    }
    return 0;
}

static void directions_at(int ra, int rb, void *arg)
{
    (void)arg;
    ct_pair_t p = ct_pair_open(ra, 2, rb, 2, NULL);
    dir_t ka = {p.c, malloc(BIG)}, kb = {p.c, malloc(BIG)};
    ct_run2(p.a, dir_a, &ka, p.b, dir_b, &kb);
    free(ka.big);
    free(kb.big);
    ct_pair_close(&p);
}

static void test_directions_independent(void)
{
    ct_begin();
    ct_each_placement(false, directions_at, NULL);
    CT_END();
}

/* ---- read with a timeout ---- */

static int to_w(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    int v = 6;
    CT_OK(utc_conduit_write(c, &v, sizeof v, 6)); /* there when the reader looks */
    usleep(500000);
    v = 5;
    CT_OK(utc_conduit_write(c, &v, sizeof v, 5));
    return 0;
}

typedef struct {
    utc_conduit_t *c;
    int v; /* shared by the reader's threads: thread 0 receives into it */
} to_t;

static int to_r(utc_ctx_t *ctx, void *d)
{
    to_t *k = d;
    size_t got = 0;
    double t0 = utc_wtime();
    CT_EXPECT(utc_conduit_read_timeout(k->c, &k->v, sizeof k->v, 5, &got, 0.2), UTC_ERR_TIMEOUT);
    double dt = utc_wtime() - t0;
    CT_CHECK(dt >= 0.15 && dt < 2.0, "timed out after %.3f s", dt); /* loose: busy machines */
    CT_CHECK(strstr(utc_last_error(), "within") != NULL, "message: %s", utc_last_error());
    /* tag 6 is there (or about to be): a zero timeout still finds it; every thread gets
     * the same status, so they all retry together */
    int tries = 0;
    utc_status_t rc;
    while ((rc = utc_conduit_read_timeout(k->c, &k->v, sizeof k->v, 6, &got, 0)) ==
               UTC_ERR_TIMEOUT && tries++ < 1000)
        usleep(1000);
    CT_CHECK(rc == UTC_OK && k->v == 6, "zero-timeout read: %d, v=%d (thread %d)", rc, k->v,
             ctx->local_id);
    utc_ctx_barrier_local(ctx);
    /* nothing was lost by the timed-out read: tag 5 arrives */
    CT_OK(utc_conduit_read_timeout(k->c, &k->v, sizeof k->v, 5, &got, 10.0));
    CT_CHECK(k->v == 5 && got == sizeof k->v, "late message %d (%zu bytes)", k->v, got);
    return 0;
}

static void read_timeout_at(int ra, int rb, void *arg)
{
    (void)arg;
    ct_pair_t p = ct_pair_open(ra, 1, rb, 2, NULL);
    to_t k = {p.c, 0};
    ct_run2(p.a, to_w, p.c, p.b, to_r, &k);
    ct_pair_close(&p);
}

static void test_read_timeout(void)
{
    ct_begin();
    ct_each_placement(false, read_timeout_at, NULL);
    CT_END();
}

/* ---- a full ring: writes wait in order, nothing is lost ---- */

static int full_w(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    char msg[100];
    for (int i = 0; i < 500; i++) {
        size_t n = (size_t)snprintf(msg, sizeof msg, "message %d", i) + 1;
        CT_OK(utc_conduit_write(c, msg, n, 9));
    }
    return 0;
}

static int full_r(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    usleep(100000); /* let the writer fill the ring and block */
    char msg[100], want[100];
    for (int i = 0; i < 500; i++) {
        size_t got = 0;
        CT_OK(utc_conduit_read(c, msg, sizeof msg, 9, &got));
        snprintf(want, sizeof want, "message %d", i);
        CT_CHECK(strcmp(msg, want) == 0 && got == strlen(want) + 1, "got '%s', want '%s'", msg,
                 want);
    }
    return 0;
}

static void test_full_ring(void)
{
    ct_begin();
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.ring_slots = 4;
    ct_pair_t p = ct_pair_open(0, 1, 0, 1, &o);
    ct_pair_run(&p, full_w, full_r);
    ct_pair_close(&p);
    CT_END();
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"create, destroy, transport choice, ids", test_create_destroy},
        {"round trip in-process, 0 B to 3 MiB", test_round_trip_inproc},
        {"round trip between ranks, 0 B to 3 MiB", test_round_trip_remote},
        {"round trip with 3-thread tasks", test_round_trip_threads},
        {"round trip with inline_max 0 and 1 MiB", test_round_trip_options},
        {"every thread calls, all see one result", test_all_threads_same_result},
        {"write_by / read_by", test_by_thread},
        {"directions are independent", test_directions_independent},
        {"read with a timeout", test_read_timeout},
        {"full ring: writers wait, order kept", test_full_ring},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "conduit basic", cases);
}
