/*
 * The node-local transport (conduits/node/): conduits between two ranks of one host.
 * Run with the argument `cma` (UTC_NODE_CMA=1: large messages by cross-memory attach where
 * the kernel allows it) and `pipelined` (UTC_NODE_CMA=0: large messages pipelined through
 * the shared ring), at 2 and 3 ranks (ranks 0 and 1, or 1 and 2 with rank 0 a bystander):
 *
 * - messages of 0 B to 8 MiB arrive whole, in order, read as they come and read after they
 *   all came (queued), by plain, owned and any-tag reads;
 * - a large message that does not fit its read stays first in line (UTC_ERR_TRUNCATE),
 *   then a read that fits takes it; probes report it; its writer does not wait for the
 *   retry (the next message comes first);
 * - a burst of unread messages far larger than the first ring (64 KiB) is taken while the
 *   reader sleeps (the ring grows), then read in order;
 * - 10,000 node-local conduits, one message each way: resident memory grows by less than
 *   200 MB per rank (the times and memory are printed);
 * - at 3 ranks, a cycle of full rings: each rank writes 3 MiB to the next before it reads
 *   from the one before (a waiter takes in every peer's records, as MPI would);
 * - a large write nobody reads ends with UTC_OK when the reader's rank destroys the
 *   conduit; a pipelined message its writer's destroy cuts short, queued before any read,
 *   is not read as whole.
 *
 * With the argument `refused` (or `refused_shared`), one case alone: the node transport's
 * set-up is refused on one rank (a file-size limit below its first segment's size: the
 * kernel refuses ftruncate); the first conduit between ranks of the host (a plain one, or
 * a shared one) then uses MPI on every rank, and so do the later ones, even asked for
 * node (UTC_CONDUIT_NODE); their messages go.
 *
 * With the argument `writer_finalizes`, one program, not a CUnit suite: a writer sends an
 * 800 KiB burst (the ring grows twice), closes and its rank goes on into utc_finalize at
 * once, while the reader sleeps; then the reader takes every message, in order (the
 * writer's grown rings outlive its rank's utc_finalize until every rank is in it).
 *
 * With one rank, or when the ranks are on different hosts, there is nothing node-local to
 * test: the cases say so and pass.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "conduit_test_util.h"

static const size_t sizes[] = {0,       1,      8,         1000,      16384,   16385,
                               65536,   100000, (size_t)1 << 20, ((size_t)3 << 20) + 7,
                               (size_t)8 << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define MAXSZ ((size_t)8 << 20)

static double now_s(void)
{
    struct timespec ts; /* CLOCK_MONOTONIC: one clock for every process of the host */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Ranks for a node-local pair, or false (with a note) when there are none. */
static bool node_ranks(int *ra, int *rb)
{
    if (!ct_remote_ranks(ra, rb))
        return false;
    if (utc_test_transport(*ra, *rb) != UTC_CONDUIT_NODE) {
        printf("\n    ranks %d and %d are not node-local here (other hosts, or "
               "UTC_TRANSPORT=mpi): nothing to test", *ra, *rb);
        return false;
    }
    return true;
}

/* ---- all sizes ---- */

static int sizes_writer(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    unsigned char *buf = malloc(MAXSZ);
    if (!buf)
        return -1;
    /* as they come: one at a time, each answered */
    for (size_t i = 0; i < NSIZES; i++) {
        ct_fill(buf, sizes[i], 100 + i);
        CT_OK(utc_conduit_write(c, buf, sizes[i], 1));
        size_t got = 0;
        CT_OK(utc_conduit_read(c, buf, 8, 2, &got));
    }
    /* queued: all sent at once, each on its own tag, from buffers that stay valid */
    unsigned char *bufs[NSIZES];
    utc_request_t *req[NSIZES];
    for (size_t i = 0; i < NSIZES; i++) {
        bufs[i] = malloc(sizes[i] ? sizes[i] : 1);
        ct_fill(bufs[i], sizes[i], 200 + i);
        CT_OK(utc_conduit_iwrite(c, bufs[i], sizes[i], 10 + (int)i, &req[i]));
    }
    for (size_t i = 0; i < NSIZES; i++) {
        CT_OK(utc_request_wait(&req[i], NULL));
        free(bufs[i]);
    }
    /* owned writes, read by owned reads and by any-tag reads */
    for (size_t i = 0; i < NSIZES; i++) {
        void *ob = utc_buf_alloc(sizes[i] ? sizes[i] : 1);
        ct_fill(ob, sizes[i], 300 + i);
        CT_OK(utc_conduit_write_owned(c, ob, sizes[i], 30 + (int)i));
    }
    for (size_t i = 0; i < NSIZES; i++) {
        ct_fill(buf, sizes[i], 400 + i);
        CT_OK(utc_conduit_write(c, buf, sizes[i], 50 + (int)(i % 3)));
    }
    free(buf);
    return 0;
}

