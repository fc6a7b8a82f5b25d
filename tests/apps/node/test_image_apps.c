/* rotate, yuv and raytrace: every CPU version gives seq's bytes, including at tiny and
 * odd sizes with more threads than rows, and at the exact quarter turns. */
#include <stdlib.h>
#include <string.h>

#include "rotate_impl.h"
#include "rt_impl.h"
#include "utc_test.h"
#include "yuv_impl.h"

static const int threads[] = {1, 2, 3, 9};

static void rotate_case(long long w, long long h, double angle)
{
    rotate_job_t job;
    char err[256];
    CU_ASSERT_EQUAL_FATAL(rotate_job_make(&job, NULL, w, h, 5, angle, err, sizeof err), 0);
    size_t n = (size_t)job.rot.ow * (size_t)job.rot.oh;
    uint8_t *want[3];
    app_opts_t o = {.threads = 1, .reps = 1};
    double secs;
    CU_ASSERT_EQUAL(rotate_run_seq(&job, &o, &secs), APP_EXIT_OK);
    for (int p = 0; p < job.planes; p++) {
        want[p] = malloc(n);
        memcpy(want[p], job.dst[p], n);
    }
    for (size_t k = 0; k < sizeof threads / sizeof *threads; k++) {
        o.threads = threads[k];
        for (int impl = 0; impl < 2; impl++) {
            for (int p = 0; p < job.planes; p++)
                memset(job.dst[p], 0xa5, n);
            int rc = impl ? rotate_run_utc(&job, &o, &secs) : rotate_run_omp(&job, &o, &secs);
            CU_ASSERT_EQUAL(rc, APP_EXIT_OK);
            for (int p = 0; p < job.planes; p++)
                CU_ASSERT_EQUAL(memcmp(job.dst[p], want[p], n), 0);
        }
    }
    for (int p = 0; p < job.planes; p++)
        free(want[p]);
    rotate_job_fini(&job);
}

static void test_rotate(void)
{
    rotate_case(37, 5, 30.0);
    rotate_case(1, 1, 45.0);
    rotate_case(6, 4, 90.0);
    rotate_case(7, 3, 180.0);
    rotate_case(5, 8, -90.0);
    rotate_case(64, 48, 200.5);
}

static void yuv_case(long long w, long long h)
{
    yuv_job_t job;
    char err[256];
    CU_ASSERT_EQUAL_FATAL(yuv_job_make(&job, NULL, w, h, 11, err, sizeof err), 0);
    size_t n = 3 * yuv_job_pixels(&job);
    uint8_t *want = malloc(n);
    app_opts_t o = {.threads = 1, .reps = 1};
    double secs;
    CU_ASSERT_EQUAL(yuv_run_seq(&job, &o, &secs), APP_EXIT_OK);
    memcpy(want, job.y, n);
    /* a spot check of the formula itself: pixel 0 */
    uint8_t y, u, v;
    ryr_yuv_pixel(job.rgb[0], job.rgb[1], job.rgb[2], &y, &u, &v);
    CU_ASSERT(want[0] == y && want[n / 3] == u && want[2 * n / 3] == v);
    for (size_t k = 0; k < sizeof threads / sizeof *threads; k++) {
        o.threads = threads[k];
        memset(job.y, 0, n);
        CU_ASSERT_EQUAL(yuv_run_omp(&job, &o, &secs), APP_EXIT_OK);
        CU_ASSERT_EQUAL(memcmp(job.y, want, n), 0);
        memset(job.y, 0, n);
        CU_ASSERT_EQUAL(yuv_run_utc(&job, &o, &secs), APP_EXIT_OK);
        CU_ASSERT_EQUAL(memcmp(job.y, want, n), 0);
    }
    free(want);
    yuv_job_fini(&job);
}

static void test_yuv(void)
{
    yuv_case(1, 1);
    yuv_case(13, 7);
    yuv_case(320, 200);
}

static void rt_case(long long w, long long h, int reps)
{
    rt_job_t job;
    char err[256];
    CU_ASSERT_EQUAL_FATAL(rt_job_make(&job, NULL, w, h, 2, err, sizeof err), 0);
    size_t n = (size_t)w * (size_t)h * 3;
    uint8_t *want = malloc(n);
    app_opts_t o = {.threads = 1, .reps = reps};
    double secs;
    CU_ASSERT_EQUAL(rt_run_seq(&job, &o, &secs), APP_EXIT_OK);
    memcpy(want, job.rgb, n);
    size_t lit = 0;
    for (size_t i = 0; i < n; i++)
        lit += want[i] != 0;
    CU_ASSERT(lit > n / 4); /* the generated scene fills the frame */
    for (size_t k = 0; k < sizeof threads / sizeof *threads; k++) {
        o.threads = threads[k];
        memset(job.rgb, 0, n);
        CU_ASSERT_EQUAL(rt_run_omp(&job, &o, &secs), APP_EXIT_OK);
        CU_ASSERT_EQUAL(memcmp(job.rgb, want, n), 0);
        /* reps > 1: the row counter must be reset between runs */
        memset(job.rgb, 0, n);
        CU_ASSERT_EQUAL(rt_run_utc(&job, &o, &secs), APP_EXIT_OK);
        CU_ASSERT_EQUAL(memcmp(job.rgb, want, n), 0);
    }
    free(want);
    rt_job_fini(&job);
}

static void test_raytrace(void)
{
    rt_case(3, 2, 3);
    rt_case(40, 30, 2);
}

static void test_scene_text_is_a_scene(void)
{
    char text[4096];
    int len = rt_scene_text(123, text, sizeof text);
    CU_ASSERT_FATAL(len > 0);
    ryr_scene_t s;
    ryr_err_t err;
    CU_ASSERT_EQUAL_FATAL(ryr_scene_parse(text, (size_t)len, "gen", &s, &err), 0);
    CU_ASSERT_EQUAL(s.nspheres, RT_GEN_SPHERES + 1);
    CU_ASSERT_EQUAL(s.nlights, 3);
    ryr_scene_fini(&s);
    char other[4096];
    CU_ASSERT(rt_scene_text(124, other, sizeof other) > 0);
    CU_ASSERT_NOT_EQUAL(strcmp(text, other), 0); /* the seed matters */
    CU_ASSERT_EQUAL(rt_scene_text(123, other, 64), -1); /* too small a buffer: refused */
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"rotate: omp and utc equal seq (odd sizes, quarter turns)", test_rotate},
        {"yuv: omp and utc equal seq", test_yuv},
        {"raytrace: omp and utc equal seq, repeated runs", test_raytrace},
        {"raytrace: generated scene text", test_scene_text_is_a_scene},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "image apps", cases);
}
