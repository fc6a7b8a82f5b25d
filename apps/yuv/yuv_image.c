#include "yuv_image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_cli.h"
#include "app_image.h"
#include "app_memory.h"
#include "pnm.h"

int yuv_job_make(yuv_job_t *job, const char *path, long long w, long long h, uint64_t seed,
                 char *err, size_t errlen)
{
    memset(job, 0, sizeof *job);
    if (path) {
        int channels, iw, ih;
        ryr_err_t rerr;
        if (ryr_pnm_read(path, &channels, &iw, &ih, &job->rgb, &rerr) != 0) {
            snprintf(err, errlen, "%s", rerr.msg);
            return APP_EXIT_USAGE;
        }
        if (channels != 3) {
            snprintf(err, errlen, "%s: a gray (P5) image: yuv needs an RGB (P6) PPM", path);
            yuv_job_fini(job);
            return APP_EXIT_USAGE;
        }
        w = iw, h = ih;
    } else if (w > RYR_PNM_MAX_SIDE || h > RYR_PNM_MAX_SIDE) {
        snprintf(err, errlen, "image %lldx%lld: each side must be at most %d", w, h,
                 RYR_PNM_MAX_SIDE);
        return APP_EXIT_USAGE;
    } else if (app_memory_check(9.0 * (double)w * (double)h, err, errlen)) {
        return APP_EXIT_USAGE;
    }
    job->w = (int)w;
    job->h = (int)h;
    size_t n = yuv_job_pixels(job);
    if (!job->rgb && (job->rgb = malloc(3 * n)) != NULL)
        app_image_generate(3, job->w, job->h, seed, job->rgb);
    job->y = calloc(3 * n, 1);
    if (!job->rgb || !job->y) {
        yuv_job_fini(job);
        snprintf(err, errlen, "out of memory for a %lldx%lld image", w, h);
        return APP_EXIT_FAIL;
    }
    job->u = job->y + n;
    job->v = job->u + n;
    return 0;
}

int yuv_job_write(const yuv_job_t *job, const char *path, char *err, size_t errlen)
{
    ryr_err_t rerr;
    if (ryr_pnm_write(path, 1, job->w, 3 * job->h, job->y, &rerr) != 0) {
        snprintf(err, errlen, "%s", rerr.msg);
        return -1;
    }
    return 0;
}

void yuv_job_fini(yuv_job_t *job)
{
    free(job->rgb);
    free(job->y);
    job->rgb = job->y = job->u = job->v = NULL;
}
