#include "rt_scene.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_cli.h"
#include "app_memory.h"
#include "app_rand.h"
#include "pnm.h"

/* Append to text; returns -1 once it no longer fits. */
static int put(char *text, size_t cap, size_t *len, const char *fmt, ...)
{
    if (*len >= cap)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap - *len)
        return -1;
    *len += (size_t)n;
    return 0;
}

/* A number in [lo, hi) with 4 decimals: what the text holds is what gets rendered. */
static double pick(app_rand_t *r, double lo, double hi)
{
    return lo + (double)(long)(app_rand_unit(r) * (hi - lo) * 10000.0) / 10000.0;
}

int rt_scene_text(uint64_t seed, char *text, size_t cap)
{
    app_rand_t r = app_rand_make(seed, 0);
    size_t len = 0;
    int bad = put(text, cap, &len,
                  "# raytrace app: scene of seed %llu (RYR scene format)\n"
                  "# s  x y z  radius  r g b  shininess  reflectivity\n"
                  "s 0 -10001 0  10000  0.3 0.35 0.4  40  0.3\n",
                  (unsigned long long)seed);
    for (int i = 0; i < RT_GEN_SPHERES && !bad; i++) {
        double rad = pick(&r, 0.3, 1.2);
        double x = pick(&r, -6.0, 6.0), z = pick(&r, -4.0, 8.0);
        double cr = pick(&r, 0.1, 1.0), cg = pick(&r, 0.1, 1.0), cb = pick(&r, 0.1, 1.0);
        double spow = pick(&r, 10.0, 100.0), refl = pick(&r, 0.0, 0.6);
        bad = put(text, cap, &len, "s %.4f %.4f %.4f  %.4f  %.4f %.4f %.4f  %.4f  %.4f\n", x,
                  -1.0 + rad, z, rad, cr, cg, cb, spow, refl);
    }
    if (!bad)
        bad = put(text, cap, &len,
                  "l -30 40 -25\nl 25 20 -15\nl 0 50 30\n"
                  "# c  x y z  fov  tx ty tz\n"
                  "c 0 6 -18  45  0 -0.5 2\n");
    return bad ? -1 : (int)len;
}

int rt_job_make(rt_job_t *job, const char *path, long long w, long long h, uint64_t seed,
                char *err, size_t errlen)
{
    memset(job, 0, sizeof *job);
    if (w > RYR_PNM_MAX_SIDE || h > RYR_PNM_MAX_SIDE) {
        snprintf(err, errlen, "frame %lldx%lld: each side must be at most %d", w, h,
                 RYR_PNM_MAX_SIDE);
        return APP_EXIT_USAGE;
    }
    if (app_memory_check(6.0 * (double)w * (double)h, err, errlen))
        return APP_EXIT_USAGE;
    ryr_err_t rerr;
    if (path) {
        if (ryr_scene_load(path, &job->scene, &rerr) != 0) {
            snprintf(err, errlen, "%s", rerr.msg);
            return APP_EXIT_USAGE;
        }
    } else {
        char text[4096];
        int len = rt_scene_text(seed, text, sizeof text);
        if (len < 0 || ryr_scene_parse(text, (size_t)len, "generated scene", &job->scene,
                                       &rerr) != 0) {
            snprintf(err, errlen, "generated scene: %s", len < 0 ? "too long" : rerr.msg);
            return APP_EXIT_FAIL;
        }
    }
    if (job->scene.warning[0])
        fprintf(stderr, "raytrace: note: %s\n", job->scene.warning);
    ryr_view_for_frame(&job->view, &job->scene, 0, 0.0);
    job->w = (int)w;
    job->h = (int)h;
    job->rgb = calloc((size_t)w * (size_t)h, 3);
    if (!job->rgb) {
        rt_job_fini(job);
        snprintf(err, errlen, "out of memory for a %lldx%lld frame", w, h);
        return APP_EXIT_FAIL;
    }
    return 0;
}

int rt_job_write(const rt_job_t *job, const char *path, char *err, size_t errlen)
{
    ryr_err_t rerr;
    if (ryr_pnm_write(path, 3, job->w, job->h, job->rgb, &rerr) != 0) {
        snprintf(err, errlen, "%s", rerr.msg);
        return -1;
    }
    return 0;
}

void rt_job_fini(rt_job_t *job)
{
    ryr_scene_fini(&job->scene);
    free(job->rgb);
    job->rgb = NULL;
}
