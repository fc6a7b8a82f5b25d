/*
 * Driver of the cluster apps: command line, start-up, dispatch, verification, report.
 * See cluster_app.h.
 */
#include "cluster_app.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#define CAPP_VERSION "0.1.0"

static const char *const impl_names[CAPP_NIMPLS] = {"seq", "mpi", "utc", "gpu"};
static const char *const size_names[CAPP_NSIZES + 1] = {"S", "M", "L", "XL", "custom"};
static const char *const mem_names[] = {"pageable", "pinned", "unified"};

double capp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int capp_error(const capp_cfg_t *cfg, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: error (rank %d): %s\n", cfg->app->name, cfg->rank, buf);
    fflush(stderr);
    return CAPP_EXIT_RUNTIME;
}

int capp_utc_error(const capp_cfg_t *cfg, const char *what, int status)
{
    const char *detail = utc_last_error();
    return capp_error(cfg, "%s: %s%s%s", what, utc_status_string(status), *detail ? ": " : "",
                      detail);
}

void *capp_alloc(const capp_cfg_t *cfg, size_t bytes, const char *what)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        capp_error(cfg, "out of memory: %zu bytes for %s", bytes, what);
    return p;
}

size_t capp_window_bytes(const size_t *object_bytes, int n)
{
    size_t total = 4096;
    for (int i = 0; i < n; i++)
        total += (object_bytes[i] + 127) / 64 * 64;
    return total;
}

/* ---- command line ---- */

typedef enum { PARSE_RUN, PARSE_HELP, PARSE_VERSION, PARSE_ERROR } parse_t;

/* Integer with an optional K, M or G suffix (powers of 1024). */
static int parse_ll(const char *s, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s)
        return -1;
    long long mul = 1;
    if (*end == 'K' || *end == 'k')
        mul = 1LL << 10, end++;
    else if (*end == 'M' || *end == 'm')
        mul = 1LL << 20, end++;
    else if (*end == 'G' || *end == 'g')
        mul = 1LL << 30, end++;
    if (*end)
        return -1;
    if (v > LLONG_MAX / mul || v < LLONG_MIN / mul)
        return -1;
    *out = v * mul;
    return 0;
}

