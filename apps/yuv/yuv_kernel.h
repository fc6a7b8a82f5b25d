/**
 * @file yuv_kernel.h
 * @brief The yuv app's CUDA kernel, callable from C (yuv_kernel.cu).
 */
#ifndef APP_YUV_KERNEL_H
#define APP_YUV_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Queue on @p stream (a cudaStream_t) the conversion of @p n pixels: @p rgb holds
 * 3 n bytes; Y goes to planes[0 .. n), U to planes[n .. 2n), V to planes[2n .. 3n).
 * One CUDA thread per pixel; the arithmetic is ryr_yuv_pixel's.
 * @return 0, or the cudaError_t of the launch (left set for utc_gpu_check)
 */
int yuv_gpu_launch(const uint8_t *rgb, size_t n, uint8_t *planes, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* APP_YUV_KERNEL_H */
