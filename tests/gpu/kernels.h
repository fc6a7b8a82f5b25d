/*
 * Small CUDA kernels of the GPU tests, callable from C. Each launches on `stream` (a
 * cudaStream_t) and returns 0 or the cudaError_t of the launch (left set: utc_gpu_check reports and clears it);
 * it does not wait.
 */
#ifndef UTC_TEST_GPU_KERNELS_H
#define UTC_TEST_GPU_KERNELS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* c[i] = a[i] + b[i] for i < n. n = 0 is launched as is (an invalid configuration). */
int utc_test_vadd(const float *a, const float *b, float *c, size_t n, void *stream);

/* x[i] = x[i] * s + add for i < n. */
int utc_test_scale(float *x, float s, float add, size_t n, void *stream);

/* x[i] ^= mask for i < n bytes (for buffers of any element size). */
int utc_test_xor_bytes(unsigned char *x, unsigned char mask, size_t n, void *stream);

/*
 * out[i] = in[i] * 7 + i * 13 + seed (bytes, modulo 256) for i < n, after every GPU thread
 * spins about spin_ns nanoseconds (0: none) so that the kernel outlasts nearby copies.
 */
int utc_test_mix(const unsigned char *in, unsigned char *out, size_t n, unsigned long long seed,
                 unsigned long long spin_ns, void *stream);

/*
 * One thread spins for about `ns` nanoseconds of the GPU's global timer and writes the
 * timer at its start and end to stamps[0] and stamps[1] (device memory).
 */
int utc_test_spin(unsigned long long ns, unsigned long long *stamps, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* UTC_TEST_GPU_KERNELS_H */
