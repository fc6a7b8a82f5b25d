/*
 * The per-pixel rule of the RGB to YUV conversion (yuv.h, RYR.md), written once for the C
 * conversion (yuv.c, gcc) and the CUDA kernels (the yuv app's apps/yuv/yuv_kernel.cu and
 * the RYR sample's GPU-resident yuv stage, gpu_stages.cu, nvcc). Both compile it without
 * fused multiply-adds (-ffp-contract=off, -fmad=false) and C's round() is the same
 * function on both, so the two give the same bytes: do not reorder the arithmetic.
 */
#ifndef RYR_YUV_RULES_H
#define RYR_YUV_RULES_H

#include <math.h>
#include <stdint.h>

#include "host_device.h"

/* A converted value to a byte: below 0 gives 0, above 255 gives 255. */
static inline RYR_HD uint8_t ryr__yuv_clamp(double v)
{
    return v < 0.0 ? 0 : v > 255.0 ? 255 : (uint8_t)v;
}

/* One pixel: BT.601 studio range, full resolution. */
static inline RYR_HD void ryr__yuv_pixel(uint8_t r, uint8_t g, uint8_t b, uint8_t *y, uint8_t *u,
                                         uint8_t *v)
{
    double R = r, G = g, B = b;
    *y = ryr__yuv_clamp(round(0.256788 * R + 0.504129 * G + 0.097906 * B) + 16.0);
    *u = ryr__yuv_clamp(round(-0.148223 * R - 0.290993 * G + 0.439216 * B) + 128.0);
    *v = ryr__yuv_clamp(round(0.439216 * R - 0.367788 * G - 0.071427 * B) + 128.0);
}

#endif /* RYR_YUV_RULES_H */
