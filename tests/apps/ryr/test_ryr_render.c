/* RYR renderer against pixels worked out by hand for small scenes.
 *
 * Most scenes put the camera at the origin looking down +z: the camera matrix is then
 * the identity and, with W = 40 and H = 20, pixel (20, 13) has px = 20/40 - 0.5 = 0 and
 * py = -(13/20 - 0.65) / 2 = 0, so its primary ray runs straight along +z, and a sphere
 * of radius 1 centred at (0, 0, 10) is hit at P = (0, 0, 9) with normal (0, 0, -1). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "render_rules.h"
#include "scene.h"
#include "utc_test.h"

#define W 40
#define H 20
#define CX 20
#define CY 13

static const char *cam0 = "c 0 0 0  45  0 0 1\n";

/* Render the scene and return pixel (x, y). */
static void pixel_of(const char *body, const char *camera, int x, int y, uint8_t out[3])
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s", body, camera);
    ryr_scene_t s;
    ryr_err_t err;
    int rc = ryr_scene_parse(text, strlen(text), "hand", &s, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    ryr_view_t v;
    ryr_view_for_frame(&v, &s, 0, 0.0);
    uint8_t row[W * 3];
    ryr_render_rows(&s, &v, W, H, y, y + 1, row);
    memcpy(out, row + 3 * x, 3);
    ryr_scene_fini(&s);
}

static void expect_pixel(const char *body, const char *camera, int r, int g, int b)
{
    uint8_t px[3];
    pixel_of(body, camera, CX, CY, px);
    if (px[0] != r || px[1] != g || px[2] != b)
        fprintf(stderr, "got (%d, %d, %d), expected (%d, %d, %d)\n", px[0], px[1], px[2], r, g,
                b);
    CU_ASSERT_EQUAL(px[0], r);
    CU_ASSERT_EQUAL(px[1], g);
    CU_ASSERT_EQUAL(px[2], b);
}

static void test_primary_ray(void)
{
    ryr_view_t v;
    ryr_view_init(&v, (ryr_vec3_t){0, 0, 0}, (ryr_vec3_t){0, 0, 1});
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            CU_ASSERT_EQUAL(v.m[r][c], r == c ? 1.0f : 0.0f);
    ryr_ray_t ray = ryr_primary_ray(&v, W, H, CX, CY);
    CU_ASSERT_EQUAL(ray.dir.x, 0.0);
    CU_ASSERT_EQUAL(ray.dir.y, 0.0);
    CU_ASSERT_EQUAL(ray.dir.z, (1.0 / RYR_HALF_FOV) * RYR_RAY_MAG);
    /* pixel (0, 0): px = -0.5, py = 0.65 / aspect, aspect = 2 */
    ray = ryr_primary_ray(&v, W, H, 0, 0);
    CU_ASSERT_EQUAL(ray.dir.x, -500.0);
    CU_ASSERT_DOUBLE_EQUAL(ray.dir.y, 325.0, 1e-9);

    /* The quirk: the camera position is added to the direction. */
    ryr_view_init(&v, (ryr_vec3_t){100, 0, 0}, (ryr_vec3_t){100, 0, 10});
    ray = ryr_primary_ray(&v, W, H, CX, CY);
    CU_ASSERT_EQUAL(ray.orig.x, 100.0);
    CU_ASSERT_EQUAL(ray.dir.x, 100.0);

    /* The matrix is rounded to float: k = (1, 0, 3) / sqrt(10). */
    ryr_view_init(&v, (ryr_vec3_t){0, 0, 0}, (ryr_vec3_t){1, 0, 3});
    CU_ASSERT_EQUAL(v.m[0][2], (float)(1.0 / sqrt(10.0)));
    CU_ASSERT_EQUAL(v.m[2][2], (float)(3.0 / sqrt(10.0)));
    CU_ASSERT_EQUAL(v.m[0][0], (float)(3.0 / sqrt(10.0))); /* i = (kz, 0, -kx) */
    CU_ASSERT_EQUAL(v.m[2][0], (float)(-1.0 / sqrt(10.0)));
    CU_ASSERT_EQUAL(v.m[1][1], 1.0f); /* j = cross(k, i) = (0, 1, 0) */
}

