// The kernel of example 5: SAXPY, y = a*x + y, with a grid-stride loop.
#include <cuda_runtime.h>

#include "gpu_kernel.h"

__global__ static void saxpy_kernel(float a, const float *x, float *y, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];
}

extern "C" int example_saxpy(float a, const float *x, float *y, size_t n, void *stream)
{
    size_t blocks = (n + 255) / 256;
    if (blocks > 4096)
        blocks = 4096; // the loop strides over the rest
    if (blocks == 0)
        return 0;
    saxpy_kernel<<<(unsigned)blocks, 256, 0, (cudaStream_t)stream>>>(a, x, y, n);
    return (int)cudaPeekAtLastError(); // left set: utc_gpu_check reports and clears it
}