static int sizes_reader(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    unsigned char *buf = malloc(MAXSZ);
    if (!buf)
        return -1;
    for (size_t i = 0; i < NSIZES; i++) {
        size_t got = 0;
        CT_OK(utc_conduit_read(c, buf, MAXSZ, 1, &got));
        CT_CHECK(got == sizes[i] && ct_verify(buf, got, 100 + i), "size %zu: got %zu or wrong "
                 "contents", sizes[i], got);
        CT_OK(utc_conduit_write(c, buf, 8, 2));
    }
    sleep_s(0.3); /* let them all come and queue */
    for (size_t k = 0; k < NSIZES; k++) {
        size_t i = NSIZES - 1 - k; /* the other order: each waits in its tag's queue */
        size_t got = 0;
        CT_OK(utc_conduit_read(c, buf, sizes[i], 10 + (int)i, &got));
        CT_CHECK(got == sizes[i] && ct_verify(buf, got, 200 + i), "queued size %zu: got %zu or "
                 "wrong contents", sizes[i], got);
    }
    for (size_t i = 0; i < NSIZES; i++) {
        void *ob = NULL;
        size_t got = 0;
        if (!CT_OK(utc_conduit_read_owned(c, 30 + (int)i, &ob, &got)))
            continue;
        CT_CHECK(got == sizes[i] && ct_verify(ob, got, 300 + i), "owned size %zu: got %zu",
                 sizes[i], got);
        utc_buf_free(ob);
    }
    for (size_t i = 0; i < NSIZES; i++) {
        utc_msg_info_t info = {0};
        CT_OK(utc_conduit_read_any(c, buf, MAXSZ, &info));
        CT_CHECK(info.size == sizes[i] && info.tag == 50 + (int)(i % 3) &&
                     ct_verify(buf, info.size, 400 + i),
                 "any-tag read %zu: size %zu tag %d", i, info.size, info.tag);
    }
    free(buf);
    return 0;
}

/* One case on a one-thread pair between two ranks of this host (none: nothing to do):
 * open it, check it is node-local when `check_node`, run fa and fb, close it. */
static void node_pair_case(ct_fn_t fa, ct_fn_t fb, bool check_node)
{
    int ra, rb;
    if (!node_ranks(&ra, &rb))
        return;
    ct_begin();
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, NULL);
    if (check_node)
        CU_ASSERT_EQUAL(utc_conduit_transport(p.c), UTC_CONDUIT_NODE);
    ct_pair_run(&p, fa, fb);
    ct_pair_close(&p);
    CT_END();
}

static void test_sizes(void) { node_pair_case(sizes_writer, sizes_reader, true); }

/* ---- truncation ---- */

#define BIG ((size_t)1 << 20)

static int trunc_writer(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    unsigned char *buf = malloc(BIG);
    ct_fill(buf, BIG, 7);
    CT_OK(utc_conduit_write(d, buf, BIG, 5));
    ct_fill(buf, 100, 8);
    CT_OK(utc_conduit_write(d, buf, 100, 5));
    free(buf);
    return 0;
}

static int trunc_reader(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    unsigned char small[1024];
    size_t got = 0;
    CT_EXPECT(utc_conduit_read(d, small, sizeof small, 5, &got), UTC_ERR_TRUNCATE);
    CT_CHECK(got == BIG, "truncated read reports %zu bytes", got);
    utc_msg_info_t info = {0};
    CT_OK(utc_conduit_probe(d, 5, &info));
    CT_CHECK(info.size == BIG && info.tag == 5, "probe: %zu bytes, tag %d", info.size, info.tag);
    CT_EXPECT(utc_conduit_read(d, small, sizeof small, 5, &got), UTC_ERR_TRUNCATE);
    void *ob = NULL;
    if (CT_OK(utc_conduit_read_owned(d, 5, &ob, &got))) {
        CT_CHECK(got == BIG && ct_verify(ob, got, 7), "the large message, after truncation");
        utc_buf_free(ob);
    }
    CT_OK(utc_conduit_read(d, small, sizeof small, 5, &got));
    CT_CHECK(got == 100 && ct_verify(small, got, 8), "the next message");
    return 0;
}

static void test_truncate(void) { node_pair_case(trunc_writer, trunc_reader, false); }

/* The writer of a large message refused by a too-small read goes on before the retry: its
 * write returns (the message is kept aside) and its next message comes. By cross-memory
 * attach the write used to wait for the retry, and the reader for the next message. */
