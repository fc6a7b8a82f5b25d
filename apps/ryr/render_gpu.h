/*
 * The raytracer on a GPU: the same rules as render.c (RYR.md), one CUDA thread per pixel.
 * Built only with CUDA (render_gpu.cu); render_gpu_none.c reports "no GPU support".
 */
#ifndef RYR_RENDER_GPU_H
#define RYR_RENDER_GPU_H

#include <stdint.h>

#include "render.h"
#include "scene.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ryr_gpu_scene ryr_gpu_scene_t;

/* Copy the scene to the current device. Returns 0 or a negative utc_status_t. */
int ryr_gpu_scene_upload(const ryr_scene_t *scene, ryr_gpu_scene_t **out);
void ryr_gpu_scene_free(ryr_gpu_scene_t *gs);

/*
 * Render rows [y0, y1) of a w x h frame into `out_dev` (device memory, (y1 - y0) * w * 3
 * bytes) on `stream` (a cudaStream_t). Asynchronous: the caller synchronizes the stream.
 * Returns 0 or a negative utc_status_t: a failed launch is UTC_ERR_GPU with CUDA's message
 * (utc_gpu_check's, which has read and cleared CUDA's error).
 */
int ryr_gpu_render_rows(const ryr_gpu_scene_t *gs, const ryr_view_t *view, int w, int h, int y0,
                        int y1, uint8_t *out_dev, void *stream);

/*
 * Start copying `bytes` from `dev` (device memory) to `host` on `stream`: a mixed farm
 * member's GPU thread renders chunks of varying size into one device buffer and copies
 * each chunk alone. Asynchronous: the caller synchronizes the stream (pageable `host`
 * memory makes CUDA's copy synchronous anyway). Returns 0 or a negative utc_status_t.
 */
int ryr_gpu_copy_to_host(uint8_t *host, const uint8_t *dev, size_t bytes, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* RYR_RENDER_GPU_H */
