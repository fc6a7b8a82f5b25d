/*
 * The raytrace stage on CPU threads. On one rank the threads take chunks of rows from a
 * shared counter and render into one frame buffer. When the task spans several ranks, the
 * counter and the frame live in global shared data on the entry rank: threads of every
 * rank take chunks with an atomic fetch-add and store their rows there remotely.
 *
 * With --farm there are several raytrace tasks, each on one rank, and each renders whole
 * frames: it asks the dispatcher for a frame number on a share-mode shared conduit (so a
 * fast task asks, and gets, more often), renders it with its threads and sends it to yuv
 * on a shared conduit of all the members, tagged with its frame number.
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"
#include "render.h"

#define ROWS_PER_CHUNK 4

int ryr_ray_init(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    ryr_ray_task_t *t = (ryr_ray_task_t *)self;
    if (ctx->group_size == 1)
        return 0;
    size_t bytes = (size_t)t->pipe->w * (size_t)t->pipe->h * 3;
    utc_status_t rc = utc_gdata_create(ctx, 1, bytes, &t->gframe);
    if (rc == UTC_OK)
        rc = utc_gdata_create(ctx, sizeof(int64_t), 1, &t->gcounter);
    return rc;
}

/* Fewest rows of a GPU thread's chunk: a kernel launch and a copy back cost more than a
 * few rows. */
#define MIXED_GPU_MIN_ROWS 8

/*
 * A mixed member, at the start of a frame: the rows kept for each kind whose speed is not
 * measured yet, GPU rows first (its first chunk: a quarter of the frame, at least
 * MIXED_GPU_MIN_ROWS), then a row for each CPU thread, at most half the frame; the rest
 * goes to the shared counter. So each kind renders rows of the member's first frame, and
 * its speed is measured, however the threads are scheduled. Other tasks keep nothing.
 */
static void reserve_rows(ryr_ray_task_t *t)
{
    const ryr_plan_t *plan = t->pipe->plan;
    int h = t->pipe->h, keep[2] = {0, 0};
    if (utc_task_kind(&t->base) == UTC_TASK_MIXED) {
        /* relaxed: speeds are hints (a stale 0 only keeps rows once more) */
        if (atomic_load_explicit(&t->row_s[UTC_TASK_CPU], memory_order_relaxed) <= 0) {
            int ncpu = plan->farm_mixed_cpu_threads > 0 ? plan->farm_mixed_cpu_threads : 1;
            keep[UTC_TASK_CPU] = ncpu < h / 2 ? ncpu : h / 2;
        }
        if (atomic_load_explicit(&t->row_s[UTC_TASK_GPU], memory_order_relaxed) <= 0) {
            int g = h / 4 > MIXED_GPU_MIN_ROWS ? h / 4 : MIXED_GPU_MIN_ROWS;
            keep[UTC_TASK_GPU] = g < h - keep[UTC_TASK_CPU] ? g : h - keep[UTC_TASK_CPU];
        }
    }
    int y = 0;
    for (int k = UTC_TASK_GPU; k >= UTC_TASK_CPU; k--) {
        atomic_store_explicit(&t->res_next[k], y, memory_order_relaxed);
        t->res_end[k] = y += keep[k];
    }
    atomic_store_explicit(&t->next_row, y, memory_order_relaxed);
}

/* Thread 0 at the start of a frame; utc_ctx_single's barrier publishes what it sets. */
static int alloc_frame(utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    ryr_ray_task_t *t = arg;
    size_t bytes = (size_t)t->pipe->w * (size_t)t->pipe->h * 3;
    t->frame = utc_buf_alloc(bytes);
    reserve_rows(t);
    return t->frame ? 0 : UTC_ERR_NO_MEMORY;
}

int ryr_ray_next_frame(ryr_ray_task_t *t, int *f)
{
    if (!t->jobs) {
        ++*f;
        return *f < t->pipe->frames;
    }
    /* a farm member renders its own first frame before it asks (every thread decides
     * alike: all start at -1) */
    if (*f < 0 && t->first < t->pipe->frames) {
        *f = t->first;
        return 1;
    }
    /* every thread passes the same buffer: thread 0 receives into it, and the read's
     * barrier makes the number visible to the others before they return */
    size_t got = 0;
    utc_status_t rc = utc_conduit_read(t->jobs, &t->job, sizeof t->job, 0, &got);
    if (rc == UTC_ERR_CLOSED)
        return 0;
    if (rc)
        return rc;
    if (got != sizeof t->job || t->job < 0 || t->job >= t->pipe->frames)
        return UTC_ERR_INVALID_ARG; /* not a frame number of this run: a bug */
    *f = t->job;
    return 1;
}

utc_status_t ryr_ray_send(ryr_ray_task_t *t, void *frame, size_t bytes, int f)
{
    return utc_conduit_write_owned(t->out, frame, bytes, t->jobs ? f : 0);
}

