/*
 * GPU API errors that need no GPU: the build's kind (CUDA or stub), GPU task creation on
 * ranks without a device, utc_gpu_* calls outside a GPU task, bad arguments.
 *
 * Built in both builds. UTC_TEST_WITH_CUDA (1 or 0) says which one this is, so the test
 * also checks that the build picked the right implementation.
 */
#include <mpi.h>
#include <string.h>

#include "utc_test.h"

#ifndef UTC_TEST_WITH_CUDA
#error "UTC_TEST_WITH_CUDA must be defined by the build"
#endif

static void expect_error(int rc, int want, const char *needle)
{
    CU_ASSERT_EQUAL(rc, want);
    if (rc != want)
        fprintf(stderr, "[rank %d] got %d (%s), want %d: %s\n", utc_test_rank(), rc,
                utc_status_string(rc), want, utc_last_error());
    if (needle) {
        if (!strstr(utc_last_error(), needle))
            fprintf(stderr, "[rank %d] last error '%s' lacks '%s'\n", utc_test_rank(),
                    utc_last_error(), needle);
        CU_ASSERT_PTR_NOT_NULL(strstr(utc_last_error(), needle));
    }
}

/* The status a utc_gpu_* call must give where CUDA would answer `cuda_rc`. */
static int in_this_build(int cuda_rc)
{
    return UTC_TEST_WITH_CUDA ? cuda_rc : UTC_ERR_NO_GPU_SUPPORT;
}

static const char *msg_in_this_build(const char *cuda_msg)
{
    return UTC_TEST_WITH_CUDA ? cuda_msg : "without GPU support";
}

