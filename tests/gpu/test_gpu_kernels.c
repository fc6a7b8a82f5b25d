/*
 * GPU tasks running kernels: each thread has its device and its own non-blocking stream,
 * several threads and tasks on one device give right answers, their kernels overlap, and
 * CUDA errors surface as UTC_ERR_GPU. Needs a GPU: exits 77 (skipped) without one.
 */
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "utc_test.h"

#define MAX_LOCAL 16

static int ndev; /* devices on every rank (the smallest count) */

static void test_need_a_gpu(void)
{
    int min = utc_test_need_gpu();
    ndev = min;
    CU_ASSERT(utc_gpu_supported());
}

/* ---- a vector-add task; every thread checks its own answer ---- */

typedef struct {
    utc_task_t base;
    int device[MAX_LOCAL];
    void *stream[MAX_LOCAL];
    int cuda_device[MAX_LOCAL];   /* cudaGetDevice in the thread */
    unsigned stream_flags[MAX_LOCAL];
    long bad[MAX_LOCAL];          /* wrong elements of the last run */
    int runs[MAX_LOCAL];
} vadd_task_t;

/* Fail with a status and a note of where. */
#define TRY(expr)                                                                        \
    do {                                                                                 \
        int try_rc_ = (expr);                                                            \
        if (try_rc_ != 0) {                                                              \
            fprintf(stderr, "[rank %d] %s:%d: %s = %d: %s\n", utc_test_rank(), __FILE__,   \
                    __LINE__, #expr, try_rc_, utc_last_error());                         \
            return try_rc_ < 0 ? try_rc_ : UTC_ERR_GPU;                                  \
        }                                                                                \
    } while (0)

static int vadd_once(size_t n, float offset, long *bad)
{
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    utc_gpu_data_t *da = NULL, *db = NULL, *dc = NULL;
    int rc = UTC_ERR_NO_MEMORY;
    if (!a || !b || !c)
        goto out;
    for (size_t i = 0; i < n; i++) {
        a[i] = (float)i;
        b[i] = offset;
        c[i] = -1.0f;
    }
    if ((rc = utc_gpu_data_create_default(sizeof(float), n, 1, 1, &da)) ||
        (rc = utc_gpu_data_create_default(sizeof(float), n, 1, 1, &db)) ||
        (rc = utc_gpu_data_create_default(sizeof(float), n, 1, 1, &dc)))
        goto out;
    if ((rc = utc_gpu_data_put_host(da, a)) || (rc = utc_gpu_data_put_host(db, b)) ||
        (rc = utc_gpu_data_sync_device(da)) || (rc = utc_gpu_data_sync_device(db)))
        goto out;
    if (utc_test_vadd(utc_gpu_data_device(da), utc_gpu_data_device(db), utc_gpu_data_device(dc),
                      n, utc_gpu_stream()) != 0) {
        rc = utc_gpu_check("vadd launch");
        goto out;
    }
    if ((rc = utc_gpu_data_mark_device(dc)) || (rc = utc_gpu_data_fetch_host(dc, c)))
        goto out;
    long wrong = 0;
    for (size_t i = 0; i < n; i++)
        wrong += c[i] != (float)i + offset;
    *bad = wrong;
out:
    if (rc)
        fprintf(stderr, "[rank %d] vadd_once: %d: %s\n", utc_test_rank(), rc, utc_last_error());
    utc_gpu_data_destroy(dc);
    utc_gpu_data_destroy(db);
    utc_gpu_data_destroy(da);
    free(c);
    free(b);
    free(a);
    return rc;
}

static int vadd_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    vadd_task_t *t = (vadd_task_t *)self;
    int i = ctx->local_id;
    if (i >= MAX_LOCAL)
        return UTC_ERR_OUT_OF_RANGE;
    t->device[i] = utc_gpu_device();
    t->stream[i] = utc_gpu_stream();
    TRY(cudaGetDevice(&t->cuda_device[i]));
    TRY(cudaStreamGetFlags((cudaStream_t)t->stream[i], &t->stream_flags[i]));
    /* sizes differ per thread, odd on purpose: covers partial blocks */
    size_t n = ((size_t)1 << 20) + 1000 * (size_t)ctx->global_id + 7;
    TRY(vadd_once(n, 0.5f * (float)(ctx->global_id + 1), &t->bad[i]));
    t->runs[i]++;
    return 0;
}

