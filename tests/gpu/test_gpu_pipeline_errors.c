/*
 * Overlapped GPU pipelines (utc_gpu_pipeline_*): every bad argument is refused with a
 * status and a message naming it, before any CUDA call, so this runs without a device:
 * bad depth, sizes, tags, result sinks, NULL kernel, conduits the calling task is not an
 * end of or that are not live, calls from a CPU task thread and from the main thread.
 *
 * Built in both builds; in the one without GPU support every call gives
 * UTC_ERR_NO_GPU_SUPPORT (UTC_TEST_WITH_CUDA says which build this is).
 */
#include <string.h>

#include "utc_test.h"

#ifndef UTC_TEST_WITH_CUDA
#error "UTC_TEST_WITH_CUDA must be defined by the build"
#endif

#define ITEM 64

enum { NCASES = 21 };

typedef struct {
    utc_task_t base;
    utc_conduit_t *mine, *foreign, *dead; /* A-B, C-D, a destroyed A-B */
    int rc[NCASES];
    char msg[NCASES][300];
    int ncases;
} cpu_task_t;

typedef struct {
    const char *name;
    int want;           /* the status with CUDA */
    const char *needle; /* in the message */
} expect_t;

static const expect_t expected[NCASES] = {
    {"NULL opts", UTC_ERR_INVALID_ARG, "opts is NULL"},
    {"NULL out", UTC_ERR_INVALID_ARG, "out is NULL"},
    {"depth 0", UTC_ERR_INVALID_ARG, "depth 0 is outside 1 .. 64"},
    {"depth -3", UTC_ERR_INVALID_ARG, "depth -3 is outside"},
    {"depth 65", UTC_ERR_INVALID_ARG, "depth 65 is outside"},
    {"no input conduit", UTC_ERR_INVALID_ARG, "opts->in is NULL"},
    {"item size 0", UTC_ERR_INVALID_ARG, "in_size is 0"},
    {"result without a sink", UTC_ERR_INVALID_ARG, "neither out nor on_result is set"},
    {"result with two sinks", UTC_ERR_INVALID_ARG, "both out and on_result are set"},
    {"sink without a result", UTC_ERR_INVALID_ARG, "out_size is 0 (no result) but out is set"},
    {"bad in_tag", UTC_ERR_INVALID_ARG, "in_tag -1 is outside"},
    {"bad out_tag", UTC_ERR_INVALID_ARG, "out_tag 4194304 is outside"},
    {"huge item", UTC_ERR_INVALID_ARG, "overflow"},
    {"in_owned 2", UTC_ERR_INVALID_ARG, "in_owned is 2 (1: the items are owned buffers"},
    {"input conduit of other tasks", UTC_ERR_NOT_MEMBER, "opts->in: the calling thread cannot"},
    {"output conduit of other tasks", UTC_ERR_NOT_MEMBER, "opts->out: the calling thread"},
    {"destroyed conduit", UTC_ERR_INVALID_HANDLE, "opts->in"},
    {"from a CPU task thread", UTC_ERR_NOT_MEMBER, "which is not a GPU task"},
    {"run: NULL kernel", UTC_ERR_INVALID_ARG, "kernel is NULL"},
    {"run from a CPU task thread", UTC_ERR_NOT_MEMBER, "which is not a GPU task"},
    {"next and done on NULL", UTC_ERR_INVALID_ARG, "the pipeline is NULL"},
};

static int launch_nothing(utc_gpu_item_t *item, void *arg)
{
    (void)item, (void)arg;
    return 0;
}

static int take_result(const void *r, size_t size, uint64_t index, void *arg)
{
    (void)r, (void)size, (void)index, (void)arg;
    return 0;
}

static void record(cpu_task_t *t, int rc)
{
    int i = t->ncases++;
    t->rc[i] = rc;
    snprintf(t->msg[i], sizeof t->msg[i], "%s", utc_last_error());
}

/* A valid set of options on the task's own conduit. */
static utc_gpu_pipeline_options_t good(cpu_task_t *t)
{
    utc_gpu_pipeline_options_t o = UTC_GPU_PIPELINE_OPTIONS_INIT;
    o.in = t->mine;
    o.in_size = ITEM;
    o.out = t->mine;
    o.out_tag = 1;
    o.out_size = ITEM;
    return o;
}

