/* rotate, UTC GPU task version: each GPU thread takes a block of output rows (planes
 * stacked), copies the source planes to its device and rotates with one CUDA thread per
 * output pixel. Timed: host-to-device copy, kernel, device-to-host copy. */
#include <string.h>

#include "app_utc.h"
#include "rotate_impl.h"
#include "pixel_kernels.h"

#define ROTATE_GPU_MAX_THREADS 64

typedef struct {
    utc_task_t base;
    rotate_job_t *job;
    long long r0[ROTATE_GPU_MAX_THREADS], r1[ROTATE_GPU_MAX_THREADS];
    utc_gpu_data_t *src[ROTATE_GPU_MAX_THREADS], *dst[ROTATE_GPU_MAX_THREADS];
} rotate_gpu_task_t;

static int rotate_gpu_init(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    rotate_gpu_task_t *t = (rotate_gpu_task_t *)self;
    const rotate_job_t *job = t->job;
    const int me = ctx->local_id;
    const long long rows = (long long)job->planes * job->rot.oh, nt = ctx->local_count;
    t->r0[me] = rows * me / nt;
    t->r1[me] = rows * (me + 1) / nt;
    if (t->r1[me] == t->r0[me])
        return 0;
    size_t plane = (size_t)job->rot.w * (size_t)job->rot.h;
    int rc;
    if ((rc = utc_gpu_data_create_default(1, plane, (size_t)job->planes, 1, &t->src[me])) ||
        (rc = utc_gpu_data_create_default(1, (size_t)job->rot.ow, (size_t)(t->r1[me] - t->r0[me]),
                                          1, &t->dst[me])))
        return rc;
    /* the planes into the host copy (pinned for --memtype pinned), not timed */
    uint8_t *host = utc_gpu_data_host(t->src[me]);
    for (int p = 0; p < job->planes; p++)
        memcpy(host + p * plane, job->src[p], plane);
    return utc_gpu_data_mark_host(t->src[me]);
}

static int rotate_gpu_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    rotate_gpu_task_t *t = (rotate_gpu_task_t *)self;
    const int me = ctx->local_id;
    const rotate_job_t *job = t->job;
    if (t->r1[me] == t->r0[me])
        return 0;
    int rc;
    /* Each run starts from the host copy, so every repetition pays the transfer. */
    if ((rc = utc_gpu_data_mark_host(t->src[me])) || (rc = utc_gpu_data_sync_device(t->src[me])))
        return rc;
    if (ryr_gpu_rotate_launch(&job->rot, utc_gpu_data_device(t->src[me]), t->r0[me], t->r1[me],
                          utc_gpu_data_device(t->dst[me]), utc_gpu_stream()) != 0)
        return utc_gpu_check("rotate kernel launch");
    if ((rc = utc_gpu_data_mark_device(t->dst[me])) || (rc = utc_gpu_data_sync_host(t->dst[me])))
        return rc;
    /* rows back into the job's planes */
    const uint8_t *out = utc_gpu_data_host(t->dst[me]);
    const long long oh = job->rot.oh, ow = job->rot.ow;
    for (long long r = t->r0[me]; r < t->r1[me]; r++)
        memcpy(job->dst[r / oh] + (size_t)(r % oh) * ow, out + (size_t)(r - t->r0[me]) * ow,
               (size_t)ow);
    return 0;
}

static void rotate_gpu_fini(utc_task_t *self, utc_ctx_t *ctx)
{
    rotate_gpu_task_t *t = (rotate_gpu_task_t *)self;
    utc_gpu_data_destroy(t->src[ctx->local_id]);
    utc_gpu_data_destroy(t->dst[ctx->local_id]);
}

static const utc_task_ops_t rotate_gpu_ops = {.name = "rotate-gpu",
                                              .size = sizeof(rotate_gpu_task_t),
                                              .init = rotate_gpu_init,
                                              .run = rotate_gpu_run,
                                              .fini = rotate_gpu_fini};

int rotate_run_gpu(rotate_job_t *job, const app_opts_t *opts, double *seconds)
{
    utc_task_t *task;
    utc_status_t rc = app_task_create(&rotate_gpu_ops, opts->threads, UTC_TASK_GPU,
                                      opts->memtype, &task);
    if (rc != UTC_OK) {
        app_utc_error("rotate", "cannot create the GPU task", rc);
        return rc == UTC_ERR_NO_DEVICE || rc == UTC_ERR_NO_GPU_SUPPORT ? APP_EXIT_NO_GPU
                                                                        : APP_EXIT_FAIL;
    }
    ((rotate_gpu_task_t *)task)->job = job;
    rc = utc_task_init(task, NULL);
    if (rc != UTC_OK)
        app_utc_error("rotate", "GPU task init (buffers)", rc);
    else if ((rc = app_task_time(task, NULL, opts->reps, seconds)) != UTC_OK)
        app_utc_error("rotate", "the GPU task failed", rc);
    (void)utc_task_destroy(task);
    return rc == UTC_OK ? APP_EXIT_OK : APP_EXIT_FAIL;
}
