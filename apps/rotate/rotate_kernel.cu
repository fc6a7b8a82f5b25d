// rotate, CUDA kernel: one thread per output pixel. The device cannot call the RYR
// sample's C functions, so the per-pixel rule of ryr_rotate_rows (apps/ryr/rotate.c) is
// written here again, operation for operation; built with -fmad=false so that the
// doubles round as in the C build (-ffp-contract=off) and --verify can ask for equality.
#include <cuda_runtime.h>

#include "rotate_kernel.h"

namespace {

constexpr unsigned kBlock = 256;

__device__ uint8_t rotate_pixel(const ryr_rotation_t rot, const uint8_t *src, int x, int y)
{
    const int w = rot.w, h = rot.h, ow = rot.ow, oh = rot.oh;
    switch (rot.quarter) {
    case 0: return src[(size_t)y * w + x];
    case 1: return src[(size_t)x * w + (w - 1 - y)];
    case 2: return src[(size_t)(h - 1 - y) * w + (w - 1 - x)];
    case 3: return src[(size_t)(h - 1 - x) * w + y];
    default: break;
    }
    const double c = rot.c, s = rot.s;
    double v = y + 0.5 - oh * 0.5;
    double u = x + 0.5 - ow * 0.5;
    double sx = u * c - v * s + w * 0.5 - 0.5;
    double sy = u * s + v * c + h * 0.5 - 0.5;
    if (!(sx >= -0.5 && sx < w - 0.5 && sy >= -0.5 && sy < h - 0.5))
        return 0;
    if (sx < 0.0)
        sx = 0.0;
    if (sy < 0.0)
        sy = 0.0;
    if (sx > w - 1)
        sx = w - 1;
    if (sy > h - 1)
        sy = h - 1;
    int x0 = (int)sx, yy0 = (int)sy;
    int x1 = x0 + 1 < w ? x0 + 1 : x0;
    int yy1 = yy0 + 1 < h ? yy0 + 1 : yy0;
    double fx = sx - x0, fy = sy - yy0;
    const uint8_t *r0 = src + (size_t)yy0 * w, *r1 = src + (size_t)yy1 * w;
    double top = r0[x0] + fx * (r0[x1] - r0[x0]);
    double bot = r1[x0] + fx * (r1[x1] - r1[x0]);
    double val = top + fy * (bot - top);
    int iv = (int)(val + 0.5);
    return (uint8_t)(iv < 0 ? 0 : iv > 255 ? 255 : iv);
}

__global__ void rotate_kernel(const ryr_rotation_t rot, const uint8_t *src, long long r0,
                              long long npix, uint8_t *dst)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < npix;
         i += (long long)gridDim.x * blockDim.x) {
        long long r = r0 + i / rot.ow;
        int x = (int)(i % rot.ow), plane = (int)(r / rot.oh), y = (int)(r % rot.oh);
        dst[i] = rotate_pixel(rot, src + (size_t)plane * rot.w * rot.h, x, y);
    }
}

} // namespace

extern "C" int rotate_gpu_launch(const ryr_rotation_t *rot, const uint8_t *src, long long r0,
                                 long long r1, uint8_t *dst, void *stream)
{
    long long npix = (r1 - r0) * rot->ow;
    long long blocks = (npix + kBlock - 1) / kBlock;
    if (blocks > 65535)
        blocks = 65535;
    if (blocks < 1)
        blocks = 1;
    rotate_kernel<<<(unsigned)blocks, kBlock, 0, (cudaStream_t)stream>>>(*rot, src, r0, npix,
                                                                        dst);
    return (int)cudaPeekAtLastError();
}
