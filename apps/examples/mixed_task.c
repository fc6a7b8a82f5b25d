/*
 * A task with a CPU body and a GPU body, whose threads are of both kinds
 * (doc/guide/multiversion.md).
 *
 * The ops table says it has two bodies (.version = UTC_TASK_OPS_VERSION, .run for CPU
 * threads, .run_gpu for GPU threads). Created with kind UTC_TASK_MIXED, the first
 * opts.gpu_threads threads of each rank are GPU threads (a device and a stream each) and
 * the others CPU threads; all of them take chunks of one array from a shared counter, the
 * GPU threads larger ones, and compute y = 2x + y. Where there is no GPU the creation
 * fails on every rank, and the program creates the same task as a CPU task instead: then
 * every thread runs .run.
 *
 *   utcrun -np 1 example_mixed_task --cpu-threads 3
 *
 * --require-gpu exits 77 (the "skipped" code of the tests) instead of falling back.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utc/utc.h>

#include "gpu_kernel.h"

#define CPU_CHUNK 4096      /* floats a CPU thread takes at a time */
#define GPU_CHUNK (1 << 18) /* ... and a GPU thread */

typedef struct {
    utc_task_t base;
    float *x, *y;
    long n;
    atomic_long next;    /* first element not taken yet */
    atomic_long done[2]; /* elements computed by threads of each kind (ctx->kind) */
} saxpy_task_t;

/* The next chunk of at most `chunk` elements: [*lo, *hi). False when none is left. */
static int take(saxpy_task_t *t, long chunk, long *lo, long *hi)
{
    *lo = atomic_fetch_add(&t->next, chunk);
    *hi = *lo + chunk < t->n ? *lo + chunk : t->n;
    return *lo < t->n;
}

/* CPU threads: small chunks, on this core. */
static int saxpy_cpu(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    saxpy_task_t *t = (saxpy_task_t *)self;
    long lo, hi;
    while (take(t, CPU_CHUNK, &lo, &hi)) {
        for (long i = lo; i < hi; i++)
            t->y[i] = 2.0f * t->x[i] + t->y[i];
        atomic_fetch_add(&t->done[ctx->kind], hi - lo);
    }
    return 0;
}

/* GPU threads: large chunks, copied to this thread's device, computed there, copied back. */
static int saxpy_gpu(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    saxpy_task_t *t = (saxpy_task_t *)self;
    long lo, hi;
    utc_status_t rc = UTC_OK;
    while (rc == UTC_OK && take(t, GPU_CHUNK, &lo, &hi)) {
        size_t n = (size_t)(hi - lo);
        utc_gpu_data_t *x = NULL, *y = NULL;
        if ((rc = utc_gpu_data_create_default(sizeof(float), n, 1, 1, &x)) == UTC_OK &&
            (rc = utc_gpu_data_create_default(sizeof(float), n, 1, 1, &y)) == UTC_OK &&
            (rc = utc_gpu_data_put_host(x, t->x + lo)) == UTC_OK &&
            (rc = utc_gpu_data_put_host(y, t->y + lo)) == UTC_OK &&
            (rc = utc_gpu_data_sync_device(x)) == UTC_OK &&
            (rc = utc_gpu_data_sync_device(y)) == UTC_OK) {
            /* on this thread's stream, after the copies */
            example_saxpy(2.0f, utc_gpu_data_device(x), utc_gpu_data_device(y), n,
                          utc_gpu_stream());
            if ((rc = utc_gpu_check("saxpy launch")) == UTC_OK &&
                (rc = utc_gpu_data_mark_device(y)) == UTC_OK)
                rc = utc_gpu_data_fetch_host(y, t->y + lo); /* waits for the stream */
        }
        utc_gpu_data_destroy(y);
        utc_gpu_data_destroy(x);
        if (rc == UTC_OK)
            atomic_fetch_add(&t->done[ctx->kind], hi - lo);
    }
    return rc;
}

static const utc_task_ops_t saxpy_ops = {
    .name = "saxpy-mixed",
    .size = sizeof(saxpy_task_t),
    .version = UTC_TASK_OPS_VERSION, /* the table has the fields after fini: run_gpu */
    .run = saxpy_cpu,                /* CPU threads */
    .run_gpu = saxpy_gpu,            /* GPU threads */
};

