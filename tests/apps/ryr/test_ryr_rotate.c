/* RYR rotate: exact quarter turns, output sizes, bilinear blend, round trips. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rotate.h"
#include "utc_test.h"

static const uint8_t src43[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}; /* 4 x 3 */

static void expect_rotation(double angle, int ow, int oh, const uint8_t *want)
{
    ryr_rotation_t r;
    UTC_ASSERT_OK(ryr_rotation_init(&r, 4, 3, angle, NULL));
    CU_ASSERT_EQUAL_FATAL(r.ow, ow);
    CU_ASSERT_EQUAL_FATAL(r.oh, oh);
    uint8_t out[12];
    ryr_rotate_plane(&r, src43, out);
    CU_ASSERT_EQUAL(memcmp(out, want, 12), 0);
}

/* Counter-clockwise: a quarter turn brings the top-right corner to the top-left. */
static void test_quarter_turns(void)
{
    static const uint8_t r0[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    static const uint8_t r90[12] = {4, 8, 12, 3, 7, 11, 2, 6, 10, 1, 5, 9};
    static const uint8_t r180[12] = {12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
    static const uint8_t r270[12] = {9, 5, 1, 10, 6, 2, 11, 7, 3, 12, 8, 4};
    expect_rotation(0, 4, 3, r0);
    expect_rotation(360, 4, 3, r0);
    expect_rotation(90, 3, 4, r90);
    expect_rotation(450, 3, 4, r90);
    expect_rotation(-270, 3, 4, r90);
    expect_rotation(180, 4, 3, r180);
    expect_rotation(-180, 4, 3, r180);
    expect_rotation(270, 3, 4, r270);
    expect_rotation(-90, 3, 4, r270);
}

static uint8_t *random_plane(int w, int h, unsigned seed)
{
    uint8_t *p = malloc((size_t)w * h);
    for (int i = 0; i < w * h; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
    return p;
}

/* Four quarter turns give the input back, and each is a permutation. */
static void test_four_turns(void)
{
    const int w = 96, h = 64;
    uint8_t *src = random_plane(w, h, 7), *a = malloc(w * h), *b = malloc(w * h);
    memcpy(a, src, w * h);
    int cw = w, ch = h;
    for (int k = 0; k < 4; k++) {
        ryr_rotation_t r;
        UTC_ASSERT_OK(ryr_rotation_init(&r, cw, ch, 90.0, NULL));
        CU_ASSERT_EQUAL(r.ow, ch);
        CU_ASSERT_EQUAL(r.oh, cw);
        ryr_rotate_plane(&r, a, b);
        /* a permutation: the byte histogram is unchanged */
        long ha[256] = {0}, hb[256] = {0};
        for (int i = 0; i < w * h; i++)
            ha[a[i]]++, hb[b[i]]++;
        CU_ASSERT_EQUAL(memcmp(ha, hb, sizeof ha), 0);
        memcpy(a, b, w * h);
        cw = r.ow, ch = r.oh;
    }
    CU_ASSERT_EQUAL(memcmp(a, src, w * h), 0);
    free(src), free(a), free(b);
}

static void test_sizes(void)
{
    ryr_rotation_t r;
    /* 30 degrees, 96 x 64: ceil(96 cos30 + 64 sin30) = ceil(115.14) = 116,
     * ceil(96 sin30 + 64 cos30) = ceil(103.43) = 104 */
    UTC_ASSERT_OK(ryr_rotation_init(&r, 96, 64, 30.0, NULL));
    CU_ASSERT_EQUAL(r.ow, 116);
    CU_ASSERT_EQUAL(r.oh, 104);
    /* -30: same box */
    UTC_ASSERT_OK(ryr_rotation_init(&r, 96, 64, -30.0, NULL));
    CU_ASSERT_EQUAL(r.ow, 116);
    CU_ASSERT_EQUAL(r.oh, 104);
    /* 45: (96 + 64) / sqrt2 = 113.14 */
    UTC_ASSERT_OK(ryr_rotation_init(&r, 96, 64, 45.0, NULL));
    CU_ASSERT_EQUAL(r.ow, 114);
    CU_ASSERT_EQUAL(r.oh, 114);
    /* 60 on a square 100 x 100: 100 (cos60 + sin60) = 136.6 */
    UTC_ASSERT_OK(ryr_rotation_init(&r, 100, 100, 60.0, NULL));
    CU_ASSERT_EQUAL(r.ow, 137);
    CU_ASSERT_EQUAL(r.oh, 137);
    /* multiples of 90 are exact sizes, whatever the rounding of cos and sin */
    UTC_ASSERT_OK(ryr_rotation_init(&r, 1001, 999, 90.0, NULL));
    CU_ASSERT_EQUAL(r.ow, 999);
    CU_ASSERT_EQUAL(r.oh, 1001);
    UTC_ASSERT_OK(ryr_rotation_init(&r, 1001, 999, 1080.0, NULL));
    CU_ASSERT_EQUAL(r.ow, 1001);
    CU_ASSERT_EQUAL(r.oh, 999);
    UTC_ASSERT_OK(ryr_rotation_init(&r, 1, 1, 30.0, NULL));
    CU_ASSERT_EQUAL(r.ow, 2);
    ryr_err_t err;
    CU_ASSERT_EQUAL(ryr_rotation_init(&r, 0, 5, 30.0, &err), -1);
    CU_ASSERT_EQUAL(ryr_rotation_init(&r, 5, -1, 30.0, &err), -1);
    CU_ASSERT_EQUAL(ryr_rotation_init(&r, 5, 5, NAN, &err), -1);
    CU_ASSERT_EQUAL(ryr_rotation_init(&r, 5, 5, INFINITY, &err), -1);
}

/* Odd sizes keep a centre pixel: at 30 degrees, 97 x 65 becomes 117 x 105, and the
 * centre output pixel (58, 52) maps exactly onto the source centre (48, 32). The
 * corners of the box are outside the source: 0. */
static void test_general_angle(void)
{
    const int w = 97, h = 65;
    uint8_t *src = malloc(w * h);
    for (int i = 0; i < w * h; i++)
        src[i] = 200;
    src[32 * w + 48] = 77;
    ryr_rotation_t r;
    UTC_ASSERT_OK(ryr_rotation_init(&r, w, h, 30.0, NULL));
    CU_ASSERT_EQUAL_FATAL(r.ow, 117);
    CU_ASSERT_EQUAL_FATAL(r.oh, 105);
    uint8_t *out = malloc(r.ow * r.oh);
    ryr_rotate_plane(&r, src, out);
    CU_ASSERT_EQUAL(out[52 * r.ow + 58], 77);
    CU_ASSERT_EQUAL(out[0], 0);
    CU_ASSERT_EQUAL(out[r.ow - 1], 0);
    CU_ASSERT_EQUAL(out[(r.oh - 1) * r.ow], 0);
    CU_ASSERT_EQUAL(out[r.oh * r.ow - 1], 0);
    /* a uniform source stays uniform inside (bilinear blend of equal values) */
    CU_ASSERT_EQUAL(out[40 * r.ow + 58], 200);
    CU_ASSERT_EQUAL(out[60 * r.ow + 70], 200);

    /* Row ranges, as threads split them, equal the whole plane. */
    uint8_t *parts = malloc(r.ow * r.oh);
    int cuts[] = {0, 7, 7, 50, 105};
    for (int i = 0; i + 1 < 5; i++)
        ryr_rotate_rows(&r, src, cuts[i], cuts[i + 1], parts + cuts[i] * r.ow);
    CU_ASSERT_EQUAL(memcmp(out, parts, r.ow * r.oh), 0);
    free(src), free(out), free(parts);
}

/* Rotating by A then by -A keeps the interior of a smooth image within 2 levels. */
static void test_round_trip(void)
{
    const int w = 96, h = 64;
    uint8_t *src = malloc(w * h);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            src[y * w + x] = (uint8_t)lround(128 + 50 * sin(x / 25.0) * cos(y / 20.0) + x / 3.0);
    const double angles[] = {30.0, 17.5, 45.0, -63.0};
    for (int k = 0; k < 4; k++) {
        ryr_rotation_t a, b;
        UTC_ASSERT_OK(ryr_rotation_init(&a, w, h, angles[k], NULL));
        uint8_t *mid = malloc(a.ow * a.oh);
        ryr_rotate_plane(&a, src, mid);
        UTC_ASSERT_OK(ryr_rotation_init(&b, a.ow, a.oh, -angles[k], NULL));
        uint8_t *back = malloc(b.ow * b.oh);
        ryr_rotate_plane(&b, mid, back);
        /* The source sits centred in the result: source pixel centre x + 0.5 - w/2 is
         * output coordinate x + (b.ow - w)/2, a half pixel off when the parities differ:
         * average the two neighbours then. */
        double ox = (b.ow - w) / 2.0, oy = (b.oh - h) / 2.0;
        int worst = 0;
        for (int y = 3; y < h - 3; y++) {
            for (int x = 3; x < w - 3; x++) {
                double fx = x + ox, fy = y + oy;
                int x0 = (int)floor(fx), y0 = (int)floor(fy);
                int x1 = fx > x0 ? x0 + 1 : x0, y1 = fy > y0 ? y0 + 1 : y0;
                double v = (back[y0 * b.ow + x0] + back[y0 * b.ow + x1] +
                            back[y1 * b.ow + x0] + back[y1 * b.ow + x1]) / 4.0;
                int d = (int)lround(fabs(v - src[y * w + x]));
                if (d > worst)
                    worst = d;
            }
        }
        if (worst > 2)
            fprintf(stderr, "angle %g: worst difference %d\n", angles[k], worst);
        CU_ASSERT(worst <= 2);
        free(mid), free(back);
    }
    free(src);
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"quarter turns are exact permutations", test_quarter_turns},
        {"four quarter turns give the input back", test_four_turns},
        {"output sizes", test_sizes},
        {"general angle: centre, outside, row ranges", test_general_angle},
        {"rotate A then -A", test_round_trip},
        UTC_TEST_END,
    };
    return utc_test_main(argc, argv, "ryr_rotate", cases);
}
