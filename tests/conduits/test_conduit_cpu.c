/*
 * Waiting costs nothing: a reader blocked for 1 s, a writer of a large message blocked
 * for 1 s and a read that times out after 1 s each use under 5% of a core (CPU time of
 * the whole process they run in), in-process and between ranks.
 */
#include <unistd.h>

#include "conduit_test_util.h"

#define BIG (8 << 20)

typedef struct {
    utc_conduit_t *c;
    unsigned char *buf;
    double cpu, wall;     /* measured by the blocked thread */
} cpu_t;

static void measure(cpu_t *k, double cpu0, double wall0)
{
    k->cpu = utc_test_cpu_seconds() - cpu0;
    k->wall = utc_wtime() - wall0;
}

/* The peer sleeps 1 s, then does its part. */
static int late_writer(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    cpu_t *k = d;
    sleep(1);
    int v = 1;
    CT_OK(utc_conduit_write(k->c, &v, sizeof v, 1));
    return 0;
}

static int blocked_reader(utc_ctx_t *ctx, void *d)
{
    cpu_t *k = d;
    static int v; /* shared by the reader's threads */
    double c0 = utc_test_cpu_seconds(), w0 = utc_wtime();
    CT_OK(utc_conduit_read(k->c, &v, sizeof v, 1, NULL));
    if (ctx->local_id == 0)
        measure(k, c0, w0);
    CT_CHECK(v == 1, "read %d", v);
    return 0;
}

static int blocked_writer(utc_ctx_t *ctx, void *d)
{
    cpu_t *k = d;
    double c0 = utc_test_cpu_seconds(), w0 = utc_wtime();
    CT_OK(utc_conduit_write(k->c, k->buf, BIG, 2)); /* returns once the reader has it */
    if (ctx->local_id == 0)
        measure(k, c0, w0);
    return 0;
}

static int late_reader(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    cpu_t *k = d;
    sleep(1);
    size_t got = 0;
    CT_OK(utc_conduit_read(k->c, k->buf, BIG, 2, &got));
    CT_CHECK(got == BIG, "got %zu", got);
    return 0;
}

static int timed_out_reader(utc_ctx_t *ctx, void *d)
{
    cpu_t *k = d;
    static int v;
    double c0 = utc_test_cpu_seconds(), w0 = utc_wtime();
    CT_EXPECT(utc_conduit_read_timeout(k->c, &v, sizeof v, 3, NULL, 1.0), UTC_ERR_TIMEOUT);
    if (ctx->local_id == 0)
        measure(k, c0, w0);
    return 0;
}

/* One case: the peer's job, the blocked end's job and threads, what they show. */
typedef struct {
    ct_fn_t peer_fn, blocked_fn;
    const char *what;
    int blocked_threads;
} idle_case_t;

static void check_idle(int ra, int rb, void *arg)
{
    const idle_case_t *k = arg;
    ct_begin();
    ct_pair_t p = ct_pair_open(ra, 1, rb, k->blocked_threads, NULL);
    cpu_t kp = {p.c, malloc(BIG), 0, 0}, kb = {p.c, malloc(BIG), 0, 0};
    ct_run2(p.a, k->peer_fn, &kp, p.b, k->blocked_fn, &kb);
    if (utc_task_is_local(p.b) == 1) {
        printf("\n    %s (%s, %d thread(s)): %.4f s CPU over %.3f s (%.2f%% of a core)",
               k->what, ra == rb ? "in-process" : "MPI", k->blocked_threads, kb.cpu, kb.wall,
               100 * kb.cpu / kb.wall);
        CU_ASSERT(kb.wall > 0.9);
        CU_ASSERT(kb.cpu < 0.05 * kb.wall);
    }
    free(kp.buf);
    free(kb.buf);
    ct_pair_close(&p);
    CT_END();
}

/* In-process, then between ranks where there are several. */
static void both(ct_fn_t peer_fn, ct_fn_t blocked_fn, const char *what, int threads)
{
    idle_case_t k = {peer_fn, blocked_fn, what, threads};
    ct_each_placement(true, check_idle, &k);
}

static void test_blocked_reader(void) { both(late_writer, blocked_reader, "reader blocked 1 s", 1); }
static void test_blocked_reader_threads(void)
{
    both(late_writer, blocked_reader, "reader blocked 1 s", 4);
}
static void test_blocked_writer(void)
{
    both(late_reader, blocked_writer, "large writer blocked 1 s", 1);
}
static void test_timed_out_read(void)
{
    both(ct_idle, timed_out_reader, "read timing out after 1 s", 1);
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"a reader blocked 1 s uses < 5% of a core", test_blocked_reader},
        {"4 threads blocked in one read use < 5% of a core", test_blocked_reader_threads},
        {"a large writer blocked 1 s uses < 5% of a core", test_blocked_writer},
        {"a read timing out after 1 s uses < 5% of a core", test_timed_out_read},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "conduit cpu", cases);
}