static const utc_task_ops_t vadd_ops = {.name = "vadd", .size = sizeof(vadd_task_t), .run = vadd_run};

static utc_task_t *make_vadd_task(int per_rank, const int *devices, int ndevices)
{
    int procs[3 * MAX_LOCAL];
    int n = utc_procs_spread(procs, 3 * MAX_LOCAL, 0, utc_nranks(), per_rank);
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.kind = UTC_TASK_GPU;
    o.devices = devices;
    o.devices_len = ndevices;
    utc_task_t *task = NULL;
    int rc = utc_task_create(&vadd_ops, procs, n, &o, &task);
    if (rc != UTC_OK)
        utc_test_report_(__FILE__, __LINE__, "utc_task_create", rc);
    CU_ASSERT_EQUAL_FATAL(rc, UTC_OK);
    return task;
}

static void check_vadd_task(utc_task_t *task, int runs, const int *devices, int ndevices)
{
    vadd_task_t *t = (vadd_task_t *)task;
    int nl = utc_task_local_nthreads(task);
    for (int i = 0; i < nl; i++) {
        int want = ndevices > 0 ? devices[i % ndevices] : i % ndev;
        CU_ASSERT_EQUAL(t->device[i], want);
        CU_ASSERT_EQUAL(t->cuda_device[i], want);
        CU_ASSERT_PTR_NOT_NULL(t->stream[i]);
        CU_ASSERT(t->stream_flags[i] & cudaStreamNonBlocking);
        CU_ASSERT_EQUAL(t->bad[i], 0);
        CU_ASSERT_EQUAL(t->runs[i], runs);
        for (int j = 0; j < i; j++)
            CU_ASSERT_PTR_NOT_EQUAL(t->stream[i], t->stream[j]); /* a stream per thread */
    }
}

static void test_threads_and_streams(void)
{
    utc_task_t *task = make_vadd_task(4, NULL, 0);
    for (int r = 0; r < 3; r++)
        UTC_ASSERT_OK(utc_task_run(task, NULL));
    UTC_ASSERT_OK(utc_task_wait(task));
    check_vadd_task(task, 3, NULL, 0);
    UTC_ASSERT_OK(utc_task_destroy(task));
}

static void test_several_tasks_at_once(void)
{
    enum { NTASKS = 4 };
    utc_task_t *tasks[NTASKS];
    for (int k = 0; k < NTASKS; k++)
        tasks[k] = make_vadd_task(2, NULL, 0);
    for (int k = 0; k < NTASKS; k++) /* all queued before any wait: they run together */
        UTC_ASSERT_OK(utc_task_run(tasks[k], NULL));
    for (int k = 0; k < NTASKS; k++)
        UTC_ASSERT_OK(utc_task_wait(tasks[k]));
    for (int k = 0; k < NTASKS; k++) {
        check_vadd_task(tasks[k], 1, NULL, 0);
        UTC_ASSERT_OK(utc_task_destroy(tasks[k]));
    }
}

static void test_explicit_device_list(void)
{
    int last[1] = {ndev - 1};
    utc_task_t *task = make_vadd_task(3, last, 1);
    UTC_ASSERT_OK(utc_task_run(task, NULL));
    UTC_ASSERT_OK(utc_task_wait(task));
    check_vadd_task(task, 1, last, 1);
    UTC_ASSERT_OK(utc_task_destroy(task));

    int two[2] = {ndev - 1, 0};
    task = make_vadd_task(4, two, 2);
    UTC_ASSERT_OK(utc_task_run(task, NULL));
    UTC_ASSERT_OK(utc_task_wait(task));
    check_vadd_task(task, 1, two, 2);
    UTC_ASSERT_OK(utc_task_destroy(task));
}

