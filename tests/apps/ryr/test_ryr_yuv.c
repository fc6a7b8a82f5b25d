/* RYR YUV conversion against values worked out by hand from RYR.md's formulas. */
#include <stdlib.h>
#include <string.h>

#include "utc_test.h"
#include "yuv.h"

static void expect(int r, int g, int b, int y, int u, int v)
{
    uint8_t Y, U, V;
    ryr_yuv_pixel((uint8_t)r, (uint8_t)g, (uint8_t)b, &Y, &U, &V);
    CU_ASSERT_EQUAL(Y, y);
    CU_ASSERT_EQUAL(U, u);
    CU_ASSERT_EQUAL(V, v);
}

static void test_values(void)
{
    expect(0, 0, 0, 16, 128, 128);
    /* white: Y = round(0.858823 * 255 = 218.99986) + 16 = 235; U = round(0) + 128;
     * V = round(0.000001 * 255) + 128 */
    expect(255, 255, 255, 235, 128, 128);
    /* red: Y = round(65.48094) + 16 = 81, U = round(-37.796865) + 128 = 90,
     * V = round(112.00008) + 128 = 240 */
    expect(255, 0, 0, 81, 90, 240);
    /* green: round(128.552895) + 16 = 145, round(-74.203215) + 128 = 54,
     * round(-93.78594) + 128 = 34 */
    expect(0, 255, 0, 145, 54, 34);
    /* blue: round(24.96603) + 16 = 41, round(112.00008) + 128 = 240,
     * round(-18.213885) + 128 = 110 */
    expect(0, 0, 255, 41, 240, 110);
    /* grey 128: round(109.929344) + 16 = 126 */
    expect(128, 128, 128, 126, 128, 128);
    /* (10, 200, 30): Y = round(2.56788 + 100.8258 + 2.93718 = 106.33086) + 16 = 122,
     * U = round(-1.48223 - 58.1986 + 13.17648 = -46.50435) + 128 = 81 (away from 0),
     * V = round(4.39216 - 73.5576 - 2.14281 = -71.30825) + 128 = 57 */
    expect(10, 200, 30, 122, 81, 57);
}

static void test_clamp(void)
{
    CU_ASSERT_EQUAL(ryr_yuv_clamp(-1.0), 0);
    CU_ASSERT_EQUAL(ryr_yuv_clamp(-300.0), 0);
    CU_ASSERT_EQUAL(ryr_yuv_clamp(0.0), 0);
    CU_ASSERT_EQUAL(ryr_yuv_clamp(17.0), 17);
    CU_ASSERT_EQUAL(ryr_yuv_clamp(255.0), 255);
    CU_ASSERT_EQUAL(ryr_yuv_clamp(256.0), 255);
    CU_ASSERT_EQUAL(ryr_yuv_clamp(1e9), 255);
    /* Every 8-bit input lands in studio range: Y 16..235, U and V 16..240. */
    for (int r = 0; r < 256; r += 5)
        for (int g = 0; g < 256; g += 3)
            for (int b = 0; b < 256; b += 1) {
                uint8_t y, u, v;
                ryr_yuv_pixel((uint8_t)r, (uint8_t)g, (uint8_t)b, &y, &u, &v);
                if (y < 16 || y > 235 || u < 16 || u > 240 || v < 16 || v > 240) {
                    CU_FAIL("out of studio range");
                    return;
                }
            }
}

/* A pixel range touches only its pixels, and equals the per-pixel conversion. */
static void test_range(void)
{
    enum { N = 1000 };
    uint8_t *rgb = malloc(3 * N), y[N], u[N], v[N];
    for (int i = 0; i < 3 * N; i++)
        rgb[i] = (uint8_t)(i * 7919 >> 3);
    memset(y, 0xAA, N);
    memset(u, 0xAA, N);
    memset(v, 0xAA, N);
    ryr_yuv_convert(rgb, 100, 700, y, u, v);
    for (int i = 0; i < N; i++) {
        if (i < 100 || i >= 700) {
            CU_ASSERT_EQUAL_FATAL(y[i], 0xAA);
            CU_ASSERT_EQUAL_FATAL(u[i], 0xAA);
            CU_ASSERT_EQUAL_FATAL(v[i], 0xAA);
        } else {
            uint8_t ey, eu, ev;
            ryr_yuv_pixel(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2], &ey, &eu, &ev);
            CU_ASSERT_EQUAL_FATAL(y[i], ey);
            CU_ASSERT_EQUAL_FATAL(u[i], eu);
            CU_ASSERT_EQUAL_FATAL(v[i], ev);
        }
    }
    free(rgb);
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"hand-computed values", test_values},
        {"clamping and range", test_clamp},
        {"pixel ranges", test_range},
        UTC_TEST_END,
    };
    return utc_test_main(argc, argv, "ryr_yuv", cases);
}
