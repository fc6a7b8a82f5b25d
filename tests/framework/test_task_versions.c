/*
 * Versioned task ops (UTC_TASK_OPS_VERSION, run_gpu) and the kinds of a task's threads:
 * a table written before versions existed runs as before, a versioned one runs the body
 * of each thread's kind, and every table or option that does not fit is refused at
 * utc_task_create, on every rank, with a message naming the field and the fix.
 *
 * The GPU threads of mixed tasks need a device: here only their creation is checked
 * (the clear error without one); tests/gpu/test_gpu_mixed.c runs them on a GPU.
 */
#include <mpi.h>
#include <stdatomic.h>
#include <string.h>

#include "utc_test.h"

#define MAXT 8
enum { BODY_NONE = 0, BODY_CPU = 1, BODY_GPU = 2 };

typedef struct {
    utc_task_t base;
    atomic_int inits;
    int body[MAXT]; /* per local thread: which body ran */
    int kind[MAXT]; /* per local thread: its ctx->kind */
} ver_task_t;

static int count_init(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx, (void)arg;
    atomic_fetch_add(&((ver_task_t *)self)->inits, 1);
    return 0;
}

static int note(utc_task_t *self, utc_ctx_t *ctx, int body)
{
    ver_task_t *t = (ver_task_t *)self;
    if (ctx->local_id >= MAXT)
        return UTC_ERR_OUT_OF_RANGE;
    t->body[ctx->local_id] = body;
    t->kind[ctx->local_id] = ctx->kind;
    return 0;
}

static int run_cpu(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    return note(self, ctx, BODY_CPU);
}

static int run_gpu(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    return note(self, ctx, BODY_GPU);
}

/* Layout 0, as tables were written before .version existed. */
static const utc_task_ops_t old_ops = {
    .name = "old", .size = sizeof(ver_task_t), .init = count_init, .run = run_cpu};

/* Layout 0 with positional initializers (name, size, init, run, fini): the fields added
 * at the end stay zero. -Wextra warns about the fields left out, as it would in a user's
 * older code; the layout is what is tested. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const utc_task_ops_t old_positional_ops = {"old-positional", sizeof(ver_task_t), count_init,
                                                  run_cpu, NULL};
#pragma GCC diagnostic pop

static const utc_task_ops_t both_ops = {.name = "both",
                                        .size = sizeof(ver_task_t),
                                        .version = UTC_TASK_OPS_VERSION,
                                        .init = count_init,
                                        .run = run_cpu,
                                        .run_gpu = run_gpu};
static const utc_task_ops_t cpu_only_ops = {.name = "cpu-only",
                                            .size = sizeof(ver_task_t),
                                            .version = UTC_TASK_OPS_VERSION,
                                            .run = run_cpu};
static const utc_task_ops_t gpu_only_ops = {.name = "gpu-only",
                                            .size = sizeof(ver_task_t),
                                            .version = UTC_TASK_OPS_VERSION,
                                            .run_gpu = run_gpu};

static void expect_error(int rc, int want, const char *needle)
{
    CU_ASSERT_EQUAL(rc, want);
    if (needle && !strstr(utc_last_error(), needle))
        fprintf(stderr, "last error '%s' lacks '%s'\n", utc_last_error(), needle);
    if (needle)
        CU_ASSERT_PTR_NOT_NULL(strstr(utc_last_error(), needle));
}

/* Create with 2 threads per rank, expect it refused with `want` and `needle`, and `out`
 * untouched. */
static void expect_refused(const utc_task_ops_t *ops, const utc_task_options_t *o, int want,
                           const char *needle)
{
    int procs[6];
    int n = utc_procs_spread(procs, 6, 0, utc_nranks(), 2);
    utc_task_t *task = (utc_task_t *)0x1;
    expect_error(utc_task_create(ops, procs, n, o, &task), want, needle);
    CU_ASSERT_PTR_EQUAL(task, (utc_task_t *)0x1);
}

/* Run `ops` as a CPU task of 2 threads per rank once; every local thread must have run
 * `want_body` as a CPU thread, after one init each when the table has one. */