static int find_name(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

static parse_t usage_error(char *msg, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static parse_t usage_error(char *msg, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
    return PARSE_ERROR;
}

static parse_t parse(int argc, char **argv, const capp_app_t *app, capp_cfg_t *cfg,
                     bool *threads_given, char *msg, size_t len)
{
    bool impl_given = false, param_given[CAPP_MAX_PARAMS] = {false};
    long long value[CAPP_MAX_PARAMS] = {0};
    int size = CAPP_SIZE_S;
    *threads_given = false;
    memset(cfg, 0, sizeof *cfg);
    cfg->app = app;
    cfg->threads = 1;
    cfg->reps = 1;
    cfg->seed = 1;
    cfg->memtype = UTC_MEM_PAGEABLE;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *val = NULL;
        char name[64];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0)
            return PARSE_HELP;
        if (strcmp(arg, "--version") == 0)
            return PARSE_VERSION;
        if (strncmp(arg, "--", 2) != 0)
            return usage_error(msg, len, "unexpected argument '%s'", arg);
        /* --name=value or --name value */
        const char *eq = strchr(arg, '=');
        size_t nlen = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
        if (nlen >= sizeof name)
            return usage_error(msg, len, "unknown option '%s'", arg);
        memcpy(name, arg + 2, nlen);
        name[nlen] = '\0';
        if (strcmp(name, "verify") == 0 || strcmp(name, "json") == 0) {
            if (eq)
                return usage_error(msg, len, "option --%s takes no value", name);
            if (name[0] == 'v')
                cfg->verify = true;
            else
                cfg->json = true;
            continue;
        }
        int param = -1;
        for (int p = 0; p < app->nparams; p++)
            if (strcmp(name, app->params[p].name) == 0)
                param = p;
        bool known = param >= 0 || strcmp(name, "impl") == 0 || strcmp(name, "threads") == 0 ||
                     strcmp(name, "size") == 0 || strcmp(name, "memtype") == 0 ||
                     strcmp(name, "seed") == 0 || strcmp(name, "reps") == 0;
        if (!known)
            return usage_error(msg, len, "unknown option '--%s'", name);
        if (eq) {
            val = eq + 1;
        } else {
            if (i + 1 >= argc)
                return usage_error(msg, len, "option --%s needs a value", name);
            val = argv[++i];
        }

        if (strcmp(name, "impl") == 0) {
            int k = find_name(val, impl_names, CAPP_NIMPLS);
            if (k < 0)
                return usage_error(msg, len, "unknown --impl '%s' (use seq, mpi, utc or gpu)", val);
            cfg->impl = (capp_impl_t)k;
            impl_given = true;
        } else if (strcmp(name, "size") == 0) {
            int k = find_name(val, size_names, CAPP_NSIZES + 1);
            if (k < 0)
                return usage_error(msg, len, "unknown --size '%s' (use S, M, L, XL or custom)",
                                   val);
            size = k;
        } else if (strcmp(name, "memtype") == 0) {
            int k = find_name(val, mem_names, 3);
            if (k < 0)
                return usage_error(msg, len,
                                   "unknown --memtype '%s' (use pageable, pinned or unified)", val);
            cfg->memtype = (utc_mem_kind_t)k;
        } else if (strcmp(name, "seed") == 0) {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(val, &end, 0);
            if (errno || end == val || *end || val[0] == '-')
                return usage_error(msg, len, "--seed needs a non-negative integer, got '%s'", val);
            cfg->seed = (uint64_t)s;
        } else if (strcmp(name, "reps") == 0) {
            long long r;
            if (parse_ll(val, &r) || r < 1 || r > 1000)
                return usage_error(msg, len, "--reps needs a number from 1 to 1000, got '%s'", val);
            cfg->reps = (int)r;
        } else if (strcmp(name, "threads") == 0) {
            long long t;
            if (parse_ll(val, &t) || t < 1 || t > UTC_TASK_MAX_THREADS)
                return usage_error(msg, len, "--threads needs a number from 1 to %d, got '%s'",
                                   UTC_TASK_MAX_THREADS, val);
            cfg->threads = (int)t;
            *threads_given = true;
        } else {
            const capp_param_t *p = &app->params[param];
            long long v;
            if (parse_ll(val, &v))
                return usage_error(msg, len, "--%s needs an integer (suffix K, M or G allowed), "
                                   "got '%s'", name, val);
            if (v < p->min || v > p->max)
                return usage_error(msg, len, "--%s must be from %lld to %lld, got %lld", name,
                                   p->min, p->max, v);
            value[param] = v;
            param_given[param] = true;
        }
    }
    if (!impl_given)
        return usage_error(msg, len, "--impl is required (seq, mpi, utc or gpu)");
    if (*threads_given && cfg->threads != 1 && cfg->impl != CAPP_UTC)
        return usage_error(msg, len,
                           "--threads is for --impl utc (mpi runs one process per core: use "
                           "-np; gpu runs one thread per GPU; seq one thread)");

    int base = size == CAPP_SIZE_CUSTOM ? CAPP_SIZE_S : size;
    for (int p = 0; p < app->nparams; p++) {
        cfg->p[p] = param_given[p] ? value[p] : app->params[p].def[base];
        if (param_given[p] && app->params[p].is_size && value[p] != app->params[p].def[base])
            size = CAPP_SIZE_CUSTOM;
    }
    cfg->size = size;
    return PARSE_RUN;
}

static void print_help(const capp_app_t *app)
{
    printf("%s: %s\n\n", app->name, app->summary);
    printf("usage: scripts/utcrun -np R %s --impl seq|mpi|utc|gpu [options]\n\n", app->name);
    printf("  --impl I        seq: plain C on rank 0; mpi: plain MPI, one process per core\n"
           "                  (-np R); utc: one UTC CPU task with --threads threads on every\n"
           "                  rank; gpu: one UTC GPU task, one thread per GPU on every rank\n"
           "  --threads N     utc: threads per rank (default: the node's cores / its ranks)\n"
           "  --size Z        S, M, L (dissertation, tables A.5-A.7), XL (the cluster size of\n"
           "                  figure 4.3, table A.3: not for one machine) or custom (S changed\n"
           "                  by the options below; changing a size option also makes it\n"
           "                  custom). Default S.\n");
    for (int p = 0; p < app->nparams; p++) {
        const capp_param_t *q = &app->params[p];
        char opt[40];
        snprintf(opt, sizeof opt, "--%s N", q->name);
        printf("  %-15s %s\n  %-15s S %lld, M %lld, L %lld, XL %lld\n", opt, q->help, "",
               q->def[0], q->def[1], q->def[2], q->def[3]);
    }
    printf("  --memtype K     pageable, pinned or unified: memory kind of GPU buffers (gpu)\n"
           "  --seed N        seed of the generated data (default 1)\n"
           "  --reps N        run N times (each a whole run, inputs regenerated) and report the\n"
           "                  fastest (default 1)\n"
           "  --verify        check the result on rank 0 against seq and the app's invariants\n"
           "  --json          print {\"app\",\"impl\",\"size\",\"threads\",\"ranks\",\"seconds\",\n"
           "                  \"verified\",...} as the last line\n"
           "  --help, --version\n\n%s\n\n", app->details);
    printf("Numbers may end in K, M or G (x1024, x1024^2, x1024^3).\n"
           "Exit status: 0 ok, 1 verification failed, 2 bad arguments, 3 --impl gpu without\n"
           "a GPU, 4 run-time failure.\n");
}

