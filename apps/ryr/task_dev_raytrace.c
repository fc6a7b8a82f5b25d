/*
 * --preset gpu, the raytrace stage: a GPU task with --ray-threads threads on each of its
 * ranks (RYR.md's placement: every rank by default). Each thread renders its share of the
 * rows with the CUDA renderer (render_gpu.cu) into its rank's band of device memory; the
 * band goes to yuv on a free-mode device conduit (write_to the yuv task's rank), which
 * puts the bands of all ranks together in its frame: in this process by handing over,
 * from another rank by CUDA IPC (or staged through pinned host memory). Nothing is copied
 * to the host. Busy: the device time of thread 0's kernels (the slowest rank's, in the
 * summary).
 */
#include <stdio.h>

#include "gpu_stages.h"
#include "pipeline.h"
#include "render_gpu.h"

void ryr_dev_rank_rows(int h, int i, int n, int *y0, int *y1)
{
    *y0 = (int)((int64_t)h * i / n);
    *y1 = (int)((int64_t)h * (i + 1) / n);
}

/* This rank's band: all its threads' rows (thread 0 makes it for all). */
static int alloc_band(utc_ctx_t *ctx, void *arg)
{
    ryr_ray_task_t *t = arg;
    int n = ctx->global_count / ctx->local_count, y0, y1;
    ryr_dev_rank_rows(t->pipe->h, ctx->global_id / ctx->local_count, n, &y0, &y1);
    void *band;
    int rc = ryr_gpu_alloc((size_t)(y1 - y0) * (size_t)t->pipe->w * 3, &band);
    t->frame = rc ? NULL : band;
    return rc;
}

static int free_band(utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    ryr_ray_task_t *t = arg;
    ryr_gpu_free(t->frame);
    t->frame = NULL;
    return 0;
}

/* With several threads on a rank: after `rc` (this thread's status at its `*step`-th call,
 * the same count on every thread), wait for the others and return nonzero on every thread
 * when any of them failed at this step or before, so that all leave together (a thread
 * leaving alone would leave the others waiting in a barrier or a conduit call). A failure
 * of a later step, by a thread that ran ahead, does not count yet: each thread decides at
 * the same step. */
static int any_failed(ryr_ray_task_t *t, utc_ctx_t *ctx, int *step, int rc)
{
    if (ctx->local_count == 1)
        return rc;
    int now = ++*step, none = 0;
    if (rc) /* the first step that failed */
        atomic_compare_exchange_strong(&t->dev_failed, &none, now);
    int brc = utc_ctx_barrier_local(ctx);
    /* the barrier orders every thread's store of this step before the loads */
    int failed_at = atomic_load(&t->dev_failed);
    return rc ? rc : brc ? brc : failed_at && failed_at <= now ? UTC_ERR_CANCELED : 0;
}

/* Render this thread's rows [y0, y1) of every frame into the band (which starts at row
 * ry0) and write the band, rows [ry0, ry1), to yuv after each frame. */
static int render_frames(ryr_ray_task_t *t, utc_ctx_t *ctx, int *step, ryr_gpu_scene_t *scene,
                         ryr_gpu_timer_t *timer, int y0, int y1, int ry0, int ry1)
{
    const ryr_pipe_t *p = t->pipe;
    size_t row_bytes = (size_t)p->w * 3;
    int several = ctx->local_count > 1, rc = 0;
    void *stream = utc_gpu_stream();
    for (int f = 0; f < p->frames && !rc; f++) {
        ryr_view_t view;
        ryr_view_for_frame(&view, p->scene, f, p->opt->orbit);
        if (y1 > y0 && !(rc = ryr_gpu_timer_start(timer, stream))) {
            rc = ryr_gpu_render_rows(scene, &view, p->w, p->h, y0, y1,
                                     t->frame + (size_t)(y0 - ry0) * row_bytes, stream);
            if (!rc) /* a failed launch is reported (utc_gpu_check) */
                rc = ryr_gpu_timer_stop(timer, stream);
        }
        /* Thread 0 writes the band, ordered after the work on its own stream: with several
         * threads the others' rows must be done first, and they may not render the next
         * frame into the band before thread 0's transfer has read it. */
        if (several && !rc)
            rc = utc_gpu_synchronize();
        if ((rc = any_failed(t, ctx, step, rc)))
            break;
        if (ry1 > ry0) /* every local thread calls it; all get thread 0's status */
            rc = utc_conduit_write_to(t->out, t->yuv_rank, t->frame,
                                      (size_t)(ry1 - ry0) * row_bytes, 0);
        if (several && !rc && ctx->local_id == 0)
            rc = utc_gpu_synchronize();
        rc = any_failed(t, ctx, step, rc);
    }
    return rc;
}

static int dev_ray_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    ryr_ray_task_t *t = (ryr_ray_task_t *)self;
    const ryr_pipe_t *p = t->pipe;
    int n = ctx->global_count / ctx->local_count, ry0, ry1;
    ryr_dev_rank_rows(p->h, ctx->global_id / ctx->local_count, n, &ry0, &ry1);
    /* this thread's share: by its place among the task's threads on all ranks */
    int y0 = (int)((int64_t)p->h * ctx->global_id / ctx->global_count);
    int y1 = (int)((int64_t)p->h * (ctx->global_id + 1) / ctx->global_count);
    ryr_gpu_scene_t *scene = NULL;
    ryr_gpu_timer_t *timer = NULL;
    int step = 0;
    int rc = utc_ctx_single(ctx, 0, alloc_band, t);
    if (!rc)
        rc = ryr_gpu_scene_upload(p->scene, &scene);
    if (!rc)
        rc = ryr_gpu_timer_create(&timer);
    if (!(rc = any_failed(t, ctx, &step, rc)))
        rc = render_frames(t, ctx, &step, scene, timer, y0, y1, ry0, ry1);
    if (rc) /* yuv's reads of this rank's rows then end (UTC_ERR_CLOSED), not wait */
        (void)utc_conduit_close(t->out);
    double busy = 0;
    int trc = timer ? ryr_gpu_timer_seconds(timer, &busy) : 0;
    rc = rc ? rc : trc;
    if (ctx->local_id == 0)
        t->busy = busy;
    /* the band is freed once every thread is done with it (and its transfers, on thread
     * 0's stream, which cudaFree waits for) */
    int brc = utc_ctx_barrier_local(ctx);
    int frc = utc_ctx_single(ctx, 0, free_band, t);
    ryr_gpu_timer_destroy(timer);
    ryr_gpu_scene_free(scene);
    return rc ? rc : brc ? brc : frc;
}

const utc_task_ops_t ryr_dev_ray_ops = {
    .name = "raytrace-dev", .size = sizeof(ryr_ray_task_t), .run = dev_ray_run};
