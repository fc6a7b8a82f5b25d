/* mc: constants shared with the CUDA kernel, and its launcher (mc_kernels.cu). */
#ifndef UTC_APPS_MC_KERNELS_H
#define UTC_APPS_MC_KERNELS_H

#include <stdint.h>

#define MC_BLOCK 16384 /* samples per block: the unit of the fixed summation order */

#ifdef __cplusplus
extern "C" {
#endif

/* Sums of blocks b0 .. b0+count-1 into sums (device, count doubles), as mc_blocks.
 * Returns a CUDA error code. */
int mc_gpu_launch(uint64_t key, int64_t samples, int64_t b0, int64_t count, double *sums,
                  void *stream);

#ifdef __cplusplus
}
#endif
#endif /* UTC_APPS_MC_KERNELS_H */
