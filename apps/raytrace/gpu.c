/* raytrace, UTC GPU task version: the RYR sample's GPU renderer (apps/ryr/render_gpu.cu,
 * one CUDA thread per pixel, the same arithmetic as render.c). Each GPU thread renders a
 * block of rows on its device. Timed: kernel and device-to-host copy of the frame (the
 * scene, a few hundred bytes, goes to the device once, at init). */
#include "app_utc.h"
#include "render_gpu.h"
#include "rt_impl.h"

#define RT_GPU_MAX_THREADS 64

typedef struct {
    utc_task_t base;
    rt_job_t *job;
    int y0[RT_GPU_MAX_THREADS], y1[RT_GPU_MAX_THREADS];
    ryr_gpu_scene_t *scene[RT_GPU_MAX_THREADS];
    utc_gpu_data_t *rows[RT_GPU_MAX_THREADS];
} rt_gpu_task_t;

static int rt_gpu_init(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    rt_gpu_task_t *t = (rt_gpu_task_t *)self;
    const int me = ctx->local_id;
    const long long h = t->job->h, nt = ctx->local_count;
    t->y0[me] = (int)(h * me / nt);
    t->y1[me] = (int)(h * (me + 1) / nt);
    if (t->y1[me] == t->y0[me])
        return 0;
    int rc = ryr_gpu_scene_upload(&t->job->scene, &t->scene[me]);
    if (rc == 0)
        rc = utc_gpu_data_create_default(3, (size_t)t->job->w, (size_t)(t->y1[me] - t->y0[me]), 1,
                                         &t->rows[me]);
    return rc;
}

static int rt_gpu_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    rt_gpu_task_t *t = (rt_gpu_task_t *)self;
    const int me = ctx->local_id;
    rt_job_t *job = t->job;
    if (t->y1[me] == t->y0[me])
        return 0;
    int rc = ryr_gpu_render_rows(t->scene[me], &job->view, job->w, job->h, t->y0[me], t->y1[me],
                                 utc_gpu_data_device(t->rows[me]), utc_gpu_stream());
    if (rc) /* a failed launch is reported already (utc_gpu_check) */
        return rc;
    if ((rc = utc_gpu_data_mark_device(t->rows[me])))
        return rc;
    /* through the host copy, so --memtype decides what the transfer lands in */
    return utc_gpu_data_fetch_host(t->rows[me], job->rgb + (size_t)t->y0[me] * job->w * 3);
}

static void rt_gpu_fini(utc_task_t *self, utc_ctx_t *ctx)
{
    rt_gpu_task_t *t = (rt_gpu_task_t *)self;
    utc_gpu_data_destroy(t->rows[ctx->local_id]);
    ryr_gpu_scene_free(t->scene[ctx->local_id]);
}

static const utc_task_ops_t rt_gpu_ops = {.name = "raytrace-gpu",
                                          .size = sizeof(rt_gpu_task_t),
                                          .init = rt_gpu_init,
                                          .run = rt_gpu_run,
                                          .fini = rt_gpu_fini};

int rt_run_gpu(rt_job_t *job, const app_opts_t *opts, double *seconds)
{
    utc_task_t *task;
    utc_status_t rc = app_task_create(&rt_gpu_ops, opts->threads, UTC_TASK_GPU, opts->memtype,
                                      &task);
    if (rc != UTC_OK) {
        app_utc_error("raytrace", "cannot create the GPU task", rc);
        return rc == UTC_ERR_NO_DEVICE || rc == UTC_ERR_NO_GPU_SUPPORT ? APP_EXIT_NO_GPU
                                                                        : APP_EXIT_FAIL;
    }
    ((rt_gpu_task_t *)task)->job = job;
    rc = utc_task_init(task, NULL);
    if (rc != UTC_OK)
        app_utc_error("raytrace", "GPU task init (scene, buffers)", rc);
    else if ((rc = app_task_time(task, NULL, opts->reps, seconds)) != UTC_OK)
        app_utc_error("raytrace", "the GPU task failed", rc);
    (void)utc_task_destroy(task);
    return rc == UTC_OK ? APP_EXIT_OK : APP_EXIT_FAIL;
}
