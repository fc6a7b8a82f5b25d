/* The files RYR is writing (files.h): what an interrupted run removes (the files still
 * being written), what it keeps (files finished, renamed, or not regular files). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "files.h"
#include "utc_test.h"

static char tmpdir[1024];

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void name(char *buf, size_t len, const char *file)
{
    snprintf(buf, len, "%s/%s", tmpdir, file);
}

static void test_abandon(void)
{
    char done[1100], moved[1100], moved_to[1100], open1[1100], open2[1100];
    name(done, sizeof done, "done.pgm");
    name(moved, sizeof moved, ".v.part");
    name(moved_to, sizeof moved_to, "v.y4m");
    name(open1, sizeof open1, "half.pgm");
    name(open2, sizeof open2, ".w.part");
    int s_done, s_moved, s_open1, s_open2, s_dev;
    FILE *f = ryr_files_open(done, &s_done);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT(s_done >= 0);
    fclose(f);
    ryr_files_release(s_done, 0); /* finished: kept */
    f = ryr_files_open(moved, &s_moved);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fclose(f);
    CU_ASSERT_EQUAL(ryr_files_rename(s_moved, moved, moved_to), 0); /* renamed: kept */
    FILE *h1 = ryr_files_open(open1, &s_open1), *h2 = ryr_files_open(open2, &s_open2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h2);
    fputs("P5\n", h1);
    fflush(h1);
    /* a device is written but never remembered, so never removed */
    FILE *dev = ryr_files_open("/dev/null", &s_dev);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
    CU_ASSERT_EQUAL(s_dev, -1);
    fclose(dev);

    /* the interrupted process: it abandons and exits (the table stays locked) */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        _exit(ryr_files_abandon());
    int status = 0;
    CU_ASSERT_EQUAL_FATAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT(WIFEXITED(status));
    CU_ASSERT_EQUAL(WEXITSTATUS(status), 2); /* the two files still open */
    CU_ASSERT(!exists(open1));
    CU_ASSERT(!exists(open2));
    CU_ASSERT(exists(done));
    CU_ASSERT(exists(moved_to));
    CU_ASSERT(!exists(moved));
    CU_ASSERT(exists("/dev/null"));

    /* this process goes on: let go of them (already removed by the child) */
    fclose(h1);
    fclose(h2);
    ryr_files_release(s_open1, 1);
    ryr_files_release(s_open2, 1);
    unlink(done);
    unlink(moved_to);
}

static void test_limits(void)
{
    FILE *f[RYR_FILES_MAX];
    int slot[RYR_FILES_MAX];
    char path[1100];
    for (int i = 0; i < RYR_FILES_MAX; i++) {
        snprintf(path, sizeof path, "%s/f%d", tmpdir, i);
        f[i] = ryr_files_open(path, &slot[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f[i]);
        CU_ASSERT(slot[i] >= 0);
    }
    int extra;
    snprintf(path, sizeof path, "%s/one-too-many", tmpdir);
    errno = 0;
    CU_ASSERT_PTR_NULL(ryr_files_open(path, &extra));
    CU_ASSERT_EQUAL(errno, EMFILE);
    CU_ASSERT_EQUAL(extra, -1);
    CU_ASSERT(!exists(path)); /* refused before it was created */
    for (int i = 0; i < RYR_FILES_MAX; i++) {
        fclose(f[i]);
        ryr_files_release(slot[i], 1); /* removed */
        snprintf(path, sizeof path, "%s/f%d", tmpdir, i);
        CU_ASSERT(!exists(path));
    }
    /* a folder that does not exist: NULL with the system's reason, nothing remembered */
    snprintf(path, sizeof path, "%s/none/x.pgm", tmpdir);
    errno = 0;
    CU_ASSERT_PTR_NULL(ryr_files_open(path, &extra));
    CU_ASSERT_EQUAL(errno, ENOENT);
    CU_ASSERT_EQUAL(extra, -1);
    /* a failed rename forgets the file and leaves it */
    snprintf(path, sizeof path, "%s/r", tmpdir);
    FILE *r = ryr_files_open(path, &extra);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    fclose(r);
    char to[1200];
    snprintf(to, sizeof to, "%s/none/r", tmpdir);
    CU_ASSERT_EQUAL(ryr_files_rename(extra, path, to), -1);
    CU_ASSERT_EQUAL(errno, ENOENT);
    CU_ASSERT(exists(path));
    unlink(path);
}

int main(int argc, char **argv)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/files-XXXXXX", RYR_TEST_BIN_DIR);
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    static const utc_test_case_t cases[] = {
        {"abandon removes the files being written, and only those", test_abandon},
        {"table limit, failed opens and renames", test_limits},
        UTC_TEST_END};
    int rc = utc_test_main(argc, argv, "ryr file table", cases);
    rmdir(tmpdir);
    return rc;
}
