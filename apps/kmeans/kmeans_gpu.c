/*
 * kmeans, UTC GPU task: one thread per GPU on every rank, running the CPU task's code
 * (kmeans_utc.c) with this backend. A thread's points go to its device once; each step it
 * uploads the centroids (k x f floats), runs the kernel and downloads the step's vector
 * (KM_ACC int64), which then follows the CPU task's reduction. The clusters of the points
 * stay on the device. Host/device transfers count as communication.
 */
#include <stdlib.h>

#include "cluster_gpu.h"
#include "kmeans.h"

typedef struct km_gpu {
    utc_gpu_data_t *pts, *ct, *assign, *acc;
    int64_t *host_acc;
} km_gpu_t;

static void km_gpu_end(void *state)
{
    km_gpu_t *st = state;
    if (st) {
        utc_gpu_data_destroy(st->pts);
        utc_gpu_data_destroy(st->ct);
        utc_gpu_data_destroy(st->assign);
        utc_gpu_data_destroy(st->acc);
        free(st->host_acc);
        free(st);
    }
}

static int km_gpu_begin(void **state, km_dims_t d, const float *pts, int64_t count,
                        double *xfer)
{
    double t0 = capp_now();
    km_gpu_t *st = calloc(1, sizeof *st);
    if (!st)
        return UTC_ERR_NO_MEMORY;
    size_t nacc = (size_t)KM_ACC(d.k, d.f);
    st->host_acc = malloc(sizeof(int64_t) * nacc);
    int rc = st->host_acc ? UTC_OK : UTC_ERR_NO_MEMORY;
    if (rc == UTC_OK)
        rc = utc_gpu_data_create_default(sizeof(float), (size_t)d.f, (size_t)count, 1, &st->pts);
    if (rc == UTC_OK)
        rc = utc_gpu_data_create_default(sizeof(float), (size_t)(d.k * d.f), 1, 1, &st->ct);
    if (rc == UTC_OK)
        rc = utc_gpu_data_create_default(sizeof(int32_t), (size_t)count, 1, 1, &st->assign);
    if (rc == UTC_OK)
        rc = utc_gpu_data_create_default(sizeof(int64_t), nacc, 1, 1, &st->acc);
    if (rc == UTC_OK && (rc = utc_gpu_data_put_host(st->pts, pts)) == UTC_OK)
        rc = utc_gpu_data_sync_device(st->pts);
    if (rc == UTC_OK) /* every point starts in no cluster (-1: all bytes 0xff) */
        rc = capp_gpu_status(capp_gpu_memset(utc_gpu_data_device(st->assign), 0xff,
                                             sizeof(int32_t) * (size_t)count, utc_gpu_stream()),
                             "kmeans assignment reset");
    if (rc == UTC_OK)
        rc = utc_gpu_synchronize();
    if (rc != UTC_OK) {
        km_gpu_end(st);
        return rc;
    }
    *state = st;
    *xfer += capp_now() - t0;
    return UTC_OK;
}

static int km_gpu_assign(void *state, km_dims_t d, const float *pts, int64_t count,
                         int64_t index0, const float *ct, int32_t *assign, int64_t *acc,
                         double *xfer)
{
    (void)pts, (void)assign; /* on the device since begin */
    km_gpu_t *st = state;
    void *stream = utc_gpu_stream();
    size_t nacc = (size_t)KM_ACC(d.k, d.f);
    double t0 = capp_now();
    int err = capp_gpu_copy(utc_gpu_data_device(st->ct), ct, sizeof(float) * (size_t)(d.k * d.f),
                            stream);
    if (!err)
        err = capp_gpu_memset(utc_gpu_data_device(st->acc), 0, sizeof(int64_t) * nacc, stream);
    int rc = capp_gpu_status(err, "kmeans centroid upload");
    if (rc != UTC_OK)
        return rc;
    double t1 = capp_now();
    rc = capp_gpu_status(km_gpu_launch(utc_gpu_data_device(st->pts), count, index0, d.f, d.k,
                                       utc_gpu_data_device(st->ct),
                                       utc_gpu_data_device(st->assign),
                                       utc_gpu_data_device(st->acc), stream),
                         "kmeans kernel launch");
    if (rc == UTC_OK)
        rc = utc_gpu_synchronize();
    if (rc != UTC_OK)
        return rc;
    double t2 = capp_now();
    rc = capp_gpu_status(capp_gpu_copy(st->host_acc, utc_gpu_data_device(st->acc),
                                       sizeof(int64_t) * nacc, stream),
                         "kmeans sums download");
    *xfer += (t1 - t0) + (capp_now() - t2);
    if (rc == UTC_OK)
        for (size_t i = 0; i < nacc; i++)
            acc[i] += st->host_acc[i];
    return rc;
}

static const km_backend_t km_gpu_backend = {
    .begin = km_gpu_begin, .assign = km_gpu_assign, .end = km_gpu_end};

int km_gpu(const capp_cfg_t *cfg, capp_result_t *res)
{
    return km_task(cfg, res, UTC_TASK_GPU, &km_gpu_backend);
}