static int usage(const char *prog, int rc)
{
    printf("usage: %s [--n FLOATS] [--cpu-threads N] [--require-gpu] [--help] [--version]\n"
           "A task of one GPU thread and N CPU threads (default 2) per rank computes\n"
           "y = 2x + y on FLOATS numbers (default 4000000) per rank, each thread taking\n"
           "chunks as it gets free. Without a GPU it runs as a CPU task of N + 1 threads\n"
           "(with --require-gpu it exits 77). Launch with: utcrun -np RANKS %s\n",
           prog, prog);
    return rc;
}

int main(int argc, char **argv)
{
    long n = 4000000;
    int cpu_threads = 2, require_gpu = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return usage(argv[0], 0);
        if (!strcmp(argv[i], "--version")) {
            printf("example_mixed_task (UTC) %s\n", utc_version_string());
            return 0;
        }
        if (!strcmp(argv[i], "--n") && i + 1 < argc)
            n = atol(argv[++i]);
        else if (!strcmp(argv[i], "--cpu-threads") && i + 1 < argc)
            cpu_threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--require-gpu"))
            require_gpu = 1;
        else
            return usage(argv[0], 2);
    }
    if (n < 1 || n > (1L << 24) || cpu_threads < 1 || cpu_threads > 64) {
        fprintf(stderr, "--n must be 1 .. 16777216 (exact in float) and --cpu-threads 1 .. 64\n");
        return 2;
    }
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "utc_init: %s\n", utc_last_error());
        return 1;
    }
    int ranks = utc_nranks(), per_rank = 1 + cpu_threads;
    int *procs = malloc(sizeof(int) * (size_t)(ranks * per_rank));
    if (!procs || utc_procs_spread(procs, ranks * per_rank, 0, ranks, per_rank) < 0) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }

    utc_task_options_t opts = UTC_TASK_OPTIONS_INIT;
    opts.kind = UTC_TASK_MIXED; /* on each rank: thread 0 a GPU thread, the others CPU */
    opts.gpu_threads = 1;
    opts.window_size = 0;
    utc_task_t *task = NULL;
    utc_status_t rc = utc_task_create(&saxpy_ops, procs, ranks * per_rank, &opts, &task);
    if (rc == UTC_ERR_NO_DEVICE || rc == UTC_ERR_NO_GPU_SUPPORT) {
        /* it failed on every rank, with this status: all fall back together */
        if (utc_rank() == 0)
            printf("no GPU (%s): %s\n", utc_last_error(),
                   require_gpu ? "skipped" : "running the same task on CPU threads only");
        if (require_gpu) {
            free(procs);
            utc_finalize();
            return 77;
        }
        opts.kind = UTC_TASK_CPU;
        opts.gpu_threads = 0;
        rc = utc_task_create(&saxpy_ops, procs, ranks * per_rank, &opts, &task);
    }
    free(procs);
    saxpy_task_t *t = (saxpy_task_t *)task;
    if (rc == UTC_OK) {
        t->n = n;
        t->x = malloc(sizeof(float) * (size_t)n);
        t->y = malloc(sizeof(float) * (size_t)n);
        if (!t->x || !t->y)
            rc = UTC_ERR_NO_MEMORY;
        for (long i = 0; rc == UTC_OK && i < n; i++) {
            t->x[i] = (float)i;
            t->y[i] = 1.0f;
        }
    }
    if (rc == UTC_OK && (rc = utc_task_run(task, NULL)) == UTC_OK)
        rc = utc_task_wait(task);
    if (rc == UTC_OK) {
        long wrong = 0;
        for (long i = 0; i < n; i++)
            wrong += t->y[i] != 2.0f * (float)i + 1.0f;
        printf("rank %d (%s task): GPU threads did %ld, CPU threads %ld of %ld floats; "
               "%ld wrong\n",
               utc_rank(), utc_task_kind(task) == UTC_TASK_MIXED ? "mixed" : "CPU",
               atomic_load(&t->done[UTC_TASK_GPU]), atomic_load(&t->done[UTC_TASK_CPU]), n, wrong);
        if (wrong || atomic_load(&t->done[0]) + atomic_load(&t->done[1]) != n)
            rc = UTC_ERR_INTERNAL;
    }
    if (rc != UTC_OK)
        fprintf(stderr, "rank %d: %s (%s)\n", utc_rank(), utc_status_string(rc), utc_last_error());
    if (task) {
        free(t->x);
        free(t->y);
        utc_task_destroy(task);
    }
    utc_status_t frc = utc_finalize();
    if (frc != UTC_OK)
        fprintf(stderr, "utc_finalize: %s\n", utc_last_error());
    return rc == UTC_OK && frc == UTC_OK ? 0 : 1;
}
