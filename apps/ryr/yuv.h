/**
 * @file yuv.h
 * @brief RGB to Y, U, V planes (BT.601 studio range, full resolution), as RYR.md:
 *
 *     Y = round( 0.256788 R + 0.504129 G + 0.097906 B) + 16
 *     U = round(-0.148223 R - 0.290993 G + 0.439216 B) + 128
 *     V = round( 0.439216 R - 0.367788 G - 0.071427 B) + 128
 *
 * with C round() and the result clamped to 0..255. Pure: threads may convert disjoint
 * pixel ranges of one frame at once.
 */
#ifndef RYR_YUV_H
#define RYR_YUV_H

#include <stddef.h>
#include <stdint.h>

/** @brief A converted value to a byte: below 0 gives 0, above 255 gives 255. */
uint8_t ryr_yuv_clamp(double v);

/** @brief Convert one pixel. */
void ryr_yuv_pixel(uint8_t r, uint8_t g, uint8_t b, uint8_t *y, uint8_t *u, uint8_t *v);

/**
 * @brief Convert pixels [begin, end) of a frame.
 * @param rgb the whole frame, 3 bytes per pixel (pixel i at rgb + 3 i)
 * @param y, u, v the whole planes, 1 byte per pixel (pixel i at y + i, ...)
 */
void ryr_yuv_convert(const uint8_t *rgb, size_t begin, size_t end, uint8_t *y, uint8_t *u,
                     uint8_t *v);

#endif /* RYR_YUV_H */
