/* yuv, UTC CPU task version: a task of N threads on rank 0; thread t converts the t-th
 * contiguous block of pixels. */
#include "app_utc.h"
#include "yuv_impl.h"

typedef struct {
    utc_task_t base;
    yuv_job_t *job; /* shared by the rank's threads */
} yuv_task_t;

static int yuv_task_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    yuv_job_t *job = ((yuv_task_t *)self)->job;
    const size_t n = yuv_job_pixels(job), me = (size_t)ctx->local_id;
    const size_t nt = (size_t)ctx->local_count;
    ryr_yuv_convert(job->rgb, n * me / nt, n * (me + 1) / nt, job->y, job->u, job->v);
    return 0;
}

static const utc_task_ops_t yuv_task_ops = {
    .name = "yuv", .size = sizeof(yuv_task_t), .run = yuv_task_run};

int yuv_run_utc(yuv_job_t *job, const app_opts_t *opts, double *seconds)
{
    utc_task_t *task;
    utc_status_t rc = app_task_create(&yuv_task_ops, opts->threads, UTC_TASK_CPU,
                                      opts->memtype, &task);
    if (rc != UTC_OK) {
        app_utc_error("yuv", "cannot create the task", rc);
        return APP_EXIT_FAIL;
    }
    ((yuv_task_t *)task)->job = job;
    rc = app_task_time(task, NULL, opts->reps, seconds);
    if (rc != UTC_OK)
        app_utc_error("yuv", "the task failed", rc);
    (void)utc_task_destroy(task);
    return rc == UTC_OK ? APP_EXIT_OK : APP_EXIT_FAIL;
}