static int aside_writer(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    unsigned char *buf = malloc(BIG);
    ct_fill(buf, BIG, 11);
    CT_OK(utc_conduit_write(d, buf, BIG, 1));
    ct_fill(buf, BIG, 12); /* the buffer is the writer's again */
    uint32_t x = 42;
    CT_OK(utc_conduit_write(d, &x, sizeof x, 2));
    free(buf);
    return 0;
}

static int aside_reader(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    unsigned char small[16];
    size_t got = 0;
    CT_EXPECT(utc_conduit_read(d, small, sizeof small, 1, &got), UTC_ERR_TRUNCATE);
    CT_CHECK(got == BIG, "truncated read reports %zu bytes", got);
    uint32_t x = 0;
    utc_status_t rc = utc_conduit_read_timeout(d, &x, sizeof x, 2, &got, 10.0);
    CT_CHECK(rc == UTC_OK && x == 42,
             "the message after a refused one: %d (%s): the writer waits for the retry", rc,
             utc_status_string(rc));
    unsigned char *buf = malloc(BIG);
    CT_OK(utc_conduit_read(d, buf, BIG, 1, &got));
    CT_CHECK(got == BIG && ct_verify(buf, got, 11), "the refused message, at the retry");
    if (rc != UTC_OK) /* the retry let the writer go on */
        CT_OK(utc_conduit_read(d, &x, sizeof x, 2, &got));
    free(buf);
    return 0;
}

static void test_truncate_aside(void)
{
    node_pair_case(aside_writer, aside_reader, false);
}

/* ---- growth ---- */

/* 800 KiB: more than the first two rings (64 and 256 KiB), under the largest (1 MiB) */
#define BURST 800
#define BURST_LEN 1024

static int burst_writer(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    unsigned char buf[BURST_LEN];
    for (int i = 0; i < BURST; i++) {
        ct_fill(buf, BURST_LEN, (uint64_t)i);
        CT_OK(utc_conduit_write(d, buf, BURST_LEN, 1));
    }
    double done = now_s();
    CT_OK(utc_conduit_write(d, &done, sizeof done, 2));
    return 0;
}

static int burst_reader(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    sleep_s(1.0); /* nothing on this rank takes records meanwhile */
    double start = now_s(), done = 0;
    CT_OK(utc_conduit_read(d, &done, sizeof done, 2, NULL));
    CT_CHECK(done > 0 && done < start, "the writer finished its %d KiB burst %.3f s after the "
             "reader woke: the ring did not take it", BURST * BURST_LEN / 1024, done - start);
    unsigned char buf[BURST_LEN];
    for (int i = 0; i < BURST; i++) {
        size_t got = 0;
        CT_OK(utc_conduit_read(d, buf, sizeof buf, 1, &got));
        if (got != BURST_LEN || !ct_verify(buf, got, (uint64_t)i)) {
            CT_CHECK(false, "burst message %d out of order or wrong", i);
            break;
        }
    }
    return 0;
}

static void test_growth(void) { node_pair_case(burst_writer, burst_reader, false); }

/* ---- 10,000 conduits ---- */

#define NCONDUITS 10000
#define RSS_BOUND ((long)200 << 20)

typedef struct {
    utc_conduit_t **c;
    int n;
} many_t;

static int many_src(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    many_t *m = d;
    for (int i = 0; i < m->n; i++)
        if (!CT_OK(utc_conduit_write(m->c[i], &i, sizeof i, 1)))
            return -1;
    for (int i = 0; i < m->n; i++) {
        int v = -1;
        if (!CT_OK(utc_conduit_read(m->c[i], &v, sizeof v, 2, NULL)))
            return -1;
        CT_CHECK(v == -i, "conduit %d: answer %d", i, v);
    }
    return 0;
}

static int many_dst(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    many_t *m = d;
    for (int i = 0; i < m->n; i++) {
        int v = -1;
        if (!CT_OK(utc_conduit_read(m->c[i], &v, sizeof v, 1, NULL)))
            return -1;
        CT_CHECK(v == i, "conduit %d: message %d", i, v);
        v = -i;
        if (!CT_OK(utc_conduit_write(m->c[i], &v, sizeof v, 2)))
            return -1;
    }
    return 0;
}

