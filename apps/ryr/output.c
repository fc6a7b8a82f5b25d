#include "output.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "pnm.h"

const char *ryr_plane_name(int plane)
{
    static const char *const names[] = {"y", "u", "v"};
    return plane >= 0 && plane < RYR_NPLANES ? names[plane] : "rgb";
}

/* mkdir -p: create every missing folder of the path. */
static int make_dirs(const char *dir, ryr_err_t *err)
{
    char path[4096];
    size_t n = strlen(dir);
    if (n >= sizeof path)
        return ryr_err_set(err, "--out '%s': the path is too long", dir);
    memcpy(path, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        char c = path[i];
        path[i] = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return ryr_err_set(err, "--out '%s': cannot create folder '%s': %s", dir, path,
                               strerror(errno));
        path[i] = c;
    }
    return 0;
}

int ryr_output_prepare(const char *dir, ryr_err_t *err)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (errno != ENOENT)
            return ryr_err_set(err, "--out '%s': %s", dir, strerror(errno));
        if (make_dirs(dir, err))
            return -1;
        if (stat(dir, &st) != 0)
            return ryr_err_set(err, "--out '%s': %s", dir, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode))
        return ryr_err_set(err, "--out '%s': exists and is not a folder", dir);
    /* access() answers for the real user; creating a file is the test that counts. */
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/.ryr-probe-%ld", dir, (long)getpid());
    int slot;
    FILE *f = ryr_files_open(probe, &slot);
    if (!f)
        return ryr_err_set(err, "--out '%s': cannot write in this folder: %s", dir,
                           strerror(errno));
    fclose(f);
    ryr_files_release(slot, 1);
    if (slot < 0)
        unlink(probe);
    return 0;
}

int ryr_output_path(char *buf, size_t len, const char *dir, int frame, int plane)
{
    int n;
    if (plane == RYR_PLANE_RGB)
        n = snprintf(buf, len, "%s/frame_%05d.ppm", dir, frame);
    else
        n = snprintf(buf, len, "%s/frame_%05d_%s.pgm", dir, frame, ryr_plane_name(plane));
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int ryr_output_write_plane(const char *dir, int frame, int plane, const uint8_t *data, int w,
                           int h, ryr_err_t *err)
{
    char path[4200];
    if (plane < 0 || plane >= RYR_NPLANES)
        return ryr_err_set(err, "output: no plane %d", plane);
    if (ryr_output_path(path, sizeof path, dir, frame, plane))
        return ryr_err_set(err, "output: the path in '%s' is too long", dir);
    return ryr_pnm_write(path, 1, w, h, data, err);
}

int ryr_output_write_rgb(const char *dir, int frame, const uint8_t *rgb, int w, int h,
                         ryr_err_t *err)
{
    char path[4200];
    if (ryr_output_path(path, sizeof path, dir, frame, RYR_PLANE_RGB))
        return ryr_err_set(err, "output: the path in '%s' is too long", dir);
    return ryr_pnm_write(path, 3, w, h, rgb, err);
}
