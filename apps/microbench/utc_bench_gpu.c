/*
 * utc_bench_gpu: GPU tasks.
 *
 * 1. Host/device bandwidth of utc_gpu_data_t for pageable, pinned and unified memory,
 *    4 KiB to 256 MiB (dissertation fig. 3.19). One GPU task per memory kind, the same
 *    task code with the kind as a creation option. H2D is sync_device after mark_host,
 *    D2H is sync_host after mark_device (for unified memory: prefetches that migrate the
 *    pages). Baseline in the same run: raw CUDA on the same memory (cudaMemcpyAsync or
 *    cudaMemPrefetchAsync + cudaStreamSynchronize).
 * 2. Concurrent kernels (fig. 3.17): N GPU tasks of one thread each, all on device 0,
 *    each running the same n-body kernel sequence; time from the first utc_task_run to
 *    the last utc_task_wait. Baseline in the same run: the N sequences back to back on one
 *    task's single stream.
 *
 *   utc_bench_gpu [--json] [--quick] [--max-bytes N] [--max-tasks N] [--steps N]
 *
 * Without a GPU it says so and exits 77. With --json the results go to stdout as one JSON
 * object and the tables to stderr.
 */
#include <cuda_runtime_api.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utc/utc.h>

int utc_bench_nbody(void *pos0, void *pos1, void *vel, int n, int steps, void *stream);

static FILE *table; /* stdout, or stderr with --json */

static void die(const char *what)
{
    fprintf(stderr, "utc_bench_gpu: %s: %s\n", what, utc_last_error());
    exit(1);
}

static const char *kind_name(utc_mem_kind_t k)
{
    return k == UTC_MEM_PINNED ? "pinned" : k == UTC_MEM_UNIFIED ? "unified" : "pageable";
}

/* ---- 1. bandwidth ---- */

typedef struct {
    size_t bytes;
    int reps;
    double h2d_s, d2h_s, cuda_h2d_s, cuda_d2h_s;
    uint64_t h2d_copies, d2h_copies; /* the buffer's own counts: reps + 1 each way */
} bw_point_t;

typedef struct {
    utc_task_t base;
} bw_task_t;

static cudaError_t raw_prefetch(void *p, size_t bytes, int device, cudaStream_t s)
{
#if CUDART_VERSION >= 13000
    struct cudaMemLocation loc;
    memset(&loc, 0, sizeof loc);
    loc.type = device >= 0 ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
    loc.id = device >= 0 ? device : 0;
    return cudaMemPrefetchAsync(p, bytes, loc, 0, s);
#else
    return cudaMemPrefetchAsync(p, bytes, device >= 0 ? device : cudaCpuDeviceId, s);
#endif
}

/* Raw CUDA on the buffer's own memory: one direction, then wait. */
static cudaError_t raw_copy(utc_gpu_data_t *d, int to_device, cudaStream_t s)
{
    void *h = utc_gpu_data_host(d), *dv = utc_gpu_data_device(d);
    size_t n = utc_gpu_data_size(d);
    cudaError_t err;
    if (utc_gpu_data_kind(d) == UTC_MEM_UNIFIED)
        err = raw_prefetch(dv, n, to_device ? utc_gpu_device() : -1, s);
    else if (to_device)
        err = cudaMemcpyAsync(dv, h, n, cudaMemcpyHostToDevice, s);
    else
        err = cudaMemcpyAsync(h, dv, n, cudaMemcpyDeviceToHost, s);
    return err != cudaSuccess ? err : cudaStreamSynchronize(s);
}

