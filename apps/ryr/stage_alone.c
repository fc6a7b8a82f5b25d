/*
 * --stage-alone STAGE (with --preset gpu): the kernels of one GPU-resident stage run alone,
 * on device buffers, with no conduits and no other stage: what the stage could do by
 * itself, against which the whole pipeline's frames/s is read (its slowest stage alone
 * bounds it). The same launches as the stage's task, from a GPU task with the stage's
 * threads (raytrace: --ray-threads, each its share of the rows; rotate: one thread per
 * rotate task, each its planes; yuv: one thread, --yuv-repeat conversions), on rank 0. The
 * inputs of yuv and rotate are a fixed byte pattern: their kernels' work does not depend
 * on the pixels' values. One frame is run first (not timed) to warm up.
 */
#include <mpi.h>
#include <stdio.h>

#include "gpu_stages.h"
#include "pipeline.h"
#include "pixel_kernels.h"
#include "render_gpu.h"
#include "report.h"

typedef struct alone_task {
    utc_task_t base;
    const ryr_pipe_t *pipe;
    double seconds; /* the timed frames, all threads (thread 0) */
} alone_task_t;

/* One thread's buffers and share of the stage's work. */
typedef struct alone_work {
    ryr_gpu_scene_t *scene; /* raytrace */
    int y0, y1;             /* raytrace: rows; rotate: planes [y0, y1) */
    uint8_t *in, *out;
} alone_work_t;

static int setup(const ryr_pipe_t *p, utc_ctx_t *ctx, alone_work_t *w)
{
    size_t npix = (size_t)p->w * (size_t)p->h, out_bytes = 0, in_bytes = 0;
    int me = ctx->local_id, n = ctx->local_count, rc = 0;
    switch (p->opt->stage_alone) {
    case RYR_STAGE_RAYTRACE:
        w->y0 = (int)((int64_t)p->h * me / n);
        w->y1 = (int)((int64_t)p->h * (me + 1) / n);
        out_bytes = (size_t)(w->y1 - w->y0) * (size_t)p->w * 3;
        rc = ryr_gpu_scene_upload(p->scene, &w->scene);
        break;
    case RYR_STAGE_YUV:
        in_bytes = npix * 3;
        out_bytes = npix * RYR_NPLANES;
        break;
    default: /* rotate: the planes of this thread's rotate task */
        w->y0 = RYR_NPLANES * me / n;
        w->y1 = RYR_NPLANES * (me + 1) / n;
        in_bytes = npix * (size_t)(w->y1 - w->y0);
        out_bytes = (size_t)p->rot.ow * (size_t)p->rot.oh * (size_t)(w->y1 - w->y0);
        break;
    }
    void *in = NULL, *out = NULL;
    if (!rc && in_bytes && !(rc = ryr_gpu_alloc(in_bytes, &in)))
        rc = ryr_gpu_fill(in, 0x5a, in_bytes, utc_gpu_stream());
    if (!rc)
        rc = ryr_gpu_alloc(out_bytes, &out);
    w->in = in;
    w->out = out;
    return rc;
}

/* Queue frame f's kernels of this thread's share, as the stage's task launches them. */
static int frame(const ryr_pipe_t *p, alone_work_t *w, int f)
{
    void *stream = utc_gpu_stream();
    int launch;
    switch (p->opt->stage_alone) {
    case RYR_STAGE_RAYTRACE: {
        ryr_view_t view;
        ryr_view_for_frame(&view, p->scene, f, p->opt->orbit);
        /* a UTC status: a failed launch is reported already (utc_gpu_check) */
        return ryr_gpu_render_rows(w->scene, &view, p->w, p->h, w->y0, w->y1, w->out, stream);
    }
    case RYR_STAGE_YUV:
        launch = 0;
        for (int r = 0; r < p->opt->yuv_repeat && !launch; r++)
            launch = ryr_gpu_yuv_launch(w->in, (size_t)p->w * (size_t)p->h, w->out, stream);
        break;
    default:
        launch = w->y1 > w->y0
                     ? ryr_gpu_rotate_launch(&p->rot, w->in, 0,
                                             (long long)p->rot.oh * (w->y1 - w->y0), w->out, stream)
                     : 0;
        break;
    }
    return launch ? utc_gpu_check("ryr: --stage-alone: a kernel's launch") : 0;
}

