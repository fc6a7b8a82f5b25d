/*
 * --preset gpu, the rotate stage: a GPU task of one thread for all three planes (one
 * conduit, tags 0, 1, 2) or for one plane (three such tasks, whose kernels then run side
 * by side on their own streams). It reads its planes from yuv into device memory, rotates
 * them with the CUDA kernel (pixel_kernels.cu: every plane of the frame in one launch) and
 * writes them on to its output task, all ordered on the thread's stream. Busy: the device
 * time of the rotation kernels.
 */
#include <stdio.h>

#include "gpu_stages.h"
#include "pipeline.h"
#include "pixel_kernels.h"

static int rotate_frames(ryr_rotate_task_t *t, ryr_gpu_timer_t *timer)
{
    const ryr_pipe_t *p = t->pipe;
    const ryr_rotation_t *rot = &p->rot;
    size_t in = (size_t)rot->w * (size_t)rot->h, out = (size_t)rot->ow * (size_t)rot->oh;
    int n = t->links.nplanes, rc = 0;
    void *stream = utc_gpu_stream();
    for (int f = 0; f < p->frames && !rc; f++) {
        for (int i = 0; i < n && !rc; i++) {
            size_t got = 0;
            rc = utc_conduit_read(t->links.in[i], t->src + (size_t)i * in, in, t->links.tag[i],
                                  &got);
            if (!rc && got != in) {
                fprintf(stderr, "ryr: rotate: a plane came as %zu bytes, not %zu\n", got, in);
                rc = UTC_ERR_STATE;
            }
        }
        if (rc || (rc = ryr_gpu_timer_start(timer, stream)))
            break;
        if (ryr_gpu_rotate_launch(rot, t->src, 0, (long long)rot->oh * n, t->dst, stream))
            rc = utc_gpu_check("ryr: the rotate kernel's launch");
        if (rc || (rc = ryr_gpu_timer_stop(timer, stream)))
            break;
        for (int i = 0; i < n && !rc; i++)
            rc = utc_conduit_write(t->links.out[i], t->dst + (size_t)i * out, out, t->links.tag[i]);
    }
    return rc;
}

static int dev_rotate_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx, (void)arg;
    ryr_rotate_task_t *t = (ryr_rotate_task_t *)self;
    const ryr_rotation_t *rot = &t->pipe->rot;
    size_t n = (size_t)t->links.nplanes;
    void *src = NULL, *dst = NULL;
    ryr_gpu_timer_t *timer = NULL;
    int rc = ryr_gpu_alloc(n * (size_t)rot->w * (size_t)rot->h, &src);
    if (!rc)
        rc = ryr_gpu_alloc(n * (size_t)rot->ow * (size_t)rot->oh, &dst);
    if (!rc)
        rc = ryr_gpu_timer_create(&timer);
    t->src = src;
    t->dst = dst;
    if (!rc)
        rc = rotate_frames(t, timer);
    if (rc) /* the output task's reads then end (UTC_ERR_CLOSED), not wait */
        (void)utc_conduit_close(t->links.out[0]);
    int trc = timer ? ryr_gpu_timer_seconds(timer, &t->busy) : 0;
    ryr_gpu_timer_destroy(timer);
    ryr_gpu_free(dst);
    ryr_gpu_free(src);
    t->src = t->dst = NULL;
    return rc ? rc : trc;
}

const utc_task_ops_t ryr_dev_rotate_ops = {
    .name = "rotate-dev", .size = sizeof(ryr_rotate_task_t), .run = dev_rotate_run};