static int bw_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx;
    bw_point_t *p = arg;
    utc_gpu_data_t *d;
    int rc = utc_gpu_data_create_default(1, p->bytes, 1, 1, &d);
    if (rc)
        return rc;
    memset(utc_gpu_data_host(d), 1, p->bytes); /* touch every host page once */
    if ((rc = utc_gpu_data_mark_host(d)))
        goto out;
    /* warm-up: one round trip */
    if ((rc = utc_gpu_data_sync_device(d)) || (rc = utc_gpu_data_wait(d)) ||
        (rc = utc_gpu_data_mark_device(d)) || (rc = utc_gpu_data_sync_host(d)))
        goto out;
    p->h2d_s = p->d2h_s = 0;
    for (int r = 0; r < p->reps; r++) {
        if ((rc = utc_gpu_data_mark_host(d)))
            goto out;
        double t0 = utc_wtime();
        if ((rc = utc_gpu_data_sync_device(d)) || (rc = utc_gpu_data_wait(d)))
            goto out;
        double t1 = utc_wtime();
        if ((rc = utc_gpu_data_mark_device(d)))
            goto out;
        double t2 = utc_wtime();
        if ((rc = utc_gpu_data_sync_host(d)))
            goto out;
        double t3 = utc_wtime();
        p->h2d_s += t1 - t0;
        p->d2h_s += t3 - t2;
    }
    /* every round moved the buffer once each way: no more, no less */
    utc_gpu_data_stats_t st;
    if ((rc = utc_gpu_data_stats(d, &st)))
        goto out;
    p->h2d_copies = st.h2d_copies;
    p->d2h_copies = st.d2h_copies;
    if (st.h2d_copies != (uint64_t)p->reps + 1 || st.d2h_copies != (uint64_t)p->reps + 1) {
        fprintf(stderr, "utc_bench_gpu: unexpected copy counts %llu / %llu for %d rounds\n",
                (unsigned long long)st.h2d_copies, (unsigned long long)st.d2h_copies, p->reps + 1);
        rc = UTC_ERR_INTERNAL;
        goto out;
    }

    cudaStream_t s = (cudaStream_t)utc_gpu_stream();
    p->cuda_h2d_s = p->cuda_d2h_s = 0;
    for (int r = 0; r < p->reps; r++) {
        double t0 = utc_wtime();
        cudaError_t err = raw_copy(d, 1, s);
        double t1 = utc_wtime();
        if (err == cudaSuccess)
            err = raw_copy(d, 0, s);
        double t2 = utc_wtime();
        if (err != cudaSuccess) {
            fprintf(stderr, "utc_bench_gpu: raw CUDA copy: %s\n", cudaGetErrorString(err));
            rc = UTC_ERR_GPU;
            goto out;
        }
        p->cuda_h2d_s += t1 - t0;
        p->cuda_d2h_s += t2 - t1;
    }
out:
    utc_gpu_data_destroy(d);
    return rc;
}

static const utc_task_ops_t bw_ops = {.name = "bandwidth", .size = sizeof(bw_task_t), .run = bw_run};

static double gbps(size_t bytes, int reps, double s) { return s > 0 ? (double)bytes * reps / s / 1e9 : 0; }

/* ---- 2. concurrent kernels ---- */

typedef struct {
    int bodies, steps;
} nbody_cfg_t;

typedef struct {
    utc_task_t base;
    utc_gpu_data_t *pos[2], *vel;
    nbody_cfg_t cfg;
} nbody_task_t;

static int nbody_init(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    nbody_task_t *t = (nbody_task_t *)self;
    t->cfg = *(const nbody_cfg_t *)arg;
    size_t n = (size_t)t->cfg.bodies;
    int rc;
    if ((rc = utc_gpu_data_create_default(4 * sizeof(float), n, 1, 1, &t->pos[0])) ||
        (rc = utc_gpu_data_create_default(4 * sizeof(float), n, 1, 1, &t->pos[1])) ||
        (rc = utc_gpu_data_create_default(4 * sizeof(float), n, 1, 1, &t->vel)))
        return rc;
    float *p = utc_gpu_data_host(t->pos[0]), *v = utc_gpu_data_host(t->vel);
    unsigned seed = 12345;
    for (size_t i = 0; i < 4 * n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (float)(seed >> 8) / (float)(1u << 24) - 0.5f;
        v[i] = 0;
    }
    for (size_t i = 0; i < n; i++)
        p[4 * i + 3] = 1.0f / (float)n; /* mass */
    if ((rc = utc_gpu_data_mark_host(t->pos[0])) || (rc = utc_gpu_data_mark_host(t->vel)) ||
        (rc = utc_gpu_data_sync_device(t->pos[0])) || (rc = utc_gpu_data_sync_device(t->vel)))
        return rc;
    return utc_gpu_synchronize();
}

/* arg: how many kernel sequences to run back to back on this thread's stream. */
static int nbody_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    nbody_task_t *t = (nbody_task_t *)self;
    int repeats = arg ? *(const int *)arg : 1;
    for (int r = 0; r < repeats; r++)
        if (utc_bench_nbody(utc_gpu_data_device(t->pos[0]), utc_gpu_data_device(t->pos[1]),
                            utc_gpu_data_device(t->vel), t->cfg.bodies, t->cfg.steps,
                            utc_gpu_stream()) != 0) {
            int rc = utc_gpu_check("n-body launch"); /* CUDA's message */
            return rc != UTC_OK ? rc : UTC_ERR_GPU;
        }
    return utc_gpu_synchronize();
}

static void nbody_fini(utc_task_t *self, utc_ctx_t *ctx)
{
    (void)ctx;
    nbody_task_t *t = (nbody_task_t *)self;
    utc_gpu_data_destroy(t->vel);
    utc_gpu_data_destroy(t->pos[1]);
    utc_gpu_data_destroy(t->pos[0]);
}

