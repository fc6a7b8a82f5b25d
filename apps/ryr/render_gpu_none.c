/* Builds without CUDA: the GPU raytracer is not there. */
#include <utc/status.h>

#include "render_gpu.h"

int ryr_gpu_scene_upload(const ryr_scene_t *scene, ryr_gpu_scene_t **out)
{
    (void)scene, (void)out;
    return UTC_ERR_NO_GPU_SUPPORT;
}

void ryr_gpu_scene_free(ryr_gpu_scene_t *gs) { (void)gs; }

int ryr_gpu_render_rows(const ryr_gpu_scene_t *gs, const ryr_view_t *view, int w, int h, int y0,
                        int y1, uint8_t *out_dev, void *stream)
{
    (void)gs, (void)view, (void)w, (void)h, (void)y0, (void)y1, (void)out_dev, (void)stream;
    return UTC_ERR_NO_GPU_SUPPORT;
}

int ryr_gpu_copy_to_host(uint8_t *host, const uint8_t *dev, size_t bytes, void *stream)
{
    (void)host, (void)dev, (void)bytes, (void)stream;
    return UTC_ERR_NO_GPU_SUPPORT;
}