/* The smallest device count over all ranks (negative: no GPU support). */
static int min_device_count(void)
{
    int n = utc_gpu_device_count(), min = n;
    MPI_Allreduce(&n, &min, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return min;
}

static void test_build_kind(void)
{
    CU_ASSERT_EQUAL(utc_gpu_supported(), UTC_TEST_WITH_CUDA);
    int n = utc_gpu_device_count();
    if (UTC_TEST_WITH_CUDA) {
        CU_ASSERT(n >= 0); /* 0 on a machine without a GPU or driver: not an error */
    } else {
        expect_error(n, UTC_ERR_NO_GPU_SUPPORT, "utc_gpu_device_count");
    }
}

/* Why there is no GPU, in CUDA's words; a missing GPU fails under UTC_REQUIRE_GPU=1. */
static void test_unavailable_reason(void)
{
    int n = utc_gpu_device_count();
    const char *why = utc_gpu_unavailable_reason();
    if (!UTC_TEST_WITH_CUDA) {
        CU_ASSERT_PTR_NOT_NULL_FATAL(why);
        CU_ASSERT_PTR_NOT_NULL(strstr(why, "without GPU support"));
    } else if (n > 0) {
        CU_ASSERT_PTR_NULL(why);
    } else {
        /* CUDA's message, its error's name, and both versions */
        CU_ASSERT_PTR_NOT_NULL_FATAL(why);
        CU_ASSERT_PTR_NOT_NULL(strstr(why, "driver "));
        CU_ASSERT_PTR_NOT_NULL(strstr(why, "runtime "));
        CU_ASSERT(n == 0 ? strlen(why) > 30 : strstr(why, "cuda") != NULL);
    }
    CU_ASSERT_PTR_EQUAL(utc_gpu_unavailable_reason(), why); /* probed once */
    if (utc_test_gpu_required() && why) {
        printf("rank %d: UTC_REQUIRE_GPU=1, but no usable GPU: %s\n", utc_test_rank(), why);
        CU_FAIL("UTC_REQUIRE_GPU=1 and no usable GPU");
    }
}

static void test_calls_outside_a_task(void)
{
    int want = in_this_build(UTC_ERR_NOT_MEMBER);
    const char *msg = msg_in_this_build("not a thread of a GPU task");
    expect_error(utc_gpu_device(), want, msg);
    CU_ASSERT_PTR_NULL(utc_gpu_stream());
    CU_ASSERT_PTR_NOT_NULL(strstr(utc_last_error(), "utc_gpu_stream"));
    expect_error(utc_gpu_synchronize(), want, msg);
    utc_gpu_data_t *d = (utc_gpu_data_t *)0x1;
    expect_error(utc_gpu_data_create(4, 16, 1, 1, UTC_MEM_PAGEABLE, &d), want, msg);
    expect_error(utc_gpu_data_create_default(8, 4, 4, 4, &d), want, msg);
    CU_ASSERT_PTR_EQUAL(d, (utc_gpu_data_t *)0x1); /* output untouched on failure */
}

static void test_bad_buffer_arguments(void)
{
    utc_gpu_data_t *d = NULL;
    int want = in_this_build(UTC_ERR_INVALID_ARG);
    expect_error(utc_gpu_data_create(4, 16, 1, 1, UTC_MEM_PINNED, NULL), want,
                 msg_in_this_build("out is NULL"));
    expect_error(utc_gpu_data_create(0, 16, 1, 1, UTC_MEM_PINNED, &d), want,
                 msg_in_this_build("must be > 0"));
    expect_error(utc_gpu_data_create(4, 16, 0, 1, UTC_MEM_PINNED, &d), want,
                 msg_in_this_build("must be > 0"));
    expect_error(utc_gpu_data_create(4, 16, 1, 1, (utc_mem_kind_t)7, &d), want,
                 msg_in_this_build("not a utc_mem_kind_t"));
    expect_error(utc_gpu_data_create(8, (size_t)1 << 40, (size_t)1 << 24, 1, UTC_MEM_PINNED, &d),
                 want, msg_in_this_build("overflow"));
    CU_ASSERT_PTR_NULL(d);

    /* a NULL buffer: getters answer, operations fail, destroy ignores it */
    CU_ASSERT_PTR_NULL(utc_gpu_data_host(NULL));
    CU_ASSERT_PTR_NULL(utc_gpu_data_device(NULL));
    CU_ASSERT_EQUAL(utc_gpu_data_size(NULL), 0);
    CU_ASSERT_EQUAL(utc_gpu_data_elem_size(NULL), 0);
    utc_gpu_data_destroy(NULL);
    char buf[8];
    utc_gpu_data_stats_t st;
    expect_error(utc_gpu_data_put_host(NULL, buf), want, msg_in_this_build("NULL"));
    expect_error(utc_gpu_data_put_device(NULL, buf), want, msg_in_this_build("NULL"));
    expect_error(utc_gpu_data_fetch_host(NULL, buf), want, msg_in_this_build("NULL"));
    expect_error(utc_gpu_data_fetch_device(NULL, buf), want, msg_in_this_build("NULL"));
    expect_error(utc_gpu_data_sync_host(NULL), want, msg_in_this_build("NULL"));
    expect_error(utc_gpu_data_sync_device(NULL), want, msg_in_this_build("NULL"));
    expect_error(utc_gpu_data_mark_host(NULL), want, msg_in_this_build("NULL"));
    expect_error(utc_gpu_data_mark_device(NULL), want, msg_in_this_build("NULL"));
    expect_error(utc_gpu_data_wait(NULL), want, msg_in_this_build("NULL"));
    expect_error(utc_gpu_data_stats(NULL, &st), want, msg_in_this_build("NULL"));
    expect_error(utc_gpu_data_reset_stats(NULL), want, msg_in_this_build("NULL"));
    expect_error(utc_gpu_data_dims(NULL, NULL, NULL, NULL), want, msg_in_this_build("NULL"));
    CU_ASSERT(utc_gpu_data_device_id(NULL) < 0);
}

/* ---- from inside a CPU task ---- */

typedef struct {
    utc_task_t base;
    int device_rc[16], sync_rc[16], create_rc[16];
    int stream_null[16], msg_ok[16];
} cpu_task_t;

static int cpu_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    cpu_task_t *t = (cpu_task_t *)self;
    int i = ctx->local_id;
    t->device_rc[i] = utc_gpu_device();
    t->msg_ok[i] = strstr(utc_last_error(),
                          msg_in_this_build("'gpu-errors-cpu', which is not a GPU task")) != NULL;
    t->stream_null[i] = utc_gpu_stream() == NULL;
    t->sync_rc[i] = utc_gpu_synchronize();
    utc_gpu_data_t *d = NULL;
    t->create_rc[i] = utc_gpu_data_create_default(4, 8, 1, 1, &d);
    utc_gpu_data_destroy(d); /* NULL: nothing was made */
    return 0;
}

