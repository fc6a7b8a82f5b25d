/*
 * utc_bench_gpu_overlap: overlapped item pipelines (utc_gpu_pipeline_t, doc/guide/
 * gpu-overlap.md).
 *
 * A CPU task writes N items (default 200) of B bytes (default 4 MiB) on a conduit to a
 * GPU task on the same rank; the GPU task runs them through a pipeline whose kernel reads
 * the item, writes a result of B bytes and lasts as long as the slower of the item's two
 * copies (calibrated first, so the host-to-device copy, the kernel and the device-to-host
 * copy take about the same time); the results go to a host callback. Printed, best of
 * --reps repetitions taken in turns:
 * - the pipeline at depth 1 (no overlap: read, copy in, kernel, copy out, one item at a
 *   time), 2 and 3;
 * - each of the three alone, in raw CUDA on the same thread: N copies in back to back on
 *   one stream, N kernels, N copies out; and the N conduit reads alone (into pinned
 *   memory), which the pipeline also overlaps;
 * - the same with owned items (in_owned): the feeder allocates each item with
 *   utc_buf_alloc_pinned and hands it over with utc_conduit_write_owned, and the pipeline
 *   copies it to the device straight from that buffer (no host copy); beside it the N
 *   owned reads alone (read, free);
 * - the ratios the target asks for: depth 2 and 3 over depth 1 (target <= 0.5) and over
 *   the slowest of the three alone (target <= 1.2), for both kinds of items (the owned
 *   ones also over the copied items' depth 1, today's loop).
 *
 *   utc_bench_gpu_overlap [--items N] [--bytes B] [--reps R] [--json]
 *
 * Without a GPU it says so and exits 77. With --json one JSON object goes to stdout and
 * the table to stderr.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <utc/utc.h>

int utc_bench_overlap_kernel(const void *in, void *out, size_t n, unsigned long long spin_ns,
                             void *stream);

enum { DEPTHS = 3 };
static const int depths[DEPTHS] = {1, 2, 3};

typedef enum { CMD_CALIBRATE, CMD_ALONE, CMD_PIPELINE, CMD_CONDUIT } cmd_kind_t;

typedef struct {
    cmd_kind_t kind;
    int depth;
    int owned; /* CMD_CONDUIT, CMD_PIPELINE: owned items (utc_buf_alloc_pinned, write_owned) */
    /* results */
    double h2d_s, kernel_s, d2h_s, seconds;
    uint64_t processed;
    int rc;
    char why[300];
} cmd_t;

typedef struct {
    utc_task_t base;
    utc_conduit_t *items;
    size_t bytes;
    int n;
    unsigned long long spin_ns;
} gpu_task_t;

typedef struct {
    utc_task_t base;
    utc_conduit_t *items;
    size_t bytes;
    int n;
    int owned; /* hand over a pinned owned buffer per item instead of copying one */
} feed_task_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the feeder: n items, the same buffer each time ---- */

static int feed_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx, (void)arg;
    feed_task_t *t = (feed_task_t *)self;
    if (t->owned) {
        /* a producer that makes each item in a buffer of its own (here only its first
         * byte, as the copied items are not rewritten either) and hands it over */
        int rc = 0;
        for (int j = 0; j < t->n && rc == 0; j++) {
            unsigned char *b = utc_buf_alloc_pinned(t->bytes);
            if (!b)
                return UTC_ERR_NO_MEMORY;
            b[0] = (unsigned char)j;
            if ((rc = utc_conduit_write_owned(t->items, b, t->bytes, 0)) != 0)
                utc_buf_free(b);
        }
        return rc;
    }
    unsigned char *buf = malloc(t->bytes);
    if (!buf)
        return UTC_ERR_NO_MEMORY;
    for (size_t i = 0; i < t->bytes; i++)
        buf[i] = (unsigned char)(i * 7);
    int rc = 0;
    for (int j = 0; j < t->n && rc == 0; j++)
        rc = utc_conduit_write(t->items, buf, t->bytes, 0);
    free(buf);
    return rc;
}

/* ---- the GPU side ---- */

typedef struct {
    void *h_in, *h_out, *d_in, *d_out;
} bufs_t;

static int take_result(const void *r, size_t size, uint64_t index, void *arg)
{
    (void)r, (void)size, (void)index, (void)arg;
    return 0;
}

static int launch(utc_gpu_item_t *it, void *arg)
{
    gpu_task_t *t = arg;
    return utc_bench_overlap_kernel(it->in, it->out, it->in_size, t->spin_ns, it->stream);
}

