/*
 * Fuzz harness: the cluster apps' command line (the static parse() of
 * apps/common/cluster_app.c, included here to reach it), for an app with a size parameter
 * and a plain one. The input is the argument list, one argument per line (or
 * NUL-separated). Whatever the arguments, parse returns RUN, HELP, VERSION or ERROR (with
 * a message); on RUN every value is within its range.
 */
#include "fuzz_util.h" /* first: it defines _GNU_SOURCE */

#include "cluster_app.c"

static const capp_param_t fuzz_params[] = {
    {"n", "size", true, {64, 256, 1024, 8192}, 1, 1LL << 20},
    {"iters", "iterations", false, {10, 20, 30, 40}, 1, 1000},
};

static const capp_app_t fuzz_app = {
    .name = "fuzzapp",
    .summary = "The harness's app.",
    .params = fuzz_params,
    .nparams = 2,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char prog[] = "fuzzapp";
    char *argv[FUZZ_MAX_ARGS + 1];
    char *buf;
    int argc = fuzz_argv(data, size, prog, argv, &buf);
    capp_cfg_t cfg;
    bool threads_given = false;
    char msg[512] = "";
    parse_t what = parse(argc, argv, &fuzz_app, &cfg, &threads_given, msg, sizeof msg);
    switch (what) {
    case PARSE_ERROR:
        fuzz_check_message(msg, sizeof msg);
        break;
    case PARSE_RUN:
        FUZZ_CHECK((unsigned)cfg.impl < CAPP_NIMPLS);
        FUZZ_CHECK(cfg.threads >= 1 && cfg.threads <= UTC_TASK_MAX_THREADS);
        FUZZ_CHECK(cfg.threads == 1 || cfg.impl == CAPP_UTC);
        FUZZ_CHECK(cfg.size >= CAPP_SIZE_S && cfg.size <= CAPP_SIZE_CUSTOM);
        FUZZ_CHECK(cfg.reps >= 1 && cfg.reps <= 1000);
        FUZZ_CHECK((unsigned)cfg.memtype <= UTC_MEM_UNIFIED);
        for (int p = 0; p < fuzz_app.nparams; p++)
            FUZZ_CHECK(cfg.p[p] >= fuzz_params[p].min && cfg.p[p] <= fuzz_params[p].max);
        FUZZ_CHECK(cfg.app == &fuzz_app);
        break;
    case PARSE_HELP:
    case PARSE_VERSION:
        break;
    default:
        FUZZ_CHECK(!"parse returned an unknown value");
    }
    free(buf);
    return 0;
}
