// The per-pixel CUDA kernels of the RYR sample's conversion and rotation, one CUDA thread
// per output pixel, with the rules the C versions use (yuv_rules.h, rotate_rules.h); built
// with -fmad=false so that the doubles round as in the C build (-ffp-contract=off) and
// --verify can ask for equality. Used by the GPU-resident RYR stages (gpu_stages.cu) and
// by the yuv and rotate apps' GPU versions (apps/yuv/gpu.c, apps/rotate/gpu.c).
#include <cuda_runtime.h>

#include "pixel_kernels.h"
#include "rotate_rules.h"
#include "yuv_rules.h"

namespace
{

constexpr unsigned kBlock = 256;

// A grid-stride launch of n elements: at most 65535 blocks, at least one.
unsigned blocks_for(long long n)
{
    long long blocks = (n + kBlock - 1) / kBlock;
    return (unsigned)(blocks > 65535 ? 65535 : blocks < 1 ? 1 : blocks);
}

__global__ void yuv_kernel(const uint8_t *rgb, size_t n, uint8_t *planes)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        ryr__yuv_pixel(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2], &planes[i], &planes[n + i],
                       &planes[2 * n + i]);
}

__global__ void rotate_kernel(const ryr_rotation_t rot, const uint8_t *src, long long r0,
                              long long npix, uint8_t *dst)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < npix;
         i += (long long)gridDim.x * blockDim.x) {
        long long r = r0 + i / rot.ow;
        int x = (int)(i % rot.ow), plane = (int)(r / rot.oh), y = (int)(r % rot.oh);
        dst[i] = ryr__rotate_pixel(rot, src + (size_t)plane * rot.w * rot.h, x, y);
    }
}

} // namespace

extern "C" int ryr_gpu_yuv_launch(const uint8_t *rgb, size_t n, uint8_t *planes, void *stream)
{
    yuv_kernel<<<blocks_for((long long)n), kBlock, 0, (cudaStream_t)stream>>>(rgb, n, planes);
    return (int)cudaPeekAtLastError();
}

extern "C" int ryr_gpu_rotate_launch(const ryr_rotation_t *rot, const uint8_t *src, long long r0,
                                     long long r1, uint8_t *dst, void *stream)
{
    long long npix = (r1 - r0) * rot->ow;
    rotate_kernel<<<blocks_for(npix), kBlock, 0, (cudaStream_t)stream>>>(*rot, src, r0, npix, dst);
    return (int)cudaPeekAtLastError();
}
