// Kernel of utc_bench_gpu_overlap: reads an item, writes its result (one byte op per
// byte), and lasts at least `spin_ns` (one thread spins on the GPU's global timer), so
// the kernel can be made as long as an item's copies.
#include <cuda_runtime.h>

namespace {

__device__ unsigned long long now_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void item_kernel(const unsigned char *in, unsigned char *out, size_t n,
                            unsigned long long spin_ns)
{
    if (spin_ns && blockIdx.x == 0 && threadIdx.x == 0) {
        unsigned long long until = now_ns() + spin_ns;
        while (now_ns() < until) {
        }
    }
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = (unsigned char)(in[i] ^ 0x5a);
}

} // namespace

// Launch on `stream`; returns 0 or the launch's cudaError_t. Does not wait.
extern "C" int utc_bench_overlap_kernel(const void *in, void *out, size_t n,
                                        unsigned long long spin_ns, void *stream)
{
    const unsigned block = 256;
    size_t blocks = (n + block - 1) / block;
    if (blocks == 0)
        blocks = 1;
    if (blocks > 1024)
        blocks = 1024;
    item_kernel<<<(unsigned)blocks, block, 0, (cudaStream_t)stream>>>(
        (const unsigned char *)in, (unsigned char *)out, n, spin_ns);
    return (int)cudaPeekAtLastError();
}
