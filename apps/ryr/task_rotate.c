/*
 * The rotate stage: one task for all three planes, or one task per plane. The task's
 * threads split the rows of the rotated plane.
 */
#include "pipeline.h"

static int alloc_dst(utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    ryr_rotate_task_t *t = arg;
    t->dst = utc_buf_alloc((size_t)t->pipe->rot.ow * (size_t)t->pipe->rot.oh);
    return t->dst ? 0 : UTC_ERR_NO_MEMORY;
}

static int rotate_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    ryr_rotate_task_t *t = (ryr_rotate_task_t *)self;
    const ryr_pipe_t *p = t->pipe;
    const ryr_rotation_t *rot = &p->rot;
    int y0 = rot->oh * ctx->local_id / ctx->local_count;
    int y1 = rot->oh * (ctx->local_id + 1) / ctx->local_count;
    for (int f = 0; f < p->frames; f++) {
        for (int i = 0; i < t->links.nplanes; i++) {
            void *src;
            int rc = utc_conduit_read_owned(t->links.in[i], t->links.tag[i], &src, NULL);
            if (rc)
                return rc;
            double t0 = utc_wtime();
            t->src = src;
            if ((rc = utc_ctx_single(ctx, 0, alloc_dst, t)))
                return rc;
            ryr_rotate_rows(rot, t->src, y0, y1, t->dst + (size_t)y0 * rot->ow);
            if ((rc = utc_ctx_barrier_local(ctx)))
                return rc;
            if (ctx->local_id == 0) {
                t->busy += utc_wtime() - t0;
                utc_buf_free(t->src);
            }
            if ((rc = utc_conduit_write_owned(t->links.out[i], t->dst,
                                              (size_t)rot->ow * (size_t)rot->oh, t->links.tag[i])))
                return rc;
        }
    }
    return 0;
}

const utc_task_ops_t ryr_rotate_ops = {
    .name = "rotate", .size = sizeof(ryr_rotate_task_t), .run = rotate_run};
