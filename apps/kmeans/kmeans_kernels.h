/* kmeans: constants shared with the CUDA kernel, and its launcher (kmeans_kernels.cu). */
#ifndef UTC_APPS_KMEANS_KERNELS_H
#define UTC_APPS_KMEANS_KERNELS_H

#include <stdint.h>

#include "capp_hd.h"

#define KM_SCALE 65536.0f /* features are integer multiples of 1 / KM_SCALE */
/* One step's reduction vector: k*f sums, k counts, changed points, checksum (int64). */
#define KM_ACC(k, f) ((k) * (f) + (k) + 2)

/* The nearest of k centroids (ct: f x k, feature-major) to point x of f features: each
 * distance adds its features in order, and the first of equal distances wins. km_assign
 * computes the same with the clusters in its inner loop (vectorized). */
static inline CAPP_HD int km_nearest(const float *x, const float *ct, int f, int k)
{
    int best = 0;
    float bd = 0.0f;
    for (int c = 0; c < k; c++) {
        float d = 0.0f;
        for (int q = 0; q < f; q++) {
            float t = x[q] - ct[q * k + c];
            d = d + t * t;
        }
        if (c == 0 || d < bd)
            bd = d, best = c;
    }
    return best;
}

/* A point's term of the step's checksum: its cluster weighted by its global index. */
static inline CAPP_HD int64_t km_check_term(int best, int64_t index)
{
    return (int64_t)(best + 1) * (index % 65521 + 1);
}

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
