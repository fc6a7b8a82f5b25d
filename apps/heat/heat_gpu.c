/*
 * heat, UTC GPU task: one thread per GPU on every rank, running the CPU task's code
 * (heat_utc.c) with this backend. A thread keeps its rows (plus two halo rows) on its
 * device in two buffers; each step it uploads its two halo rows from the rank's host
 * buffer, runs the kernel, and downloads its first and last rows, which neighbours (other
 * threads of the rank, or other ranks through the one-sided puts) need. The whole block
 * comes back after the last step. Host/device transfers count as communication.
 */
#include <stdlib.h>
#include <string.h>

#include "cluster_gpu.h"
#include "heat.h"
#include "heat_kernels.h"

typedef struct heat_gpu {
    utc_gpu_data_t *g[2]; /* (count + 2) x cols each */
    int cur;              /* which of g holds the current step */
} heat_gpu_t;

static void heat_gpu_free(heat_gpu_t *st)
{
    if (st) {
        utc_gpu_data_destroy(st->g[0]);
        utc_gpu_data_destroy(st->g[1]);
        free(st);
    }
}

static int heat_gpu_begin(void **state, const float *buf, int64_t first, int64_t count,
                          int64_t cols, double *xfer)
{
    double t0 = capp_now();
    heat_gpu_t *st = calloc(1, sizeof *st);
    if (!st)
        return UTC_ERR_NO_MEMORY;
    size_t rows = (size_t)count + 2;
    int rc = utc_gpu_data_create_default(sizeof(float), (size_t)cols, rows, 1, &st->g[0]);
    if (rc == UTC_OK)
        rc = utc_gpu_data_create_default(sizeof(float), (size_t)cols, rows, 1, &st->g[1]);
    if (rc == UTC_OK) /* the initial rows with their halo rows */
        rc = utc_gpu_data_put_host(st->g[0], buf + (first - 1) * cols);
    if (rc == UTC_OK)
        rc = utc_gpu_data_sync_device(st->g[0]);
    if (rc == UTC_OK)
        rc = utc_gpu_synchronize();
    if (rc != UTC_OK) {
        heat_gpu_free(st);
        return rc;
    }
    *state = st;
    *xfer += capp_now() - t0;
    return UTC_OK;
}

static int heat_gpu_step(void *state, const float *cur, float *next, int64_t first,
                         int64_t count, int64_t cols, double *xfer)
{
    heat_gpu_t *st = state;
    float *dc = utc_gpu_data_device(st->g[st->cur]), *dn = utc_gpu_data_device(st->g[!st->cur]);
    void *stream = utc_gpu_stream();
    size_t row = sizeof(float) * (size_t)cols;
    double t0 = capp_now();
    int err = capp_gpu_copy(dc, cur + (first - 1) * cols, row, stream);
    if (!err)
        err = capp_gpu_copy(dc + (count + 1) * cols, cur + (first + count) * cols, row, stream);
    int rc = capp_gpu_status(err, "heat halo upload");
    if (rc != UTC_OK)
        return rc;
    double t1 = capp_now();
    rc = capp_gpu_status(heat_gpu_launch(dc, dn, count, cols, stream), "heat kernel launch");
    if (rc == UTC_OK)
        rc = utc_gpu_synchronize();
    if (rc != UTC_OK)
        return rc;
    double t2 = capp_now();
    err = capp_gpu_copy(next + first * cols, dn + cols, row, stream);
    if (!err && count > 1)
        err = capp_gpu_copy(next + (first + count - 1) * cols, dn + count * cols, row, stream);
    *xfer += (t1 - t0) + (capp_now() - t2);
    st->cur = !st->cur;
    return capp_gpu_status(err, "heat edge download");
}

static int heat_gpu_end(void *state, float *fin, int64_t first, int64_t count, int64_t cols,
                        double *xfer)
{
    heat_gpu_t *st = state;
    utc_gpu_data_t *g = st->g[st->cur];
    double t0 = capp_now();
    int rc = utc_gpu_data_mark_device(g); /* the kernels wrote it */
    if (rc == UTC_OK)
        rc = utc_gpu_data_sync_host(g);
    if (rc == UTC_OK)
        memcpy(fin + first * cols, (const float *)utc_gpu_data_host(g) + cols,
               sizeof(float) * (size_t)(count * cols));
    *xfer += capp_now() - t0;
    heat_gpu_free(st);
    return rc;
}

static const heat_backend_t heat_gpu_backend = {
    .begin = heat_gpu_begin, .step = heat_gpu_step, .end = heat_gpu_end};

int heat_gpu(const capp_cfg_t *cfg, capp_result_t *res)
{
    return heat_task(cfg, res, UTC_TASK_GPU, &heat_gpu_backend);
}