/* Rank in the job before MPI is started, from the launcher's environment (0 if none). */
/* Whether a launcher started this process as one rank of a job (not a singleton). */
static bool launched_by_mpi(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

static int launcher_rank(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v)
            return atoi(v);
    }
    return 0;
}

/* ---- running ---- */

static int node_ranks(void)
{
    MPI_Comm node;
    int n = 1;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        MPI_Comm_size(node, &n);
        MPI_Comm_free(&node);
    }
    return n;
}

/* Collective: a decision of rank 0 (an exit status) for everyone. */
static int agree(int status)
{
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return status;
}

/* Open MPI connects ranks on their first messages (and large messages take another path):
 * pay for that before any timing, the same for every implementation. */
static void warm_up(const capp_cfg_t *cfg)
{
    if (cfg->nranks == 1)
        return;
    size_t n = (size_t)1 << 17; /* 1 MiB of doubles, gathered from every rank */
    double *buf = malloc(sizeof(double) * n * (size_t)cfg->nranks);
    if (!buf)
        return;
    for (size_t i = 0; i < n; i++)
        buf[i] = (double)i;
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, (int)n, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Bcast(buf, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    free(buf);
}

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            putchar('\\');
        putchar(*s);
    }
    putchar('"');
}

static int device_counts(int nranks, int *counts)
{
    int mine = utc_gpu_device_count();
    if (mine < 0)
        mine = 0;
    MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
    int lo = counts[0];
    for (int r = 1; r < nranks; r++)
        lo = counts[r] < lo ? counts[r] : lo;
    return lo;
}

int capp_utc_task(const capp_cfg_t *cfg, const utc_task_ops_t *ops, utc_task_kind_t kind,
                  size_t window_bytes, void *init_arg, void *run_arg)
{
    int n = 0, *procs = NULL, rc;
    if (kind == UTC_TASK_GPU) {
        int *counts = capp_alloc(cfg, sizeof(int) * (size_t)cfg->nranks, "device counts");
        if (!counts)
            return CAPP_EXIT_RUNTIME;
        device_counts(cfg->nranks, counts);
        for (int r = 0; r < cfg->nranks; r++)
            n += counts[r];
        procs = capp_alloc(cfg, sizeof(int) * (size_t)n, "proc list");
        if (procs)
            for (int r = 0, k = 0; r < cfg->nranks; r++)
                for (int d = 0; d < counts[r]; d++)
                    procs[k++] = r;
        free(counts);
    } else {
        n = cfg->threads * cfg->nranks;
        procs = capp_alloc(cfg, sizeof(int) * (size_t)n, "proc list");
        if (procs)
            utc_procs_spread(procs, n, 0, cfg->nranks, cfg->threads);
    }
    if (!procs)
        return CAPP_EXIT_RUNTIME;

    utc_task_options_t opts = UTC_TASK_OPTIONS_INIT;
    opts.kind = kind;
    opts.window_size = window_bytes;
    opts.mem_kind = cfg->memtype;
    utc_task_t *task;
    rc = utc_task_create(ops, procs, n, &opts, &task);
    free(procs);
    if (rc != UTC_OK)
        return capp_utc_error(cfg, "utc_task_create", rc);
    if (ops->init && (rc = utc_task_init(task, init_arg)) != UTC_OK) {
        capp_utc_error(cfg, "task init", rc);
        goto out;
    }
    if ((rc = utc_task_run(task, run_arg)) != UTC_OK) {
        capp_utc_error(cfg, "utc_task_run", rc);
        goto out;
    }
    if ((rc = utc_task_wait(task)) != UTC_OK)
        capp_utc_error(cfg, "task run", rc);
out:;
    int drc = utc_task_destroy(task);
    if (rc == UTC_OK && drc != UTC_OK)
        rc = capp_utc_error(cfg, "utc_task_destroy", drc);
    return rc == UTC_OK ? 0 : CAPP_EXIT_RUNTIME;
}