static int alone_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    alone_task_t *t = (alone_task_t *)self;
    const ryr_pipe_t *p = t->pipe;
    alone_work_t w = {0};
    int rc = setup(p, ctx, &w);
    if (!rc && !(rc = frame(p, &w, 0))) /* warm-up */
        rc = utc_gpu_synchronize();
    int brc = utc_ctx_barrier_local(ctx);
    double t0 = utc_wtime();
    for (int f = 0; f < p->frames && !rc && !brc; f++)
        rc = frame(p, &w, f);
    if (!rc && !brc)
        rc = utc_gpu_synchronize();
    int brc2 = utc_ctx_barrier_local(ctx);
    if (ctx->local_id == 0)
        t->seconds = utc_wtime() - t0;
    ryr_gpu_free(w.out);
    ryr_gpu_free(w.in);
    ryr_gpu_scene_free(w.scene);
    return rc ? rc : brc ? brc : brc2;
}

static const utc_task_ops_t alone_ops = {
    .name = "stage-alone", .size = sizeof(alone_task_t), .run = alone_run};

int ryr_run_stage_alone(const ryr_options_t *opt, const ryr_plan_t *plan, const ryr_scene_t *scene)
{
    ryr_stage_t stage = (ryr_stage_t)opt->stage_alone;
    int threads = stage == RYR_STAGE_RAYTRACE ? plan->ray_threads
                  : stage == RYR_STAGE_YUV    ? plan->yuv_threads
                                              : plan->rotate_tasks;
    ryr_pipe_t pipe = {.opt = opt,
                       .plan = plan,
                       .scene = scene,
                       .w = opt->width,
                       .h = opt->height,
                       .frames = opt->frames,
                       .slow = 1.0};
    ryr_err_t err;
    if (ryr_rotation_init(&pipe.rot, opt->width, opt->height, opt->angle, &err)) {
        fprintf(stderr, "ryr: %s\n", err.msg);
        return 2;
    }
    int procs[RYR_MAX_THREADS] = {0}; /* every thread on rank 0 */
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.kind = UTC_TASK_GPU;
    o.window_size = 0;
    utc_task_t *task;
    if (utc_task_create(&alone_ops, procs, threads, &o, &task)) {
        fprintf(stderr, "ryr: --stage-alone: creating the task: %s\n", utc_last_error());
        return 1;
    }
    alone_task_t *t = (alone_task_t *)task;
    t->pipe = &pipe;
    int status = 0;
    if (utc_task_run(task, NULL) || utc_task_wait(task)) {
        fprintf(stderr, "ryr[%d]: --stage-alone %s: %s\n", utc_rank(), ryr_stage_name(stage),
                utc_last_error());
        status = 1;
    }
    MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (utc_rank() == 0 && !status) {
        double fps = t->seconds > 0 ? opt->frames / t->seconds : 0;
        FILE *f = ryr_options_report_stream(opt);
        fprintf(f,
                "ryr: --preset gpu's %s kernels alone (%d thread%s, device buffers, no "
                "conduits): %d frames of %dx%d in %.3f s: %.3f frames/s\n",
                ryr_stage_name(stage), threads, threads > 1 ? "s" : "", opt->frames, opt->width,
                opt->height, t->seconds, fps);
        if (opt->json)
            printf("{\"stage_alone\": \"%s\", \"preset\": \"gpu\", \"frames\": %d, \"width\": "
                   "%d, \"height\": %d, \"threads\": %d, \"seconds\": %.6f, \"fps\": %.6f}\n",
                   ryr_stage_name(stage), opt->frames, opt->width, opt->height, threads, t->seconds,
                   fps);
    }
    (void)utc_task_destroy(task);
    return status;
}