/* Light at the eye: N.l = 1, no specular: colour * 1.
 * (0.5, 0.25, 0.75) * 255 = (127.5, 63.75, 191.25) -> (127, 63, 191). */
static void test_diffuse(void)
{
    expect_pixel("s 0 0 10  1  0.5 0.25 0.75  0 0\nl 0 0 0\n", cam0, 127, 63, 191);
}

/* Light at (0, 9, 0): l = (0, 1, -1)/sqrt2, N.l = R.l = 0.70711 (R = (0, 0, -1)),
 * specular power 2: 0.5. r = 0.4*0.70711 + 0.5 = 0.78284 -> 199.6 -> 199,
 * g = 0.2*0.70711 + 0.5 = 0.64142 -> 163.6 -> 163, b = 0.1*0.70711 + 0.5 -> 145.5 -> 145. */
static const char *spec_scene = "s 0 0 10  1  0.4 0.2 0.1  2 0\nl 0 9 0\n";

static void test_specular(void)
{
    expect_pixel(spec_scene, cam0, 199, 163, 145);
    /* A highlight seen head-on saturates: 0.4 + 1 > 1 on every channel. */
    expect_pixel("s 0 0 10  1  0.4 0.2 0.1  2 0\nl 0 0 0\n", cam0, 255, 255, 255);
}

/* A ball halfway between P and the light puts P in shadow; one beyond the light does
 * not (shadow hits count only for 1e-6 <= t <= 1). */
static void test_shadow(void)
{
    char body[512];
    snprintf(body, sizeof body, "%ss 0 4.5 4.5  1  1 1 1  0 0\n", spec_scene);
    expect_pixel(body, cam0, 0, 0, 0);
    snprintf(body, sizeof body, "%ss 0 18 -9  1  1 1 1  0 0\n", spec_scene);
    expect_pixel(body, cam0, 199, 163, 145);
    /* Two lights, one blocked: only the other one counts. */
    snprintf(body, sizeof body, "%ss 0 4.5 4.5  1  1 1 1  0 0\nl 0 0 0\n", spec_scene);
    expect_pixel(body, cam0, 255, 255, 255); /* the unblocked light is head-on */
}

/* A black mirror (reflectivity 0.5) at z = 10 shows a grey ball behind the camera:
 * the reflection ray from (0, 0, 9) runs along -z and hits (0, 0, -9), lit head-on by
 * the light at the origin: 0.6. Pixel = 0 + 0.5 * 0.6 = 0.3 -> 76.5 -> 76. */
static void test_reflection(void)
{
    expect_pixel("s 0 0 10  1  0 0 0  0 0.5\ns 0 0 -10  1  0.6 0.6 0.6  0 0\nl 0 0 0\n",
                 cam0, 76, 76, 76);
}

/* Two facing mirrors (reflectivity 1): the ray bounces A, B, A, B, A and the sixth trace
 * is at depth 5, black. Pixel = 3 * 0.1 + 2 * 0.01 = 0.32 -> 81.6 -> 81 (a limit of 4
 * would give 0.22 -> 56, of 6: 0.33 -> 84). */
static void test_recursion_limit(void)
{
    expect_pixel("s 0 0 10  1  0.1 0.1 0.1  0 1\ns 0 0 -10  1  0.01 0.01 0.01  0 1\n"
                 "l 0 0 0\n",
                 cam0, 81, 81, 81);
    /* trace at depth 5 is black even when the ray hits */
    const char *text = "s 0 0 10  1  1 1 1  0 0\nl 0 0 0\nc 0 0 0 45 0 0 1\n";
    ryr_scene_t s;
    UTC_ASSERT_OK(ryr_scene_parse(text, strlen(text), "t", &s, NULL));
    ryr_ray_t ray = {{0, 0, 0}, {0, 0, 1000}};
    ryr_vec3_t c = ryr_trace(&s, ray, RYR_MAX_RAY_DEPTH);
    CU_ASSERT(c.x == 0 && c.y == 0 && c.z == 0);
    c = ryr_trace(&s, ray, RYR_MAX_RAY_DEPTH - 1);
    CU_ASSERT(c.x > 0.99);
    ryr_scene_fini(&s);
}

