/*
 * mm, UTC GPU task: one thread per GPU on every rank; the data moves between ranks exactly
 * as in the CPU task (mm_utc.c), and each thread multiplies its rows on its device.
 * Host/device transfers count as communication (as in the dissertation's figure 4.5).
 */
#include "cluster_gpu.h"
#include "mm.h"
#include "mm_kernels.h"

static int mm_gpu_rows(const float *a, const float *b, float *c, int64_t rows, int64_t k,
                       int64_t n, double *xfer)
{
    utc_gpu_data_t *da = NULL, *db = NULL, *dc = NULL;
    double t0 = capp_now();
    int rc = utc_gpu_data_create_default(sizeof(float), (size_t)k, (size_t)rows, 1, &da);
    if (rc == UTC_OK)
        rc = utc_gpu_data_create_default(sizeof(float), (size_t)n, (size_t)k, 1, &db);
    if (rc == UTC_OK)
        rc = utc_gpu_data_create_default(sizeof(float), (size_t)n, (size_t)rows, 1, &dc);
    if (rc == UTC_OK && (rc = utc_gpu_data_put_host(da, a)) == UTC_OK)
        rc = utc_gpu_data_sync_device(da);
    if (rc == UTC_OK && (rc = utc_gpu_data_put_host(db, b)) == UTC_OK)
        rc = utc_gpu_data_sync_device(db);
    if (rc == UTC_OK)
        rc = utc_gpu_synchronize();
    if (rc != UTC_OK)
        goto out;
    *xfer += capp_now() - t0;

    rc = capp_gpu_status(mm_gpu_launch(utc_gpu_data_device(da), utc_gpu_data_device(db),
                                       utc_gpu_data_device(dc), rows, k, n, utc_gpu_stream()),
                         "mm kernel launch");
    if (rc == UTC_OK)
        rc = utc_gpu_synchronize();
    if (rc != UTC_OK)
        goto out;
    double t1 = capp_now();
    if ((rc = utc_gpu_data_mark_device(dc)) == UTC_OK)
        rc = utc_gpu_data_fetch_host(dc, c);
    *xfer += capp_now() - t1;
out:
    utc_gpu_data_destroy(da);
    utc_gpu_data_destroy(db);
    utc_gpu_data_destroy(dc);
    return rc;
}

int mm_gpu(const capp_cfg_t *cfg, capp_result_t *res)
{
    return mm_task(cfg, res, UTC_TASK_GPU, mm_gpu_rows);
}
