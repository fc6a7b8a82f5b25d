/*
 * The per-pixel rules of the rotation (rotate.h), written once for the C rotation
 * (rotate.c, gcc) and the rotate app's CUDA kernel (apps/rotate/rotate_kernel.cu, nvcc).
 * Both compile them without fused multiply-adds (-ffp-contract=off, -fmad=false), so the
 * two give the same bytes: do not reorder the arithmetic.
 *
 * They take the rotation by value: the form of a kernel argument, and on the CPU a local
 * copy that stores to the output bytes cannot alias.
 */
#ifndef RYR_ROTATE_RULES_H
#define RYR_ROTATE_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "host_device.h"
#include "rotate.h"

/*
 * Exact quarter turns (rot.quarter 0..3): output pixel (x, y) is source pixel
 * first + x * step, with first and step set here for row y. Counter-clockwise with y
 * down: the source's top-right corner becomes the output's top-left for a quarter turn.
 */
static inline RYR_HD void ryr__quarter_row(ryr_rotation_t rot, int y, ptrdiff_t *first,
                                           ptrdiff_t *step)
{
    const ptrdiff_t w = rot.w, h = rot.h;
    switch (rot.quarter) {
    case 0: /* out(x, y) = src(x, y) */
        *first = y * w;
        *step = 1;
        break;
    case 1: /* out(x, y) = src(w-1-y, x) */
        *first = w - 1 - y;
        *step = w;
        break;
    case 2: /* out(x, y) = src(w-1-x, h-1-y) */
        *first = (h - 1 - y) * w + (w - 1);
        *step = -1;
        break;
    default: /* 3: out(x, y) = src(y, h-1-x) */
        *first = (h - 1) * w + y;
        *step = -w;
        break;
    }
}

/* Other angles (rot.quarter -1): output pixel (x, y) of a w x h source plane. */
static inline RYR_HD uint8_t ryr__rotate_general(ryr_rotation_t rot, const uint8_t *src, int x,
                                                 int y)
{
    const int w = rot.w, h = rot.h;
    const double c = rot.c, s = rot.s;
    double v = y + 0.5 - rot.oh * 0.5;
    double u = x + 0.5 - rot.ow * 0.5;
    /* Inverse rotation (clockwise with y down), back to source pixel coordinates where
     * pixel centres are at integers. */
    double sx = u * c - v * s + w * 0.5 - 0.5;
    double sy = u * s + v * c + h * 0.5 - 0.5;
    if (!(sx >= -0.5 && sx < w - 0.5 && sy >= -0.5 && sy < h - 0.5))
        return 0;
    /* Inside the source area: within half a pixel of the border the edge pixels stand in
     * for their missing neighbours. */
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

/* Output pixel (x, y) of one plane, whatever the angle. */
static inline RYR_HD uint8_t ryr__rotate_pixel(ryr_rotation_t rot, const uint8_t *src, int x,
                                               int y)
{
    if (rot.quarter < 0)
        return ryr__rotate_general(rot, src, x, y);
    ptrdiff_t first, step;
    ryr__quarter_row(rot, y, &first, &step);
    return src[first + x * step];
}

#endif /* RYR_ROTATE_RULES_H */
