// GPU helpers of the cluster apps (see cluster_gpu.h).
#include <cuda_runtime.h>

#include "cluster_gpu.h"

extern "C" int capp_gpu_copy(void *dst, const void *src, size_t bytes, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    cudaError_t err = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(s);
    return static_cast<int>(err);
}

extern "C" int capp_gpu_memset(void *dst, int value, size_t bytes, void *stream)
{
    return static_cast<int>(
        cudaMemsetAsync(dst, value, bytes, static_cast<cudaStream_t>(stream)));
}
