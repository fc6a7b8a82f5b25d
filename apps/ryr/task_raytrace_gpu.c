/*
 * The raytrace stage on a GPU task (presets v4, v5, --gpu): each GPU thread renders a fixed
 * share of the rows (by its place among the task's threads on every rank) with a CUDA
 * kernel on its own stream into a utc_gpu_data_t buffer of the task's memory kind
 * (--memtype), then fetches it to the host. On one rank the rows land in the frame that is
 * handed to yuv; when the task spans several ranks they land in global shared data on the
 * entry rank, as the CPU task's do (task_raytrace.c), stored there remotely from the other
 * ranks. With --farm it is one member of the farm, taking frames from the dispatcher like
 * the CPU members.
 */
#include <stdlib.h>

#include "pipeline.h"
#include "render_gpu.h"

typedef struct {
    ryr_gpu_scene_t *scene;
    utc_gpu_data_t *rows;
    uint8_t *staging; /* another rank's rows on their way to the entry rank */
} gpu_thread_state_t;

int ryr_gpu_available(void) { return utc_gpu_supported() && utc_gpu_device_count() > 0; }

static int alloc_frame(utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    ryr_ray_task_t *t = arg;
    t->frame = utc_buf_alloc((size_t)t->pipe->w * (size_t)t->pipe->h * 3);
    return t->frame ? 0 : UTC_ERR_NO_MEMORY;
}

/* Render rows y0..y1 of frame f on this thread's GPU and copy them to dst (host). */
static int render_rows(const ryr_pipe_t *p, gpu_thread_state_t *st, int f, int y0, int y1,
                       uint8_t *dst)
{
    ryr_view_t view;
    ryr_view_for_frame(&view, p->scene, f, p->opt->orbit);
    double t0 = utc_wtime();
    int rc = ryr_gpu_render_rows(st->scene, &view, p->w, p->h, y0, y1,
                                 utc_gpu_data_device(st->rows), utc_gpu_stream());
    if (!rc)
        rc = utc_gpu_data_mark_device(st->rows);
    if (!rc) /* copies to the host and waits for the stream */
        rc = utc_gpu_data_fetch_host(st->rows, dst);
    ryr_slow_down(p, t0);
    return rc;
}

static int mixed_gpu_chunk(const ryr_ray_task_t *t, int kind, int left, void *st)
{
    (void)st;
    return ryr_ray_mixed_chunk(t, kind, left);
}

static int mixed_gpu_render(const ryr_pipe_t *p, const ryr_view_t *view, int f, int y0, int y1,
                            uint8_t *dst, void *st)
{
    (void)f;
    gpu_thread_state_t *m = st; /* a device buffer for a whole frame */
    uint8_t *dev = utc_gpu_data_device(m->rows);
    double t0 = utc_wtime();
    int rc = ryr_gpu_render_rows(m->scene, view, p->w, p->h, y0, y1, dev, utc_gpu_stream());
    if (!rc)
        rc = ryr_gpu_copy_to_host(dst, dev, (size_t)(y1 - y0) * (size_t)p->w * 3,
                                  utc_gpu_stream());
    if (!rc)
        rc = utc_gpu_synchronize();
    ryr_slow_down(p, t0);
    return rc;
}

/* The GPU threads' body of a --mixed farm member (on one rank): rows from the frame's
 * counter with the CPU threads (ryr_ray_mixed_cpu_run), in larger chunks. */
static int ray_mixed_gpu_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    ryr_ray_task_t *t = (ryr_ray_task_t *)self;
    const ryr_pipe_t *p = t->pipe;
    gpu_thread_state_t m = {0};
    int rc = ryr_gpu_scene_upload(p->scene, &m.scene);
    if (!rc)
        rc = utc_gpu_data_create_default(1, (size_t)p->w * (size_t)p->h * 3, 1, 1, &m.rows);
    if (!rc) {
        ryr_rows_worker_t w = {.chunk = mixed_gpu_chunk, .render = mixed_gpu_render, .st = &m};
        rc = ryr_ray_run_rows(t, ctx, &w);
    }
    if (m.rows)
        utc_gpu_data_destroy(m.rows);
    ryr_gpu_scene_free(m.scene);
    return rc;
}

