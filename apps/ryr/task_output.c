/*
 * The output stage: writes each rotated plane as a PGM file (or nothing with --no-output),
 * and with --video hands it to the video stream, which puts the planes of a frame from
 * the three output tasks (one per plane) together and writes whole frames in order.
 * A write error is reported once; the task then keeps reading (and dropping) the rest of
 * the frames so the stages before it are never left blocked, and returns the error.
 * With --verify it keeps every plane for the comparison with the sequential path.
 * (--preset gpu's output task, task_dev_output.c, delivers its planes the same way.)
 */
#include <stdio.h>
#include <string.h>

#include "pipeline.h"

void ryr_output_deliver(ryr_output_task_t *t, int f, int i, uint8_t *plane, int owned, int *failed)
{
    const ryr_pipe_t *p = t->pipe;
    ryr_err_t err;
    if (!p->opt->no_output && !*failed &&
        (ryr_output_write_plane(p->opt->out, f, t->links.plane[i], plane, p->rot.ow, p->rot.oh,
                                &err) ||
         (p->video && ryr_video_put(p->video, f, t->links.plane[i], plane, &err)))) {
        snprintf(t->error, sizeof t->error, "%s", err.msg);
        fprintf(stderr, "ryr: output: %s; dropping the remaining frames\n", err.msg);
        *failed = 1;
    }
    if (t->kept)
        t->kept[(size_t)f * t->links.nplanes + i] = plane;
    else if (owned)
        utc_buf_free(plane);
    atomic_fetch_add(&((ryr_pipe_t *)p)->planes_done, 1);
}

void ryr_output_finished(const ryr_pipe_t *p)
{
    /* the pipeline's end on this rank: the last of its output tasks to finish */
    ryr_pipe_t *pp = (ryr_pipe_t *)p;
    double now = utc_wtime(), prev = atomic_load(&pp->t_end);
    while (now > prev && !atomic_compare_exchange_weak(&pp->t_end, &prev, now))
        ;
}

static int output_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    ryr_output_task_t *t = (ryr_output_task_t *)self;
    const ryr_pipe_t *p = t->pipe;
    int failed = 0;
    for (int f = 0; f < p->frames; f++) {
        for (int i = 0; i < t->links.nplanes; i++) {
            void *plane;
            size_t size;
            int rc = utc_conduit_read_owned(t->links.in[i], t->links.tag[i], &plane, &size);
            if (rc) {
                atomic_store(&((ryr_pipe_t *)p)->stopped, 1);
                return rc;
            }
            double t0 = utc_wtime();
            if (ctx->local_id == 0) {
                ryr_output_deliver(t, f, i, plane, 1, &failed);
                t->busy += utc_wtime() - t0;
            }
        }
    }
    if (ctx->local_id == 0)
        ryr_output_finished(p);
    return failed ? UTC_ERR_IO : 0;
}

const utc_task_ops_t ryr_output_ops = {
    .name = "output", .size = sizeof(ryr_output_task_t), .run = output_run};
