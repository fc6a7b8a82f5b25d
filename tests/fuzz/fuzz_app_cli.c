/*
 * Fuzz harness: the benchmark apps' command line (app_cli_parse in apps/common, with
 * app_size_parse behind --size), for an app with an input file, a valued option of its
 * own and a flag of its own. The input is the argument list, one argument per line (or
 * NUL-separated). Whatever the arguments, the parser returns RUN, DONE or ERROR, and on
 * RUN every option is within its range.
 *
 * The parser prints --help, --version and its errors: run the fuzzer with
 * -close_fd_mask=3 (scripts/fuzz.sh does).
 */
#include "fuzz_util.h" /* first: it defines _GNU_SOURCE */
#include "app_cli.h"

typedef struct {
    int angle_given, flag_given;
} fuzz_cfg_t;

static int fuzz_option(void *cfg, const char *name, const char *value, char *err, size_t len)
{
    fuzz_cfg_t *c = cfg;
    if (strcmp(name, "--angle") == 0) {
        FUZZ_CHECK(value != NULL);
        if (value[0] == '\0') {
            snprintf(err, len, "an empty angle");
            return -1;
        }
        c->angle_given = 1;
    } else {
        FUZZ_CHECK(strcmp(name, "--fast") == 0 && value == NULL);
        c->flag_given = 1;
    }
    return 0;
}

static const app_option_t fuzz_options[] = {{"--angle", "DEG", "an angle"},
                                            {"--fast", NULL, "a flag"},
                                            {NULL, NULL, NULL}};

static const app_info_t fuzz_info = {
    .name = "fuzzapp",
    .summary = "The harness's app.",
    .sizes = {{"S", 320, 200}, {"M", 2048, 1024}, {"L", 8192, 3072}},
    .size_help = "W x H",
    .input_help = "an input file",
    .output_help = "an output file",
    .options = fuzz_options,
    .option = fuzz_option,
    .gpu_max_threads = 4,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char prog[] = "fuzzapp";
    char *argv[FUZZ_MAX_ARGS + 1];
    char *buf;
    int argc = fuzz_argv(data, size, prog, argv, &buf);
    fuzz_cfg_t cfg = {0, 0};
    app_opts_t o;
    memset(&o, 0xa5, sizeof o);
    int rc = app_cli_parse(&fuzz_info, &cfg, argc, argv, &o);
    FUZZ_CHECK(rc == APP_CLI_RUN || rc == APP_CLI_DONE || rc == APP_CLI_ERROR);
    if (rc == APP_CLI_RUN) {
        FUZZ_CHECK((unsigned)o.impl <= APP_IMPL_GPU);
        FUZZ_CHECK((unsigned)o.memtype <= APP_MEM_UNIFIED);
        FUZZ_CHECK(o.threads >= 1);
        FUZZ_CHECK(o.impl != APP_IMPL_SEQ || o.threads == 1);
        FUZZ_CHECK(o.impl != APP_IMPL_GPU || o.threads <= fuzz_info.gpu_max_threads);
        FUZZ_CHECK(o.size.a > 0 && o.size.b > 0);
        FUZZ_CHECK(memchr(o.size.label, '\0', sizeof o.size.label) != NULL);
        FUZZ_CHECK(o.reps >= 1);
        FUZZ_CHECK(o.verify == 0 || o.verify == 1);
        FUZZ_CHECK(o.json == 0 || o.json == 1);
        FUZZ_CHECK(!o.input || o.input[0] != '\0');
        FUZZ_CHECK(!o.output || o.output[0] != '\0');
    }
    fflush(stdout);
    free(buf);
    return 0;
}