static void test_many(void)
{
    int ra, rb;
    if (!node_ranks(&ra, &rb))
        return;
    ct_begin();
    utc_task_t *a = ct_task(&ct_ops_a, ra, 1), *b = ct_task(&ct_ops_b, rb, 1);
    utc_conduit_t **c = calloc(NCONDUITS, sizeof *c);
    CU_ASSERT_FATAL(c != NULL);
    long rss0 = utc_test_rss_bytes();
    double t0 = utc_wtime();
    int made = 0;
    for (; made < NCONDUITS; made++) {
        utc_status_t rc = utc_conduit_create(a, b, NULL, &c[made]);
        if (rc != UTC_OK) {
            utc_test_report_(__FILE__, __LINE__, "utc_conduit_create", rc);
            break;
        }
    }
    CU_ASSERT_EQUAL(made, NCONDUITS);
    CU_ASSERT(made == 0 || utc_conduit_transport(c[0]) == UTC_CONDUIT_NODE);
    double t1 = utc_wtime();
    many_t m = {c, made};
    ct_run2(a, many_src, &m, b, many_dst, &m);
    double t2 = utc_wtime();
    long rss1 = utc_test_rss_bytes();
    for (int i = 0; i < made; i++)
        UTC_ASSERT_OK(utc_conduit_destroy(c[i]));
    double t3 = utc_wtime();
    long grown = rss1 - rss0;
    printf("\n    rank %d: %d node-local conduits: create %.3f s, one message each way %.3f s, "
           "destroy %.3f s; resident memory +%.1f MB (VmRSS %.1f MB) while alive",
           utc_rank(), made, t1 - t0, t2 - t1, t3 - t2, grown / 1e6, rss1 / 1e6);
    CU_ASSERT(rss0 > 0 && rss1 > 0);
    CU_ASSERT(grown < RSS_BOUND);
    free(c);
    UTC_ASSERT_OK(utc_task_destroy(a));
    UTC_ASSERT_OK(utc_task_destroy(b));
    CT_END();
}

/* ---- the choice ---- */

static void test_env(void)
{
    utc_task_t *a = ct_task(&ct_ops_a, 0, 1), *b = ct_task(&ct_ops_b, utc_test_nranks() - 1, 1);
    utc_conduit_t *c = NULL;
    const char *old = getenv("UTC_TRANSPORT");
    char *keep = old ? strdup(old) : NULL;
    setenv("UTC_TRANSPORT", "shm", 1); /* on every rank: the creation fails on all alike */
    CU_ASSERT_EQUAL(utc_conduit_create(a, b, NULL, &c), UTC_ERR_INVALID_ARG);
    CU_ASSERT(strstr(utc_last_error(), "UTC_TRANSPORT") != NULL);
    setenv("UTC_TRANSPORT", "mpi", 1);
    UTC_ASSERT_OK(utc_conduit_create(a, b, NULL, &c));
    CU_ASSERT_EQUAL(utc_conduit_transport(c), utc_test_nranks() > 1 ? UTC_CONDUIT_MPI
                                                                     : UTC_CONDUIT_INPROC);
    UTC_ASSERT_OK(utc_conduit_destroy(c));
    if (keep)
        setenv("UTC_TRANSPORT", keep, 1);
    else
        unsetenv("UTC_TRANSPORT");
    free(keep);
    UTC_ASSERT_OK(utc_task_destroy(a));
    UTC_ASSERT_OK(utc_task_destroy(b));
}

/* ---- a refused set-up ---- */

static int ping_src(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    unsigned char buf[100000]; /* over the inline size: the large path too */
    for (int i = 0; i < 3; i++) {
        size_t n = i == 2 ? sizeof buf : (size_t)8 << (4 * i);
        ct_fill(buf, n, 300 + (uint64_t)i);
        CT_OK(utc_conduit_write(d, buf, n, 1));
    }
    return 0;
}

static int ping_dst(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    unsigned char buf[100000];
    for (int i = 0; i < 3; i++) {
        size_t n = i == 2 ? sizeof buf : (size_t)8 << (4 * i), got = 0;
        CT_OK(utc_conduit_read(d, buf, sizeof buf, 1, &got));
        CT_CHECK(got == n && ct_verify(buf, got, 300 + (uint64_t)i),
                 "message %d: %zu bytes (%zu expected) or contents differ", i, got, n);
    }
    return 0;
}

/* A shared conduit of one writer on rank ra and one reader on rank rb (publish mode):
 * its transport, after its messages went through. */
static utc_conduit_transport_t shared_pair(int ra, int rb)
{
    utc_task_t *w = ct_task(&ct_ops_a, ra, 1), *r = ct_task(&ct_ops_b, rb, 1);
    utc_conduit_t *c = NULL;
    utc_conduit_transport_t kind = UTC_CONDUIT_NONE;
    UTC_ASSERT_OK(utc_conduit_create_shared(&w, 1, &r, 1, UTC_SHARED_PUBLISH, NULL, &c));
    if (c) {
        kind = utc_conduit_transport(c);
        ct_run2(w, ping_src, c, r, ping_dst, c);
        UTC_ASSERT_OK(utc_conduit_destroy(c));
    }
    UTC_ASSERT_OK(utc_task_destroy(w));
    UTC_ASSERT_OK(utc_task_destroy(r));
    return kind;
}

