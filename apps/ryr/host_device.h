/*
 * RYR_HD marks the static inline rules that both the C build (gcc) and the CUDA kernels
 * (nvcc) compile: render_rules.h and rotate_rules.h.
 */
#ifndef RYR_HOST_DEVICE_H
#define RYR_HOST_DEVICE_H

#ifdef __CUDACC__
#define RYR_HD __host__ __device__
#else
#define RYR_HD
#endif

#endif /* RYR_HOST_DEVICE_H */
