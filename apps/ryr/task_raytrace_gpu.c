/*
 * The raytrace stage on a GPU task (presets v4, v5, --gpu): each GPU thread renders its
 * share of the rows with a CUDA kernel on its own stream into a utc_gpu_data_t buffer of
 * the task's memory kind (--memtype), then fetches it to the host frame. The task runs on
 * one rank. With --farm it is one member of the farm (task_raytrace.c), taking frames from
 * the dispatcher like the CPU members.
 */
#include <stdlib.h>

#include "pipeline.h"
#include "render_gpu.h"

typedef struct {
    ryr_gpu_scene_t *scene;
    utc_gpu_data_t *rows;
} gpu_thread_state_t;

int ryr_gpu_available(void) { return utc_gpu_supported() && utc_gpu_device_count() > 0; }

static int alloc_frame(utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    ryr_ray_task_t *t = arg;
    t->frame = utc_buf_alloc((size_t)t->pipe->w * (size_t)t->pipe->h * 3);
    return t->frame ? 0 : UTC_ERR_NO_MEMORY;
}

static int ray_gpu_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    ryr_ray_task_t *t = (ryr_ray_task_t *)self;
    const ryr_pipe_t *p = t->pipe;
    if (ctx->group_size > 1)
        return UTC_ERR_UNSUPPORTED; /* a GPU raytrace task runs on one rank */
    int y0 = p->h * ctx->local_id / ctx->local_count;
    int y1 = p->h * (ctx->local_id + 1) / ctx->local_count;
    size_t row_bytes = (size_t)p->w * 3, bytes = row_bytes * (size_t)p->h;
    gpu_thread_state_t st = {0};
    int rc = ryr_gpu_scene_upload(p->scene, &st.scene);
    if (!rc && y1 > y0)
        rc = utc_gpu_data_create_default(1, row_bytes * (size_t)(y1 - y0), 1, 1, &st.rows);
    int f = -1, more = 1;
    while (!rc && (more = ryr_ray_next_frame(t, &f)) > 0) {
        double t0 = utc_wtime();
        if ((rc = utc_ctx_single(ctx, 0, alloc_frame, t)))
            break;
        ryr_view_t view;
        ryr_view_for_frame(&view, p->scene, f, p->opt->orbit);
        if (y1 > y0) {
            rc = ryr_gpu_render_rows(st.scene, &view, p->w, p->h, y0, y1,
                                     utc_gpu_data_device(st.rows), utc_gpu_stream());
            if (!rc)
                rc = utc_gpu_data_mark_device(st.rows);
            if (!rc) /* copies to the host frame and waits for the stream */
                rc = utc_gpu_data_fetch_host(st.rows, t->frame + (size_t)y0 * row_bytes);
            ryr_slow_down(p, t0);
        }
        int brc = utc_ctx_barrier_local(ctx);
        rc = rc ? rc : brc;
        if (rc)
            break;
        if (ctx->local_id == 0)
            t->busy += utc_wtime() - t0;
        rc = ryr_ray_send(t, t->frame, bytes, f);
    }
    if (!rc)
        rc = more < 0 ? more : ryr_ray_done(t);
    if (st.rows)
        utc_gpu_data_destroy(st.rows);
    ryr_gpu_scene_free(st.scene);
    return rc;
}

const utc_task_ops_t ryr_ray_gpu_ops = {
    .name = "raytrace-gpu", .size = sizeof(ryr_ray_task_t), .run = ray_gpu_run};
