#include "yuv.h"

#include "yuv_rules.h"

uint8_t ryr_yuv_clamp(double v)
{
    return ryr__yuv_clamp(v);
}

void ryr_yuv_pixel(uint8_t r, uint8_t g, uint8_t b, uint8_t *y, uint8_t *u, uint8_t *v)
{
    ryr__yuv_pixel(r, g, b, y, u, v);
}

void ryr_yuv_convert(const uint8_t *rgb, size_t begin, size_t end, uint8_t *y, uint8_t *u,
                     uint8_t *v)
{
    for (size_t i = begin; i < end; i++) {
        const uint8_t *p = rgb + 3 * i;
        ryr__yuv_pixel(p[0], p[1], p[2], y + i, u + i, v + i);
    }
}
