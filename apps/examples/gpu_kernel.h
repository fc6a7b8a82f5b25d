/* The CUDA kernel of example 5, callable from C (gpu_kernel.cu; gpu_kernel_none.c in a
 * build without CUDA). */
#ifndef EXAMPLE_GPU_KERNEL_H
#define EXAMPLE_GPU_KERNEL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* y[i] = a * x[i] + y[i] for i < n, launched on `stream` (a cudaStream_t); does not wait.
 * Returns 0, or the launch's cudaError_t, left set for utc_gpu_check() to report. */
int example_saxpy(float a, const float *x, float *y, size_t n, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* EXAMPLE_GPU_KERNEL_H */
