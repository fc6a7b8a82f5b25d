/*
 * md5: the MD5 digest (RFC 1321) of many buffers, after the dissertation's MD5 benchmark.
 * Sizes: buffers x bytes per buffer (appendix A: S 2K x 4 KiB, M 32K x 8 KiB,
 * L 256K x 16 KiB).
 */
#include <stdio.h>
#include <stdlib.h>

#include "app_cli.h"
#include "app_compare.h"
#include "app_report.h"
#include "app_utc.h"
#include "md5.h"
#include "md5_impl.h"
#include "md5_input.h"

typedef struct {
    const char *dump; /* --dump DIR */
} md5_cfg_t;

static int md5_option(void *cfg, const char *name, const char *value, char *err, size_t len)
{
    (void)name, (void)err, (void)len;
    ((md5_cfg_t *)cfg)->dump = value;
    return 0;
}

static const app_option_t md5_options[] = {
    {"--dump", "DIR", "write each buffer to DIR/buf_NNNNNN.bin and md5sum's DIR/md5sums.txt"},
    {NULL, NULL, NULL}};

static const app_info_t md5_info = {
    .name = "md5",
    .summary = "MD5 digest (RFC 1321) of every buffer of a set of equal-sized buffers.",
    .sizes = {{"S", 2048, 4096}, {"M", 32768, 8192}, {"L", 262144, 16384}},
    .size_help = "N buffers x B bytes each",
    .input_help = "digest this file, cut into buffers of the size's B bytes",
    .output_help = "write the digests, one md5sum-style line per buffer ('-': stdout)",
    .options = md5_options,
    .option = md5_option,
    .gpu_max_threads = 64,
};

static int md5_run(const app_opts_t *o, const md5_input_t *in, uint8_t *digests, double *secs)
{
    switch (o->impl) {
    case APP_IMPL_SEQ: return md5_run_seq(in, digests, o, secs);
    case APP_IMPL_OMP: return md5_run_omp(in, digests, o, secs);
    case APP_IMPL_UTC: return md5_run_utc(in, digests, o, secs);
    case APP_IMPL_GPU:
#ifdef APP_WITH_CUDA
        return md5_run_gpu(in, digests, o, secs);
#else
        break; /* app_gpu_check has refused it already */
#endif
    }
    return APP_EXIT_NO_GPU;
}

int main(int argc, char **argv)
{
    md5_cfg_t cfg = {NULL};
    app_opts_t o;
    int rc = app_cli_parse(&md5_info, &cfg, argc, argv, &o);
    if (rc != APP_CLI_RUN)
        return rc == APP_CLI_DONE ? APP_EXIT_OK : APP_EXIT_USAGE;
    if (o.impl == APP_IMPL_UTC || o.impl == APP_IMPL_GPU) {
        if ((rc = app_utc_start("md5", &argc, &argv)) != APP_EXIT_OK)
            return rc;
        if (o.impl == APP_IMPL_GPU && (rc = app_gpu_check("md5")) != APP_EXIT_OK) {
            return app_utc_stop("md5", rc);
        }
    }

    md5_input_t in = {0};
    uint8_t *digests = NULL, *ref = NULL;
    app_verified_t verified = APP_VERIFY_SKIPPED;
    char err[768];
    double secs = 0.0;
    int made = o.input ? md5_input_read(o.input, (size_t)o.size.b, &in, err, sizeof err)
                       : md5_input_generate((size_t)o.size.a, (size_t)o.size.b, o.seed, &in,
                                            err, sizeof err);
    if (made != 0) {
        fprintf(stderr, "md5: %s\n", err);
        rc = made;
        goto out;
    }
    if (o.input)
        snprintf(o.size.label, sizeof o.size.label, "%zux%zu", in.count, in.len);
    digests = calloc(in.count, MD5_DIGEST_BYTES);
    if (!digests) {
        fprintf(stderr, "md5: out of memory for %zu digests\n", in.count);
        rc = APP_EXIT_FAIL;
        goto out;
    }
    if ((rc = md5_run(&o, &in, digests, &secs)) != APP_EXIT_OK)
        goto out;

    if (o.verify) {
        app_opts_t once = o;
        double unused;
        once.reps = 1;
        ref = calloc(in.count, MD5_DIGEST_BYTES);
        if (!ref) {
            fprintf(stderr, "md5: out of memory for the reference digests\n");
            rc = APP_EXIT_FAIL;
            goto out;
        }
        md5_run_seq(&in, ref, &once, &unused);
        long long at = app_compare_bytes(digests, ref, in.count * MD5_DIGEST_BYTES);
        verified = at < 0 ? APP_VERIFY_OK : APP_VERIFY_MISMATCH;
        if (at >= 0) {
            fprintf(stderr, "md5: --verify: the digest of buffer %lld differs from seq's\n",
                    at / MD5_DIGEST_BYTES);
            rc = APP_EXIT_MISMATCH;
        }
    }
    if (o.output && md5_digests_write(&in, digests, o.output, err, sizeof err) != 0) {
        fprintf(stderr, "md5: --output: %s\n", err);
        rc = APP_EXIT_FAIL;
    }
    if (cfg.dump && md5_input_dump(&in, digests, cfg.dump, err, sizeof err) != 0) {
        fprintf(stderr, "md5: --dump: %s\n", err);
        rc = APP_EXIT_FAIL;
    }
    char detail[96];
    snprintf(detail, sizeof detail, "%zu buffers of %zu bytes", in.count, in.len);
    app_report(&md5_info, &o, secs, verified, detail);

out:
    free(ref);
    free(digests);
    md5_input_fini(&in);
    return app_utc_stop("md5", rc);
}
