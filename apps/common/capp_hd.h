/*
 * CAPP_HD marks the small inline functions the cluster apps' CPU code, their CUDA kernels
 * and cudahost's host versions of those kernels share (one definition of each element's
 * arithmetic): __host__ __device__ under nvcc, nothing in C.
 */
#ifndef UTC_APPS_CAPP_HD_H
#define UTC_APPS_CAPP_HD_H

#if defined(__CUDACC__)
#define CAPP_HD __host__ __device__
#else
#define CAPP_HD
#endif

#endif /* UTC_APPS_CAPP_HD_H */