static void run_cpu_task(const utc_task_ops_t *ops, int want_body)
{
    int procs[6];
    int n = utc_procs_spread(procs, 6, 0, utc_nranks(), 2);
    utc_task_t *task;
    UTC_ASSERT_OK(utc_task_create(ops, procs, n, NULL, &task));
    CU_ASSERT_EQUAL(utc_task_kind(task), UTC_TASK_CPU);
    UTC_ASSERT_OK(utc_task_init(task, NULL));
    UTC_ASSERT_OK(utc_task_run(task, NULL));
    UTC_ASSERT_OK(utc_task_wait(task));
    ver_task_t *t = (ver_task_t *)task;
    CU_ASSERT_EQUAL(atomic_load(&t->inits), ops->init ? 2 : 0);
    for (int i = 0; i < 2; i++) {
        CU_ASSERT_EQUAL(t->body[i], want_body);
        CU_ASSERT_EQUAL(t->kind[i], UTC_TASK_CPU);
    }
    UTC_ASSERT_OK(utc_task_destroy(task));
}

static void test_layout0(void)
{
    run_cpu_task(&old_ops, BODY_CPU);
    run_cpu_task(&old_positional_ops, BODY_CPU);
}

static void test_layout1_cpu(void)
{
    run_cpu_task(&both_ops, BODY_CPU); /* run_gpu is never called on CPU threads */
    run_cpu_task(&cpu_only_ops, BODY_CPU);
}

static void test_bad_version(void)
{
    utc_task_ops_t ops = both_ops;
    ops.version = UTC_TASK_OPS_VERSION + 1; /* a newer header's table */
    expect_refused(&ops, NULL, UTC_ERR_INVALID_ARG, "ops->version is 2");
    CU_ASSERT_PTR_NOT_NULL(strstr(utc_last_error(), "set .version = UTC_TASK_OPS_VERSION"));
    ops.version = 0xdeadbeefu; /* garbage */
    expect_refused(&ops, NULL, UTC_ERR_INVALID_ARG, "3735928559");
    /* layout 0 with a layout-1 field: run_gpu would be ignored, so it is refused */
    ops = both_ops;
    ops.version = 0;
    expect_refused(&ops, NULL, UTC_ERR_INVALID_ARG, "sets ops->run_gpu but leaves ops->version 0");
    /* layout 0 needs run, as before */
    ops = old_ops;
    ops.run = NULL;
    expect_refused(&ops, NULL, UTC_ERR_INVALID_ARG, "no run function");
    /* layout 1 needs a body */
    ops = both_ops;
    ops.run = ops.run_gpu = NULL;
    expect_refused(&ops, NULL, UTC_ERR_INVALID_ARG, "neither ops->run (CPU body) nor");
}

static void test_kinds_against_bodies(void)
{
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    expect_refused(&gpu_only_ops, &o, UTC_ERR_INVALID_ARG, "has CPU threads (kind UTC_TASK_CPU)");
    CU_ASSERT_PTR_NOT_NULL(strstr(utc_last_error(), "set ops->run"));
    o.kind = UTC_TASK_GPU;
    expect_refused(&cpu_only_ops, &o, UTC_ERR_INVALID_ARG, "has GPU threads (kind UTC_TASK_GPU)");
    CU_ASSERT_PTR_NOT_NULL(strstr(utc_last_error(), "set ops->run_gpu"));
    o.kind = UTC_TASK_MIXED;
    o.gpu_threads = 1;
    expect_refused(&cpu_only_ops, &o, UTC_ERR_INVALID_ARG, "has GPU threads (kind UTC_TASK_MIXED)");
    /* 2 threads per rank, 1 GPU thread: the second is a CPU thread, with no body */
    expect_refused(&gpu_only_ops, &o, UTC_ERR_INVALID_ARG,
                   "has CPU threads (rank 0 holds more than opts.gpu_threads = 1 threads)");
    expect_refused(&old_ops, &o, UTC_ERR_INVALID_ARG, "needs a versioned ops table");
}