/* A conduit from rank ra to rank rb with `opts`: its transport, after its messages went
 * through. */
static utc_conduit_transport_t plain_pair(int ra, int rb, const utc_conduit_options_t *opts)
{
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, opts);
    utc_conduit_transport_t kind = utc_conduit_transport(p.c);
    ct_pair_run(&p, ping_src, ping_dst);
    ct_pair_close(&p);
    return kind;
}

static bool shared_first;

static void test_refused(void)
{
    int ra, rb;
    if (!node_ranks(&ra, &rb))
        return;
    ct_begin();
    /* rank rb cannot size its first segment (64 KiB and more): ftruncate fails with EFBIG
     * there (SIGXFSZ ignored), so the set-up fails on that rank alone */
    struct rlimit old;
    CU_ASSERT_FATAL(getrlimit(RLIMIT_FSIZE, &old) == 0);
    if (utc_test_rank() == rb) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit low = {4096, old.rlim_max};
        CU_ASSERT_FATAL(setrlimit(RLIMIT_FSIZE, &low) == 0);
    }
    /* the first conduit between ranks of the host sets the node transport up, collectively:
     * refused, on every rank alike, so that conduit uses MPI */
    utc_conduit_transport_t first = shared_first ? shared_pair(ra, rb) : plain_pair(ra, rb, NULL);
    if (utc_test_rank() == rb)
        CU_ASSERT(setrlimit(RLIMIT_FSIZE, &old) == 0);
    CU_ASSERT_EQUAL(first, UTC_CONDUIT_MPI);
    /* the node transport stays off for the run: later conduits use MPI, even one asking for
     * node-local, plain and shared */
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.transport = UTC_CONDUIT_NODE;
    CU_ASSERT_EQUAL(plain_pair(ra, rb, &o), UTC_CONDUIT_MPI);
    CU_ASSERT_EQUAL(plain_pair(rb, ra, NULL), UTC_CONDUIT_MPI);
    CU_ASSERT_EQUAL(shared_first ? plain_pair(ra, rb, NULL) : shared_pair(ra, rb),
                    UTC_CONDUIT_MPI);
    /* in-process rings are not concerned */
    CU_ASSERT_EQUAL(plain_pair(ra, ra, NULL), UTC_CONDUIT_INPROC);
    CT_END();
}

/* ---- a read half into a pipelined message when its task fails ---- */

#define HALF_SIZE ((size_t)16 << 20) /* many rings' worth: pipelined, never whole at once */

/* The writer starts the message and leaves it (nobody pushes the rest) until after the
 * reader's task failed; then its wait ends it. */
static int half_writer(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    static unsigned char big[HALF_SIZE]; /* outlives the request */
    ct_fill(big, sizeof big, 61);
    utc_request_t *r = NULL;
    if (!CT_OK(utc_conduit_iwrite(d, big, sizeof big, 7, &r)))
        return 0;
    sleep_s(1.0); /* the reader's task fails meanwhile */
    utc_status_t rc = utc_request_wait(&r, NULL);
    CT_CHECK(rc == UTC_ERR_PEER_FAILED || rc == UTC_OK, "the write to a failed reader: %d (%s)", rc,
             utc_status_string(rc));
    return 0;
}

/* Thread 0 reads (its read takes the message's first part and waits for the rest); thread
 * 1 fails the task. The read ends with the failure, not when a later record comes. */
static int half_reader(utc_ctx_t *ctx, void *d)
{
    if (ctx->local_id == 1) {
        sleep_s(0.2);
        return UTC_ERR_IO;
    }
    static unsigned char buf[HALF_SIZE];
    size_t got = 0;
    utc_status_t rc = utc_conduit_read_by(d, 0, buf, sizeof buf, 7, &got);
    /* by cross-memory attach the reader copies the whole message itself: it may end well */
    CT_CHECK(rc == UTC_ERR_PEER_FAILED ||
                 (rc == UTC_OK && got == sizeof buf && ct_verify(buf, got, 61)),
             "a read whose task failed midway: %d (%s), %zu bytes: %s", rc, utc_status_string(rc),
             got, utc_last_error());
    return 0;
}

static void test_half_read_fails(void)
{
    int ra, rb;
    if (!node_ranks(&ra, &rb))
        return;
    ct_begin();
    ct_pair_t p = ct_pair_open(ra, 1, rb, 2, NULL);
    static ct_job_t jw, jr;
    jw = (ct_job_t){half_writer, p.c};
    jr = (ct_job_t){half_reader, p.c};
    UTC_ASSERT_OK(utc_task_run(p.a, &jw));
    UTC_ASSERT_OK(utc_task_run(p.b, &jr));
    UTC_ASSERT_OK(utc_task_wait(p.a));
    utc_status_t rc = utc_task_wait(p.b);
    CU_ASSERT_EQUAL(rc, utc_task_is_local(p.b) ? UTC_ERR_IO : UTC_OK);
    UTC_ASSERT_OK(utc_barrier());
    ct_pair_close(&p);
    CT_END();
}