utc_status_t ryr_ray_done(ryr_ray_task_t *t)
{
    /* yuv counts its frames, so this is for the conduit's sake: once every member has
     * closed, a yuv read that found nothing left would end instead of waiting */
    return t->jobs ? utc_conduit_close(t->out) : UTC_OK;
}

/* Fold one measured time per row of a thread of `kind` into the task's average. */
static void note_row_time(ryr_ray_task_t *t, int kind, double s)
{
    /* relaxed: a hint; two threads that update at once lose one sample */
    double old = atomic_load_explicit(&t->row_s[kind], memory_order_relaxed);
    atomic_store_explicit(&t->row_s[kind], old > 0 ? 0.75 * old + 0.25 * s : s,
                          memory_order_relaxed);
}

/*
 * The next rows of the frame for a thread of `kind`: first from the rows kept for its
 * kind, then from the shared counter, as w->chunk says. 1 and [*y0, *y1) when it got
 * some, 0 when none is left for it.
 */
static int take_rows(ryr_ray_task_t *t, int kind, const ryr_rows_worker_t *w, int *y0, int *y1)
{
    const ryr_plan_t *plan = t->pipe->plan;
    int h = t->pipe->h, end = t->res_end[kind];
    if (end > 0) {
        /* GPU threads split their rows (kept first: [0, end)) in one chunk each, CPU
         * threads take one row at a time */
        int n = 1;
        if (kind == UTC_TASK_GPU) {
            int ngpu = plan->ray_threads > 0 ? plan->ray_threads : 1;
            n = (end + ngpu - 1) / ngpu;
        }
        /* relaxed: the fetch-add alone hands each row to one thread */
        int y = atomic_fetch_add_explicit(&t->res_next[kind], n, memory_order_relaxed);
        if (y < end) {
            *y0 = y;
            *y1 = y + n < end ? y + n : end;
            return 1;
        }
    }
    /* relaxed: the rows left are a hint for the chunk size; the fetch-add hands rows out */
    int n = w->chunk(t, kind, h - atomic_load_explicit(&t->next_row, memory_order_relaxed),
                     w->st);
    if (n <= 0 || (*y0 = atomic_fetch_add(&t->next_row, n)) >= h)
        return 0;
    *y1 = *y0 + n < h ? *y0 + n : h;
    return 1;
}

