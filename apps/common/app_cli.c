#include "app_cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <utc/version.h>

/* Largest --threads for the CPU versions: UTC's limit on a task's threads. */
#define APP_MAX_THREADS 4096
#define APP_MAX_REPS 1000000

static const char *const impl_names[] = {"seq", "omp", "utc", "gpu"};
static const char *const mem_names[] = {"pageable", "pinned", "unified"};

const char *app_impl_name(app_impl_t impl)
{
    return (unsigned)impl < 4 ? impl_names[impl] : "?";
}

const char *app_memtype_name(app_memtype_t mem)
{
    return (unsigned)mem < 3 ? mem_names[mem] : "?";
}

/* A count the way sizes are written: 2048 -> "2K". */
static void format_count(long long v, char *buf, size_t len)
{
    static const char suffix[] = "GMK";
    for (int i = 0; i < 3; i++) {
        long long unit = 1LL << (10 * (3 - i));
        if (v >= unit && v % unit == 0) {
            snprintf(buf, len, "%lld%c", v / unit, suffix[i]);
            return;
        }
    }
    snprintf(buf, len, "%lld", v);
}

static void format_size(const app_size_t *s, char *buf, size_t len)
{
    char a[32], b[32];
    format_count(s->a, a, sizeof a);
    format_count(s->b, b, sizeof b);
    snprintf(buf, len, "%sx%s", a, b);
}

static void print_help(const app_info_t *info)
{
    char sz[3][72];
    for (int i = 0; i < 3; i++)
        format_size(&info->sizes[i], sz[i], sizeof sz[i]);
    printf("Usage: %s [options]\n\n%s\n\n", info->name, info->summary);
    printf("Options:\n"
           "  --impl seq|omp|utc|gpu   version to run (default seq): plain C, OpenMP, a UTC\n"
           "                           CPU task, a UTC GPU task (needs a CUDA build and a GPU)\n"
           "  --threads N              threads of omp and utc (default: online CPUs), GPU\n"
           "                           threads of gpu (default 1, at most %d)\n"
           "  --size S|M|L|AxB         problem size (default S):\n"
           "                           S %s, M %s, L %s;\n"
           "                           AxB: %s (K, M, G suffixes: powers of 1024)\n"
           "  --memtype KIND           GPU buffers: pageable (default), pinned or unified\n"
           "  --verify                 also run seq and compare the results exactly\n"
           "  --json                   print one JSON object last on stdout\n"
           "  --seed N                 seed of the generated input (default 1)\n"
           "  --reps N                 run the timed part N times, report the fastest\n",
           info->gpu_max_threads, sz[0], sz[1], sz[2], info->size_help);
    if (info->input_help)
        printf("  --input FILE             %s\n", info->input_help);
    if (info->output_help)
        printf("  --output FILE            %s\n", info->output_help);
    for (const app_option_t *o = info->options; o && o->name; o++) {
        char head[64];
        snprintf(head, sizeof head, "%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        printf("  %-24s %s\n", head, o->help);
    }
    printf("  --help, --version\n\n"
           "Exit status: 0 done (and verified); 1 --verify found a difference; 2 bad\n"
           "command line or input file; 3 --impl gpu without GPU support or device;\n"
           "4 failure at run time (out of memory, UTC or CUDA error, write error).\n"
           "utc and gpu start MPI: run them with scripts/utcrun -np 1.\n");
}

static int parse_int(const char *text, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_u64(const char *text, uint64_t *out)
{
    char *end;
    if (!*text || *text == '-')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || *end)
        return -1;
    *out = v;
    return 0;
}

static int find_name(const char *text, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(text, names[i]) == 0)
            return i;
    return -1;
}

/* Common options that take a value. */
static const char *const valued[] = {"--impl", "--threads", "--size", "--memtype",
                                     "--seed", "--reps",    "--input", "--output"};