/* ---- a cycle of full rings ---- */

#define CYCLE_MSGS 3000 /* 1 KiB each: 3 MiB a conduit, three times the largest ring */
#define CYCLE_LEN  1024

static utc_conduit_t *cycle_c[3];

/* Rank i's task writes CYCLE_MSGS messages to rank i + 1's, then reads as many from rank
 * i - 1's: every writer waits for room while its reader writes too (MPI takes such
 * messages in while it waits; so must the node transport). */
static int cycle_job(utc_ctx_t *ctx, void *d)
{
    (void)d;
    int i = ctx->world_rank, n = utc_nranks();
    unsigned char buf[CYCLE_LEN];
    for (int k = 0; k < CYCLE_MSGS; k++) {
        memset(buf, k & 0xff, sizeof buf);
        if (!CT_OK(utc_conduit_write(cycle_c[i], buf, sizeof buf, 1)))
            return 0;
    }
    for (int k = 0; k < CYCLE_MSGS; k++) {
        size_t got = 0;
        if (!CT_OK(utc_conduit_read(cycle_c[(i + n - 1) % n], buf, sizeof buf, 1, &got)))
            return 0;
        if (got != CYCLE_LEN || buf[0] != (k & 0xff) || buf[CYCLE_LEN - 1] != (k & 0xff)) {
            CT_CHECK(false, "message %d from rank %d out of order or wrong", k, (i + n - 1) % n);
            return 0;
        }
    }
    return 0;
}

static void test_cycle(void)
{
    int n = utc_nranks(), me = utc_rank();
    if (n != 3 || utc_test_transport(0, 1) != UTC_CONDUIT_NODE ||
        utc_test_transport(1, 2) != UTC_CONDUIT_NODE) {
        printf("\n    a cycle needs 3 node-local ranks: nothing to test");
        return;
    }
    ct_begin();
    utc_task_t *t[3];
    for (int i = 0; i < 3; i++)
        t[i] = ct_task(&ct_ops_a, i, 1);
    for (int i = 0; i < 3; i++)
        UTC_ASSERT_OK(utc_conduit_create(t[i], t[(i + 1) % 3], NULL, &cycle_c[i]));
    ct_job_t job = {cycle_job, NULL};
    UTC_ASSERT_OK(utc_task_run(t[me], &job));
    UTC_ASSERT_OK(utc_task_wait(t[me]));
    for (int i = 0; i < 3; i++)
        UTC_ASSERT_OK(utc_conduit_destroy(cycle_c[i]));
    for (int i = 0; i < 3; i++)
        UTC_ASSERT_OK(utc_task_destroy(t[i]));
    CT_END();
}

/* ---- a pipelined message cut short by its writer's destroy ---- */

#define CUT_SIZE ((size_t)4 << 20) /* more than the largest ring: half out when it stops */

static utc_conduit_t *cut_x, *cut_z; /* the message's conduit; another, after it */

/* A 4 MiB write nobody reads yet, which its rank's destroy of the conduit cuts short; then
 * a small message on another conduit (it pushes what the destroy left queued). */
static int cut_writer(utc_ctx_t *ctx, void *d)
{
    (void)ctx, (void)d;
    static unsigned char big[CUT_SIZE];
    ct_fill(big, sizeof big, 71);
    utc_request_t *r = NULL;
    if (CT_OK(utc_conduit_iwrite(cut_x, big, sizeof big, 1, &r))) {
        utc_status_t rc = utc_request_wait(&r, NULL); /* ended by the destroy */
        CT_CHECK(rc == UTC_OK || rc == UTC_ERR_CANCELED, "the cut write: %d (%s)", rc,
                 utc_status_string(rc));
    }
    int x = 5;
    CT_OK(utc_conduit_write(cut_z, &x, sizeof x, 2));
    return 0;
}

/* After the writer's destroy: a probe takes in the message's first part (queued, no read
 * yet), the read on the other conduit takes in what follows, then the read of the cut
 * message must fail, not return its part as the message. */
