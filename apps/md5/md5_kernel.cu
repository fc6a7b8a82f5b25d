// md5, CUDA kernel: one thread per buffer, with the same md5.h as the CPU versions.
#include <cuda_runtime.h>

#include "md5.h"
#include "md5_kernel.h"

namespace {

constexpr unsigned kBlock = 128;

__global__ void md5_kernel(const uint8_t *data, size_t nbytes, size_t len, size_t count,
                           uint8_t *digests)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    size_t start = i * len;
    size_t n = nbytes - start < len ? nbytes - start : len;
    md5_digest(data + start, n, digests + MD5_DIGEST_BYTES * i);
}

} // namespace

extern "C" int md5_gpu_launch(const uint8_t *data, size_t nbytes, size_t len, size_t count,
                              uint8_t *digests, void *stream)
{
    if (count == 0)
        return 0; // no message (a zero grid is a launch error)
    unsigned blocks = (unsigned)((count + kBlock - 1) / kBlock);
    md5_kernel<<<blocks, kBlock, 0, (cudaStream_t)stream>>>(data, nbytes, len, count, digests);
    return (int)cudaPeekAtLastError();
}
