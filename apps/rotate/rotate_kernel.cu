// rotate, CUDA kernel: one thread per output pixel, with the per-pixel rules of the RYR
// sample's rotation (apps/ryr/rotate_rules.h, which ryr_rotate_rows uses too); built with
// -fmad=false so that the doubles round as in the C build (-ffp-contract=off) and
// --verify can ask for equality.
#include <cuda_runtime.h>

#include "rotate_kernel.h"
#include "rotate_rules.h"

namespace {

constexpr unsigned kBlock = 256;

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