/* One rank: rows into an owned frame, which is handed to yuv (or to a farm's yuv). */
static int run_local(ryr_ray_task_t *t, utc_ctx_t *ctx, gpu_thread_state_t *st, int y0, int y1)
{
    const ryr_pipe_t *p = t->pipe;
    size_t row_bytes = (size_t)p->w * 3, bytes = row_bytes * (size_t)p->h;
    int f = -1, more, rc;
    while ((more = ryr_ray_next_frame(t, &f)) > 0) {
        double t0 = utc_wtime();
        if ((rc = utc_ctx_single(ctx, 0, alloc_frame, t)))
            return rc;
        rc = y1 > y0 ? render_rows(p, st, f, y0, y1, t->frame + (size_t)y0 * row_bytes) : 0;
        atomic_fetch_add(&t->rows[UTC_TASK_GPU], y1 - y0);
        int brc = utc_ctx_barrier_local(ctx);
        if ((rc = rc ? rc : brc))
            return rc;
        if (ctx->local_id == 0) {
            t->busy += utc_wtime() - t0;
            t->frames_done++;
        }
        if ((rc = ryr_ray_send(t, t->frame, bytes, f)))
            return rc;
    }
    return more < 0 ? more : ryr_ray_done(t);
}

/* Several ranks: rows into the global shared frame on the entry rank (group rank 0),
 * directly there, through a host staging buffer elsewhere. */
static int run_spread(ryr_ray_task_t *t, utc_ctx_t *ctx, gpu_thread_state_t *st, int y0,
                      int y1)
{
    const ryr_pipe_t *p = t->pipe;
    size_t row_bytes = (size_t)p->w * 3;
    size_t off = (size_t)y0 * row_bytes, n = (size_t)(y1 - y0) * row_bytes;
    uint8_t *entry_frame = utc_gdata_ptr(t->gframe);
    int rc = 0;
    for (int f = 0; f < p->frames && !rc; f++) {
        double t0 = utc_wtime();
        if (n && ctx->group_rank == 0) {
            rc = render_rows(p, st, f, y0, y1, entry_frame + off);
        } else if (n) {
            rc = render_rows(p, st, f, y0, y1, st->staging);
            if (!rc)
                rc = utc_gdata_rstore_block(t->gframe, 0, off, n, st->staging);
        }
        rc = ryr_ray_gather_send(t, ctx, f, t0, rc);
    }
    return rc;
}

static int ray_gpu_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    ryr_ray_task_t *t = (ryr_ray_task_t *)self;
    const ryr_pipe_t *p = t->pipe;
    int spread = ctx->group_size > 1;
    /* this thread's rows: its share by its place among the task's threads on all ranks */
    int y0 = (int)((int64_t)p->h * ctx->global_id / ctx->global_count);
    int y1 = (int)((int64_t)p->h * (ctx->global_id + 1) / ctx->global_count);
    size_t n = (size_t)(y1 - y0) * (size_t)p->w * 3;
    gpu_thread_state_t st = {0};
    int rc = ryr_gpu_scene_upload(p->scene, &st.scene);
    if (!rc && n)
        rc = utc_gpu_data_create_default(1, n, 1, 1, &st.rows);
    if (!rc && n && spread && ctx->group_rank != 0 && !(st.staging = malloc(n)))
        rc = UTC_ERR_NO_MEMORY;
    if (!rc)
        rc = spread ? run_spread(t, ctx, &st, y0, y1) : run_local(t, ctx, &st, y0, y1);
    free(st.staging);
    if (st.rows)
        utc_gpu_data_destroy(st.rows);
    ryr_gpu_scene_free(st.scene);
    return rc;
}

const utc_task_ops_t ryr_ray_gpu_ops = {
    .name = "raytrace-gpu", .size = sizeof(ryr_ray_task_t),
    .init = ryr_ray_init, .run = ray_gpu_run, .fini = ryr_ray_fini};

const utc_task_ops_t ryr_ray_mixed_ops = {
    .name = "raytrace-mixed", .size = sizeof(ryr_ray_task_t), .version = UTC_TASK_OPS_VERSION,
    .init = ryr_ray_init, .run = ryr_ray_mixed_cpu_run, .run_gpu = ray_mixed_gpu_run,
    .fini = ryr_ray_fini};
