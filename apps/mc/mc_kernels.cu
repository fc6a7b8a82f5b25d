// mc: one thread per block of samples adds f(x_i) in increasing i, as mc_blocks does (the
// same counter-based stream; the build passes --fmad=false and double division is
// IEEE-rounded), so every block sum equals the CPU's.
#include <cuda_runtime.h>

#include "cluster_rng.h"
#include "mc_kernels.h"

__global__ void mc_kernel(uint64_t key, int64_t samples, int64_t b0, int64_t count,
                          double *__restrict__ sums)
{
    const int64_t me = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (me >= count)
        return;
    const int64_t lo = (b0 + me) * MC_BLOCK;
    const int64_t hi = lo + MC_BLOCK < samples ? lo + MC_BLOCK : samples;
    double s = 0;
    for (int64_t i = lo; i < hi; i++) {
        double x = capp_unit(key, (uint64_t)i);
        s += 4.0 / (1.0 + x * x);
    }
    sums[me] = s;
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
