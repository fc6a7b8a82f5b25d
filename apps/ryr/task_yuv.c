/*
 * The yuv stage: RGB frame in, Y, U and V planes out. The task's threads split the pixels;
 * --yuv-repeat N converts N times per frame. With --rgb, thread 0 also writes the frame as
 * a PPM. With --farm the frames come from several raytrace tasks, out of order; each is
 * tagged with its frame number and yuv reads tag f for frame f, so the conduit holds the
 * early arrivals and the frames leave here in order.
 */
#include <stdio.h>

#include "pipeline.h"
#include "yuv.h"

static int alloc_planes(utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    ryr_yuv_task_t *t = arg;
    size_t n = (size_t)t->pipe->w * (size_t)t->pipe->h;
    for (int p = 0; p < RYR_NPLANES; p++)
        if (!(t->plane[p] = utc_buf_alloc(n)))
            return UTC_ERR_NO_MEMORY;
    return 0;
}

static int yuv_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    ryr_yuv_task_t *t = (ryr_yuv_task_t *)self;
    const ryr_pipe_t *p = t->pipe;
    size_t npix = (size_t)p->w * (size_t)p->h;
    size_t begin = npix * (size_t)ctx->local_id / (size_t)ctx->local_count;
    size_t end = npix * (size_t)(ctx->local_id + 1) / (size_t)ctx->local_count;
    for (int f = 0; f < p->frames; f++) {
        void *rgb;
        int rc = utc_conduit_read_owned(t->in, p->plan->farm ? f : 0, &rgb, NULL);
        if (rc)
            return rc;
        double t0 = utc_wtime();
        t->rgb = rgb;
        if ((rc = utc_ctx_single(ctx, 0, alloc_planes, t)))
            return rc;
        for (int r = 0; r < p->opt->yuv_repeat; r++)
            ryr_yuv_convert(t->rgb, begin, end, t->plane[0], t->plane[1], t->plane[2]);
        if ((rc = utc_ctx_barrier_local(ctx)))
            return rc;
        if (ctx->local_id == 0) {
            t->busy += utc_wtime() - t0;
            if (p->opt->rgb && !p->opt->no_output && !t->error) {
                ryr_err_t err;
                if (ryr_output_write_rgb(p->opt->out, f, t->rgb, p->w, p->h, &err)) {
                    fprintf(stderr, "ryr: yuv: %s\n", err.msg);
                    t->error = UTC_ERR_IO;
                }
            }
            utc_buf_free(t->rgb);
        }
        for (int i = 0; i < t->links.nplanes; i++)
            if ((rc = utc_conduit_write_owned(t->links.out[i], t->plane[t->links.plane[i]], npix,
                                              t->links.tag[i])))
                return rc;
    }
    return t->error;
}

const utc_task_ops_t ryr_yuv_ops = {.name = "yuv", .size = sizeof(ryr_yuv_task_t), .run = yuv_run};