static int a_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx, (void)arg;
    cpu_task_t *t = (cpu_task_t *)self;
    utc_gpu_pipeline_t *p = NULL;
    utc_gpu_pipeline_options_t o;

    record(t, utc_gpu_pipeline_create(NULL, &p));
    o = good(t);
    record(t, utc_gpu_pipeline_create(&o, NULL));
    static const int depths[] = {0, -3, UTC_GPU_PIPELINE_DEPTH_MAX + 1};
    for (int i = 0; i < 3; i++) {
        o = good(t);
        o.depth = depths[i];
        record(t, utc_gpu_pipeline_create(&o, &p));
    }
    o = good(t);
    o.in = NULL;
    record(t, utc_gpu_pipeline_create(&o, &p));
    o = good(t);
    o.in_size = 0;
    record(t, utc_gpu_pipeline_create(&o, &p));
    o = good(t);
    o.out = NULL;
    record(t, utc_gpu_pipeline_create(&o, &p));
    o = good(t);
    o.on_result = take_result;
    record(t, utc_gpu_pipeline_create(&o, &p));
    o = good(t);
    o.out_size = 0;
    record(t, utc_gpu_pipeline_create(&o, &p));
    o = good(t);
    o.in_tag = -1;
    record(t, utc_gpu_pipeline_create(&o, &p));
    o = good(t);
    o.out_tag = UTC_CONDUIT_TAG_MAX + 1;
    record(t, utc_gpu_pipeline_create(&o, &p));
    o = good(t);
    o.in_size = SIZE_MAX / 2;
    record(t, utc_gpu_pipeline_create(&o, &p));
    o = good(t);
    o.in_owned = 2;
    record(t, utc_gpu_pipeline_create(&o, &p));
    o = good(t);
    o.in = t->foreign;
    record(t, utc_gpu_pipeline_create(&o, &p));
    o = good(t);
    o.out = t->foreign;
    record(t, utc_gpu_pipeline_create(&o, &p));
    o = good(t);
    o.in = t->dead;
    record(t, utc_gpu_pipeline_create(&o, &p));
    o = good(t);
    record(t, utc_gpu_pipeline_create(&o, &p)); /* valid, but this is a CPU task */
    record(t, utc_gpu_pipeline_run(&o, NULL, NULL, NULL));
    uint64_t n = 99;
    record(t, utc_gpu_pipeline_run(&o, launch_nothing, NULL, &n));
    if (n != 0)
        t->rc[t->ncases - 1] = 12345; /* processed must be set to 0 on error */
    utc_gpu_item_t it;
    int rc = utc_gpu_pipeline_next(NULL, &it);
    int rc2 = utc_gpu_pipeline_done(NULL, &it);
    record(t, rc == rc2 ? rc : 12345);
    utc_gpu_pipeline_destroy(NULL);          /* ignored */
    return p == NULL ? 0 : UTC_ERR_INTERNAL; /* nothing may have been made */
}

static const utc_task_ops_t a_ops = {
    .name = "pipe-err-a", .size = sizeof(cpu_task_t), .run = a_run};
static int idle_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    return 0;
}

static const utc_task_ops_t other_ops = {
    .name = "pipe-err-other", .size = sizeof(utc_task_t), .run = idle_run};

static void check(const cpu_task_t *t)
{
    CU_ASSERT_EQUAL(t->ncases, NCASES);
    for (int i = 0; i < t->ncases && i < NCASES; i++) {
        const expect_t *e = &expected[i];
        int want = UTC_TEST_WITH_CUDA ? e->want : UTC_ERR_NO_GPU_SUPPORT;
        const char *needle = UTC_TEST_WITH_CUDA ? e->needle : "without GPU support";
        int ok = t->rc[i] == want && strstr(t->msg[i], needle);
        if (!ok)
            fprintf(stderr, "[rank %d] case '%s': got %d (%s), want %d with '%s'\n",
                    utc_test_rank(), e->name, t->rc[i], t->msg[i], want, needle);
        CU_ASSERT(ok);
    }
}

static void test_bad_arguments(void)
{
    int last = utc_nranks() - 1;
    int a_procs[] = {0}, b_procs[] = {last};
    utc_task_t *a, *b, *c, *d;
    UTC_ASSERT_OK(utc_task_create(&a_ops, a_procs, 1, NULL, &a));
    UTC_ASSERT_OK(utc_task_create(&other_ops, b_procs, 1, NULL, &b));
    UTC_ASSERT_OK(utc_task_create(&other_ops, a_procs, 1, NULL, &c));
    UTC_ASSERT_OK(utc_task_create(&other_ops, b_procs, 1, NULL, &d));
    cpu_task_t *t = (cpu_task_t *)a;
    UTC_ASSERT_OK(utc_conduit_create(a, b, NULL, &t->mine));
    UTC_ASSERT_OK(utc_conduit_create(c, d, NULL, &t->foreign));
    UTC_ASSERT_OK(utc_conduit_create(a, b, NULL, &t->dead));
    UTC_ASSERT_OK(utc_conduit_destroy(t->dead));

    UTC_ASSERT_OK(utc_task_run(a, NULL));
    UTC_ASSERT_OK(utc_task_wait(a));
    if (utc_rank() == 0)
        check(t);

    /* the main thread is no task thread: the conduit check says so first */
    utc_gpu_pipeline_options_t o = good(t);
    utc_gpu_pipeline_t *p = NULL;
    int rc = utc_gpu_pipeline_create(&o, &p);
    CU_ASSERT_EQUAL(rc, UTC_TEST_WITH_CUDA ? UTC_ERR_NOT_MEMBER : UTC_ERR_NO_GPU_SUPPORT);
    CU_ASSERT_PTR_NULL(p);

    UTC_ASSERT_OK(utc_conduit_destroy(t->mine));
    UTC_ASSERT_OK(utc_conduit_destroy(t->foreign));
    UTC_ASSERT_OK(utc_task_destroy(d));
    UTC_ASSERT_OK(utc_task_destroy(c));
    UTC_ASSERT_OK(utc_task_destroy(b));
    UTC_ASSERT_OK(utc_task_destroy(a));
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"bad pipeline arguments, refused before CUDA", test_bad_arguments}, UTC_TEST_END};
    return utc_test_main(argc, argv, "gpu pipeline errors", cases);
}