/* ---- kernels of two threads on one device overlap in time ---- */

typedef struct {
    utc_task_t base;
    unsigned long long stamps[MAX_LOCAL][2];
} spin_task_t;

static int spin_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    spin_task_t *t = (spin_task_t *)self;
    utc_gpu_data_t *d;
    TRY(utc_gpu_data_create(sizeof(unsigned long long), 2, 1, 1, UTC_MEM_PINNED, &d));
    int rc = utc_ctx_barrier_local(ctx); /* launch at about the same time */
    if (rc == UTC_OK && utc_test_spin(200000000ull, utc_gpu_data_device(d), utc_gpu_stream()))
        rc = utc_gpu_check("spin launch");
    if (rc == UTC_OK && (rc = utc_gpu_data_mark_device(d)) == UTC_OK)
        rc = utc_gpu_data_fetch_host(d, t->stamps[ctx->local_id]);
    utc_gpu_data_destroy(d);
    return rc;
}

static const utc_task_ops_t spin_ops = {.name = "spin", .size = sizeof(spin_task_t), .run = spin_run};

static void test_kernels_run_at_once(void)
{
    int procs[6];
    int n = utc_procs_spread(procs, 6, 0, utc_nranks(), 2);
    int dev0[1] = {0};
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.kind = UTC_TASK_GPU;
    o.devices = dev0; /* both threads on one device, each on its own stream */
    o.devices_len = 1;
    utc_task_t *task;
    UTC_ASSERT_OK(utc_task_create(&spin_ops, procs, n, &o, &task));
    UTC_ASSERT_OK(utc_task_run(task, NULL));
    UTC_ASSERT_OK(utc_task_wait(task));
    spin_task_t *t = (spin_task_t *)task;
    unsigned long long s0 = t->stamps[0][0], e0 = t->stamps[0][1];
    unsigned long long s1 = t->stamps[1][0], e1 = t->stamps[1][1];
    CU_ASSERT(e0 - s0 >= 200000000ull && e1 - s1 >= 200000000ull);
    /* the intervals overlap: the later start is before the earlier end */
    unsigned long long later_start = s0 > s1 ? s0 : s1, earlier_end = e0 < e1 ? e0 : e1;
    if (later_start >= earlier_end)
        fprintf(stderr, "[rank %d] kernels did not overlap: [%llu, %llu] and [%llu, %llu]\n",
                utc_test_rank(), s0, e0, s1, e1);
    CU_ASSERT(later_start < earlier_end);
    UTC_ASSERT_OK(utc_task_destroy(task));
}

/* ---- CUDA errors become UTC_ERR_GPU with CUDA's message ---- */

typedef struct {
    utc_task_t base;
    int launch_rc, check_rc, check_again_rc, alloc_rc, wrong_device_rc;
    char launch_msg[256], alloc_msg[256];
} cuda_err_task_t;

static int cuda_err_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg, (void)ctx;
    cuda_err_task_t *t = (cuda_err_task_t *)self;
    /* zero blocks: an invalid launch configuration */
    t->launch_rc = utc_test_vadd(NULL, NULL, NULL, 0, utc_gpu_stream());
    t->check_rc = utc_gpu_check("vadd with n = 0");
    snprintf(t->launch_msg, sizeof t->launch_msg, "%s", utc_last_error());
    t->check_again_rc = utc_gpu_check("again"); /* cleared by the first check */
    utc_gpu_data_t *d = (utc_gpu_data_t *)0x1;
    /* more than any machine has (pinned host memory is allocated first) */
    t->alloc_rc = utc_gpu_data_create(1, (size_t)1 << 50, 1, 1, UTC_MEM_PINNED, &d);
    snprintf(t->alloc_msg, sizeof t->alloc_msg, "%s", utc_last_error());
    if (d != (utc_gpu_data_t *)0x1)
        t->alloc_rc = 12345;
    return utc_gpu_synchronize(); /* the stream is still usable */
}