static const utc_task_ops_t cpu_ops = {
    .name = "gpu-errors-cpu", .size = sizeof(cpu_task_t), .run = cpu_run};

static void test_calls_in_a_cpu_task(void)
{
    int procs[6];
    int n = utc_procs_spread(procs, 6, 0, utc_nranks(), 2);
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.mem_kind = UTC_MEM_PINNED; /* a CPU task may carry it; it is only read */
    utc_task_t *task;
    UTC_ASSERT_OK(utc_task_create(&cpu_ops, procs, n, &o, &task));
    CU_ASSERT_EQUAL(utc_task_mem_kind(task), UTC_MEM_PINNED);
    UTC_ASSERT_OK(utc_task_run(task, NULL));
    UTC_ASSERT_OK(utc_task_wait(task));
    cpu_task_t *t = (cpu_task_t *)task;
    int want = in_this_build(UTC_ERR_NOT_MEMBER);
    for (int i = 0; i < utc_task_local_nthreads(task); i++) {
        CU_ASSERT_EQUAL(t->device_rc[i], want);
        CU_ASSERT(t->msg_ok[i]);
        CU_ASSERT(t->stream_null[i]);
        CU_ASSERT_EQUAL(t->sync_rc[i], want);
        CU_ASSERT_EQUAL(t->create_rc[i], want);
    }
    UTC_ASSERT_OK(utc_task_destroy(task));
}

/* ---- creating GPU tasks ---- */

typedef struct {
    utc_task_t base;
    int device[16];
    int stream_ok[16];
} gpu_task_t;

static int gpu_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    gpu_task_t *t = (gpu_task_t *)self;
    t->device[ctx->local_id] = utc_gpu_device();
    t->stream_ok[ctx->local_id] = utc_gpu_stream() != NULL;
    return utc_gpu_synchronize();
}

static const utc_task_ops_t gpu_ops = {
    .name = "gpu-errors-gpu", .size = sizeof(gpu_task_t), .run = gpu_run};

