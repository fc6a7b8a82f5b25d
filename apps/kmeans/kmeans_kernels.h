/* kmeans: constants shared with the CUDA kernel, and its launcher (kmeans_kernels.cu). */
#ifndef UTC_APPS_KMEANS_KERNELS_H
#define UTC_APPS_KMEANS_KERNELS_H

#include <stdint.h>

#define KM_SCALE 65536.0f /* features are integer multiples of 1 / KM_SCALE */
/* One step's reduction vector: k*f sums, k counts, changed points, checksum (int64). */
#define KM_ACC(k, f) ((k) * (f) + (k) + 2)

#ifdef __cplusplus
extern "C" {
#endif

/* km_assign on the device: points, ct (f x k) and assign are device pointers; acc (a
 * device vector of KM_ACC(k, f) int64, zeroed by the caller) receives the sums. Returns
 * a CUDA error code. */
int km_gpu_launch(const float *pts, int64_t count, int64_t index0, int f, int k,
                  const float *ct, int32_t *assign, int64_t *acc, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* UTC_APPS_KMEANS_KERNELS_H */
