/* Builds without CUDA: the GPU-resident stages are not there (--preset gpu is refused
 * before any of these is called: ryr_gpu_available() is 0). */
#include <utc/utc.h>

#include "gpu_stages.h"
#include "pixel_kernels.h"

static int none(void)
{
    return UTC_ERR_NO_GPU_SUPPORT;
}

int ryr_gpu_alloc(size_t bytes, void **out)
{
    (void)bytes, (void)out;
    return none();
}

void ryr_gpu_free(void *dev)
{
    (void)dev;
}

int ryr_gpu_host_alloc(size_t bytes, void **out)
{
    (void)bytes, (void)out;
    return none();
}

void ryr_gpu_host_free(void *host)
{
    (void)host;
}

int ryr_gpu_copy(void *dst, const void *src, size_t bytes, void *stream)
{
    (void)dst, (void)src, (void)bytes, (void)stream;
    return none();
}

int ryr_gpu_fill(void *dev, int byte, size_t bytes, void *stream)
{
    (void)dev, (void)byte, (void)bytes, (void)stream;
    return none();
}

int ryr_gpu_timer_create(ryr_gpu_timer_t **out)
{
    (void)out;
    return none();
}

int ryr_gpu_timer_start(ryr_gpu_timer_t *t, void *stream)
{
    (void)t, (void)stream;
    return none();
}

int ryr_gpu_timer_stop(ryr_gpu_timer_t *t, void *stream)
{
    (void)t, (void)stream;
    return none();
}

int ryr_gpu_timer_seconds(ryr_gpu_timer_t *t, double *seconds)
{
    (void)t;
    *seconds = 0;
    return none();
}

void ryr_gpu_timer_destroy(ryr_gpu_timer_t *t)
{
    (void)t;
}

/* pixel_kernels.h: the kernels' library (ryr_kernels) is built only with CUDA */
int ryr_gpu_yuv_launch(const uint8_t *rgb, size_t n, uint8_t *planes, void *stream)
{
    (void)rgb, (void)n, (void)planes, (void)stream;
    return none();
}

int ryr_gpu_rotate_launch(const ryr_rotation_t *rot, const uint8_t *src, long long r0, long long r1,
                          uint8_t *dst, void *stream)
{
    (void)rot, (void)src, (void)r0, (void)r1, (void)dst, (void)stream;
    return none();
}