/* Same centre and radius: a tie on every ray. Spheres are tested last first and only a
 * strictly nearer hit replaces, so the second (green) sphere wins. */
static void test_tie_rule(void)
{
    expect_pixel("s 0 0 10  1  0.5 0 0  0 0\ns 0 0 10  1  0 0.5 0  0 0\nl 0 0 0\n", cam0, 0,
                 127, 0);
    expect_pixel("s 0 0 10  1  0 0.5 0  0 0\ns 0 0 10  1  0.5 0 0  0 0\nl 0 0 0\n", cam0, 127,
                 0, 0);
}

/* Camera at (100, 0, 0) looking along +z: the centre ray's direction is (100, 0, 2546.5),
 * not (0, 0, 2546.5), because the position is added. At z = 9.8 it is at x = 100.385, so
 * it misses a ball of radius 0.2 at (100, 0, 10) and hits one at (100.3927, 0, 10). */
static void test_position_quirk(void)
{
    const char *camera = "c 100 0 0  45  100 0 10\n";
    expect_pixel("s 100 0 10  0.2  1 1 1  0 0\nl 100 0 0\n", camera, 0, 0, 0);
    uint8_t px[3];
    pixel_of("s 100.3927 0 10  0.2  0.5 0.5 0.5  0 0\nl 100 0 0\n", camera, CX, CY, px);
    CU_ASSERT(px[0] > 100 && px[0] == px[1] && px[1] == px[2]);
}

static void test_channel_byte(void)
{
    CU_ASSERT_EQUAL(ryr_channel_byte(0.0), 0);
    CU_ASSERT_EQUAL(ryr_channel_byte(0.5), 127);
    CU_ASSERT_EQUAL(ryr_channel_byte(0.999), 254);
    CU_ASSERT_EQUAL(ryr_channel_byte(1.0), 255);
    CU_ASSERT_EQUAL(ryr_channel_byte(7.5), 255);
    CU_ASSERT_EQUAL(ryr_channel_byte(-0.1), 231); /* (int)(-25.5) = -25; & 0xff */
    CU_ASSERT_EQUAL(ryr_channel_byte(NAN), 255);  /* min(NaN, 1) is 1 in c-ray's MIN */
    CU_ASSERT_EQUAL(ryr_channel_byte(-INFINITY), 0);
}

/* Rows rendered in pieces (as threads split them) equal the whole frame. */
static void test_row_ranges(void)
{
    ryr_scene_t s;
    UTC_ASSERT_OK(ryr_scene_load_default(&s, NULL));
    ryr_view_t v;
    ryr_view_for_frame(&v, &s, 3, 11.0);
    const int w = 37, h = 23;
    uint8_t *whole = malloc(w * h * 3), *parts = malloc(w * h * 3);
    ryr_render_rows(&s, &v, w, h, 0, h, whole);
    int cuts[] = {0, 1, 9, 9, 16, 23};
    for (int i = 0; i + 1 < 6; i++)
        ryr_render_rows(&s, &v, w, h, cuts[i], cuts[i + 1], parts + cuts[i] * w * 3);
    CU_ASSERT_EQUAL(memcmp(whole, parts, w * h * 3), 0);
    int nonzero = 0;
    for (int i = 0; i < w * h * 3; i++)
        nonzero += whole[i] != 0;
    CU_ASSERT(nonzero > w * h * 2);
    free(whole);
    free(parts);
    ryr_scene_fini(&s);
}

/* Field by field: the struct has padding. */
static int same_view(const ryr_view_t *a, const ryr_view_t *b)
{
    if (a->pos.x != b->pos.x || a->pos.y != b->pos.y || a->pos.z != b->pos.z)
        return 0;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            if (a->m[r][c] != b->m[r][c])
                return 0;
    return 1;
}

