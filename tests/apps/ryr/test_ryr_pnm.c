/* RYR files: PGM/PPM writer and strict reader, output names and folders, --verify's
 * comparison. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"
#include "pnm.h"
#include "report.h"
#include "utc_test.h"
#include "verify.h"

static char tmpdir[1024];

static void path_in(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", tmpdir, name);
}

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fwrite(data, 1, n, f);
    fclose(f);
}

static void test_round_trip(void)
{
    const int w = 96, h = 64;
    uint8_t *img = malloc(w * h * 3);
    for (int i = 0; i < w * h * 3; i++)
        img[i] = (uint8_t)(i * 31 + 7);
    for (int ch = 1; ch <= 3; ch += 2) {
        char path[1100];
        path_in(path, sizeof path, ch == 1 ? "a.pgm" : "a.ppm");
        ryr_err_t err;
        UTC_ASSERT_OK(ryr_pnm_write(path, ch, w, h, img, &err));
        /* exact layout: header, then the pixels */
        FILE *f = fopen(path, "rb");
        char head[32] = {0};
        CU_ASSERT_EQUAL(fread(head, 1, 13, f), 13);
        CU_ASSERT_STRING_EQUAL(head, ch == 1 ? "P5\n96 64\n255\n" : "P6\n96 64\n255\n");
        fclose(f);
        struct stat st;
        CU_ASSERT_EQUAL(stat(path, &st), 0);
        CU_ASSERT_EQUAL(st.st_size, 13 + w * h * ch);
        int rc, rw, rh;
        uint8_t *back = NULL;
        UTC_ASSERT_OK(ryr_pnm_read(path, &rc, &rw, &rh, &back, &err));
        CU_ASSERT_EQUAL(rc, ch);
        CU_ASSERT_EQUAL(rw, w);
        CU_ASSERT_EQUAL(rh, h);
        CU_ASSERT_EQUAL(memcmp(back, img, w * h * ch), 0);
        free(back);
        remove(path);
    }
    free(img);
}