static const utc_task_ops_t nbody_ops = {.name = "nbody",
                                         .size = sizeof(nbody_task_t),
                                         .init = nbody_init,
                                         .run = nbody_run,
                                         .fini = nbody_fini};

static utc_task_t *nbody_task(const nbody_cfg_t *cfg)
{
    static const int procs[1] = {0}, dev0[1] = {0};
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.kind = UTC_TASK_GPU;
    o.mem_kind = UTC_MEM_PINNED;
    o.devices = dev0;
    o.devices_len = 1;
    o.window_size = 0;
    utc_task_t *t;
    if (utc_task_create(&nbody_ops, procs, 1, &o, &t) != UTC_OK)
        die("creating an n-body task");
    if (utc_task_init(t, (void *)cfg) != UTC_OK)
        die("n-body init");
    return t;
}

/* Seconds for N tasks running at once (one run each), and for N runs on one stream. */
static void concurrent(const nbody_cfg_t *cfg, int ntasks, double *utc_s, double *serial_s)
{
    utc_task_t **tasks = calloc((size_t)ntasks, sizeof *tasks);
    if (!tasks)
        die("out of memory");
    for (int k = 0; k < ntasks; k++)
        tasks[k] = nbody_task(cfg);
    for (int k = 0; k < ntasks; k++) /* warm-up */
        if (utc_task_run(tasks[k], NULL) != UTC_OK || utc_task_wait(tasks[k]) != UTC_OK)
            die("n-body warm-up");
    utc_barrier();
    double t0 = utc_wtime();
    for (int k = 0; k < ntasks; k++)
        if (utc_task_run(tasks[k], NULL) != UTC_OK)
            die("n-body run");
    for (int k = 0; k < ntasks; k++)
        if (utc_task_wait(tasks[k]) != UTC_OK)
            die("n-body wait");
    *utc_s = utc_wtime() - t0;

    /* baseline: the same ntasks sequences back to back on the first task's stream */
    utc_barrier();
    t0 = utc_wtime();
    if (utc_task_run(tasks[0], &ntasks) != UTC_OK || utc_task_wait(tasks[0]) != UTC_OK)
        die("n-body serial run");
    *serial_s = utc_wtime() - t0;
    for (int k = 0; k < ntasks; k++)
        if (utc_task_destroy(tasks[k]) != UTC_OK)
            die("destroying an n-body task");
    free(tasks);
}

/* ---- main ---- */

static void usage(void)
{
    printf("usage: utc_bench_gpu [--json] [--quick] [--max-bytes N] [--max-tasks N] [--steps N]\n"
           "Host/device bandwidth of GPU buffers (pageable, pinned, unified; 4 KiB to\n"
           "--max-bytes, default 256 MiB) beside raw CUDA copies, and N GPU tasks running\n"
           "n-body kernels at once on device 0 (N = 1, 2, 4, ... --max-tasks, default 32)\n"
           "beside the same kernels on one stream. Exits 77 without a GPU.\n");
}

