/*
 * --preset gpu, the output stage: a GPU task of one thread per rotate task. It reads each
 * rotated plane from its rotate task into device memory, copies it back to pinned host
 * memory (the only copy to the host of the GPU-resident pipeline), and delivers it as the
 * CPU pipeline's output task does (ryr_output_deliver: the PGM file, the video, --verify's
 * copy). Busy: the device time of the copies back plus the host time of the delivery.
 */
#include <stdio.h>
#include <string.h>

#include "gpu_stages.h"
#include "pipeline.h"

/* Plane i of frame f: from rotate into `dev`, back into `host`, then delivered. */
static int one_plane(ryr_output_task_t *t, int f, int i, uint8_t *dev, uint8_t *host,
                     ryr_gpu_timer_t *timer, int *failed)
{
    const ryr_pipe_t *p = t->pipe;
    size_t n = (size_t)p->rot.ow * (size_t)p->rot.oh, got = 0;
    void *stream = utc_gpu_stream();
    int rc = utc_conduit_read(t->links.in[i], dev, n, t->links.tag[i], &got);
    if (!rc && got != n) {
        fprintf(stderr, "ryr: output: a plane came as %zu bytes, not %zu\n", got, n);
        rc = UTC_ERR_STATE;
    }
    if (rc || (rc = ryr_gpu_timer_start(timer, stream)) ||
        (rc = ryr_gpu_copy(host, dev, n, stream)) || (rc = ryr_gpu_timer_stop(timer, stream)) ||
        (rc = utc_gpu_synchronize()))
        return rc;
    double t0 = utc_wtime();
    uint8_t *plane = host;
    if (t->kept) { /* --verify keeps a copy of its own */
        if (!(plane = utc_buf_alloc(n)))
            return UTC_ERR_NO_MEMORY;
        memcpy(plane, host, n);
    }
    ryr_output_deliver(t, f, i, plane, t->kept != NULL, failed);
    t->busy += utc_wtime() - t0;
    return 0;
}

static int dev_output_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx, (void)arg;
    ryr_output_task_t *t = (ryr_output_task_t *)self;
    const ryr_pipe_t *p = t->pipe;
    size_t n = (size_t)p->rot.ow * (size_t)p->rot.oh;
    void *dev = NULL, *host = NULL;
    ryr_gpu_timer_t *timer = NULL;
    int failed = 0;
    int rc = ryr_gpu_alloc(n, &dev);
    if (!rc)
        rc = ryr_gpu_host_alloc(n, &host);
    if (!rc)
        rc = ryr_gpu_timer_create(&timer);
    for (int f = 0; f < p->frames && !rc; f++)
        for (int i = 0; i < t->links.nplanes && !rc; i++)
            rc = one_plane(t, f, i, dev, host, timer, &failed);
    if (rc)
        atomic_store(&((ryr_pipe_t *)p)->stopped, 1);
    double copies = 0;
    int trc = timer ? ryr_gpu_timer_seconds(timer, &copies) : 0;
    t->busy += copies;
    ryr_gpu_timer_destroy(timer);
    ryr_gpu_host_free(host);
    ryr_gpu_free(dev);
    ryr_output_finished(p);
    return rc ? rc : trc ? trc : failed ? UTC_ERR_IO : 0;
}

const utc_task_ops_t ryr_dev_output_ops = {
    .name = "output-dev", .size = sizeof(ryr_output_task_t), .run = dev_output_run};