static void test_bad_mixed_options(void)
{
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.gpu_threads = 1; /* kind CPU */
    expect_refused(&both_ops, &o, UTC_ERR_INVALID_ARG,
                   "gpu_threads is 1, but its kind is UTC_TASK_CPU");
    o.kind = UTC_TASK_GPU;
    expect_refused(&both_ops, &o, UTC_ERR_INVALID_ARG, "gpu_threads is for kind UTC_TASK_MIXED");
    o.kind = UTC_TASK_MIXED;
    o.gpu_threads = 0;
    expect_refused(&both_ops, &o, UTC_ERR_INVALID_ARG, "needs 1 .. 4096 GPU threads per rank");
    o.gpu_threads = -3;
    expect_refused(&both_ops, &o, UTC_ERR_INVALID_ARG, "opts.gpu_threads is -3");
    o.gpu_threads = UTC_TASK_MAX_THREADS + 1;
    expect_refused(&both_ops, &o, UTC_ERR_INVALID_ARG, "4097");
    o.kind = (utc_task_kind_t)3;
    o.gpu_threads = 0;
    expect_refused(&both_ops, &o, UTC_ERR_INVALID_ARG, "unknown task kind 3");
}

/* Ranks passing different layouts of one table disagree: UTC_ERR_MISMATCH on all. */
static void test_ranks_disagree_on_version(void)
{
    if (utc_nranks() < 2)
        return;
    static const utc_task_ops_t v0 = {.name = "agree", .size = sizeof(ver_task_t), .run = run_cpu};
    static const utc_task_ops_t v1 = {.name = "agree",
                                      .size = sizeof(ver_task_t),
                                      .version = UTC_TASK_OPS_VERSION,
                                      .run = run_cpu};
    expect_refused(utc_test_rank() == 0 ? &v1 : &v0, NULL, UTC_ERR_MISMATCH, "ops table");
}

/* The smallest device count over the ranks (0 in a build without GPU support). */
static int min_devices(void)
{
    int n = utc_gpu_supported() ? utc_gpu_device_count() : 0, min;
    MPI_Allreduce(&n, &min, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return min < 0 ? 0 : min;
}

/* Tasks with GPU threads (mixed, or GPU-only with a layout-1 table): without a device,
 * the clear error of today on every rank, and nothing left behind; with one, they run. */
static void test_gpu_threads_without_device(void)
{
    int ndev = min_devices();
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.kind = UTC_TASK_MIXED;
    o.gpu_threads = 1;
    for (int k = 0; k < 2; k++) {
        const utc_task_ops_t *ops = k == 0 ? &both_ops : &gpu_only_ops;
        if (k == 1) {
            o.kind = UTC_TASK_GPU;
            o.gpu_threads = 0;
        }
        if (!utc_gpu_supported()) {
            expect_refused(ops, &o, UTC_ERR_NO_GPU_SUPPORT, "has GPU threads (kind");
        } else if (ndev == 0) {
            expect_refused(ops, &o, UTC_ERR_NO_DEVICE,
                           k == 0 ? "has 1 GPU thread(s) on rank" : "has 2 GPU thread(s) on rank");
            CU_ASSERT_PTR_NOT_NULL(strstr(utc_last_error(), "no CUDA device is visible"));
        } else {
            int procs[6];
            int n = utc_procs_spread(procs, 6, 0, utc_nranks(), 2);
            utc_task_t *task;
            UTC_ASSERT_OK(utc_task_create(ops, procs, n, &o, &task));
            CU_ASSERT_EQUAL(utc_task_kind(task), o.kind);
            UTC_ASSERT_OK(utc_task_run(task, NULL));
            UTC_ASSERT_OK(utc_task_wait(task));
            ver_task_t *t = (ver_task_t *)task;
            CU_ASSERT_EQUAL(t->body[0], BODY_GPU);
            CU_ASSERT_EQUAL(t->body[1], k == 0 ? BODY_CPU : BODY_GPU);
            UTC_ASSERT_OK(utc_task_destroy(task));
        }
    }
    /* after the failed creations: a CPU task still works */
    run_cpu_task(&both_ops, BODY_CPU);
}

static const utc_test_case_t cases[] = {
    {"layout 0 (no .version): run on every thread, as before", test_layout0},
    {"layout 1: run on CPU threads", test_layout1_cpu},
    {"unknown versions and inconsistent tables refused", test_bad_version},
    {"a kind of thread without its body refused", test_kinds_against_bodies},
    {"bad gpu_threads and kinds refused", test_bad_mixed_options},
    {"ranks that pass different layouts: mismatch", test_ranks_disagree_on_version},
    {"GPU threads without a device: a clear error", test_gpu_threads_without_device},
    UTC_TEST_END};

int main(int argc, char **argv)
{
    return utc_test_main(argc, argv, "task versions", cases);
}
