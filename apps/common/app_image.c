#include "app_image.h"

#include <stddef.h>

#include "app_rand.h"

void app_image_generate(int channels, int w, int h, uint64_t seed, uint8_t *out)
{
    app_rand_t shape = app_rand_make(seed, 0);
    /* A few seed-dependent pattern parameters, then per-pixel noise. */
    uint32_t cx = (uint32_t)app_rand_below(&shape, (uint64_t)w);
    uint32_t cy = (uint32_t)app_rand_below(&shape, (uint64_t)h);
    uint32_t tint[4];
    for (int c = 0; c < 4; c++)
        tint[c] = (uint32_t)app_rand_below(&shape, 256);
    for (int y = 0; y < h; y++) {
        app_rand_t noise = app_rand_make(seed, (uint64_t)y + 1);
        uint8_t *row = out + (size_t)y * w * channels;
        uint32_t gy = (uint32_t)((uint64_t)y * 256 / (uint64_t)h);
        uint32_t dy = (uint32_t)(y > (int)cy ? y - (int)cy : (int)cy - y);
        uint64_t bits = 0;
        int nbits = 0;
        for (int x = 0; x < w; x++) {
            uint32_t gx = (uint32_t)((uint64_t)x * 256 / (uint64_t)w);
            uint32_t dx = (uint32_t)(x > (int)cx ? x - (int)cx : (int)cx - x);
            uint32_t ring = ((dx + dy) / 16) & 1 ? 64 : 0; /* diamond rings: sharp edges */
            for (int c = 0; c < channels; c++) {
                if (nbits < 5) {
                    bits = app_rand_next(&noise);
                    nbits = 64;
                }
                uint32_t n = (uint32_t)(bits & 31);
                bits >>= 5;
                nbits -= 5;
                uint32_t v = (c % 2 ? gx : gy) + ring + tint[c % 4] + n;
                row[(size_t)x * channels + c] = (uint8_t)(v & 0xff);
            }
        }
    }
}
