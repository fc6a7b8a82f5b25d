/* RYR scene reader: valid scenes, the built-in scene, and each malformed input
 * rejected with "name:line: problem". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "render.h"
#include "scene.h"
#include "utc_test.h"

static int parse(const char *text, ryr_scene_t *s, ryr_err_t *err)
{
    return ryr_scene_parse(text, strlen(text), "t.scene", s, err);
}

/* The text must fail with a message that starts with prefix and contains what. */
static void expect_error(const char *text, const char *prefix, const char *what)
{
    ryr_scene_t s;
    ryr_err_t err;
    err.msg[0] = '\0';
    int rc = parse(text, &s, &err);
    CU_ASSERT_EQUAL(rc, -1);
    if (rc == 0) {
        fprintf(stderr, "accepted: %s\n", text);
        ryr_scene_fini(&s);
        return;
    }
    if (strncmp(err.msg, prefix, strlen(prefix)) != 0 || !strstr(err.msg, what))
        fprintf(stderr, "message '%s' lacks '%s' ... '%s'\n", err.msg, prefix, what);
    CU_ASSERT_EQUAL(strncmp(err.msg, prefix, strlen(prefix)), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, what));
}


static void test_valid(void)
{
    const char *text = "# comment\n"
                       "\n"
                       "   \t  \n"
                       "  # indented comment\n"
                       "s 1 2 3  0.5  0.1 0.2 0.3  40 0.25\n"
                       "\ts\t-1\t-2\t-3\t2\t1\t1\t1\t0\t0\r\n"
                       "sphere 0 0 9 1 0 0 0 0 0\n"
                       "l 10 20 -30\n"
                       "c 0 1 -10  45  0 0 0\n"
                       "l 1e1 0x10 -.5";
    ryr_scene_t s;
    ryr_err_t err;
    UTC_ASSERT_OK(parse(text, &s, &err));
    CU_ASSERT_EQUAL(s.nspheres, 3);
    CU_ASSERT_EQUAL(s.nlights, 2);
    CU_ASSERT_DOUBLE_EQUAL(s.spheres[0].pos.z, 3.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(s.spheres[0].rad, 0.5, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(s.spheres[0].col.y, 0.2, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(s.spheres[0].spow, 40.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(s.spheres[0].refl, 0.25, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(s.spheres[1].pos.x, -1.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(s.spheres[2].pos.z, 9.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(s.lights[0].z, -30.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(s.lights[1].x, 10.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(s.lights[1].y, 16.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(s.lights[1].z, -0.5, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(s.cam_pos.y, 1.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(s.cam_pos.z, -10.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(s.cam_fov, 45.0, 0.0);
    CU_ASSERT_STRING_EQUAL(s.warning, "");
    ryr_scene_fini(&s);
    CU_ASSERT_PTR_NULL(s.spheres);
    ryr_scene_fini(&s); /* twice is harmless */
}

static void test_default_and_files(void)
{
    ryr_scene_t s;
    ryr_err_t err;
    UTC_ASSERT_OK(ryr_scene_load_default(&s, &err));
    CU_ASSERT(s.nspheres >= 10);
    CU_ASSERT(s.nlights >= 1 && s.nlights <= RYR_MAX_LIGHTS);
    CU_ASSERT_STRING_EQUAL(s.warning, "");
    ryr_scene_fini(&s);

    const char *files[] = {"simple.scene", "mirrors.scene", "sphereflake.scene"};
    for (int i = 0; i < 3; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", RYR_SCENES_DIR, files[i]);
        int rc = ryr_scene_load(path, &s, &err);
        if (rc)
            fprintf(stderr, "%s\n", err.msg);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        CU_ASSERT(s.nspheres > 0 && s.nlights > 0);
        CU_ASSERT_STRING_EQUAL(s.warning, "");
        ryr_scene_fini(&s);
    }
    CU_ASSERT_EQUAL(ryr_scene_load("/nonexistent/x.scene", &s, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/nonexistent/x.scene"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "No such file"));
    CU_ASSERT_EQUAL(ryr_scene_load("/", &s, &err), -1); /* a folder */
}

static void test_malformed_fields(void)
{
    expect_error("c 0 0 -5 45 0 0 0\nx 1 2 3\n", "t.scene:2:", "unknown kind 'x'");
    expect_error("# ok\n5 1 2 3\nc 0 0 -5 45 0 0 0\n", "t.scene:2:", "unknown kind");
    expect_error("s 0 0 0 1 1 1 1 10\nc 0 0 -5 45 0 0 0\n", "t.scene:1:", "missing fields");
    expect_error("c 0 0 -5 45 0 0 0\ns 0 0 0 1 1 1 1 10 0 7\n", "t.scene:2:", "extra fields");
    expect_error("c 0 0 -5 45 0 0 0\nl 1 2\n", "t.scene:2:", "missing fields");
    expect_error("c 0 0 -5 45 0 0 0\nl 1 2 3 4\n", "t.scene:2:", "extra fields");
    expect_error("c 0 0 -5 45 0 0\n", "t.scene:1:", "missing fields");
    expect_error("c 0 0 -5 45 0 0 0 0\n", "t.scene:1:", "extra fields");
    expect_error("c 0 0 -5 45 0 0 0\ns\n", "t.scene:2:", "missing fields");
    expect_error("c 0 0 -5 45 0 0 0\n\ns 0 0 0 abc 1 1 1 10 0\n", "t.scene:3:",
                 "'abc' is not a number");
    expect_error("c 0 0 -5 45 0 0 0\ns 0 0 0 1 1 1 1 10 0.5x\n", "t.scene:2:",
                 "not a number");
    expect_error("c 0 0 -5 45 0 0 0\ns 0 nan 0 1 1 1 1 10 0\n", "t.scene:2:",
                 "not a finite number");
    expect_error("c 0 0 -5 45 0 0 0\nl inf 0 0\n", "t.scene:2:", "not a finite number");
    expect_error("c 0 0 -5 45 0 0 0\nl 1e999 0 0\n", "t.scene:2:", "not a finite number");
    expect_error("c 0 0 -5 -infinity 0 0 0\n", "t.scene:1:", "not a finite number");
    expect_error("c 0 0 -5 45 0 0 0\ns 0 0 0 0 1 1 1 10 0\n", "t.scene:2:",
                 "radius must be > 0");
    expect_error("c 0 0 -5 45 0 0 0\ns 0 0 0 -2 1 1 1 10 0\n", "t.scene:2:",
                 "radius must be > 0");
    const char nul[] = "c 0 0 -5 45 0 0 0\nl 1 \0 2 3\n";
    ryr_scene_t s;
    ryr_err_t err;
    CU_ASSERT_EQUAL(ryr_scene_parse(nul, sizeof nul - 1, "t.scene", &s, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "t.scene:2:"));
}

static void test_lights_and_camera(void)
{
    char text[2048] = "c 0 0 -5 45 0 0 0\n";
    for (int i = 0; i < RYR_MAX_LIGHTS; i++)
        strcat(text, "l 1 2 3\n");
    ryr_scene_t s;
    ryr_err_t err;
    UTC_ASSERT_OK(parse(text, &s, &err)); /* 16 lights: fine */
    CU_ASSERT_EQUAL(s.nlights, RYR_MAX_LIGHTS);
    ryr_scene_fini(&s);
    strcat(text, "l 4 5 6\n");
    expect_error(text, "t.scene:18:", "more than 16 lights");

    expect_error("c 0 0 -5 45 0 0 0\ns 0 0 0 1 1 1 1 10 0\nc 0 1 -5 45 0 0 0\n", "t.scene:3:",
                 "more than one camera (the first is on line 1)");
    expect_error("s 0 0 0 1 1 1 1 10 0\nl 1 1 1\n", "t.scene:", "no camera");
    expect_error("", "t.scene:", "no camera");
    expect_error("l 0 0 0\nc 1 2 3 45 1 2 3\n", "t.scene:2:", "target equals its position");
    expect_error("c 0 0 0 45 0 5 0\n", "t.scene:1:", "vertical");
    expect_error("l 0 0 0\n\nc 2 5 3 45 2 -1 3\n", "t.scene:3:", "vertical");
}

/* The field of view is read (c-ray renders with its own) but must be an angle a camera can
 * have: between 0 and 180 degrees, both excluded. */
static void test_camera_fov(void)
{
    const char *bad[] = {"0", "-0", "-45", "180", "180.0001", "720", "1e300"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, "l 0 5 0\nc 0 0 -5 %s 0 0 0\n", bad[i]);
        expect_error(text, "t.scene:2:", "camera field of view");
        expect_error(text, "t.scene:2:", "is outside (0, 180) degrees");
    }
    const char *good[] = {"1e-9", "45", "90", "179.999"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, "c 0 0 -5 %s 0 0 0\n", good[i]);
        ryr_scene_t s;
        ryr_err_t err;
        UTC_ASSERT_OK(parse(text, &s, &err));
        CU_ASSERT_DOUBLE_EQUAL(s.cam_fov, strtod(good[i], NULL), 0.0);
        ryr_scene_fini(&s);
    }
}

static void test_no_spheres_black(void)
{
    ryr_scene_t s;
    ryr_err_t err;
    UTC_ASSERT_OK(parse("l 0 5 0\nc 0 0 -5 45 0 0 0\n", &s, &err));
    CU_ASSERT_EQUAL(s.nspheres, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(s.warning, "no spheres"));
    ryr_view_t v;
    ryr_view_for_frame(&v, &s, 0, 0.0);
    uint8_t rgb[12 * 8 * 3];
    memset(rgb, 0x55, sizeof rgb);
    ryr_render_rows(&s, &v, 12, 8, 0, 8, rgb);
    for (size_t i = 0; i < sizeof rgb; i++)
        CU_ASSERT_EQUAL_FATAL(rgb[i], 0);
    ryr_scene_fini(&s);

    UTC_ASSERT_OK(parse("s 0 0 0 1 1 1 1 1 0\nc 0 0 -5 45 0 0 0\n", &s, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(s.warning, "no lights"));
    ryr_scene_fini(&s);
}

static void test_file_line_numbers(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/bad_%d.scene", RYR_TEST_BIN_DIR, (int)getpid());
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("# a scene\nc 0 0 -5 45 0 0 0\nl 1 1 1\n\ns 0 0 0 1 1 1 1\n", f);
    fclose(f);
    ryr_scene_t s;
    ryr_err_t err;
    CU_ASSERT_EQUAL(ryr_scene_load(path, &s, &err), -1);
    char want[1100];
    snprintf(want, sizeof want, "%s:5: missing fields", path);
    CU_ASSERT_EQUAL(strncmp(err.msg, want, strlen(want)), 0);
    remove(path);
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"valid scene", test_valid},
        {"built-in scene and scene files", test_default_and_files},
        {"malformed fields", test_malformed_fields},
        {"lights and camera rules", test_lights_and_camera},
        {"camera field of view in (0, 180)", test_camera_fov},
        {"no spheres renders black with a warning", test_no_spheres_black},
        {"file:line in messages", test_file_line_numbers},
        UTC_TEST_END,
    };
    return utc_test_main(argc, argv, "ryr_scene", cases);
}
