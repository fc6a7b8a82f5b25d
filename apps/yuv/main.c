/*
 * yuv: RGB to Y, U, V planes (BT.601, the RYR sample's conversion), after the
 * dissertation's YUV benchmark. Sizes: width x height pixels (appendix A: S 320x200,
 * M 2Kx1K, L 8Kx3K), or a PPM file.
 */
#include <stdio.h>
#include <stdlib.h>

#include "app_cli.h"
#include "app_compare.h"
#include "app_report.h"
#include "app_utc.h"
#include "yuv_image.h"
#include "yuv_impl.h"

static const app_info_t yuv_info = {
    .name = "yuv",
    .summary = "Convert an RGB image to Y, U and V planes (BT.601 studio range).",
    .sizes = {{"S", 320, 200}, {"M", 2048, 1024}, {"L", 8192, 3072}},
    .size_help = "W x H pixels of a generated RGB image",
    .input_help = "convert this PPM (P6) image instead",
    .output_help = "write Y, U and V stacked top to bottom as one PGM",
    .gpu_max_threads = 64,
};

static int yuv_run(const app_opts_t *o, yuv_job_t *job, double *secs)
{
    switch (o->impl) {
    case APP_IMPL_SEQ: return yuv_run_seq(job, o, secs);
    case APP_IMPL_OMP: return yuv_run_omp(job, o, secs);
    case APP_IMPL_UTC: return yuv_run_utc(job, o, secs);
    case APP_IMPL_GPU:
#ifdef APP_WITH_CUDA
        return yuv_run_gpu(job, o, secs);
#else
        break; /* app_gpu_check has refused it already */
#endif
    }
    return APP_EXIT_NO_GPU;
}

/* --verify: convert again with seq into fresh planes and compare. */
static app_verified_t yuv_verify(const yuv_job_t *job, const app_opts_t *o)
{
    const size_t n = yuv_job_pixels(job);
    yuv_job_t ref = *job;
    app_opts_t once = *o;
    double unused;
    once.reps = 1;
    if (!(ref.y = malloc(3 * n))) {
        fprintf(stderr, "yuv: --verify: out of memory\n");
        return APP_VERIFY_MISMATCH;
    }
    ref.u = ref.y + n;
    ref.v = ref.u + n;
    yuv_run_seq(&ref, &once, &unused);
    long long at = app_compare_bytes(job->y, ref.y, 3 * n);
    if (at >= 0) {
        long long i = at % (long long)n;
        fprintf(stderr, "yuv: --verify: plane %c, pixel (%lld, %lld) is %d, seq says %d\n",
                "YUV"[at / (long long)n], i % job->w, i / job->w, job->y[at], ref.y[at]);
    }
    free(ref.y);
    return at < 0 ? APP_VERIFY_OK : APP_VERIFY_MISMATCH;
}

int main(int argc, char **argv)
{
    app_opts_t o;
    int rc = app_cli_parse(&yuv_info, NULL, argc, argv, &o);
    if (rc != APP_CLI_RUN)
        return rc == APP_CLI_DONE ? APP_EXIT_OK : APP_EXIT_USAGE;
    if (o.impl == APP_IMPL_UTC || o.impl == APP_IMPL_GPU) {
        if ((rc = app_utc_start("yuv", &argc, &argv)) != APP_EXIT_OK)
            return rc;
        if (o.impl == APP_IMPL_GPU && (rc = app_gpu_check("yuv")) != APP_EXIT_OK) {
            return app_utc_stop("yuv", rc);
        }
    }

    yuv_job_t job;
    app_verified_t verified = APP_VERIFY_SKIPPED;
    char err[768];
    double secs = 0.0;
    if ((rc = yuv_job_make(&job, o.input, o.size.a, o.size.b, o.seed, err, sizeof err)) != 0) {
        fprintf(stderr, "yuv: %s\n", err);
        goto out;
    }
    if (o.input)
        snprintf(o.size.label, sizeof o.size.label, "%dx%d", job.w, job.h);
    if ((rc = yuv_run(&o, &job, &secs)) != APP_EXIT_OK)
        goto out;
    if (o.verify) {
        verified = yuv_verify(&job, &o);
        if (verified != APP_VERIFY_OK)
            rc = APP_EXIT_MISMATCH;
    }
    if (o.output && yuv_job_write(&job, o.output, err, sizeof err) != 0) {
        fprintf(stderr, "yuv: --output: %s\n", err);
        rc = APP_EXIT_FAIL;
    }
    char detail[96];
    snprintf(detail, sizeof detail, "%dx%d pixels", job.w, job.h);
    app_report(&yuv_info, &o, secs, verified, detail);

out:
    yuv_job_fini(&job);
    return app_utc_stop("yuv", rc);
}