static void test_gpu_task_creation(void)
{
    int ndev = min_device_count();
    int procs[6];
    int n = utc_procs_spread(procs, 6, 0, utc_nranks(), 2);
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.kind = UTC_TASK_GPU;
    utc_task_t *task = (utc_task_t *)0x1;
    int rc = utc_task_create(&gpu_ops, procs, n, &o, &task);
    if (!UTC_TEST_WITH_CUDA) {
        expect_error(rc, UTC_ERR_NO_GPU_SUPPORT, "built without GPU support");
        CU_ASSERT_PTR_EQUAL(task, (utc_task_t *)0x1);
    } else if (ndev == 0) {
        expect_error(rc, UTC_ERR_NO_DEVICE, "no CUDA device is visible to this rank");
        CU_ASSERT_PTR_NOT_NULL(strstr(utc_last_error(), utc_gpu_unavailable_reason()));
        CU_ASSERT_PTR_NOT_NULL(strstr(utc_last_error(), "'gpu-errors-gpu'"));
        CU_ASSERT_PTR_EQUAL(task, (utc_task_t *)0x1);
    } else {
        /* a machine with a GPU: the task works */
        UTC_ASSERT_OK(rc);
        UTC_ASSERT_OK(utc_task_run(task, NULL));
        UTC_ASSERT_OK(utc_task_wait(task));
        gpu_task_t *t = (gpu_task_t *)task;
        for (int i = 0; i < utc_task_local_nthreads(task); i++) {
            CU_ASSERT_EQUAL(t->device[i], i % ndev);
            CU_ASSERT(t->stream_ok[i]);
        }
        UTC_ASSERT_OK(utc_task_destroy(task));
    }

    /* a GPU task whose threads all live on rank 0: only rank 0 needs a device */
    int on_zero[2] = {0, 0};
    task = (utc_task_t *)0x1;
    rc = utc_task_create(&gpu_ops, on_zero, 2, &o, &task);
    int dev0 = utc_gpu_device_count();
    MPI_Bcast(&dev0, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!UTC_TEST_WITH_CUDA) {
        expect_error(rc, UTC_ERR_NO_GPU_SUPPORT, NULL);
    } else if (dev0 == 0) {
        /* rank 0 fails with the reason; the others learn that it failed */
        expect_error(rc, UTC_ERR_NO_DEVICE,
                     utc_test_rank() == 0 ? "no CUDA device" : "failed on another rank");
    } else {
        UTC_ASSERT_OK(rc);
        UTC_ASSERT_OK(utc_task_destroy(task));
    }
}

static void test_gpu_task_device_list(void)
{
    int ndev = min_device_count();
    int procs[1] = {0};
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.kind = UTC_TASK_GPU;
    utc_task_t *task;

    int negative[1] = {-1};
    o.devices = negative;
    o.devices_len = 1;
    expect_error(utc_task_create(&gpu_ops, procs, 1, &o, &task),
                 in_this_build(UTC_ERR_INVALID_ARG), msg_in_this_build("is negative"));

    int too_big[2] = {0, 1000};
    o.devices = too_big;
    o.devices_len = 2;
    int rc = utc_task_create(&gpu_ops, procs, 1, &o, &task);
    if (!UTC_TEST_WITH_CUDA)
        expect_error(rc, UTC_ERR_NO_GPU_SUPPORT, NULL);
    else if (ndev == 0)
        expect_error(rc, UTC_ERR_NO_DEVICE, NULL);
    else
        expect_error(rc, UTC_ERR_OUT_OF_RANGE, utc_test_rank() == 0 ? "devices[1] = 1000" : NULL);
}

static void test_cpu_tasks_still_work(void)
{
    /* after the failed GPU task creations above: nothing leaked into the next task */
    int procs[3];
    int n = utc_procs_spread(procs, 3, 0, utc_nranks(), 1);
    utc_task_t *task;
    UTC_ASSERT_OK(utc_task_create(&cpu_ops, procs, n, NULL, &task));
    UTC_ASSERT_OK(utc_task_run(task, NULL));
    UTC_ASSERT_OK(utc_task_wait(task));
    CU_ASSERT_EQUAL(((cpu_task_t *)task)->device_rc[0], in_this_build(UTC_ERR_NOT_MEMBER));
    UTC_ASSERT_OK(utc_task_destroy(task));
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"build kind and device count", test_build_kind},
        {"why no GPU: CUDA's reason", test_unavailable_reason},
        {"utc_gpu_* outside a task", test_calls_outside_a_task},
        {"bad buffer arguments", test_bad_buffer_arguments},
        {"utc_gpu_* in a CPU task", test_calls_in_a_cpu_task},
        {"GPU task creation (no device: UTC_ERR_NO_DEVICE)", test_gpu_task_creation},
        {"GPU task device list", test_gpu_task_device_list},
        {"CPU tasks still work", test_cpu_tasks_still_work},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "gpu errors", cases);
}
