/* heat: the CUDA kernel's launcher (heat_kernels.cu). Returns a CUDA error code. */
#ifndef UTC_APPS_HEAT_KERNELS_H
#define UTC_APPS_HEAT_KERNELS_H

#include <stdint.h>

/* The stencil's weight (stable for <= 1/4); shared by the CPU and GPU code. */
#define HEAT_ALPHA 0.2f

#ifdef __cplusplus
extern "C" {
#endif

/* Rows 1 .. count of next from rows 0 .. count+1 of cur (device, row stride cols). */
int heat_gpu_launch(const float *cur, float *next, int64_t count, int64_t cols, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* UTC_APPS_HEAT_KERNELS_H */
