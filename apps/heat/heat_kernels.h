/* heat: the stencil's arithmetic, which the CPU code and the CUDA kernel share, and the
 * kernel's launcher (heat_kernels.cu). */
#ifndef UTC_APPS_HEAT_KERNELS_H
#define UTC_APPS_HEAT_KERNELS_H

#include <stdint.h>

#include "capp_hd.h"

/* The stencil's weight (stable for <= 1/4). */
#define HEAT_ALPHA 0.2f

/* An interior point's next value from itself and its four neighbours, in the one order of
 * additions every implementation uses (so the GPU's result equals the CPU's). */
static inline CAPP_HD float heat_point(float up, float mid, float left, float right, float down)
{
    return mid + HEAT_ALPHA * ((up + down) + (left + right) - 4.0f * mid);
}

/* Cell e of rows 1 .. of a grid with `cols` columns (row e / cols + 1): its next value
 * from cur (the first and last columns stay). */
static inline CAPP_HD float heat_cell(const float *cur, int64_t e, int64_t cols)
{
    const int64_t j = e % cols;
    const float *mid = cur + cols + e;
    if (j == 0 || j == cols - 1)
        return *mid;
    return heat_point(mid[-cols], mid[0], mid[-1], mid[1], mid[cols]);
}

#ifdef __cplusplus
extern "C" {
#endif

/* Rows 1 .. count of next from rows 0 .. count+1 of cur (device, row stride cols).
 * Returns a CUDA error code. */
int heat_gpu_launch(const float *cur, float *next, int64_t count, int64_t cols, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* UTC_APPS_HEAT_KERNELS_H */
