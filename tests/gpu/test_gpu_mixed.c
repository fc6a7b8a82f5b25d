/*
 * Mixed thread groups on a GPU: a UTC_TASK_MIXED task runs run_gpu on its first
 * opts.gpu_threads threads of each rank (each with its device and its own stream) and run
 * on the others (nothing GPU: the GPU calls say so); barriers, "one thread does it" and
 * conduits work across the two kinds. Needs a GPU: exits 77 (skipped) without one, or
 * fails under UTC_REQUIRE_GPU=1. Without a device the creation errors are checked by
 * tests/framework/test_task_versions.c.
 * Also runs on cudahost (tests/cudahost).
 */
#include <mpi.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "utc_test.h"

#define MAXL 8
#define NGPU 2    /* GPU threads per rank */
#define NCPU 2    /* CPU threads per rank */
#define N    1024 /* floats the GPU thread makes and the conduit carries */

typedef struct {
    utc_task_t base;
    utc_conduit_t *peer;  /* to the CPU task and back; NULL: no conduit part */
    int body[MAXL];       /* 1: run (CPU), 2: run_gpu */
    int kind[MAXL];       /* ctx->kind */
    int device[MAXL];     /* utc_gpu_device() */
    int has_stream[MAXL]; /* utc_gpu_stream() != NULL */
    int cpu_msg[MAXL];    /* a CPU thread's GPU call names it a CPU thread */
    int inits[MAXL];      /* init ran on this thread, with its kind */
    atomic_int arrived;
    int seen[MAXL]; /* `arrived` after the local barrier */
    int single_rc[MAXL];
    float data[N], reply[N];
    long bad[MAXL]; /* wrong elements of the reply, per thread */
} mixed_task_t;

static int mixed_init(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    ((mixed_task_t *)self)->inits[ctx->local_id] = 1 + ctx->kind;
    return 0;
}

static int single_fn(utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    return ctx->kind == UTC_TASK_GPU ? 7 : 8; /* local thread 0 is a GPU thread */
}

/* What every thread does after its body's own part: barriers, the conduit. */
static int across_kinds(mixed_task_t *t, utc_ctx_t *ctx)
{
    int me = ctx->local_id;
    atomic_fetch_add(&t->arrived, 1);
    int rc = utc_ctx_barrier_local(ctx);
    if (rc)
        return rc;
    t->seen[me] = atomic_load(&t->arrived);
    if ((rc = utc_ctx_barrier(ctx)))
        return rc;
    t->single_rc[me] = utc_ctx_single(ctx, 0, single_fn, NULL);
    if (!t->peer)
        return 0;
    /* the GPU threads' data (written before the local barrier) goes to the CPU task,
     * which sends it back plus one: every thread of both kinds takes part */
    if ((rc = utc_conduit_write(t->peer, t->data, sizeof t->data, 0)))
        return rc;
    size_t got = 0;
    if ((rc = utc_conduit_read(t->peer, t->reply, sizeof t->reply, 0, &got)))
        return rc;
    long bad = got != sizeof t->reply;
    for (int i = 0; i < N; i++)
        bad += t->reply[i] != t->data[i] + 1.0f;
    t->bad[me] = bad;
    return 0;
}

static int mixed_cpu(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    mixed_task_t *t = (mixed_task_t *)self;
    int me = ctx->local_id;
    t->body[me] = 1;
    t->kind[me] = ctx->kind;
    t->device[me] = utc_gpu_device();
    t->has_stream[me] = utc_gpu_stream() != NULL;
    t->cpu_msg[me] = strstr(utc_last_error(), "is a CPU thread") != NULL;
    return across_kinds(t, ctx);
}

/* x[i] = 2 (lo + i) + 1 for i < n (x holds lo + i), on `stream` */
static int make_data(float *x, size_t lo, size_t n, void *stream)
{
    (void)lo;
    return utc_test_scale(x, 2.0f, 1.0f, n, stream);
}

static int mixed_gpu(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    mixed_task_t *t = (mixed_task_t *)self;
    int me = ctx->local_id;
    t->body[me] = 2;
    t->kind[me] = ctx->kind;
    t->device[me] = utc_gpu_device();
    t->has_stream[me] = utc_gpu_stream() != NULL;
    /* the GPU threads make the data with a kernel: thread g fills its share */
    size_t lo = (size_t)N * (size_t)me / NGPU, hi = (size_t)N * (size_t)(me + 1) / NGPU;
    float host[N];
    for (size_t i = lo; i < hi; i++)
        host[i] = (float)i;
    utc_gpu_data_t *d;
    int rc = utc_gpu_data_create_default(sizeof(float), hi - lo, 1, 1, &d);
    if (rc)
        return rc;
    if (!(rc = utc_gpu_data_put_host(d, host + lo)) && !(rc = utc_gpu_data_sync_device(d))) {
        if (make_data(utc_gpu_data_device(d), lo, hi - lo, utc_gpu_stream()))
            rc = utc_gpu_check("scale launch");
        if (!rc && !(rc = utc_gpu_data_mark_device(d)))
            rc = utc_gpu_data_fetch_host(d, t->data + lo);
    }
    utc_gpu_data_destroy(d);
    return rc ? rc : across_kinds(t, ctx);
}