static int cut_reader(utc_ctx_t *ctx, void *d)
{
    (void)ctx, (void)d;
    sleep_s(1.0);
    int found = 0;
    utc_msg_info_t info;
    (void)utc_conduit_iprobe(cut_x, 1, &found, &info);
    int x = 0;
    CT_OK(utc_conduit_read(cut_z, &x, sizeof x, 2, NULL));
    unsigned char *buf = malloc(CUT_SIZE);
    size_t got = 0;
    utc_status_t rc =
        buf ? utc_conduit_read_timeout(cut_x, buf, CUT_SIZE, 1, &got, 2.0) : UTC_ERR_NO_MEMORY;
    CT_CHECK(rc != UTC_OK || (got == CUT_SIZE && ct_verify(buf, got, 71)),
             "a message cut short by its writer's destroy was read as whole (%zu bytes, "
             "wrong contents)",
             got);
    free(buf);
    return 0;
}

static void test_writer_cuts(void)
{
    int ra, rb;
    if (!node_ranks(&ra, &rb))
        return;
    ct_begin();
    utc_task_t *a = ct_task(&ct_ops_a, ra, 1), *b = ct_task(&ct_ops_b, rb, 1);
    UTC_ASSERT_OK(utc_conduit_create(a, b, NULL, &cut_x));
    UTC_ASSERT_OK(utc_conduit_create(a, b, NULL, &cut_z));
    ct_job_t ja = {cut_writer, NULL}, jb = {cut_reader, NULL};
    UTC_ASSERT_OK(utc_task_run(a, &ja));
    UTC_ASSERT_OK(utc_task_run(b, &jb));
    if (utc_rank() == ra) {
        sleep_s(0.3); /* the write is half out by now */
        UTC_ASSERT_OK(utc_conduit_destroy(cut_x));
    }
    UTC_ASSERT_OK(utc_task_wait(a));
    UTC_ASSERT_OK(utc_task_wait(b));
    if (utc_rank() != ra)
        UTC_ASSERT_OK(utc_conduit_destroy(cut_x));
    UTC_ASSERT_OK(utc_conduit_destroy(cut_z));
    UTC_ASSERT_OK(utc_barrier());
    UTC_ASSERT_OK(utc_task_destroy(a));
    UTC_ASSERT_OK(utc_task_destroy(b));
    CT_END();
}

/* ---- the reader's rank destroys the conduit while a large write waits ---- */

#define GONE_SIZE ((size_t)4 << 20) /* more than the largest ring: never whole in it */

/* A write nobody reads ends when the reader's rank destroys the conduit, with UTC_OK (the
 * message dropped there unread, as over MPI); it used to wait for good. */
static int gone_writer(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    static unsigned char big[GONE_SIZE]; /* outlives a request left pending */
    utc_request_t *r = NULL;
    if (!CT_OK(utc_conduit_iwrite(d, big, sizeof big, 1, &r)))
        return 0;
    double t0 = now_s();
    int done = 0;
    utc_status_t rc = UTC_OK;
    while (!done && rc == UTC_OK && now_s() - t0 < 10) {
        rc = utc_request_test(&r, &done, NULL);
        if (!done)
            sleep_s(0.01);
    }
    CT_CHECK(done && rc == UTC_OK,
             "a write whose reader's rank destroyed the conduit: %s, %d (%s) after %.1f s",
             done ? "done" : "still waiting", rc, utc_status_string(rc), now_s() - t0);
    return 0;
}

static void test_reader_destroys(void)
{
    int ra, rb;
    if (!node_ranks(&ra, &rb))
        return;
    ct_begin();
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, NULL);
    static ct_job_t jw;
    jw = (ct_job_t){gone_writer, p.c};
    UTC_ASSERT_OK(utc_task_run(p.a, &jw));
    if (utc_rank() == rb)
        sleep_s(0.5); /* the write waits for this rank meanwhile; nothing here reads */
    else
        UTC_ASSERT_OK(utc_task_wait(p.a)); /* the writer's rank destroys after it */
    UTC_ASSERT_OK(utc_conduit_destroy(p.c));
    UTC_ASSERT_OK(utc_task_wait(p.a));
    UTC_ASSERT_OK(utc_barrier());
    UTC_ASSERT_OK(utc_task_destroy(p.a));
    UTC_ASSERT_OK(utc_task_destroy(p.b));
    CT_END();
}

/* ---- the writer's rank in utc_finalize before the reader has read ---- */

typedef struct {
    utc_task_t base;
    int got, bad;
    utc_status_t end; /* what the read after the last message returned */
} late_t;

static int late_writer_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx;
    unsigned char buf[BURST_LEN];
    for (int i = 0; i < BURST; i++) {
        ct_fill(buf, BURST_LEN, (uint64_t)i + 1000);
        utc_status_t rc = utc_conduit_write(arg, buf, BURST_LEN, 1);
        if (rc != UTC_OK)
            return rc;
    }
    return utc_conduit_close(arg);
}

