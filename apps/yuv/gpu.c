/* yuv, UTC GPU task version: each GPU thread takes a block of pixels, one CUDA thread per
 * pixel. Timed: host-to-device copy, kernel, device-to-host copy. */
#include <string.h>

#include "app_utc.h"
#include "yuv_impl.h"
#include "pixel_kernels.h"

#define YUV_GPU_MAX_THREADS 64

typedef struct {
    utc_task_t base;
    yuv_job_t *job;
    size_t p0[YUV_GPU_MAX_THREADS], p1[YUV_GPU_MAX_THREADS];
    utc_gpu_data_t *rgb[YUV_GPU_MAX_THREADS], *planes[YUV_GPU_MAX_THREADS];
} yuv_gpu_task_t;

static int yuv_gpu_init(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    yuv_gpu_task_t *t = (yuv_gpu_task_t *)self;
    const int me = ctx->local_id;
    const size_t n = yuv_job_pixels(t->job), nt = (size_t)ctx->local_count;
    size_t p0 = n * (size_t)me / nt, p1 = n * ((size_t)me + 1) / nt;
    t->p0[me] = p0;
    t->p1[me] = p1;
    if (p1 == p0)
        return 0;
    int rc;
    if ((rc = utc_gpu_data_create_default(3, p1 - p0, 1, 1, &t->rgb[me])) ||
        (rc = utc_gpu_data_create_default(1, p1 - p0, 3, 1, &t->planes[me])))
        return rc;
    /* into the host copy (pinned for --memtype pinned), not timed */
    return utc_gpu_data_put_host(t->rgb[me], t->job->rgb + 3 * p0);
}

static int yuv_gpu_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    yuv_gpu_task_t *t = (yuv_gpu_task_t *)self;
    const int me = ctx->local_id;
    const size_t p0 = t->p0[me], n = t->p1[me] - p0;
    if (n == 0)
        return 0;
    int rc;
    /* Each run starts from the host copy, so every repetition pays the transfer. */
    if ((rc = utc_gpu_data_mark_host(t->rgb[me])) || (rc = utc_gpu_data_sync_device(t->rgb[me])))
        return rc;
    if (ryr_gpu_yuv_launch(utc_gpu_data_device(t->rgb[me]), n, utc_gpu_data_device(t->planes[me]),
                       utc_gpu_stream()) != 0)
        return utc_gpu_check("yuv kernel launch");
    if ((rc = utc_gpu_data_mark_device(t->planes[me])) ||
        (rc = utc_gpu_data_sync_host(t->planes[me])))
        return rc;
    const uint8_t *out = utc_gpu_data_host(t->planes[me]);
    memcpy(t->job->y + p0, out, n);
    memcpy(t->job->u + p0, out + n, n);
    memcpy(t->job->v + p0, out + 2 * n, n);
    return 0;
}

static void yuv_gpu_fini(utc_task_t *self, utc_ctx_t *ctx)
{
    yuv_gpu_task_t *t = (yuv_gpu_task_t *)self;
    utc_gpu_data_destroy(t->rgb[ctx->local_id]);
    utc_gpu_data_destroy(t->planes[ctx->local_id]);
}

static const utc_task_ops_t yuv_gpu_ops = {.name = "yuv-gpu",
                                           .size = sizeof(yuv_gpu_task_t),
                                           .init = yuv_gpu_init,
                                           .run = yuv_gpu_run,
                                           .fini = yuv_gpu_fini};

int yuv_run_gpu(yuv_job_t *job, const app_opts_t *opts, double *seconds)
{
    utc_task_t *task;
    utc_status_t rc = app_task_create(&yuv_gpu_ops, opts->threads, UTC_TASK_GPU, opts->memtype,
                                      &task);
    if (rc != UTC_OK) {
        app_utc_error("yuv", "cannot create the GPU task", rc);
        return rc == UTC_ERR_NO_DEVICE || rc == UTC_ERR_NO_GPU_SUPPORT ? APP_EXIT_NO_GPU
                                                                        : APP_EXIT_FAIL;
    }
    ((yuv_gpu_task_t *)task)->job = job;
    rc = utc_task_init(task, NULL);
    if (rc != UTC_OK)
        app_utc_error("yuv", "GPU task init (buffers)", rc);
    else if ((rc = app_task_time(task, NULL, opts->reps, seconds)) != UTC_OK)
        app_utc_error("yuv", "the GPU task failed", rc);
    (void)utc_task_destroy(task);
    return rc == UTC_OK ? APP_EXIT_OK : APP_EXIT_FAIL;
}