static const utc_task_ops_t mixed_ops = {.name = "mixed",
                                         .size = sizeof(mixed_task_t),
                                         .version = UTC_TASK_OPS_VERSION,
                                         .init = mixed_init,
                                         .run = mixed_cpu,
                                         .run_gpu = mixed_gpu};

/* The CPU task at the conduit's other end: reads, adds one, sends back. */
typedef struct {
    utc_task_t base;
    utc_conduit_t *peer;
    float buf[N];
} echo_task_t;

static int echo_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx, (void)arg;
    echo_task_t *t = (echo_task_t *)self;
    size_t got = 0;
    int rc = utc_conduit_read(t->peer, t->buf, sizeof t->buf, 0, &got);
    if (rc)
        return rc;
    for (int i = 0; i < N; i++)
        t->buf[i] += 1.0f;
    return utc_conduit_write(t->peer, t->buf, got, 0);
}

static const utc_task_ops_t echo_ops = {
    .name = "echo", .size = sizeof(echo_task_t), .run = echo_run};

static void test_need_a_gpu(void)
{
    utc_test_need_gpu();
    CU_ASSERT(utc_gpu_supported());
}

static utc_task_t *create_mixed(int first_rank, int nranks)
{
    int procs[(NGPU + NCPU) * 3];
    int n = utc_procs_spread(procs, (int)(sizeof procs / sizeof *procs), first_rank, nranks,
                             NGPU + NCPU);
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.kind = UTC_TASK_MIXED;
    o.gpu_threads = NGPU;
    utc_task_t *task = NULL;
    UTC_ASSERT_OK(utc_task_create(&mixed_ops, procs, n, &o, &task));
    CU_ASSERT_EQUAL(utc_task_kind(task), UTC_TASK_MIXED);
    return task;
}

/* Which body ran on which thread, with what, and the barriers across kinds. */
static void check_threads(mixed_task_t *t)
{
    for (int i = 0; i < NGPU + NCPU; i++) {
        int gpu = i < NGPU;
        CU_ASSERT_EQUAL(t->body[i], gpu ? 2 : 1);
        CU_ASSERT_EQUAL(t->kind[i], gpu ? UTC_TASK_GPU : UTC_TASK_CPU);
        CU_ASSERT_EQUAL(t->inits[i], 1 + (gpu ? UTC_TASK_GPU : UTC_TASK_CPU));
        CU_ASSERT_EQUAL(t->has_stream[i], gpu);
        if (gpu) {
            CU_ASSERT(t->device[i] >= 0);
        } else {
            CU_ASSERT_EQUAL(t->device[i], UTC_ERR_NOT_MEMBER);
            CU_ASSERT(t->cpu_msg[i]);
        }
        CU_ASSERT_EQUAL(t->seen[i], NGPU + NCPU);
        CU_ASSERT_EQUAL(t->single_rc[i], 7);
    }
}

static void test_bodies_and_barriers(void)
{
    utc_task_t *task = create_mixed(0, utc_nranks());
    UTC_ASSERT_OK(utc_task_init(task, NULL));
    UTC_ASSERT_OK(utc_task_run(task, NULL));
    UTC_ASSERT_OK(utc_task_wait(task));
    check_threads((mixed_task_t *)task);
    UTC_ASSERT_OK(utc_task_destroy(task));
}

/* The mixed task on the last rank, the CPU task on rank 0: in one process at 1 rank,
 * over MPI at 2 and 3. */
static void test_conduit_across_kinds(void)
{
    utc_task_t *task = create_mixed(utc_nranks() - 1, 1), *echo;
    int zero[1] = {0};
    UTC_ASSERT_OK(utc_task_create(&echo_ops, zero, 1, NULL, &echo));
    utc_conduit_t *c;
    UTC_ASSERT_OK(utc_conduit_create(task, echo, NULL, &c));
    ((mixed_task_t *)task)->peer = c;
    ((echo_task_t *)echo)->peer = c;
    UTC_ASSERT_OK(utc_task_init(task, NULL));
    UTC_ASSERT_OK(utc_task_run(task, NULL));
    UTC_ASSERT_OK(utc_task_run(echo, NULL));
    UTC_ASSERT_OK(utc_task_wait(task));
    UTC_ASSERT_OK(utc_task_wait(echo));
    if (utc_task_is_local(task)) {
        mixed_task_t *t = (mixed_task_t *)task;
        check_threads(t);
        for (int i = 0; i < N; i++)
            CU_ASSERT_EQUAL_FATAL(t->data[i], 2.0f * (float)i + 1.0f);
        for (int i = 0; i < NGPU + NCPU; i++)
            CU_ASSERT_EQUAL(t->bad[i], 0);
    }
    UTC_ASSERT_OK(utc_conduit_destroy(c));
    UTC_ASSERT_OK(utc_task_destroy(echo));
    UTC_ASSERT_OK(utc_task_destroy(task));
}

static const utc_test_case_t cases[] = {
    {"a GPU on every rank", test_need_a_gpu},
    {"each thread runs its kind's body; barriers across kinds", test_bodies_and_barriers},
    {"a conduit read and written by threads of both kinds", test_conduit_across_kinds},
    UTC_TEST_END};

int main(int argc, char **argv)
{
    return utc_test_main(argc, argv, "gpu mixed", cases);
}