utc_status_t capp_task_sync(utc_ctx_t *ctx, utc_gdata_t *gd)
{
    return ctx->group_size > 1 ? utc_gdata_barrier(gd) : utc_ctx_barrier_local(ctx);
}

/* Checks that need the job's shape; rank 0 prints. Returns an exit status. */
static int check_job(capp_cfg_t *cfg, bool threads_given)
{
    char msg[512] = "";
    int status = CAPP_EXIT_OK;
    int local = node_ranks();

    if (cfg->impl == CAPP_UTC) {
        if (!threads_given) {
            long cores = sysconf(_SC_NPROCESSORS_ONLN);
            int t = (int)(cores / local);
            t = t < 1 ? 1 : t;
            MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            cfg->threads = t;
        }
        if ((long long)cfg->threads * cfg->nranks > UTC_TASK_MAX_THREADS) {
            snprintf(msg, sizeof msg, "%d ranks x %d threads is more than the %d threads a "
                     "task may have", cfg->nranks, cfg->threads, UTC_TASK_MAX_THREADS);
            status = CAPP_EXIT_USAGE;
        }
    }
    if (status == CAPP_EXIT_OK && cfg->impl == CAPP_GPU) {
        int *counts = malloc(sizeof(int) * (size_t)cfg->nranks);
        if (!cfg->app->run[CAPP_GPU] || !utc_gpu_supported()) {
            snprintf(msg, sizeof msg, "--impl gpu: this build has no GPU support (UTC and the "
                     "apps were built without CUDA; configure with -DUTC_WITH_CUDA=ON on a "
                     "machine with a CUDA toolkit)");
            status = CAPP_EXIT_NO_GPU;
        } else if (!counts) {
            snprintf(msg, sizeof msg, "out of memory");
            status = CAPP_EXIT_RUNTIME;
        } else if (device_counts(cfg->nranks, counts) == 0) {
            int len = snprintf(msg, sizeof msg, "--impl gpu: no CUDA device is visible on rank(s)");
            for (int r = 0; r < cfg->nranks && len < (int)sizeof msg - 16; r++)
                if (counts[r] == 0)
                    len += snprintf(msg + len, sizeof msg - (size_t)len, " %d", r);
            const char *why = utc_gpu_unavailable_reason();
            snprintf(msg + len, sizeof msg - (size_t)len, " (utc_gpu_device_count() is 0%s%s)",
                     why ? ": " : "", why ? why : "");
            status = CAPP_EXIT_NO_GPU;
        } else {
            cfg->threads = counts[0];
        }
        free(counts);
    }
    if (status == CAPP_EXIT_OK && cfg->app->check && cfg->app->check(cfg, msg, sizeof msg))
        status = CAPP_EXIT_USAGE;
    if (status == CAPP_EXIT_OK && cfg->app->bytes) {
        double need = cfg->app->bytes(cfg);
        double have = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
        if (have > 0 && need * local > 0.9 * have) {
            snprintf(msg, sizeof msg, "size %s needs about %.1f GiB on a rank (%d ranks on "
                     "this node), more than the %.1f GiB this machine has: use more nodes or a "
                     "smaller --size", size_names[cfg->size], need / 1073741824.0, local,
                     have / 1073741824.0);
            status = CAPP_EXIT_USAGE;
        }
    }
    status = agree(status);
    if (status != CAPP_EXIT_OK && cfg->rank == 0)
        fprintf(stderr, "%s: error: %s\n", cfg->app->name, msg);
    if (status == CAPP_EXIT_OK && cfg->size == CAPP_SIZE_XL && cfg->rank == 0)
        fprintf(stderr, "%s: note: size XL is the cluster size of the dissertation's figure 4.3 "
                "(tens of nodes); on a few cores it runs for a long time\n", cfg->app->name);
    return status;
}