static const utc_task_ops_t cuda_err_ops = {
    .name = "cuda-errors", .size = sizeof(cuda_err_task_t), .run = cuda_err_run};

/* CUDA's name for a launch of an empty grid: up to CUDA 12 an invalid configuration, from
 * CUDA 13 an invalid value (seen on an H100 with driver and runtime 13.0). */
static int names_zero_grid_error(const char *msg)
{
    return strstr(msg, "cudaErrorInvalidConfiguration") || strstr(msg, "cudaErrorInvalidValue");
}

static void test_cuda_errors(void)
{
    int procs[1] = {0};
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.kind = UTC_TASK_GPU;
    utc_task_t *task;
    UTC_ASSERT_OK(utc_task_create(&cuda_err_ops, procs, 1, &o, &task));
    UTC_ASSERT_OK(utc_task_run(task, NULL));
    UTC_ASSERT_OK(utc_task_wait(task));
    if (utc_test_rank() == 0) {
        cuda_err_task_t *t = (cuda_err_task_t *)task;
        CU_ASSERT_NOT_EQUAL(t->launch_rc, 0);
        CU_ASSERT_EQUAL(t->check_rc, UTC_ERR_GPU);
        CU_ASSERT_PTR_NOT_NULL(strstr(t->launch_msg, "vadd with n = 0"));
        CU_ASSERT_TRUE(names_zero_grid_error(t->launch_msg));
        CU_ASSERT_EQUAL(t->check_again_rc, UTC_OK);
        CU_ASSERT_EQUAL(t->alloc_rc, UTC_ERR_GPU);
        CU_ASSERT_PTR_NOT_NULL(strstr(t->alloc_msg, "cudaMallocHost"));
    }
    UTC_ASSERT_OK(utc_task_destroy(task));
}

/* A run that returns the CUDA error: its text reaches the caller of utc_task_wait. */
static int cuda_fail_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    (void)utc_test_vadd(NULL, NULL, NULL, 0, utc_gpu_stream());
    return utc_gpu_check("vadd with n = 0");
}

static const utc_task_ops_t cuda_fail_ops = {
    .name = "cuda-fail", .size = sizeof(utc_task_t), .run = cuda_fail_run};

static void test_cuda_error_reaches_wait(void)
{
    int procs[2] = {0, 0};
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.kind = UTC_TASK_GPU;
    utc_task_t *task;
    UTC_ASSERT_OK(utc_task_create(&cuda_fail_ops, procs, 2, &o, &task));
    UTC_ASSERT_OK(utc_task_run(task, NULL));
    int rc = utc_task_wait(task);
    if (utc_test_rank() == 0) {
        CU_ASSERT_EQUAL(rc, UTC_ERR_GPU);
        const char *msg = utc_last_error();
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, "utc_task_wait: a run of task 'cuda-fail'"));
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, "vadd with n = 0"));
        CU_ASSERT_TRUE(names_zero_grid_error(msg));
    } else {
        UTC_ASSERT_OK(rc);
    }
    UTC_ASSERT_OK(utc_task_destroy(task));
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"a GPU is present (else skip)", test_need_a_gpu},
        {"threads: device, own stream, vector add", test_threads_and_streams},
        {"several GPU tasks at once", test_several_tasks_at_once},
        {"explicit device list", test_explicit_device_list},
        {"kernels of two threads on one device overlap", test_kernels_run_at_once},
        {"CUDA errors become UTC_ERR_GPU", test_cuda_errors},
        {"a run's CUDA error text reaches utc_task_wait", test_cuda_error_reaches_wait},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "gpu kernels", cases);
}
