/**
 * @file app_image.h
 * @brief Generated test images for the image apps (rotate, yuv): 8-bit pixels,
 * channels interleaved, a pattern with edges and gradients plus noise, from a seed.
 */
#ifndef APP_IMAGE_H
#define APP_IMAGE_H

#include <stdint.h>

/**
 * @brief Fill @p out (w * h * channels bytes, row-major, channels interleaved) with the
 * image of @p seed. The same arguments always give the same bytes.
 */
void app_image_generate(int channels, int w, int h, uint64_t seed, uint8_t *out);

#endif /* APP_IMAGE_H */
