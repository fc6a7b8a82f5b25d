/*
 * --preset gpu, the yuv stage: a GPU task of one thread. It reads each raytrace rank's
 * rows (a free-mode device conduit, read_from that rank) into its frame in device memory,
 * converts it with the CUDA kernel (pixel_kernels.cu: --yuv-repeat times) into three
 * planes, and writes each plane on to its rotate task. All in device memory, ordered on
 * the thread's stream; with --rgb the frame is also copied back and written as a PPM.
 * Busy: the device time of the conversion kernels.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gpu_stages.h"
#include "pipeline.h"
#include "pixel_kernels.h"

/* Read frame f's rows from every raytrace rank into the device frame `rgb`. */
static int read_frame(ryr_yuv_task_t *t, uint8_t *rgb)
{
    const ryr_pipe_t *p = t->pipe;
    size_t row_bytes = (size_t)p->w * 3;
    for (int i = 0; i < t->nray; i++) {
        int y0, y1;
        ryr_dev_rank_rows(p->h, i, t->nray, &y0, &y1);
        if (y1 == y0)
            continue;
        size_t want = (size_t)(y1 - y0) * row_bytes, got = 0;
        int rc = utc_conduit_read_from(t->in, t->ray_rank[i], rgb + (size_t)y0 * row_bytes, want, 0,
                                       &got);
        if (rc)
            return rc;
        if (got != want) {
            fprintf(stderr, "ryr: yuv: rank %d's rows came as %zu bytes, not %zu\n", t->ray_rank[i],
                    got, want);
            return UTC_ERR_STATE;
        }
    }
    return 0;
}

/* --rgb: the frame back to the host and into OUT/frame_NNNNN.ppm (errors: once). */
static int write_rgb(ryr_yuv_task_t *t, int f, const uint8_t *rgb, uint8_t *host)
{
    const ryr_pipe_t *p = t->pipe;
    int rc = ryr_gpu_copy(host, rgb, (size_t)p->w * (size_t)p->h * 3, utc_gpu_stream());
    if (rc || (rc = utc_gpu_synchronize()))
        return rc;
    ryr_err_t err;
    if (!t->error && ryr_output_write_rgb(p->opt->out, f, host, p->w, p->h, &err)) {
        fprintf(stderr, "ryr: yuv: %s\n", err.msg);
        t->error = UTC_ERR_IO;
    }
    return 0;
}

static int convert_frames(ryr_yuv_task_t *t, uint8_t *rgb, uint8_t *planes, uint8_t *host,
                          ryr_gpu_timer_t *timer)
{
    const ryr_pipe_t *p = t->pipe;
    size_t npix = (size_t)p->w * (size_t)p->h;
    void *stream = utc_gpu_stream();
    int rc = 0;
    for (int f = 0; f < p->frames && !rc; f++) {
        if ((rc = read_frame(t, rgb)) || (rc = ryr_gpu_timer_start(timer, stream)))
            break;
        for (int r = 0; r < p->opt->yuv_repeat && !rc; r++)
            if (ryr_gpu_yuv_launch(rgb, npix, planes, stream))
                rc = utc_gpu_check("ryr: the yuv kernel's launch");
        if (rc || (rc = ryr_gpu_timer_stop(timer, stream)))
            break;
        if (host && (rc = write_rgb(t, f, rgb, host)))
            break;
        for (int i = 0; i < t->links.nplanes && !rc; i++)
            rc = utc_conduit_write(t->links.out[i], planes + (size_t)t->links.plane[i] * npix, npix,
                                   t->links.tag[i]);
    }
    return rc;
}

static int dev_yuv_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx, (void)arg;
    ryr_yuv_task_t *t = (ryr_yuv_task_t *)self;
    const ryr_pipe_t *p = t->pipe;
    size_t npix = (size_t)p->w * (size_t)p->h;
    void *rgb = NULL, *planes = NULL, *host = NULL;
    ryr_gpu_timer_t *timer = NULL;
    int rc = ryr_gpu_alloc(npix * 3, &rgb);
    if (!rc)
        rc = ryr_gpu_alloc(npix * RYR_NPLANES, &planes);
    if (!rc && p->opt->rgb && !p->opt->no_output)
        rc = ryr_gpu_host_alloc(npix * 3, &host);
    if (!rc)
        rc = ryr_gpu_timer_create(&timer);
    if (!rc)
        rc = convert_frames(t, rgb, planes, host, timer);
    if (rc) /* the rotate tasks' reads then end (UTC_ERR_CLOSED), not wait */
        for (int i = 0; i < t->links.nplanes; i++)
            if (i == 0 || t->links.out[i] != t->links.out[i - 1])
                (void)utc_conduit_close(t->links.out[i]);
    int trc = timer ? ryr_gpu_timer_seconds(timer, &t->busy) : 0;
    /* cudaFree waits for the work queued on the buffers, the transfers' reads included */
    ryr_gpu_timer_destroy(timer);
    ryr_gpu_host_free(host);
    ryr_gpu_free(planes);
    ryr_gpu_free(rgb);
    return rc ? rc : trc ? trc : t->error;
}

const utc_task_ops_t ryr_dev_yuv_ops = {
    .name = "yuv-dev", .size = sizeof(ryr_yuv_task_t), .run = dev_yuv_run};
