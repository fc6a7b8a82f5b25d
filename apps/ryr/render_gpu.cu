/*
 * The raytracer on a GPU: one CUDA thread per pixel, with the per-ray rules of
 * render_rules.h that the CPU renderer uses too, compiled with -fmad=false so no
 * multiply-add is fused. Recursion (reflections) becomes a loop that keeps each level's
 * local colour and weight and then combines them from the deepest level up, exactly as the
 * recursive version adds them (ryr__trace_levels).
 */
#include <cuda_runtime.h>
#include <stdlib.h>

#include <utc/gpu.h>
#include <utc/status.h>

#include "render_gpu.h"
#include "render_rules.h"

struct ryr_gpu_scene {
    ryr_sphere_t *spheres; /* device copy, file order */
    int nspheres;
    ryr_vec3_t lights[RYR_MAX_LIGHTS];
    int nlights;
};

__global__ static void render_kernel(ryr_trace_scene_t s, ryr_view_t view, int w, int h, int y0,
                                     int y1, unsigned char *out)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = y0 + blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= y1)
        return;
    ryr_vec3_t col = ryr__trace_levels(&s, ryr__primary_ray(&view, w, h, x, y));
    unsigned char *px = out + ((size_t)(y - y0) * w + x) * 3;
    px[0] = ryr__channel_byte(col.x);
    px[1] = ryr__channel_byte(col.y);
    px[2] = ryr__channel_byte(col.z);
}

extern "C" int ryr_gpu_scene_upload(const ryr_scene_t *scene, ryr_gpu_scene_t **out)
{
    ryr_gpu_scene_t *gs = (ryr_gpu_scene_t *)calloc(1, sizeof *gs);
    if (!gs)
        return UTC_ERR_NO_MEMORY;
    gs->nspheres = scene->nspheres;
    gs->nlights = scene->nlights;
    for (int i = 0; i < scene->nlights; i++)
        gs->lights[i] = scene->lights[i];
    if (scene->nspheres > 0) {
        size_t bytes = sizeof(ryr_sphere_t) * (size_t)scene->nspheres;
        if (cudaMalloc((void **)&gs->spheres, bytes) != cudaSuccess ||
            cudaMemcpy(gs->spheres, scene->spheres, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
            cudaFree(gs->spheres);
            free(gs);
            return UTC_ERR_GPU;
        }
    }
    *out = gs;
    return UTC_OK;
}

extern "C" void ryr_gpu_scene_free(ryr_gpu_scene_t *gs)
{
    if (!gs)
        return;
    cudaFree(gs->spheres);
    free(gs);
}

extern "C" int ryr_gpu_render_rows(const ryr_gpu_scene_t *gs, const ryr_view_t *view, int w, int h,
                                   int y0, int y1, uint8_t *out_dev, void *stream)
{
    if (!gs || !view || !out_dev || w <= 0 || h <= 0 || y0 < 0 || y1 > h || y0 > y1)
        return UTC_ERR_INVALID_ARG;
    if (y1 == y0)
        return UTC_OK;
    ryr_trace_scene_t s;
    s.spheres = gs->spheres;
    s.nspheres = gs->nspheres;
    s.nlights = gs->nlights;
    for (int i = 0; i < gs->nlights; i++)
        s.lights[i] = gs->lights[i];
    dim3 block(16, 8);
    dim3 grid((unsigned)((w + 15) / 16), (unsigned)((y1 - y0 + 7) / 8));
    render_kernel<<<grid, block, 0, (cudaStream_t)stream>>>(s, *view, w, h, y0, y1, out_dev);
    // peek: utc_gpu_check reads (and clears) the launch's error, with CUDA's message
    return cudaPeekAtLastError() == cudaSuccess
               ? UTC_OK
               : utc_gpu_check("ryr: the raytrace kernel's launch");
}

extern "C" int ryr_gpu_copy_to_host(uint8_t *host, const uint8_t *dev, size_t bytes, void *stream)
{
    if (!host || !dev)
        return UTC_ERR_INVALID_ARG;
    cudaError_t err = cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDefault, (cudaStream_t)stream);
    return err == cudaSuccess ? UTC_OK : UTC_ERR_GPU;
}
