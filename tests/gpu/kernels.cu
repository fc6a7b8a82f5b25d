// Kernels of the GPU tests: vector add, scale, byte xor, and a timed spin.
#include <cuda_runtime.h>

#include "kernels.h"

namespace {

constexpr unsigned kBlock = 256;

__global__ void vadd_kernel(const float *a, const float *b, float *c, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        c[i] = a[i] + b[i];
}

__global__ void scale_kernel(float *x, float s, float add, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] = x[i] * s + add;
}

__global__ void xor_kernel(unsigned char *x, unsigned char mask, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] ^= mask;
}

__device__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void spin_kernel(unsigned long long ns, unsigned long long *stamps)
{
    unsigned long long start = global_ns(), now = start;
    while (now - start < ns)
        now = global_ns();
    stamps[0] = start;
    stamps[1] = now;
}

// Enough blocks to cover n, at most 4096 (the loops stride over the rest).
unsigned blocks_for(size_t n)
{
    size_t b = (n + kBlock - 1) / kBlock;
    return (unsigned)(b > 4096 ? 4096 : b);
}

// Peek, not get: the error stays for utc_gpu_check to report (and clear).
int launched()
{
    return (int)cudaPeekAtLastError();
}

__global__ void mix_kernel(const unsigned char *in, unsigned char *out, size_t n,
                           unsigned long long seed, unsigned long long spin_ns)
{
    unsigned long long until = global_ns() + spin_ns;
    while (spin_ns && global_ns() < until) {
    }
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = (unsigned char)(in[i] * 7u + i * 13u + seed);
}

} // namespace

extern "C" int utc_test_mix(const unsigned char *in, unsigned char *out, size_t n,
                            unsigned long long seed, unsigned long long spin_ns, void *stream)
{
    mix_kernel<<<blocks_for(n), kBlock, 0, (cudaStream_t)stream>>>(in, out, n, seed, spin_ns);
    return launched();
}

extern "C" int utc_test_vadd(const float *a, const float *b, float *c, size_t n, void *stream)
{
    vadd_kernel<<<blocks_for(n), kBlock, 0, (cudaStream_t)stream>>>(a, b, c, n);
    return launched();
}

extern "C" int utc_test_scale(float *x, float s, float add, size_t n, void *stream)
{
    scale_kernel<<<blocks_for(n), kBlock, 0, (cudaStream_t)stream>>>(x, s, add, n);
    return launched();
}

extern "C" int utc_test_xor_bytes(unsigned char *x, unsigned char mask, size_t n, void *stream)
{
    xor_kernel<<<blocks_for(n), kBlock, 0, (cudaStream_t)stream>>>(x, mask, n);
    return launched();
}

extern "C" int utc_test_spin(unsigned long long ns, unsigned long long *stamps, void *stream)
{
    spin_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(ns, stamps);
    return launched();
}