static void report(const capp_cfg_t *cfg, const capp_result_t *res, int verified,
                   const char *vmsg)
{
    char desc[160] = "";
    if (cfg->app->describe)
        cfg->app->describe(cfg, desc, sizeof desc);
    double share = res->seconds > 0 ? 100.0 * res->comm_seconds / res->seconds : 0.0;
    printf("%s: impl %s, size %s (%s), %d rank%s x %d thread%s: %.6f s, communication "
           "%.6f s (%.1f%%), check %.9g\n",
           cfg->app->name, impl_names[cfg->impl], size_names[cfg->size], desc, cfg->nranks,
           cfg->nranks == 1 ? "" : "s", cfg->threads, cfg->threads == 1 ? "" : "s",
           res->seconds, res->comm_seconds, share, res->check);
    if (cfg->verify)
        printf("%s: verification %s: %s\n", cfg->app->name, verified ? "passed" : "FAILED",
               vmsg);
    if (cfg->json) {
        printf("{\"app\":");
        json_string(cfg->app->name);
        printf(",\"impl\":\"%s\",\"size\":\"%s\",\"threads\":%d,\"ranks\":%d,\"seconds\":%.6f,"
               "\"verified\":%s,\"comm_seconds\":%.6f,\"comm_share\":%.4f,\"check\":%.17g,"
               "\"seed\":%" PRIu64 ",\"reps\":%d,\"dims\":",
               impl_names[cfg->impl], size_names[cfg->size], cfg->threads, cfg->nranks,
               res->seconds, cfg->verify ? (verified ? "true" : "false") : "null", res->comm_seconds,
               share / 100.0, res->check, cfg->seed, cfg->reps);
        json_string(desc);
        printf("}\n");
    }
    fflush(stdout);
}

int capp_main(int argc, char **argv, const capp_app_t *app)
{
    capp_cfg_t cfg;
    char msg[512];
    bool threads_given;
    parse_t what = parse(argc, argv, app, &cfg, &threads_given, msg, sizeof msg);
    bool printer = launcher_rank() == 0;
    switch (what) {
    case PARSE_HELP:
        if (printer)
            print_help(app);
        return CAPP_EXIT_OK;
    case PARSE_VERSION:
        if (printer)
            printf("%s (UTC cluster apps) %s, UTC %s, GPU support: %s\n", app->name,
                   CAPP_VERSION, UTC_VERSION_STRING, app->run[CAPP_GPU] ? "yes" : "no");
        return CAPP_EXIT_OK;
    case PARSE_ERROR:
        if (printer)
            fprintf(stderr, "%s: error: %s (see %s --help)\n", app->name, msg, app->name);
        /* every rank finds the same error; the others wait for the printer before they
         * exit, or mpirun, seeing their exit status, could stop it before its message */
        if (launched_by_mpi() && MPI_Init(&argc, &argv) == MPI_SUCCESS) {
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Finalize();
        }
        return CAPP_EXIT_USAGE;
    case PARSE_RUN:
        break;
    }

    bool with_utc = cfg.impl == CAPP_UTC || cfg.impl == CAPP_GPU;
    if (with_utc) {
        int rc = utc_init(&argc, &argv);
        if (rc != UTC_OK) {
            fprintf(stderr, "%s: error: utc_init: %s: %s\n", app->name, utc_status_string(rc),
                    utc_last_error());
            return CAPP_EXIT_RUNTIME;
        }
    } else if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "%s: error: MPI_Init failed\n", app->name);
        return CAPP_EXIT_RUNTIME;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &cfg.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &cfg.nranks);

    int status = check_job(&cfg, threads_given);
    capp_result_t res = {0};
    if (status == CAPP_EXIT_OK) {
        warm_up(&cfg);
        for (int rep = 0; rep < cfg.reps; rep++) {
            capp_result_t one = {0};
            int rc = 0;
            MPI_Barrier(MPI_COMM_WORLD);
            if (cfg.impl != CAPP_SEQ || cfg.rank == 0)
                rc = app->run[cfg.impl](&cfg, &one);
            if (rc) {
                fflush(stdout);
                MPI_Abort(MPI_COMM_WORLD, CAPP_EXIT_RUNTIME);
            }
            /* keep the fastest run (rank 0's time, which is the run's) */
            if (rep == 0 || one.seconds < res.seconds) {
                if (res.out && app->free_out)
                    app->free_out(res.out);
                res = one;
            } else if (one.out && app->free_out) {
                app->free_out(one.out);
            }
        }
        if (cfg.rank == 0) {
            int verified = 1;
            char vmsg[512] = "";
            if (cfg.verify)
                verified = app->verify(&cfg, &res, vmsg, sizeof vmsg);
            report(&cfg, &res, verified, vmsg);
            status = verified ? CAPP_EXIT_OK : CAPP_EXIT_VERIFY;
            if (res.out && app->free_out)
                app->free_out(res.out);
        }
        status = agree(status);
    }
    if (with_utc) {
        utc_status_t frc = utc_finalize(); /* fails when, say, the UTC_TRACE file was lost */
        if (frc != UTC_OK) {
            fprintf(stderr, "%s: utc_finalize: %s\n", app->name, utc_last_error());
            if (status == CAPP_EXIT_OK)
                status = CAPP_EXIT_RUNTIME;
        }
    } else
        MPI_Finalize();
    return status;
}
