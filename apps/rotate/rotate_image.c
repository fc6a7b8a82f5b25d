#include "rotate_image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_cli.h"
#include "app_image.h"
#include "app_memory.h"
#include "pnm.h"

int rotate_job_make(rotate_job_t *job, const char *path, long long w, long long h,
                    uint64_t seed, double angle_deg, char *err, size_t errlen)
{
    memset(job, 0, sizeof *job);
    uint8_t *pixels = NULL;
    int channels = 3;
    ryr_err_t rerr;
    if (path) {
        int iw, ih;
        if (ryr_pnm_read(path, &channels, &iw, &ih, &pixels, &rerr) != 0) {
            snprintf(err, errlen, "%s", rerr.msg);
            return APP_EXIT_USAGE;
        }
        w = iw, h = ih;
    } else if (w > RYR_PNM_MAX_SIDE || h > RYR_PNM_MAX_SIDE) {
        snprintf(err, errlen, "image %lldx%lld: each side must be at most %d", w, h,
                 RYR_PNM_MAX_SIDE);
        return APP_EXIT_USAGE;
    }
    if (ryr_rotation_init(&job->rot, (int)w, (int)h, angle_deg, &rerr) != 0) {
        snprintf(err, errlen, "%s", rerr.msg);
        free(pixels);
        return APP_EXIT_USAGE;
    }
    size_t in = (size_t)w * (size_t)h, out = (size_t)job->rot.ow * (size_t)job->rot.oh;
    if (app_memory_check(channels * (2.0 * (double)in + (double)out), err, errlen)) {
        free(pixels);
        return APP_EXIT_USAGE;
    }
    if (!pixels && (pixels = malloc(in * 3)) != NULL)
        app_image_generate(3, (int)w, (int)h, seed, pixels);
    job->planes = channels;
    int ok = pixels != NULL;
    for (int p = 0; ok && p < channels; p++) {
        job->src[p] = malloc(in);
        job->dst[p] = calloc(out, 1);
        ok = job->src[p] && job->dst[p];
        for (size_t i = 0; ok && i < in; i++) /* interleaved to planar, untimed */
            job->src[p][i] = pixels[i * channels + p];
    }
    free(pixels);
    if (!ok) {
        rotate_job_fini(job);
        snprintf(err, errlen, "out of memory for a %lldx%lld image", w, h);
        return APP_EXIT_FAIL;
    }
    return 0;
}

void rotate_job_rows(const rotate_job_t *job, long long r0, long long r1)
{
    const long long oh = job->rot.oh, ow = job->rot.ow;
    while (r0 < r1) {
        int p = (int)(r0 / oh), y0 = (int)(r0 % oh);
        int y1 = r1 - (long long)p * oh < oh ? (int)(r1 - (long long)p * oh) : (int)oh;
        ryr_rotate_rows(&job->rot, job->src[p], y0, y1, job->dst[p] + (size_t)y0 * ow);
        r0 = (long long)p * oh + y1;
    }
}

int rotate_job_write(const rotate_job_t *job, const char *path, char *err, size_t errlen)
{
    size_t n = (size_t)job->rot.ow * (size_t)job->rot.oh;
    uint8_t *pixels = malloc(n * job->planes);
    if (!pixels) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        for (int p = 0; p < job->planes; p++)
            pixels[i * job->planes + p] = job->dst[p][i];
    ryr_err_t rerr;
    int rc = ryr_pnm_write(path, job->planes, job->rot.ow, job->rot.oh, pixels, &rerr);
    if (rc != 0)
        snprintf(err, errlen, "%s", rerr.msg);
    free(pixels);
    return rc;
}

void rotate_job_fini(rotate_job_t *job)
{
    for (int p = 0; p < ROTATE_MAX_PLANES; p++) {
        free(job->src[p]);
        free(job->dst[p]);
        job->src[p] = job->dst[p] = NULL;
    }
}
