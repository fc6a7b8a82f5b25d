/**
 * @file pixel_kernels.h
 * @brief The CUDA kernels of the RYR sample's YUV conversion and rotation, callable from C
 * (pixel_kernels.cu, library ryr_kernels, built only with CUDA). One CUDA thread per
 * output pixel; the arithmetic is ryr_yuv_pixel's and ryr_rotate_rows' (yuv_rules.h,
 * rotate_rules.h), so the bytes are the C versions'.
 */
#ifndef RYR_PIXEL_KERNELS_H
#define RYR_PIXEL_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "rotate.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Queue on @p stream (a cudaStream_t) the conversion of @p n pixels: @p rgb holds
 * 3 n bytes; Y goes to planes[0 .. n), U to planes[n .. 2n), V to planes[2n .. 3n).
 * All pointers are device memory.
 * @return 0, or the cudaError_t of the launch (left set for utc_gpu_check)
 */
int ryr_gpu_yuv_launch(const uint8_t *rgb, size_t n, uint8_t *planes, void *stream);

/**
 * @brief Queue on @p stream (a cudaStream_t) the output rows [r0, r1) of the planes
 * stacked top to bottom (row r is row r % oh of plane r / oh), into @p dst
 * ((r1 - r0) * ow bytes). @p src holds the source planes one after the other
 * (w * h bytes each). All pointers are device memory.
 * @return 0, or the cudaError_t of the launch (left set for utc_gpu_check)
 */
int ryr_gpu_rotate_launch(const ryr_rotation_t *rot, const uint8_t *src, long long r0, long long r1,
                          uint8_t *dst, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* RYR_PIXEL_KERNELS_H */
