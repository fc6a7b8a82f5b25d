// yuv, CUDA kernel: one thread per pixel. The device cannot call the RYR sample's C
// functions, so ryr_yuv_pixel's formula (apps/ryr/yuv.c, RYR.md) is written here again,
// operation for operation; built with -fmad=false so the doubles round as in the C build
// (-ffp-contract=off) and --verify can ask for equality.
#include <cuda_runtime.h>

#include "yuv_kernel.h"

namespace {

constexpr unsigned kBlock = 256;

__device__ uint8_t clamp_byte(double v)
{
    return v < 0.0 ? 0 : v > 255.0 ? 255 : (uint8_t)v;
}

__global__ void yuv_kernel(const uint8_t *rgb, size_t n, uint8_t *planes)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        double R = rgb[3 * i], G = rgb[3 * i + 1], B = rgb[3 * i + 2];
        planes[i] = clamp_byte(round(0.256788 * R + 0.504129 * G + 0.097906 * B) + 16.0);
        planes[n + i] = clamp_byte(round(-0.148223 * R - 0.290993 * G + 0.439216 * B) + 128.0);
        planes[2 * n + i] = clamp_byte(round(0.439216 * R - 0.367788 * G - 0.071427 * B) + 128.0);
    }
}

} // namespace

extern "C" int yuv_gpu_launch(const uint8_t *rgb, size_t n, uint8_t *planes, void *stream)
{
    size_t blocks = (n + kBlock - 1) / kBlock;
    if (blocks > 65535)
        blocks = 65535;
    if (blocks < 1)
        blocks = 1;
    yuv_kernel<<<(unsigned)blocks, kBlock, 0, (cudaStream_t)stream>>>(rgb, n, planes);
    return (int)cudaPeekAtLastError();
}