int ryr_ray_run_rows(ryr_ray_task_t *t, utc_ctx_t *ctx, const ryr_rows_worker_t *w)
{
    const ryr_pipe_t *p = t->pipe;
    size_t bytes = (size_t)p->w * (size_t)p->h * 3;
    int f = -1, more;
    while ((more = ryr_ray_next_frame(t, &f)) > 0) {
        double t0 = utc_wtime();
        int rc = utc_ctx_single(ctx, 0, alloc_frame, t);
        if (rc)
            return rc;
        ryr_view_t view;
        ryr_view_for_frame(&view, p->scene, f, p->opt->orbit);
        long long rows = 0;
        int y0, y1;
        while (!rc && take_rows(t, ctx->kind, w, &y0, &y1)) {
            double c0 = utc_wtime();
            rc = w->render(p, &view, f, y0, y1, t->frame + (size_t)y0 * p->w * 3, w->st);
            rows += y1 - y0;
            ryr_slow_down(p, c0);
            note_row_time(t, ctx->kind, (utc_wtime() - c0) / (y1 - y0));
        }
        atomic_fetch_add(&t->rows[ctx->kind], rows);
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

/* CPU threads: `rows` (in st) at a time, rendered on this thread; in a mixed member, as
 * ryr_ray_mixed_chunk says (st NULL). */
static int cpu_chunk(const ryr_ray_task_t *t, int kind, int left, void *st)
{
    return st ? *(const int *)st : ryr_ray_mixed_chunk(t, kind, left);
}

static int cpu_render(const ryr_pipe_t *p, const ryr_view_t *view, int f, int y0, int y1,
                      uint8_t *dst, void *st)
{
    (void)f, (void)st;
    ryr_render_rows(p->scene, view, p->w, p->h, y0, y1, dst);
    return 0;
}

/* One rank: render into an owned buffer and hand it over. */
static int ray_run_local(ryr_ray_task_t *t, utc_ctx_t *ctx)
{
    int rows_per_chunk = ROWS_PER_CHUNK;
    ryr_rows_worker_t w = {.chunk = cpu_chunk, .render = cpu_render, .st = &rows_per_chunk};
    return ryr_ray_run_rows(t, ctx, &w);
}

int ryr_ray_mixed_cpu_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    ryr_rows_worker_t w = {.chunk = cpu_chunk, .render = cpu_render, .st = NULL};
    return ryr_ray_run_rows((ryr_ray_task_t *)self, ctx, &w);
}

int ryr_ray_mixed_chunk(const ryr_ray_task_t *t, int kind, int left)
{
    const ryr_plan_t *plan = t->pipe->plan;
    int ngpu = plan->ray_threads > 0 ? plan->ray_threads : 1;
    int ncpu = plan->farm_mixed_cpu_threads > 0 ? plan->farm_mixed_cpu_threads : 1;
    /* relaxed: speeds are hints, written by the threads that measure them */
    double g = atomic_load_explicit(&t->row_s[UTC_TASK_GPU], memory_order_relaxed);
    double c = atomic_load_explicit(&t->row_s[UTC_TASK_CPU], memory_order_relaxed);
    if (kind == UTC_TASK_CPU)
        return g > 0 && c > 0 && (double)left * g / ngpu < c ? 0 : 1;
    int n;
    if (g <= 0 || c <= 0) {
        n = left / 4 / ngpu;
    } else {
        double rg = ngpu / g, rc = ncpu / c; /* rows per second of each kind */
        n = (int)((double)left * rg / (rg + rc) / ngpu + 0.999);
    }
    return n > MIXED_GPU_MIN_ROWS ? n : MIXED_GPU_MIN_ROWS;
}

/*
 * Several ranks, after this thread stored its rows of frame f (rc: how that went): once
 * every thread of every rank is past the first barrier, the frame is whole on the entry
 * rank, which hands a copy to yuv; the second barrier keeps the next frame's rows (and the
 * counter's reset) behind that. Every thread of the task; returns the first error.
 */
int ryr_ray_gather_send(ryr_ray_task_t *t, utc_ctx_t *ctx, int f, double t0, int rc)
{
    size_t bytes = (size_t)t->pipe->w * (size_t)t->pipe->h * 3;
    int brc = utc_gdata_barrier(t->gframe);
    rc = rc ? rc : brc;
    if (!rc && ctx->group_rank == 0) {
        if (ctx->local_id == 0) {
            t->busy += utc_wtime() - t0;
            int64_t zero = 0;
            rc = utc_gdata_store(t->gcounter, 0, &zero);
            t->frame = utc_buf_alloc(bytes);
            if (t->frame)
                memcpy(t->frame, utc_gdata_ptr(t->gframe), bytes);
            else if (!rc)
                rc = UTC_ERR_NO_MEMORY;
        }
        if ((brc = utc_ctx_barrier_local(ctx)) && !rc)
            rc = brc;
        if (!rc && t->frame)
            rc = ryr_ray_send(t, t->frame, bytes, f);
    }
    brc = utc_gdata_barrier(t->gframe);
    return rc ? rc : brc;
}

/* Several ranks: rows go to the entry rank (group rank 0) through global shared data. */
static int ray_run_spread(ryr_ray_task_t *t, utc_ctx_t *ctx)
{
    const ryr_pipe_t *p = t->pipe;
    size_t row_bytes = (size_t)p->w * 3;
    int64_t nchunks = (p->h + ROWS_PER_CHUNK - 1) / ROWS_PER_CHUNK;
    uint8_t *rows = malloc(row_bytes * ROWS_PER_CHUNK);
    uint8_t *entry_frame = utc_gdata_ptr(t->gframe);
    int rc = rows ? 0 : UTC_ERR_NO_MEMORY;
    for (int f = 0; f < p->frames && !rc; f++) {
        double t0 = utc_wtime();
        ryr_view_t view;
        ryr_view_for_frame(&view, p->scene, f, p->opt->orbit);
        int64_t k;
        while (!rc && !(rc = utc_gdata_fetch_add(t->gcounter, 0, 0, 1, &k)) && k < nchunks) {
            int y0 = (int)k * ROWS_PER_CHUNK;
            int y1 = y0 + ROWS_PER_CHUNK < p->h ? y0 + ROWS_PER_CHUNK : p->h;
            size_t off = (size_t)y0 * row_bytes, n = (size_t)(y1 - y0) * row_bytes;
            double c0 = utc_wtime();
            if (ctx->group_rank == 0) {
                ryr_render_rows(p->scene, &view, p->w, p->h, y0, y1, entry_frame + off);
            } else {
                ryr_render_rows(p->scene, &view, p->w, p->h, y0, y1, rows);
                rc = utc_gdata_rstore_block(t->gframe, 0, off, n, rows);
            }
            ryr_slow_down(p, c0);
        }
        rc = ryr_ray_gather_send(t, ctx, f, t0, rc);
    }
    free(rows);
    return rc;
}

static int ray_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    ryr_ray_task_t *t = (ryr_ray_task_t *)self;
    return ctx->group_size == 1 ? ray_run_local(t, ctx) : ray_run_spread(t, ctx);
}

void ryr_ray_fini(utc_task_t *self, utc_ctx_t *ctx)
{
    ryr_ray_task_t *t = (ryr_ray_task_t *)self;
    if (t->gcounter)
        (void)utc_gdata_destroy(ctx, t->gcounter);
    if (t->gframe)
        (void)utc_gdata_destroy(ctx, t->gframe);
}

const utc_task_ops_t ryr_ray_cpu_ops = {
    .name = "raytrace", .size = sizeof(ryr_ray_task_t),
    .init = ryr_ray_init, .run = ray_run, .fini = ryr_ray_fini};