int app_cli_parse(const app_info_t *info, void *cfg, int argc, char **argv, app_opts_t *opts)
{
    app_opts_t o = {.impl = APP_IMPL_SEQ, .size = info->sizes[0], .memtype = APP_MEM_PAGEABLE,
                    .seed = 1, .reps = 1};
    const char *size_text = NULL;
    int threads_given = 0;
    long long threads = 0;
    char err[512];
    const char *me = info->name;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        char name[64];
        const char *value = NULL;
        const char *eq = strchr(arg, '=');
        if (strncmp(arg, "--", 2) != 0) {
            fprintf(stderr, "%s: unexpected argument '%s' (see %s --help)\n", me, arg, me);
            return APP_CLI_ERROR;
        }
        size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
        if (nlen >= sizeof name) {
            fprintf(stderr, "%s: unknown option '%s' (see %s --help)\n", me, arg, me);
            return APP_CLI_ERROR;
        }
        memcpy(name, arg, nlen);
        name[nlen] = '\0';

        if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
            print_help(info);
            return APP_CLI_DONE;
        }
        if (strcmp(name, "--version") == 0) {
            printf("%s (UTC) %s\n", me, UTC_VERSION_STRING);
            return APP_CLI_DONE;
        }

        /* Is it ours, the app's, or unknown? Does it take a value? */
        int takes_value = -1;
        const app_option_t *extra = NULL;
        for (size_t k = 0; k < sizeof valued / sizeof *valued; k++)
            if (strcmp(name, valued[k]) == 0)
                takes_value = 1;
        if (strcmp(name, "--verify") == 0 || strcmp(name, "--json") == 0)
            takes_value = 0;
        for (const app_option_t *x = info->options; takes_value < 0 && x && x->name; x++) {
            if (strcmp(name, x->name) == 0) {
                extra = x;
                takes_value = x->arg != NULL;
            }
        }
        if (takes_value < 0) {
            fprintf(stderr, "%s: unknown option '%s' (see %s --help)\n", me, name, me);
            return APP_CLI_ERROR;
        }
        if (takes_value) {
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else {
                fprintf(stderr, "%s: %s needs a value\n", me, name);
                return APP_CLI_ERROR;
            }
        } else if (eq) {
            fprintf(stderr, "%s: %s takes no value\n", me, name);
            return APP_CLI_ERROR;
        }

        if (extra) {
            err[0] = '\0';
            if (info->option(cfg, name, value, err, sizeof err) != 0) {
                fprintf(stderr, "%s: %s: %s\n", me, name, err[0] ? err : "bad value");
                return APP_CLI_ERROR;
            }
        } else if (strcmp(name, "--impl") == 0) {
            int k = find_name(value, impl_names, 4);
            if (k < 0) {
                fprintf(stderr, "%s: unknown --impl '%s': use seq, omp, utc or gpu\n", me, value);
                return APP_CLI_ERROR;
            }
            o.impl = (app_impl_t)k;
        } else if (strcmp(name, "--threads") == 0) {
            if (parse_int(value, 1, APP_MAX_THREADS, &threads)) {
                fprintf(stderr, "%s: --threads '%s': need a whole number from 1 to %d\n", me,
                        value, APP_MAX_THREADS);
                return APP_CLI_ERROR;
            }
            threads_given = 1;
        } else if (strcmp(name, "--size") == 0) {
            size_text = value;
        } else if (strcmp(name, "--memtype") == 0) {
            int k = find_name(value, mem_names, 3);
            if (k < 0) {
                fprintf(stderr, "%s: unknown --memtype '%s': use pageable, pinned or unified\n",
                        me, value);
                return APP_CLI_ERROR;
            }
            o.memtype = (app_memtype_t)k;
        } else if (strcmp(name, "--seed") == 0) {
            if (parse_u64(value, &o.seed)) {
                fprintf(stderr, "%s: --seed '%s': need a whole number from 0 to 2^64-1\n", me,
                        value);
                return APP_CLI_ERROR;
            }
        } else if (strcmp(name, "--reps") == 0) {
            long long r;
            if (parse_int(value, 1, APP_MAX_REPS, &r)) {
                fprintf(stderr, "%s: --reps '%s': need a whole number from 1 to %d\n", me, value,
                        APP_MAX_REPS);
                return APP_CLI_ERROR;
            }
            o.reps = (int)r;
        } else if (strcmp(name, "--input") == 0) {
            if (!info->input_help) {
                fprintf(stderr, "%s: unknown option '--input' (see %s --help)\n", me, me);
                return APP_CLI_ERROR;
            }
            if (!*value) {
                fprintf(stderr, "%s: --input needs a file name\n", me);
                return APP_CLI_ERROR;
            }
            o.input = value;
        } else if (strcmp(name, "--output") == 0) {
            if (!*value) {
                fprintf(stderr, "%s: --output needs a file name\n", me);
                return APP_CLI_ERROR;
            }
            o.output = value;
        } else if (strcmp(name, "--verify") == 0) {
            o.verify = 1;
        } else if (strcmp(name, "--json") == 0) {
            o.json = 1;
        }
    }

    if (size_text && app_size_parse(size_text, info->sizes, &o.size, err, sizeof err)) {
        fprintf(stderr, "%s: --size: %s\n", me, err);
        return APP_CLI_ERROR;
    }
    if (o.impl == APP_IMPL_SEQ) {
        o.threads = 1; /* --threads does not apply */
    } else if (o.impl == APP_IMPL_GPU) {
        o.threads = threads_given ? (int)threads : 1;
        if (o.threads > info->gpu_max_threads) {
            fprintf(stderr, "%s: --impl gpu takes at most %d thread%s, got %d\n", me,
                    info->gpu_max_threads, info->gpu_max_threads == 1 ? "" : "s", o.threads);
            return APP_CLI_ERROR;
        }
    } else {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        o.threads = threads_given ? (int)threads : (int)(n > 0 ? n : 1);
    }
    *opts = o;
    return APP_CLI_RUN;
}
