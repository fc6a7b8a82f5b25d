/**
 * @file rotate_kernel.h
 * @brief The rotate app's CUDA kernel, callable from C (rotate_kernel.cu).
 */
#ifndef APP_ROTATE_KERNEL_H
#define APP_ROTATE_KERNEL_H

#include <stdint.h>

#include "rotate.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Queue on @p stream (a cudaStream_t) the output rows [r0, r1) of the planes
 * stacked top to bottom (row r is row r % oh of plane r / oh), into @p dst
 * ((r1 - r0) * ow bytes). @p src holds the source planes one after the other
 * (w * h bytes each). One CUDA thread per output pixel; the arithmetic is ryr_rotate_rows'.
 * @return 0, or the cudaError_t of the launch (left set for utc_gpu_check)
 */
int rotate_gpu_launch(const ryr_rotation_t *rot, const uint8_t *src, long long r0, long long r1,
                      uint8_t *dst, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* APP_ROTATE_KERNEL_H */
