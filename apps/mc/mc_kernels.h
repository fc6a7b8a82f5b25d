/* mc: the sampling arithmetic the CPU code and the CUDA kernel share, and the kernel's
 * launcher (mc_kernels.cu). */
#ifndef UTC_APPS_MC_KERNELS_H
#define UTC_APPS_MC_KERNELS_H

#include <stdint.h>

#include "cluster_rng.h"

#define MC_BLOCK 16384 /* samples per block: the unit of the fixed summation order */

/* f(x_i) = 4 / (1 + x_i^2) for sample i of the stream `key` (its mean over [0, 1) is pi). */
static inline CAPP_HD double mc_f(uint64_t key, int64_t i)
{
    double x = capp_unit(key, (uint64_t)i);
    return 4.0 / (1.0 + x * x);
}

/* The sum of block b's samples (the last block may be short), added in increasing i, the
 * order every implementation keeps. */
static inline CAPP_HD double mc_block_sum(uint64_t key, int64_t samples, int64_t b)
{
    const int64_t lo = b * MC_BLOCK, hi = lo + MC_BLOCK < samples ? lo + MC_BLOCK : samples;
    double s = 0;
    for (int64_t i = lo; i < hi; i++)
        s += mc_f(key, i);
    return s;
}

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
