#include "yuv.h"

#include <math.h>

uint8_t ryr_yuv_clamp(double v)
{
    return v < 0.0 ? 0 : v > 255.0 ? 255 : (uint8_t)v;
}

void ryr_yuv_pixel(uint8_t r, uint8_t g, uint8_t b, uint8_t *y, uint8_t *u, uint8_t *v)
{
    double R = r, G = g, B = b;
    *y = ryr_yuv_clamp(round(0.256788 * R + 0.504129 * G + 0.097906 * B) + 16.0);
    *u = ryr_yuv_clamp(round(-0.148223 * R - 0.290993 * G + 0.439216 * B) + 128.0);
    *v = ryr_yuv_clamp(round(0.439216 * R - 0.367788 * G - 0.071427 * B) + 128.0);
}

void ryr_yuv_convert(const uint8_t *rgb, size_t begin, size_t end, uint8_t *y, uint8_t *u,
                     uint8_t *v)
{
    for (size_t i = begin; i < end; i++) {
        const uint8_t *p = rgb + 3 * i;
        ryr_yuv_pixel(p[0], p[1], p[2], y + i, u + i, v + i);
    }
}
