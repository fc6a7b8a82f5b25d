/**
 * @file md5_kernel.h
 * @brief The md5 app's CUDA kernel, callable from C (md5_kernel.cu).
 */
#ifndef APP_MD5_KERNEL_H
#define APP_MD5_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Queue the digests of @p count buffers on @p stream (a cudaStream_t): buffer i is
 * bytes [i * len, min((i + 1) * len, nbytes)) of @p data; its digest goes to
 * digests + 16 i. One CUDA thread per buffer. Does not wait.
 * @return 0, or the cudaError_t of the launch (left set for utc_gpu_check)
 */
int md5_gpu_launch(const uint8_t *data, size_t nbytes, size_t len, size_t count,
                   uint8_t *digests, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* APP_MD5_KERNEL_H */