static int late_reader_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    late_t *t = (late_t *)self;
    sleep_s(1.0); /* the writer's rank is in utc_finalize by now */
    unsigned char buf[BURST_LEN];
    for (;;) {
        size_t got = 0;
        utc_status_t rc = utc_conduit_read(arg, buf, sizeof buf, 1, &got);
        if (rc != UTC_OK) {
            t->end = rc;
            if (rc != UTC_ERR_CLOSED)
                fprintf(stderr, "the read of message %d: %s\n", t->got, utc_last_error());
            return 0;
        }
        t->bad += got != BURST_LEN || !ct_verify(buf, got, (uint64_t)t->got + 1000);
        t->got++;
    }
}

static const utc_task_ops_t late_writer_ops = {
    .name = "late-writer", .size = sizeof(late_t), .run = late_writer_run};
static const utc_task_ops_t late_reader_ops = {
    .name = "late-reader", .size = sizeof(late_t), .run = late_reader_run};

/* Exit 0 when the reader got the BURST messages whole and in order, then end of stream. */
static int writer_finalizes(int argc, char **argv)
{
    setenv("UTC_NODE_CMA", "0", 1);
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "utc_init: %s\n", utc_last_error());
        return 1;
    }
    int n = utc_nranks(), me = utc_rank(), ra = n > 2 ? 1 : 0, rb = n - 1;
    if (n < 2) {
        printf("one rank: nothing node-local to test\n");
        utc_finalize();
        return 77;
    }
    utc_task_t *w = NULL, *r = NULL;
    utc_conduit_t *c = NULL;
    if (utc_task_create(&late_writer_ops, &rb, 1, NULL, &w) != UTC_OK ||
        utc_task_create(&late_reader_ops, &ra, 1, NULL, &r) != UTC_OK ||
        utc_conduit_create(w, r, NULL, &c) != UTC_OK || utc_task_run(w, c) != UTC_OK ||
        utc_task_run(r, c) != UTC_OK || utc_task_wait(w) != UTC_OK || utc_task_wait(r) != UTC_OK) {
        fprintf(stderr, "[rank %d] %s\n", me, utc_last_error());
        return 1;
    }
    late_t res = *(late_t *)r;
    bool node = utc_conduit_transport(c) == UTC_CONDUIT_NODE;
    /* the writer's rank goes on at once (nothing here waits for the other ranks) */
    if (utc_conduit_destroy(c) != UTC_OK || utc_task_destroy(r) != UTC_OK ||
        utc_task_destroy(w) != UTC_OK || utc_finalize() != UTC_OK) {
        fprintf(stderr, "[rank %d] %s\n", me, utc_last_error());
        return 1;
    }
    if (me != ra)
        return 0;
    if (!node) {
        printf("ranks %d and %d are not node-local here: nothing to test\n", ra, rb);
        return 77;
    }
    printf("the reader got %d of %d messages, %d wrong, then %s\n", res.got, BURST, res.bad,
           utc_status_string(res.end));
    return res.got == BURST && res.bad == 0 && res.end == UTC_ERR_CLOSED ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "writer_finalizes"))
        return writer_finalizes(argc, argv);
    if (argc > 1 && (!strcmp(argv[1], "refused") || !strcmp(argv[1], "refused_shared"))) {
        shared_first = !strcmp(argv[1], "refused_shared");
        static const utc_test_case_t refused[] = {
            {"node-local set-up refused on one rank: MPI for the first conduit and the later "
             "ones", test_refused},
            UTC_TEST_END};
        return utc_test_main(argc, argv, "conduit node, set-up refused", refused);
    }
    /* before utc_init: the node transport reads it when it sets up */
    if (argc > 1 && !strcmp(argv[1], "pipelined"))
        setenv("UTC_NODE_CMA", "0", 1);
    else if (argc > 1 && !strcmp(argv[1], "cma"))
        setenv("UTC_NODE_CMA", "1", 1);
    static const utc_test_case_t cases[] = {
        {"node-local: 0 B to 8 MiB, as they come and queued, plain, owned, any-tag", test_sizes},
        {"node-local: a large message that does not fit stays first in line", test_truncate},
        {"node-local: the writer of a refused large message goes on before the retry",
         test_truncate_aside},
        {"node-local: an 800 KiB burst nobody reads grows the ring, then arrives in order",
         test_growth},
        {"node-local: 10,000 conduits, one message each way, memory bound", test_many},
        {"node-local: a read half into a large message ends when its task fails",
         test_half_read_fails},
        {"node-local: a cycle of full rings at 3 ranks (3 MiB each way round)", test_cycle},
        {"node-local: a message cut short by its writer's destroy is not read as whole",
         test_writer_cuts},
        {"node-local: a large write ends when its reader's rank destroys the conduit",
         test_reader_destroys},
        {"UTC_TRANSPORT: a bad value is refused, mpi forces MPI between ranks", test_env},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "conduit node", cases);
}
