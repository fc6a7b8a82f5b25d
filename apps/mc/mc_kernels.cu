// mc: one thread per block of samples adds f(x_i) in increasing i (mc_block_sum, as
// mc_blocks does, from the same counter-based stream); the build passes --fmad=false and
// double division is IEEE-rounded, so every block sum equals the CPU's.
#include <cuda_runtime.h>

#include "mc_kernels.h"

__global__ void mc_kernel(uint64_t key, int64_t samples, int64_t b0, int64_t count,
                          double *__restrict__ sums)
{
    const int64_t me = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (me < count)
        sums[me] = mc_block_sum(key, samples, b0 + me);
}

extern "C" int mc_gpu_launch(uint64_t key, int64_t samples, int64_t b0, int64_t count,
                             double *sums, void *stream)
{
    if (count <= 0)
        return 0; // no block of samples (a zero grid is a launch error)
    const int threads = 128;
    unsigned blocks = (unsigned)((count + threads - 1) / threads);
    mc_kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(key, samples, b0, count,
                                                                         sums);
    // peek, not get: the error stays for utc_gpu_check (capp_gpu_status) to report
    return static_cast<int>(cudaPeekAtLastError());
}
