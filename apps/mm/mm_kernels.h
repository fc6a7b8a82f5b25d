/* mm: the CUDA kernel's launcher (mm_kernels.cu). Returns a CUDA error code. */
#ifndef UTC_APPS_MM_KERNELS_H
#define UTC_APPS_MM_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* rows rows of C = A (rows x k) x B (k x n), device pointers, on `stream`. */
int mm_gpu_launch(const float *a, const float *b, float *c, int64_t rows, int64_t k, int64_t n,
                  void *stream);

#ifdef __cplusplus
}
#endif
#endif /* UTC_APPS_MM_KERNELS_H */