/* Seconds for n repetitions of one stage on the thread's stream, back to back. */
static double stage_alone(gpu_task_t *t, bufs_t *b, int stage, int n)
{
    cudaStream_t s = (cudaStream_t)utc_gpu_stream();
    if (utc_gpu_synchronize() != UTC_OK)
        return -1;
    double t0 = now_s();
    for (int j = 0; j < n; j++) {
        if (stage == 0)
            cudaMemcpyAsync(b->d_in, b->h_in, t->bytes, cudaMemcpyHostToDevice, s);
        else if (stage == 1)
            utc_bench_overlap_kernel(b->d_in, b->d_out, t->bytes, t->spin_ns, s);
        else
            cudaMemcpyAsync(b->h_out, b->d_out, t->bytes, cudaMemcpyDeviceToHost, s);
    }
    if (utc_gpu_synchronize() != UTC_OK || utc_gpu_check("stage alone") != UTC_OK)
        return -1;
    return now_s() - t0;
}

static int gpu_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    gpu_task_t *t = (gpu_task_t *)self;
    cmd_t *c = arg;
    bufs_t b = {0};
    int rc = 0;
    if (c->kind == CMD_PIPELINE) {
        utc_gpu_pipeline_options_t o = UTC_GPU_PIPELINE_OPTIONS_INIT;
        o.in = t->items;
        o.in_size = t->bytes;
        o.out_size = t->bytes;
        o.on_result = take_result;
        o.depth = c->depth;
        o.count = (uint64_t)t->n;
        o.in_owned = c->owned;
        double t0 = now_s();
        rc = utc_gpu_pipeline_run(&o, launch, t, &c->processed);
        c->seconds = now_s() - t0;
        goto out;
    }
    if (cudaMallocHost(&b.h_in, t->bytes) != cudaSuccess ||
        cudaMallocHost(&b.h_out, t->bytes) != cudaSuccess ||
        cudaMalloc(&b.d_in, t->bytes) != cudaSuccess ||
        cudaMalloc(&b.d_out, t->bytes) != cudaSuccess) {
        rc = utc_gpu_check("allocations");
        rc = rc ? rc : UTC_ERR_NO_MEMORY;
        goto out;
    }
    memset(b.h_in, 1, t->bytes);
    if (c->kind == CMD_CONDUIT) {
        double t0 = now_s();
        for (int j = 0; j < t->n && rc == 0; j++) {
            if (!c->owned) {
                rc = utc_conduit_read(t->items, b.h_in, t->bytes, 0, NULL);
                continue;
            }
            void *item = NULL;
            rc = utc_conduit_read_owned(t->items, 0, &item, NULL);
            utc_buf_free(item);
        }
        c->seconds = now_s() - t0;
        goto out;
    }
    if (c->kind == CMD_CALIBRATE) {
        /* the kernel lasts as long as the slower copy of one item */
        t->spin_ns = 0;
        double h = stage_alone(t, &b, 0, 20), d = stage_alone(t, &b, 2, 20);
        if (h < 0 || d < 0) {
            rc = UTC_ERR_GPU;
            goto out;
        }
        t->spin_ns = (unsigned long long)((h > d ? h : d) / 20 * 1e9);
    }
    c->h2d_s = stage_alone(t, &b, 0, t->n);
    c->kernel_s = stage_alone(t, &b, 1, t->n);
    c->d2h_s = stage_alone(t, &b, 2, t->n);
    if (c->h2d_s < 0 || c->kernel_s < 0 || c->d2h_s < 0)
        rc = UTC_ERR_GPU;
out:
    cudaFreeHost(b.h_in);
    cudaFreeHost(b.h_out);
    cudaFree(b.d_in);
    cudaFree(b.d_out);
    c->rc = rc;
    snprintf(c->why, sizeof c->why, "%s", rc ? utc_last_error() : "");
    return 0;
}

static const utc_task_ops_t feed_ops = {
    .name = "overlap-feed", .size = sizeof(feed_task_t), .run = feed_run};
static const utc_task_ops_t gpu_ops = {
    .name = "overlap-gpu", .size = sizeof(gpu_task_t), .run = gpu_run};