static void test_write_errors(void)
{
    uint8_t px[4] = {1, 2, 3, 4};
    ryr_err_t err;
    /* a full disk is only seen when the data is flushed */
    CU_ASSERT_EQUAL(ryr_pnm_write("/dev/full", 1, 2, 2, px, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/dev/full"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "No space left"));
    CU_ASSERT_EQUAL(ryr_pnm_write("/nonexistent-dir/a.pgm", 1, 2, 2, px, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/nonexistent-dir/a.pgm"));
    CU_ASSERT_EQUAL(ryr_pnm_write("x.pgm", 2, 2, 2, px, &err), -1);
    CU_ASSERT_EQUAL(ryr_pnm_write("x.pgm", 1, 0, 2, px, &err), -1);
    CU_ASSERT_EQUAL(ryr_output_write_plane("/dev/full/..", 0, RYR_PLANE_Y, px, 2, 2, &err), -1);
}

static void expect_reject(const char *name, const void *data, size_t n, const char *what)
{
    char path[1100];
    path_in(path, sizeof path, name);
    write_bytes(path, data, n);
    int ch = -1, w = -1, h = -1;
    uint8_t *px = NULL;
    ryr_err_t err;
    CU_ASSERT_EQUAL(ryr_pnm_read(path, &ch, &w, &h, &px, &err), -1);
    CU_ASSERT_PTR_NULL(px);
    CU_ASSERT_EQUAL(w, -1);
    if (!strstr(err.msg, what))
        fprintf(stderr, "%s: '%s' lacks '%s'\n", name, err.msg, what);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, what));
    remove(path);
}

static void test_strict_reader(void)
{
    expect_reject("r1", "P2\n2 2\n255\n1 2 3 4", 19, "not a binary PGM");
    expect_reject("r2", "P5\n2 2\n65535\nabcdefgh", 22, "maxval");
    expect_reject("r3", "P5\n2 2\n255\nabc", 14, "bytes of pixels");
    expect_reject("r4", "P5\n2 2\n255\nabcde", 16, "bytes of pixels");
    expect_reject("r5", "P5\n2 0\n255\n", 11, "malformed header");
    expect_reject("r6", "P5\n-2 2\n255\nabcd", 16, "malformed header");
    expect_reject("r7", "P52 2\n255\nabcd", 14, "malformed header");
    expect_reject("r8", "P6\n2 2\n255\nabcd", 15, "bytes of pixels");
    expect_reject("r9", "", 0, "not a binary");
    /* comments in the header are allowed */
    char path[1100];
    path_in(path, sizeof path, "ok.pgm");
    static const char commented[] = "P5\n# made by hand\n2 # w\n2\n255\nabcd";
    write_bytes(path, commented, sizeof commented - 1);
    int ch, w, h;
    uint8_t *px = NULL;
    ryr_err_t err;
    UTC_ASSERT_OK(ryr_pnm_read(path, &ch, &w, &h, &px, &err));
    CU_ASSERT(ch == 1 && w == 2 && h == 2 && memcmp(px, "abcd", 4) == 0);
    free(px);
    remove(path);
    CU_ASSERT_EQUAL(ryr_pnm_read("/nonexistent.pgm", &ch, &w, &h, &px, &err), -1);
}

static void test_output_files(void)
{
    char buf[256];
    UTC_ASSERT_OK(ryr_output_path(buf, sizeof buf, "out", 7, RYR_PLANE_Y));
    CU_ASSERT_STRING_EQUAL(buf, "out/frame_00007_y.pgm");
    UTC_ASSERT_OK(ryr_output_path(buf, sizeof buf, "o/p", 12345, RYR_PLANE_V));
    CU_ASSERT_STRING_EQUAL(buf, "o/p/frame_12345_v.pgm");
    UTC_ASSERT_OK(ryr_output_path(buf, sizeof buf, "d", 0, RYR_PLANE_RGB));
    CU_ASSERT_STRING_EQUAL(buf, "d/frame_00000.ppm");
    CU_ASSERT_EQUAL(ryr_output_path(buf, 8, "d", 0, RYR_PLANE_U), -1);

    /* prepare creates nested folders, and refuses files and unwritable places */
    char dir[1100], file[1200];
    path_in(dir, sizeof dir, "nested/out/dir");
    ryr_err_t err;
    UTC_ASSERT_OK(ryr_output_prepare(dir, &err));
    struct stat st;
    CU_ASSERT(stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
    UTC_ASSERT_OK(ryr_output_prepare(dir, &err)); /* exists: fine */
    uint8_t px[6] = {1, 2, 3, 4, 5, 6};
    UTC_ASSERT_OK(ryr_output_write_plane(dir, 3, RYR_PLANE_U, px, 3, 2, &err));
    snprintf(file, sizeof file, "%s/frame_00003_u.pgm", dir);
    CU_ASSERT_EQUAL(stat(file, &st), 0);
    CU_ASSERT_EQUAL(st.st_size, 11 + 6); /* "P5\n3 2\n255\n" */
    UTC_ASSERT_OK(ryr_output_write_rgb(dir, 3, px, 2, 1, &err));
    snprintf(file, sizeof file, "%s/frame_00003.ppm", dir);
    CU_ASSERT_EQUAL(stat(file, &st), 0);
    CU_ASSERT_EQUAL(ryr_output_prepare(file, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a folder"));
    CU_ASSERT_EQUAL(ryr_output_prepare("/proc/ryr-out", &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--out '/proc/ryr-out'"));
}

static void test_verify(void)
{
    uint8_t a[12] = {0}, b[12] = {0};
    ryr_err_t err;
    CU_ASSERT_EQUAL(ryr_first_diff(a, b, 12), -1);
    UTC_ASSERT_OK(ryr_verify_plane(0, RYR_PLANE_Y, a, b, 4, 3, 1, &err));
    b[9] = 5; /* pixel (1, 2) of a 4 x 3 plane */
    CU_ASSERT_EQUAL(ryr_first_diff(a, b, 12), 9);
    CU_ASSERT_EQUAL(ryr_verify_plane(4, RYR_PLANE_V, a, b, 4, 3, 1, &err), -1);
    CU_ASSERT_STRING_EQUAL(err.msg, "frame 4, plane v: first difference at pixel (1, 2): "
                                    "expected 0, got 5");
    CU_ASSERT_EQUAL(ryr_verify_plane(2, RYR_PLANE_RGB, a, b, 2, 2, 3, &err), -1);
    CU_ASSERT_STRING_EQUAL(err.msg, "frame 2, plane rgb: first difference at pixel (1, 1), "
                                    "channel r: expected 0, got 5");
}

/* /dev/zero has no magic number: refused after the first block, not read forever. */
static void test_endless_input(void)
{
    ryr_err_t err;
    int ch = -1, w = -1, h = -1;
    uint8_t *data = NULL;
    double t0 = ryr_now();
    CU_ASSERT_EQUAL(ryr_pnm_read("/dev/zero", &ch, &w, &h, &data, &err), -1);
    CU_ASSERT(ryr_now() - t0 < 5.0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a binary PGM"));
    CU_ASSERT_PTR_NULL(data);
    CU_ASSERT_EQUAL(w, -1);
}

int main(int argc, char **argv)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/pnm_%d", RYR_TEST_BIN_DIR, (int)getpid());
    mkdir(tmpdir, 0777);
    static const utc_test_case_t cases[] = {
        {"endless input is refused, not read to the end", test_endless_input},
        {"write and read back", test_round_trip},
        {"write errors", test_write_errors},
        {"strict reader", test_strict_reader},
        {"output names and folders", test_output_files},
        {"verify comparison", test_verify},
        UTC_TEST_END,
    };
    int rc = utc_test_main(argc, argv, "ryr_pnm", cases);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return rc;
}