int main(int argc, char **argv)
{
    int json = 0, quick = 0, max_tasks = 32, steps = 100;
    size_t max_bytes = (size_t)256 << 20;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--max-bytes") == 0 && i + 1 < argc && atoll(argv[i + 1]) >= 4096)
            max_bytes = (size_t)atoll(argv[++i]);
        else if (strcmp(argv[i], "--max-tasks") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0)
            max_tasks = atoi(argv[++i]);
        else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0)
            steps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage();
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("utc_bench_gpu (UTC) %s\n", utc_version_string());
            return 0;
        } else {
            fprintf(stderr, "utc_bench_gpu: unknown or incomplete argument '%s' (see --help)\n",
                    argv[i]);
            return 2;
        }
    }
    table = json ? stderr : stdout;
    if (utc_init(&argc, &argv) != UTC_OK)
        die("utc_init");
    int me = utc_rank();
    int ndev = utc_gpu_device_count();
    if (ndev <= 0) {
        if (me == 0)
            printf("utc_bench_gpu: no usable GPU: %s: nothing to measure (skipped)\n",
                   ndev < 0 ? utc_last_error() : utc_gpu_unavailable_reason());
        utc_finalize();
        return 77;
    }
    struct cudaDeviceProp prop;
    int concurrent_managed = 0;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess ||
        cudaDeviceGetAttribute(&concurrent_managed, cudaDevAttrConcurrentManagedAccess, 0) !=
            cudaSuccess) {
        fprintf(stderr, "utc_bench_gpu: cannot query device 0\n");
        return 1;
    }
    if (me == 0)
        fprintf(table, "device 0: %s, %d SMs (%d device(s) visible)\n", prop.name,
                prop.multiProcessorCount, ndev);
    if (json && me == 0)
        printf("{\"bench\": \"utc_bench_gpu\", \"device\": \"%s\", \"sms\": %d, \"bandwidth\": [",
               prop.name, prop.multiProcessorCount);

    /* 1. bandwidth: one GPU task (thread on rank 0, device 0) per memory kind */
    static const utc_mem_kind_t kinds[3] = {UTC_MEM_PAGEABLE, UTC_MEM_PINNED, UTC_MEM_UNIFIED};
    int first = 1;
    for (int k = 0; k < 3; k++) {
        static const int procs[1] = {0}, dev0[1] = {0};
        utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
        o.kind = UTC_TASK_GPU;
        o.mem_kind = kinds[k];
        o.devices = dev0;
        o.devices_len = 1;
        o.window_size = 0;
        utc_task_t *task;
        if (utc_task_create(&bw_ops, procs, 1, &o, &task) != UTC_OK)
            die("creating the bandwidth task");
        if (me == 0) {
            fprintf(table, "\n%s memory%s\n%10s %6s %12s %12s %12s %12s\n", kind_name(kinds[k]),
                    kinds[k] == UTC_MEM_UNIFIED && !concurrent_managed
                        ? " (no prefetch on this device: pages move on demand, figures are not transfers)"
                        : "",
                    "bytes", "reps", "utc H2D GB/s", "cuda H2D", "utc D2H GB/s", "cuda D2H");
        }
        for (size_t bytes = 4096; bytes <= max_bytes; bytes *= 2) {
            bw_point_t p = {.bytes = bytes};
            size_t r = ((size_t)(quick ? 128 : 1024) << 20) / bytes;
            p.reps = r < 5 ? 5 : r > (quick ? 20 : 200) ? (quick ? 20 : 200) : (int)r;
            if (utc_task_run(task, &p) != UTC_OK || utc_task_wait(task) != UTC_OK)
                die("bandwidth run");
            if (me != 0)
                continue;
            double uh = gbps(bytes, p.reps, p.h2d_s), ud = gbps(bytes, p.reps, p.d2h_s);
            double ch = gbps(bytes, p.reps, p.cuda_h2d_s), cd = gbps(bytes, p.reps, p.cuda_d2h_s);
            fprintf(table, "%10zu %6d %12.2f %12.2f %12.2f %12.2f\n", bytes, p.reps, uh, ch, ud, cd);
            if (json)
                printf("%s\n  {\"kind\": \"%s\", \"bytes\": %zu, \"reps\": %d, \"h2d_gbps\": %.3f, "
                       "\"d2h_gbps\": %.3f, \"cuda_h2d_gbps\": %.3f, \"cuda_d2h_gbps\": %.3f, "
                       "\"h2d_copies\": %llu, \"d2h_copies\": %llu}",
                       first ? "" : ",", kind_name(kinds[k]), bytes, p.reps, uh, ud, ch, cd,
                       (unsigned long long)p.h2d_copies, (unsigned long long)p.d2h_copies);
            first = 0;
        }
        if (utc_task_destroy(task) != UTC_OK)
            die("destroying the bandwidth task");
    }
    if (json && me == 0)
        printf("],\n \"concurrent\": [");

    /* 2. concurrent kernels: N single-thread GPU tasks on device 0 */
    static const int bodies[2] = {1024, 4096};
    first = 1;
    for (int b = 0; b < 2; b++) {
        nbody_cfg_t cfg = {.bodies = bodies[b], .steps = quick ? steps / 4 + 1 : steps};
        if (me == 0)
            fprintf(table, "\nn-body, %d bodies, %d steps per task\n%6s %14s %16s %10s\n",
                    cfg.bodies, cfg.steps, "tasks", "utc at once ms", "one stream ms", "ratio");
        for (int n = 1; n <= max_tasks; n *= 2) {
            double us, ss;
            concurrent(&cfg, n, &us, &ss);
            if (me != 0)
                continue;
            fprintf(table, "%6d %14.2f %16.2f %10.2f\n", n, us * 1e3, ss * 1e3, us / ss);
            if (json)
                printf("%s\n  {\"bodies\": %d, \"steps\": %d, \"tasks\": %d, \"utc_ms\": %.3f, "
                       "\"one_stream_ms\": %.3f, \"ratio\": %.3f}",
                       first ? "" : ",", cfg.bodies, cfg.steps, n, us * 1e3, ss * 1e3, us / ss);
            first = 0;
        }
    }
    if (json && me == 0)
        printf("]}\n");
    utc_finalize();
    return 0;
}
