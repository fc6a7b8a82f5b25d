/*
 * mc, UTC GPU task: one thread per GPU on every rank, running the CPU task's code
 * (mc_utc.c) with this block function: the thread's blocks are summed on its device and
 * the sums come back to the rank's array for the task gather. The download counts as
 * communication.
 */
#include "cluster_gpu.h"
#include "mc.h"

static int mc_gpu_blocks(uint64_t key, int64_t samples, int64_t b0, int64_t count, double *sums,
                         double *xfer)
{
    utc_gpu_data_t *d = NULL;
    int rc = utc_gpu_data_create_default(sizeof(double), (size_t)count, 1, 1, &d);
    if (rc == UTC_OK)
        rc = capp_gpu_status(mc_gpu_launch(key, samples, b0, count, utc_gpu_data_device(d),
                                           utc_gpu_stream()),
                             "mc kernel launch");
    if (rc == UTC_OK)
        rc = utc_gpu_synchronize();
    if (rc == UTC_OK) {
        double t0 = capp_now();
        if ((rc = utc_gpu_data_mark_device(d)) == UTC_OK)
            rc = utc_gpu_data_fetch_host(d, sums);
        *xfer += capp_now() - t0;
    }
    utc_gpu_data_destroy(d);
    return rc;
}

int mc_gpu(const capp_cfg_t *cfg, capp_result_t *res)
{
    return mc_task(cfg, res, UTC_TASK_GPU, mc_gpu_blocks);
}
