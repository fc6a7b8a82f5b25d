/*
 * GPU helpers shared by the cluster apps' GPU tasks (built only with UTC_WITH_CUDA).
 * The C side calls these and the kernels' launchers; the launchers live in each app's
 * *_kernels.cu and return a CUDA error code (0: success), which the C side turns into a
 * UTC status with capp_gpu_status().
 */
#ifndef UTC_APPS_CLUSTER_GPU_H
#define UTC_APPS_CLUSTER_GPU_H

#include <stddef.h>

#include <utc/gpu.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Copy bytes between any two of host, device and managed memory on `stream` and wait for
 * it (cudaMemcpyAsync with cudaMemcpyDefault). Returns a CUDA error code. */
int capp_gpu_copy(void *dst, const void *src, size_t bytes, void *stream);

/* Set bytes of device memory to `value` on `stream` (no wait). Returns a CUDA error code. */
int capp_gpu_memset(void *dst, int value, size_t bytes, void *stream);

#ifdef __cplusplus
}
#endif

/* The UTC status of a launcher's or helper's CUDA error code (utc_gpu_check() keeps CUDA's
 * message in utc_last_error()). The launchers leave CUDA's error set (they peek); should it
 * be gone, the failure is still one: UTC_ERR_GPU. */
static inline int capp_gpu_status(int cuda_error, const char *what)
{
    if (cuda_error == 0)
        return UTC_OK;
    int rc = utc_gpu_check(what);
    return rc != UTC_OK ? rc : UTC_ERR_GPU;
}

#endif /* UTC_APPS_CLUSTER_GPU_H */
