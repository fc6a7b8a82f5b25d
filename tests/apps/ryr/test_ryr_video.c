/* RYR video output: the YUV4MPEG2 bytes, planes put out of order, the temporary file and
 * what is left (nothing) when a run fails. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "utc_test.h"
#include "video.h"

static char tmpdir[1024];

/* Files in tmpdir, hidden ones included. */
static int count_files(void)
{
    DIR *d = opendir(tmpdir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d)
        closedir(d);
    return n;
}

static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    uint8_t *buf = malloc(*len + 1);
    if (fread(buf, 1, *len, f) != *len) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

/* plane p of frame f: bytes that differ in every frame and plane */
static void fill(uint8_t *buf, int n, int f, int p)
{
    for (int i = 0; i < n; i++)
        buf[i] = (uint8_t)(i * 7 + f * 31 + p * 101);
}

static void test_stream_bytes(void)
{
    enum { W = 5, H = 3, N = W * H, FRAMES = 3 };
    char path[1100];
    snprintf(path, sizeof path, "%s/a.y4m", tmpdir);
    ryr_video_t *v = NULL;
    ryr_err_t err;
    UTC_ASSERT_OK(ryr_video_open(path, W, H, FRAMES, 30000, 1001, &v, &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    /* written under a temporary name until it is complete */
    CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
    CU_ASSERT_EQUAL(count_files(), 1);
    /* out of order: frame 2, then 0 and 1 plane by plane, V before Y before U */
    static const int order[][2] = {{2, 0}, {2, 1}, {2, 2}, {1, 2}, {0, 2}, {0, 0},
                                   {1, 0}, {1, 1}, {0, 1}};
    uint8_t plane[N];
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        fill(plane, N, order[k][0], order[k][1]);
        UTC_ASSERT_OK(ryr_video_put(v, order[k][0], order[k][1], plane, &err));
        /* frame 0 is complete after the 8th put, frames 1 and 2 after the 9th */
        CU_ASSERT_EQUAL(ryr_video_frames_written(v), k < 8 ? 0 : 3);
    }
    UTC_ASSERT_OK(ryr_video_close(v, 1, &err));
    CU_ASSERT_EQUAL(count_files(), 1); /* the temporary file was renamed */

    const char *head = "YUV4MPEG2 W5 H3 F30000:1001 Ip A1:1 C444\n";
    size_t hl = strlen(head), len = 0;
    uint8_t *got = read_all(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_EQUAL_FATAL(len, hl + FRAMES * (6 + 3 * N));
    CU_ASSERT_EQUAL(memcmp(got, head, hl), 0);
    for (int f = 0; f < FRAMES; f++) {
        const uint8_t *fr = got + hl + (size_t)f * (6 + 3 * N);
        CU_ASSERT_EQUAL(memcmp(fr, "FRAME\n", 6), 0);
        for (int p = 0; p < 3; p++) {
            fill(plane, N, f, p);
            CU_ASSERT_EQUAL(memcmp(fr + 6 + p * N, plane, N), 0);
        }
    }
    free(got);
    remove(path);
}

static void test_failed_run_leaves_nothing(void)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/b.y4m", tmpdir);
    uint8_t plane[4] = {1, 2, 3, 4};
    ryr_video_t *v = NULL;
    ryr_err_t err;
    /* the run failed: the caller does not keep the video */
    UTC_ASSERT_OK(ryr_video_open(path, 2, 2, 2, 24, 1, &v, &err));
    for (int p = 0; p < 3; p++)
        UTC_ASSERT_OK(ryr_video_put(v, 0, p, plane, &err));
    UTC_ASSERT_OK(ryr_video_close(v, 0, &err));
    CU_ASSERT_EQUAL(count_files(), 0);
    /* frames missing: refused, and nothing left either */
    UTC_ASSERT_OK(ryr_video_open(path, 2, 2, 2, 24, 1, &v, &err));
    for (int p = 0; p < 3; p++)
        UTC_ASSERT_OK(ryr_video_put(v, 0, p, plane, &err));
    UTC_ASSERT_OK(ryr_video_put(v, 1, 0, plane, &err));
    CU_ASSERT_EQUAL(ryr_video_close(v, 1, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "only 1 of 2 frames"));
    CU_ASSERT_EQUAL(count_files(), 0);
    /* a plane given twice, or one that does not exist */
    UTC_ASSERT_OK(ryr_video_open(path, 2, 2, 2, 24, 1, &v, &err));
    UTC_ASSERT_OK(ryr_video_put(v, 1, 2, plane, &err));
    CU_ASSERT_EQUAL(ryr_video_put(v, 1, 2, plane, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "given twice"));
    CU_ASSERT_EQUAL(ryr_video_put(v, 2, 0, plane, &err), -1);
    CU_ASSERT_EQUAL(ryr_video_put(v, 0, 3, plane, &err), -1);
    (void)ryr_video_close(v, 0, &err);
    CU_ASSERT_EQUAL(count_files(), 0);
}

static void test_bad_paths(void)
{
    ryr_video_t *v = NULL;
    ryr_err_t err;
    CU_ASSERT_EQUAL(ryr_video_open(tmpdir, 2, 2, 1, 24, 1, &v, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "is a folder"));
    char path[1100];
    snprintf(path, sizeof path, "%s/missing/a.y4m", tmpdir);
    CU_ASSERT_EQUAL(ryr_video_open(path, 2, 2, 1, 24, 1, &v, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot write: No such file or directory"));
    CU_ASSERT_EQUAL(ryr_video_open("x.y4m", 2, 2, 1, 0, 1, &v, &err), -1);
    CU_ASSERT_PTR_NULL(v);
    CU_ASSERT_EQUAL(count_files(), 0);
}

/* A device is written in place: a full disk is reported once, and the device stays. */
static void test_full_device(void)
{
    enum { W = 256, H = 256 }; /* a plane larger than stdio's buffer */
    ryr_video_t *v = NULL;
    ryr_err_t err;
    if (access("/dev/full", W_OK) != 0) {
        printf("(no /dev/full: skipped) ");
        return;
    }
    UTC_ASSERT_OK(ryr_video_open("/dev/full", W, H, 3, 24, 1, &v, &err));
    uint8_t *plane = calloc(W * H, 1);
    int fails = 0;
    for (int f = 0; f < 3; f++)
        for (int p = 0; p < 3; p++)
            if (ryr_video_put(v, f, p, plane, &err)) {
                fails++;
                CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "No space left on device"));
            }
    CU_ASSERT_EQUAL(fails, 1);
    CU_ASSERT_EQUAL(ryr_video_close(v, 1, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "write failed"));
    struct stat st;
    CU_ASSERT_EQUAL(stat("/dev/full", &st), 0);
    CU_ASSERT_TRUE(S_ISCHR(st.st_mode));
    free(plane);
}

int main(int argc, char **argv)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/video-XXXXXX", RYR_TEST_BIN_DIR);
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    static const utc_test_case_t cases[] = {
        {"stream bytes, planes out of order", test_stream_bytes},
        {"a failed run leaves nothing", test_failed_run_leaves_nothing},
        {"bad paths", test_bad_paths},
        {"a full device", test_full_device},
        UTC_TEST_END,
    };
    int rc = utc_test_main(argc, argv, "ryr_video", cases);
    rmdir(tmpdir);
    return rc;
}
