/*
 * rotate: rotate an image about its centre (bilinear, the RYR sample's rule), after the
 * dissertation's Rotate benchmark. Sizes: width x height pixels (appendix A: S 320x200,
 * M 2Kx1K, L 8Kx3K); generated images are RGB, rotated plane by plane.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_cli.h"
#include "app_compare.h"
#include "app_report.h"
#include "app_utc.h"
#include "rotate_image.h"
#include "rotate_impl.h"

typedef struct {
    double angle; /* --angle DEG */
} rotate_cfg_t;

static int rotate_option(void *cfg, const char *name, const char *value, char *err, size_t len)
{
    (void)name;
    char *end;
    errno = 0;
    double a = strtod(value, &end);
    if (errno || end == value || *end || !isfinite(a)) {
        snprintf(err, len, "'%s' is not a finite number of degrees", value);
        return -1;
    }
    ((rotate_cfg_t *)cfg)->angle = a;
    return 0;
}

static const app_option_t rotate_options[] = {
    {"--angle", "DEG", "counter-clockwise angle in degrees (default 30)"}, {NULL, NULL, NULL}};

static const app_info_t rotate_info = {
    .name = "rotate",
    .summary = "Rotate an image about its centre (bilinear; output: the rotated bounding box).",
    .sizes = {{"S", 320, 200}, {"M", 2048, 1024}, {"L", 8192, 3072}},
    .size_help = "W x H pixels of a generated RGB image",
    .input_help = "rotate this PGM (gray) or PPM (RGB) image instead",
    .output_help = "write the rotated image (PGM or PPM, as the input)",
    .options = rotate_options,
    .option = rotate_option,
    .gpu_max_threads = 64,
};

static int rotate_run(const app_opts_t *o, rotate_job_t *job, double *secs)
{
    switch (o->impl) {
    case APP_IMPL_SEQ: return rotate_run_seq(job, o, secs);
    case APP_IMPL_OMP: return rotate_run_omp(job, o, secs);
    case APP_IMPL_UTC: return rotate_run_utc(job, o, secs);
    case APP_IMPL_GPU:
#ifdef APP_WITH_CUDA
        return rotate_run_gpu(job, o, secs);
#else
        break; /* app_gpu_check has refused it already */
#endif
    }
    return APP_EXIT_NO_GPU;
}

/* --verify: rotate again with seq into fresh planes and compare. */
static app_verified_t rotate_verify(rotate_job_t *job, const app_opts_t *o)
{
    rotate_job_t ref = *job;
    app_opts_t once = *o;
    size_t n = (size_t)job->rot.ow * (size_t)job->rot.oh;
    double unused;
    app_verified_t v = APP_VERIFY_OK;
    once.reps = 1;
    for (int p = 0; p < job->planes; p++)
        ref.dst[p] = malloc(n);
    for (int p = 0; p < job->planes; p++)
        if (!ref.dst[p])
            v = APP_VERIFY_MISMATCH;
    if (v == APP_VERIFY_OK)
        rotate_run_seq(&ref, &once, &unused);
    else
        fprintf(stderr, "rotate: --verify: out of memory\n");
    for (int p = 0; p < job->planes && v == APP_VERIFY_OK; p++) {
        long long at = app_compare_bytes(job->dst[p], ref.dst[p], n);
        if (at >= 0) {
            fprintf(stderr, "rotate: --verify: plane %d, pixel (%lld, %lld) is %d, seq says %d\n",
                    p, at % job->rot.ow, at / job->rot.ow, job->dst[p][at], ref.dst[p][at]);
            v = APP_VERIFY_MISMATCH;
        }
    }
    for (int p = 0; p < job->planes; p++)
        free(ref.dst[p]);
    return v;
}

int main(int argc, char **argv)
{
    rotate_cfg_t cfg = {30.0};
    app_opts_t o;
    int rc = app_cli_parse(&rotate_info, &cfg, argc, argv, &o);
    if (rc != APP_CLI_RUN)
        return rc == APP_CLI_DONE ? APP_EXIT_OK : APP_EXIT_USAGE;
    if (o.impl == APP_IMPL_UTC || o.impl == APP_IMPL_GPU) {
        if ((rc = app_utc_start("rotate", &argc, &argv)) != APP_EXIT_OK)
            return rc;
        if (o.impl == APP_IMPL_GPU && (rc = app_gpu_check("rotate")) != APP_EXIT_OK) {
            return app_utc_stop("rotate", rc);
        }
    }

    rotate_job_t job;
    app_verified_t verified = APP_VERIFY_SKIPPED;
    char err[768];
    double secs = 0.0;
    rc = rotate_job_make(&job, o.input, o.size.a, o.size.b, o.seed, cfg.angle, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "rotate: %s\n", err);
        goto out;
    }
    if (o.input)
        snprintf(o.size.label, sizeof o.size.label, "%dx%d", job.rot.w, job.rot.h);
    if ((rc = rotate_run(&o, &job, &secs)) != APP_EXIT_OK)
        goto out;
    if (o.verify) {
        verified = rotate_verify(&job, &o);
        if (verified != APP_VERIFY_OK)
            rc = APP_EXIT_MISMATCH;
    }
    if (o.output && rotate_job_write(&job, o.output, err, sizeof err) != 0) {
        fprintf(stderr, "rotate: --output: %s\n", err);
        rc = APP_EXIT_FAIL;
    }
    char detail[160];
    snprintf(detail, sizeof detail, "%d plane%s %dx%d -> %dx%d, %g degrees", job.planes,
             job.planes == 1 ? "" : "s", job.rot.w, job.rot.h, job.rot.ow, job.rot.oh,
             cfg.angle);
    app_report(&rotate_info, &o, secs, verified, detail);

out:
    rotate_job_fini(&job);
    return app_utc_stop("rotate", rc);
}
