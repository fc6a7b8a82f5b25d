/*
 * Example 5: a GPU task (doc/guide/tutorial.md, step 5).
 *
 * A task created with kind UTC_TASK_GPU gives each of its threads a GPU and a CUDA stream
 * of its own. Its data lives in utc_gpu_data_t buffers, which keep a host and a device
 * copy and copy only when the other side has changed. Their memory kind (pageable,
 * pinned or unified) is a task option, so the task code does not change to try each:
 *
 *   utcrun -np 1 example_gpu_task --mem pinned
 *
 * Exits 77 (the "skipped" code of the tests) when UTC has no GPU support or a rank sees
 * no GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utc/utc.h>

#include "gpu_kernel.h"

typedef struct {
    utc_task_t base;
    size_t n;
    int errors;
} saxpy_task_t;

static int saxpy_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    saxpy_task_t *t = (saxpy_task_t *)self;
    size_t n = t->n;
    float *host = malloc(n * sizeof *host);
    utc_gpu_data_t *x = NULL, *y = NULL;
    utc_status_t rc = host ? UTC_OK : UTC_ERR_NO_MEMORY;
    /* buffers of the task's memory kind (its mem_kind option), on this thread's device */
    if (rc == UTC_OK)
        rc = utc_gpu_data_create_default(sizeof(float), n, 1, 1, &x);
    if (rc == UTC_OK)
        rc = utc_gpu_data_create_default(sizeof(float), n, 1, 1, &y);
    if (rc == UTC_OK) {
        for (size_t i = 0; i < n; i++)
            host[i] = (float)i;
        rc = utc_gpu_data_put_host(x, host); /* x = i: the host copy is current */
    }
    if (rc == UTC_OK) {
        for (size_t i = 0; i < n; i++)
            host[i] = (float)ctx->global_id;
        rc = utc_gpu_data_put_host(y, host); /* y = thread id */
    }
    /* queue the host-to-device copies on this thread's stream; the kernel queued after
     * them on the same stream sees the data */
    if (rc == UTC_OK)
        rc = utc_gpu_data_sync_device(x);
    if (rc == UTC_OK)
        rc = utc_gpu_data_sync_device(y);
    if (rc == UTC_OK) {
        example_saxpy(2.0f, utc_gpu_data_device(x), utc_gpu_data_device(y), n,
                      utc_gpu_stream());
        rc = utc_gpu_check("saxpy launch"); /* the launch's CUDA error, as a status */
    }
    if (rc == UTC_OK)
        rc = utc_gpu_data_mark_device(y); /* the kernel wrote the device copy */
    if (rc == UTC_OK)
        rc = utc_gpu_data_fetch_host(y, host); /* one device-to-host copy; waits */
    if (rc == UTC_OK) {
        int errors = 0;
        for (size_t i = 0; i < n; i++)
            if (host[i] != 2.0f * (float)i + (float)ctx->global_id)
                errors++;
        printf("thread %d on rank %d, GPU %d: saxpy of %zu floats, %d wrong\n",
               ctx->global_id, ctx->world_rank, utc_gpu_device(), n, errors);
        if (errors)
            rc = UTC_ERR_INTERNAL;
    }
    utc_gpu_data_destroy(y);
    utc_gpu_data_destroy(x);
    free(host);
    return rc;
}

static const utc_task_ops_t saxpy_ops = {
    .name = "saxpy", .size = sizeof(saxpy_task_t), .run = saxpy_run};

static int usage(const char *prog, int rc)
{
    printf("usage: %s [--n FLOATS] [--mem pageable|pinned|unified] [--help] [--version]\n"
           "A GPU task, one thread per rank, computes y = 2x + y on FLOATS numbers\n"
           "(default 1000000) in buffers of the given memory kind (default pageable).\n"
           "Exits 77 when there is no GPU. Launch with: utcrun -np RANKS %s\n", prog, prog);
    return rc;
}

int main(int argc, char **argv)
{
    long n = 1000000;
    utc_mem_kind_t mem = UTC_MEM_PAGEABLE;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return usage(argv[0], 0);
        if (!strcmp(argv[i], "--version")) {
            printf("example_gpu_task (UTC) %s\n", utc_version_string());
            return 0;
        }
        if (!strcmp(argv[i], "--n") && i + 1 < argc) {
            n = atol(argv[++i]);
        } else if (!strcmp(argv[i], "--mem") && i + 1 < argc) {
            const char *m = argv[++i];
            if (!strcmp(m, "pageable"))
                mem = UTC_MEM_PAGEABLE;
            else if (!strcmp(m, "pinned"))
                mem = UTC_MEM_PINNED;
            else if (!strcmp(m, "unified"))
                mem = UTC_MEM_UNIFIED;
            else
                return usage(argv[0], 2);
        } else {
            return usage(argv[0], 2);
        }
    }
    if (n < 1) {
        fprintf(stderr, "--n must be >= 1\n");
        return 2;
    }
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "utc_init: %s\n", utc_last_error());
        return 1;
    }
    if (!utc_gpu_supported()) { /* the same answer on every rank */
        if (utc_rank() == 0)
            printf("skipped: this UTC was built without GPU support\n");
        utc_finalize();
        return 77;
    }
    int ranks = utc_nranks();
    int *procs = malloc(sizeof(int) * (size_t)ranks);
    for (int r = 0; procs && r < ranks; r++)
        procs[r] = r; /* one GPU thread per rank */

    utc_task_options_t opts = UTC_TASK_OPTIONS_INIT;
    opts.kind = UTC_TASK_GPU; /* each thread gets a device (round robin) and a stream */
    opts.mem_kind = mem;
    opts.window_size = 0;     /* no global shared data: no RMA window */
    utc_task_t *task = NULL;
    utc_status_t rc = procs ? utc_task_create(&saxpy_ops, procs, ranks, &opts, &task)
                            : UTC_ERR_NO_MEMORY;
    free(procs);
    if (rc == UTC_ERR_NO_DEVICE) { /* creation failed on every rank, with this status */
        if (utc_rank() == 0) /* the message says which rank, and CUDA's reason */
            printf("skipped: a rank sees no GPU: %s\n", utc_last_error());
        utc_finalize();
        return 77;
    }
    if (rc == UTC_OK) {
        ((saxpy_task_t *)task)->n = (size_t)n;
        if ((rc = utc_task_run(task, NULL)) == UTC_OK)
            rc = utc_task_wait(task);
    }
    if (rc != UTC_OK)
        fprintf(stderr, "rank %d: %s (%s)\n", utc_rank(), utc_status_string(rc),
                utc_last_error());
    if (task)
        utc_task_destroy(task);
    utc_status_t frc = utc_finalize(); /* fails when, say, the UTC_TRACE file was lost */
    if (frc != UTC_OK)
        fprintf(stderr, "utc_finalize: %s\n", utc_last_error());
    return rc == UTC_OK && frc == UTC_OK ? 0 : 1;
}