static void run_cmd(utc_task_t *feed, utc_task_t *gpu, cmd_t *c, int with_items)
{
    ((feed_task_t *)feed)->owned = c->owned;
    if (with_items && utc_task_run(feed, NULL) != UTC_OK) {
        fprintf(stderr, "utc_bench_gpu_overlap: feeder: %s\n", utc_last_error());
        exit(1);
    }
    if (utc_task_run(gpu, c) != UTC_OK || utc_task_wait(gpu) != UTC_OK ||
        (with_items && utc_task_wait(feed) != UTC_OK) || c->rc) {
        fprintf(stderr, "utc_bench_gpu_overlap: %s\n", c->rc ? c->why : utc_last_error());
        exit(1);
    }
}

static double min2(double a, double b)
{
    return a < b ? a : b;
}

int main(int argc, char **argv)
{
    int n = 200, reps = 3, json = 0;
    size_t bytes = (size_t)4 << 20;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--items") && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--bytes") && i + 1 < argc)
            bytes = (size_t)strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--json"))
            json = 1;
        else {
            fprintf(stderr, "usage: utc_bench_gpu_overlap [--items N] [--bytes B] [--reps R] "
                            "[--json]\n");
            return 2;
        }
    }
    if (n < 1 || reps < 1 || bytes < 1) {
        fprintf(stderr, "utc_bench_gpu_overlap: --items, --bytes and --reps must be >= 1\n");
        return 2;
    }
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "utc_bench_gpu_overlap: utc_init: %s\n", utc_last_error());
        return 1;
    }
    if (utc_gpu_device_count() <= 0) {
        fprintf(stderr, "utc_bench_gpu_overlap: no usable GPU: %s\n",
                utc_gpu_unavailable_reason() ? utc_gpu_unavailable_reason() : utc_last_error());
        utc_finalize();
        return 77;
    }
    FILE *table = json ? stderr : stdout;
    int zero = 0;
    utc_task_options_t go = UTC_TASK_OPTIONS_INIT;
    go.kind = UTC_TASK_GPU;
    utc_task_t *feed, *gpu;
    utc_conduit_t *items;
    if (utc_task_create(&feed_ops, &zero, 1, NULL, &feed) != UTC_OK ||
        utc_task_create(&gpu_ops, &zero, 1, &go, &gpu) != UTC_OK ||
        utc_conduit_create(feed, gpu, NULL, &items) != UTC_OK) {
        fprintf(stderr, "utc_bench_gpu_overlap: setup: %s\n", utc_last_error());
        return 1;
    }
    feed_task_t *ft = (feed_task_t *)feed;
    gpu_task_t *gt = (gpu_task_t *)gpu;
    ft->items = gt->items = items;
    ft->bytes = gt->bytes = bytes;
    ft->n = gt->n = n;

    cmd_t cal = {.kind = CMD_CALIBRATE};
    run_cmd(feed, gpu, &cal, 0);
    double h2d = cal.h2d_s, kern = cal.kernel_s, d2h = cal.d2h_s, conduit[2] = {1e30, 1e30};
    double pipe[2][DEPTHS] = {{1e30, 1e30, 1e30}, {1e30, 1e30, 1e30}}; /* [owned][depth] */
    for (int r = 0; r < reps; r++) {
        cmd_t alone = {.kind = CMD_ALONE};
        run_cmd(feed, gpu, &alone, 0);
        h2d = min2(h2d, alone.h2d_s);
        kern = min2(kern, alone.kernel_s);
        d2h = min2(d2h, alone.d2h_s);
        for (int owned = 0; owned < 2; owned++) { /* copied items, then owned ones */
            cmd_t cr = {.kind = CMD_CONDUIT, .owned = owned};
            run_cmd(feed, gpu, &cr, 1);
            conduit[owned] = min2(conduit[owned], cr.seconds);
            for (int k = 0; k < DEPTHS; k++) {
                cmd_t pc = {.kind = CMD_PIPELINE, .depth = depths[k], .owned = owned};
                run_cmd(feed, gpu, &pc, 1);
                if (pc.processed != (uint64_t)n) {
                    fprintf(stderr,
                            "utc_bench_gpu_overlap: depth %d%s processed %llu of %d items\n",
                            depths[k], owned ? " (owned)" : "",
                            (unsigned long long)pc.processed, n);
                    return 1;
                }
                pipe[owned][k] = min2(pipe[owned][k], pc.seconds);
            }
        }
    }
    double slowest = h2d > kern ? h2d : kern;
    slowest = d2h > slowest ? d2h : slowest;
    double loadavg[3] = {0};
    FILE *la = fopen("/proc/loadavg", "r");
    if (la) {
        if (fscanf(la, "%lf %lf %lf", &loadavg[0], &loadavg[1], &loadavg[2]) != 3)
            loadavg[0] = -1;
        fclose(la);
    }
    fprintf(table,
            "utc_bench_gpu_overlap: %d items of %zu bytes, best of %d, load %.2f; kernel "
            "spin %.1f us\n",
            n, bytes, reps, loadavg[0], (double)gt->spin_ns / 1e3);
    fprintf(table, "%-28s %10s %12s\n", "", "ms", "us/item");
    fprintf(table, "%-28s %10.2f %12.1f\n", "H2D alone (raw CUDA)", h2d * 1e3, h2d * 1e6 / n);
    fprintf(table, "%-28s %10.2f %12.1f\n", "kernel alone", kern * 1e3, kern * 1e6 / n);
    fprintf(table, "%-28s %10.2f %12.1f\n", "D2H alone (raw CUDA)", d2h * 1e3, d2h * 1e6 / n);
    static const char *const kinds[2] = {"copied", "owned"};
    for (int o = 0; o < 2; o++) {
        fprintf(table, "%s items%s:\n", kinds[o],
                o ? " (utc_buf_alloc_pinned + write_owned; in_owned: no host copy)"
                  : " (utc_conduit_write; read into the pinned staging: a host copy)");
        fprintf(table, "  %-26s %10.2f %12.1f\n", o ? "owned reads alone" : "conduit reads alone",
                conduit[o] * 1e3, conduit[o] * 1e6 / n);
        for (int k = 0; k < DEPTHS; k++)
            fprintf(table,
                    "  pipeline depth %d%-12s %8.2f %12.1f   x%.2f of depth 1, x%.2f of copied "
                    "depth 1, x%.2f of the slowest alone\n",
                    depths[k], k == 0 ? " (no overlap)" : "", pipe[o][k] * 1e3,
                    pipe[o][k] * 1e6 / n, pipe[o][k] / pipe[o][0], pipe[o][k] / pipe[0][0],
                    pipe[o][k] / slowest);
    }
    fprintf(table, "target: depth 2 or 3 at most x0.50 of (copied) depth 1 and at most x1.20 "
                   "of the slowest of H2D, kernel, D2H alone\n");
    if (json)
        printf("{\"items\": %d, \"bytes\": %zu, \"reps\": %d, \"load\": %.2f, \"spin_us\": %.1f, "
               "\"h2d_ms\": %.3f, \"kernel_ms\": %.3f, \"d2h_ms\": %.3f, \"conduit_ms\": %.3f, "
               "\"depth1_ms\": %.3f, \"depth2_ms\": %.3f, \"depth3_ms\": %.3f, "
               "\"ratio_depth2_to_depth1\": %.3f, \"ratio_depth3_to_depth1\": %.3f, "
               "\"ratio_depth2_to_slowest\": %.3f, \"ratio_depth3_to_slowest\": %.3f, "
               "\"owned_conduit_ms\": %.3f, \"owned_depth1_ms\": %.3f, "
               "\"owned_depth2_ms\": %.3f, \"owned_depth3_ms\": %.3f, "
               "\"ratio_owned_depth2_to_depth1\": %.3f, \"ratio_owned_depth3_to_depth1\": %.3f, "
               "\"ratio_owned_depth2_to_owned_depth1\": %.3f, "
               "\"ratio_owned_depth2_to_slowest\": %.3f, "
               "\"ratio_owned_depth3_to_slowest\": %.3f}\n",
               n, bytes, reps, loadavg[0], (double)gt->spin_ns / 1e3, h2d * 1e3, kern * 1e3,
               d2h * 1e3, conduit[0] * 1e3, pipe[0][0] * 1e3, pipe[0][1] * 1e3, pipe[0][2] * 1e3,
               pipe[0][1] / pipe[0][0], pipe[0][2] / pipe[0][0], pipe[0][1] / slowest,
               pipe[0][2] / slowest, conduit[1] * 1e3, pipe[1][0] * 1e3, pipe[1][1] * 1e3,
               pipe[1][2] * 1e3, pipe[1][1] / pipe[0][0], pipe[1][2] / pipe[0][0],
               pipe[1][1] / pipe[1][0], pipe[1][1] / slowest, pipe[1][2] / slowest);
    utc_conduit_destroy(items);
    utc_task_destroy(gpu);
    utc_task_destroy(feed);
    utc_finalize();
    return 0;
}