/* --orbit: frame f turns the camera by f * D degrees about the vertical through the
 * target, counter-clockwise seen from above; whole turns give the file's camera exactly. */
static void test_orbit(void)
{
    const char *text = "l 0 5 0\nc 0.1 2 -10.3  45  0.3 0 0\n";
    ryr_scene_t s;
    UTC_ASSERT_OK(ryr_scene_parse(text, strlen(text), "t", &s, NULL));
    ryr_view_t base, v;
    ryr_view_init(&base, s.cam_pos, s.cam_target);
    ryr_view_for_frame(&v, &s, 0, 37.0);
    CU_ASSERT(same_view(&v, &base));
    ryr_view_for_frame(&v, &s, 12, 30.0);
    CU_ASSERT(same_view(&v, &base));
    ryr_view_for_frame(&v, &s, 5, 0.0);
    CU_ASSERT(same_view(&v, &base));
    ryr_scene_fini(&s);

    text = "l 0 5 0\nc 0 2 -10  45  0 0 0\n";
    UTC_ASSERT_OK(ryr_scene_parse(text, strlen(text), "t", &s, NULL));
    /* a quarter turn: (0, -10) in (x, z) goes to (-10, 0) */
    ryr_view_for_frame(&v, &s, 1, 90.0);
    CU_ASSERT_EQUAL(v.pos.x, -10.0);
    CU_ASSERT_EQUAL(v.pos.y, 2.0);
    CU_ASSERT_EQUAL(v.pos.z, 0.0);
    ryr_view_for_frame(&v, &s, 2, 45.0);
    CU_ASSERT_EQUAL(v.pos.x, -10.0);
    ryr_view_for_frame(&v, &s, 3, -60.0); /* -180 */
    CU_ASSERT_EQUAL(v.pos.x, 0.0);
    CU_ASSERT_EQUAL(v.pos.z, 10.0);
    ryr_view_for_frame(&v, &s, 1, 30.0);
    CU_ASSERT_DOUBLE_EQUAL(v.pos.x, -5.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(v.pos.z, -10.0 * cos(M_PI / 6), 1e-12);
    ryr_scene_fini(&s);
}

/* The GPU renderer's trace (ryr__trace_levels, a loop) gives the recursive trace's colour
 * to the last bit, for every pixel of the default scene's frames, reflections included. */
static void test_trace_levels(void)
{
    ryr_scene_t s;
    UTC_ASSERT_OK(ryr_scene_load_default(&s, NULL));
    ryr_trace_scene_t ts = {.spheres = s.spheres, .nspheres = s.nspheres, .nlights = s.nlights};
    for (int i = 0; i < s.nlights; i++)
        ts.lights[i] = s.lights[i];
    const int w = 64, h = 48;
    long differ = 0;
    for (int f = 0; f < 3; f++) {
        ryr_view_t v;
        ryr_view_for_frame(&v, &s, f, 40.0);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                ryr_ray_t ray = ryr__primary_ray(&v, w, h, x, y);
                ryr_vec3_t a = ryr_trace(&s, ray, 0), b = ryr__trace_levels(&ts, ray);
                differ += memcmp(&a, &b, sizeof a) != 0;
            }
    }
    CU_ASSERT_EQUAL(differ, 0);
    ryr_scene_fini(&s);
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"primary ray and camera matrix", test_primary_ray},
        {"diffuse shading", test_diffuse},
        {"specular shading", test_specular},
        {"shadows", test_shadow},
        {"reflection", test_reflection},
        {"recursion limit", test_recursion_limit},
        {"reverse order, strictly nearer", test_tie_rule},
        {"camera position added to directions", test_position_quirk},
        {"channel to byte", test_channel_byte},
        {"row ranges", test_row_ranges},
        {"orbit", test_orbit},
        {"the GPU renderer's loop equals the recursion", test_trace_levels},
        UTC_TEST_END,
    };
    return utc_test_main(argc, argv, "ryr_render", cases);
}
