/*
 * raytrace: render a frame with the RYR sample's c-ray 1.1 compatible ray tracer, after the
 * dissertation's Raytrace benchmark. Sizes: width x height pixels (appendix A: S 128x128,
 * M 512x512, L 2Kx2K); the scene is generated from the seed or read from a scene file.
 */
#include <stdio.h>
#include <stdlib.h>

#include "app_cli.h"
#include "app_compare.h"
#include "app_report.h"
#include "app_utc.h"
#include "rt_impl.h"
#include "rt_scene.h"

typedef struct {
    int print_scene; /* --print-scene */
} rt_cfg_t;

static int rt_option(void *cfg, const char *name, const char *value, char *err, size_t len)
{
    (void)name, (void)value, (void)err, (void)len;
    ((rt_cfg_t *)cfg)->print_scene = 1;
    return 0;
}

static const app_option_t rt_options[] = {
    {"--print-scene", NULL, "print the generated scene of --seed (a scene file) and exit"},
    {NULL, NULL, NULL}};

static const app_info_t rt_info = {
    .name = "raytrace",
    .summary = "Render a scene of spheres with a c-ray 1.1 compatible ray tracer (RYR.md).",
    .sizes = {{"S", 128, 128}, {"M", 512, 512}, {"L", 2048, 2048}},
    .size_help = "W x H pixels",
    .input_help = "render this scene file (RYR format: s, l, c lines) instead",
    .output_help = "write the frame as a PPM",
    .options = rt_options,
    .option = rt_option,
    .gpu_max_threads = 64,
};

static int rt_run(const app_opts_t *o, rt_job_t *job, double *secs)
{
    switch (o->impl) {
    case APP_IMPL_SEQ: return rt_run_seq(job, o, secs);
    case APP_IMPL_OMP: return rt_run_omp(job, o, secs);
    case APP_IMPL_UTC: return rt_run_utc(job, o, secs);
    case APP_IMPL_GPU:
#ifdef APP_WITH_CUDA
        return rt_run_gpu(job, o, secs);
#else
        break; /* app_gpu_check has refused it already */
#endif
    }
    return APP_EXIT_NO_GPU;
}

/* --verify: render again with seq into a fresh frame and compare. */
static app_verified_t rt_verify(const rt_job_t *job, const app_opts_t *o)
{
    const size_t bytes = (size_t)job->w * (size_t)job->h * 3;
    rt_job_t ref = *job;
    app_opts_t once = *o;
    double unused;
    once.reps = 1;
    if (!(ref.rgb = malloc(bytes))) {
        fprintf(stderr, "raytrace: --verify: out of memory\n");
        return APP_VERIFY_MISMATCH;
    }
    rt_run_seq(&ref, &once, &unused);
    long long at = app_compare_bytes(job->rgb, ref.rgb, bytes);
    if (at >= 0) {
        long long px = at / 3;
        fprintf(stderr, "raytrace: --verify: pixel (%lld, %lld) channel %lld is %d, seq says %d\n",
                px % job->w, px / job->w, at % 3, job->rgb[at], ref.rgb[at]);
    }
    free(ref.rgb);
    return at < 0 ? APP_VERIFY_OK : APP_VERIFY_MISMATCH;
}

int main(int argc, char **argv)
{
    rt_cfg_t cfg = {0};
    app_opts_t o;
    int rc = app_cli_parse(&rt_info, &cfg, argc, argv, &o);
    if (rc != APP_CLI_RUN)
        return rc == APP_CLI_DONE ? APP_EXIT_OK : APP_EXIT_USAGE;
    if (cfg.print_scene) {
        char text[4096];
        int len = rt_scene_text(o.seed, text, sizeof text);
        if (len < 0)
            return APP_EXIT_FAIL;
        fputs(text, stdout);
        return APP_EXIT_OK;
    }
    if (o.impl == APP_IMPL_UTC || o.impl == APP_IMPL_GPU) {
        if ((rc = app_utc_start("raytrace", &argc, &argv)) != APP_EXIT_OK)
            return rc;
        if (o.impl == APP_IMPL_GPU && (rc = app_gpu_check("raytrace")) != APP_EXIT_OK) {
            return app_utc_stop("raytrace", rc);
        }
    }

    rt_job_t job;
    app_verified_t verified = APP_VERIFY_SKIPPED;
    char err[768];
    double secs = 0.0;
    if ((rc = rt_job_make(&job, o.input, o.size.a, o.size.b, o.seed, err, sizeof err)) != 0) {
        fprintf(stderr, "raytrace: %s\n", err);
        goto out;
    }
    if ((rc = rt_run(&o, &job, &secs)) != APP_EXIT_OK)
        goto out;
    if (o.verify) {
        verified = rt_verify(&job, &o);
        if (verified != APP_VERIFY_OK)
            rc = APP_EXIT_MISMATCH;
    }
    if (o.output && rt_job_write(&job, o.output, err, sizeof err) != 0) {
        fprintf(stderr, "raytrace: --output: %s\n", err);
        rc = APP_EXIT_FAIL;
    }
    char detail[128];
    snprintf(detail, sizeof detail, "%dx%d pixels, %d spheres, %d lights", job.w, job.h,
             job.scene.nspheres, job.scene.nlights);
    app_report(&rt_info, &o, secs, verified, detail);

out:
    rt_job_fini(&job);
    return app_utc_stop("raytrace", rc);
}
