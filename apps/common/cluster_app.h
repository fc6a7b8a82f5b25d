/*
 * Driver of the cluster apps (mm, heat, kmeans, nbody, mc): one command line, four
 * implementations behind one table.
 *
 *   <app> --impl seq|mpi|utc|gpu [--threads N] [--size S|M|L|XL|custom] [--<param> V]...
 *         [--memtype pageable|pinned|unified] [--verify] [--json] [--seed N] [--reps N]
 *
 * An app describes itself with a capp_app_t: its parameters (with their S, M, L and XL
 * values), a check of parameter values, a run function per implementation and a verifier.
 * capp_main parses the command line, starts MPI (plain MPI_Init for seq and mpi, utc_init
 * for utc and gpu), runs the chosen implementation on every rank, verifies on rank 0 and
 * prints the report (and the JSON line).
 *
 * Exit status: 0 success; 1 verification failed; 2 bad command line or parameters;
 * 3 --impl gpu and no GPU (no GPU support in the build, or no device on a rank);
 * 4 failure at run time (out of memory, MPI or UTC error).
 */
#ifndef UTC_APPS_CLUSTER_APP_H
#define UTC_APPS_CLUSTER_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h> /* free, for CAPP_APP_MAIN */

#include <utc/utc.h>

typedef enum capp_impl { CAPP_SEQ = 0, CAPP_MPI = 1, CAPP_UTC = 2, CAPP_GPU = 3 } capp_impl_t;
#define CAPP_NIMPLS 4

/* Size presets: S, M, L from the dissertation's appendix A (tables A.5-A.7), XL the
 * cluster sizes of figure 4.3 (table A.3). CAPP_SIZE_CUSTOM: S with overrides. */
enum { CAPP_SIZE_S = 0, CAPP_SIZE_M, CAPP_SIZE_L, CAPP_SIZE_XL, CAPP_NSIZES };
#define CAPP_SIZE_CUSTOM CAPP_NSIZES

#define CAPP_MAX_PARAMS 6

/* Exit statuses of capp_main. */
enum {
    CAPP_EXIT_OK = 0,
    CAPP_EXIT_VERIFY = 1,
    CAPP_EXIT_USAGE = 2,
    CAPP_EXIT_NO_GPU = 3,
    CAPP_EXIT_RUNTIME = 4
};

/* One numeric parameter of an app, given as --<name> V (V may end in K, M or G: x1024^n). */
typedef struct capp_param {
    const char *name;            /* option name without the dashes */
    const char *help;            /* one line for --help */
    bool is_size;                /* a data dimension: overriding it makes the size "custom" */
    long long def[CAPP_NSIZES];  /* value at S, M, L, XL */
    long long min, max;          /* accepted range */
} capp_param_t;

struct capp_app;

/* The parsed command line and where this process stands. Same on every rank. */
typedef struct capp_cfg {
    const struct capp_app *app;
    capp_impl_t impl;
    int threads;                 /* utc: threads per rank; gpu: GPUs of rank 0; else 1 */
    int size;                    /* CAPP_SIZE_S .. CAPP_SIZE_CUSTOM */
    long long p[CAPP_MAX_PARAMS];/* parameter values, in the app's order */
    utc_mem_kind_t memtype;      /* GPU buffers' memory kind (gpu only) */
    bool verify, json;
    uint64_t seed;
    int reps;                    /* runs; the fastest is reported */
    int rank, nranks;            /* MPI_COMM_WORLD */
} capp_cfg_t;

/* What a run hands back. */
typedef struct capp_result {
    double seconds;              /* rank 0: wall time of the run (distribution to collection) */
    double comm_seconds;         /* rank 0: its time in communication phases (reported as a
                                  * share of `seconds`; rank 0 takes part in all of them) */
    double check;                /* rank 0: one number summing up the result, for the report */
    void *out;                   /* rank 0: the result, for the verifier (app->free_out frees) */
} capp_result_t;

/* Runs one implementation. Called on every rank (seq: on rank 0 only). Returns 0, or
 * non-zero after printing why with capp_error (the driver then aborts the job). */
typedef int (*capp_run_fn)(const capp_cfg_t *cfg, capp_result_t *res);

typedef struct capp_app {
    const char *name;
    const char *summary;         /* one line: what the app computes */
    const char *details;         /* --help paragraph: sizes, data, verification */
    const capp_param_t *params;
    int nparams;
    /* Rejects values that cannot work for this many ranks/threads (same on every rank).
     * Returns 0, or non-zero with a message in msg. May be NULL. */
    int (*check)(const capp_cfg_t *cfg, char *msg, size_t len);
    /* Bytes the busiest rank needs (for a clear refusal of sizes the machine cannot hold). */
    double (*bytes)(const capp_cfg_t *cfg);
    /* Short description of the size, e.g. "256x256 * 256x256". */
    void (*describe)(const capp_cfg_t *cfg, char *buf, size_t len);
    capp_run_fn run[CAPP_NIMPLS];/* by capp_impl_t; run[CAPP_GPU] NULL without CUDA */
    /* Rank 0 after a run: checks res->out (against seq and the app's invariants).
     * Returns 1 when it passes, 0 otherwise, with a one-line account in msg. */
    int (*verify)(const capp_cfg_t *cfg, const capp_result_t *res, char *msg, size_t len);
    void (*free_out)(void *out);
} capp_app_t;

/* Whole program: parse, start MPI/UTC, run, verify, report. Returns the exit status. */
int capp_main(int argc, char **argv, const capp_app_t *app);

/* run[CAPP_GPU] of an app: fn in builds with CUDA (CAPP_WITH_CUDA), NULL otherwise. */
#ifdef CAPP_WITH_CUDA
#define CAPP_GPU_RUN(fn) fn
#else
#define CAPP_GPU_RUN(fn) NULL
#endif

/*
 * An app's table and its main(), from the names it defines with prefix p:
 *   p_params      its capp_param_t array (nparams is the array's length)
 *   p_check_cfg   capp_app_t.check       p_bytes, p_describe, p_verify: the same fields
 *   p_seq, p_mpi, p_utc, p_gpu           the implementations (p_gpu only with CUDA)
 * The results (capp_result_t.out) are freed with free().
 */
#define CAPP_APP_MAIN(p, app_name, app_summary, app_details)                             \
    _Static_assert(sizeof p##_params / sizeof p##_params[0] <= CAPP_MAX_PARAMS,           \
                   "more parameters than CAPP_MAX_PARAMS");                              \
    static const capp_app_t p##_app = {                                                  \
        .name = app_name,                                                                \
        .summary = app_summary,                                                          \
        .details = app_details,                                                          \
        .params = p##_params,                                                            \
        .nparams = (int)(sizeof p##_params / sizeof p##_params[0]),                      \
        .check = p##_check_cfg,                                                          \
        .bytes = p##_bytes,                                                              \
        .describe = p##_describe,                                                        \
        .run = {p##_seq, p##_mpi, p##_utc, CAPP_GPU_RUN(p##_gpu)},                       \
        .verify = p##_verify,                                                            \
        .free_out = free,                                                                \
    };                                                                                   \
    int main(int argc, char **argv)                                                      \
    {                                                                                    \
        return capp_main(argc, argv, &p##_app);                                          \
    }

/* ---- helpers for the implementations ---- */

/* Print "<app>: error (rank r): ..." on stderr. Always returns CAPP_EXIT_RUNTIME. */
int capp_error(const capp_cfg_t *cfg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print a UTC failure with utc_last_error(); returns CAPP_EXIT_RUNTIME. */
int capp_utc_error(const capp_cfg_t *cfg, const char *what, int status);

/* malloc that reports failure (and returns NULL); bytes 0 gives a 1-byte block. */
void *capp_alloc(const capp_cfg_t *cfg, size_t bytes, const char *what);

/* Monotonic wall-clock seconds. */
double capp_now(void);

/* Block partition of n items over `parts`: part i gets [*start, *start + *count). The first
 * n % parts parts get one item more. */
static inline void capp_block(int64_t n, int parts, int i, int64_t *start, int64_t *count)
{
    int64_t q = n / parts, r = n % parts;
    *start = (int64_t)i * q + (i < r ? i : r);
    *count = q + (i < r ? 1 : 0);
}

/* Largest block of capp_block(n, parts, ...). */
static inline int64_t capp_block_max(int64_t n, int parts)
{
    return (n + parts - 1) / parts;
}

/* Window bytes a task needs for global shared data objects of these sizes (the allocator
 * rounds each object up to 64 bytes), with some slack. */
size_t capp_window_bytes(const size_t *object_bytes, int n);

/* Run a UTC task: create it (threads_per_rank threads on every rank of the world, CPU or
 * GPU kind), init with init_arg (if the ops have an init), run with run_arg, wait,
 * destroy. GPU tasks get one thread per visible device on each rank. Returns 0 or
 * CAPP_EXIT_RUNTIME after printing the failure. */
int capp_utc_task(const capp_cfg_t *cfg, const utc_task_ops_t *ops, utc_task_kind_t kind,
                  size_t window_bytes, void *init_arg, void *run_arg);

/* Inside a task: barrier of all its threads that also completes every global shared data
 * store (utc_gdata_barrier on gd) when the task spans several ranks; with one rank there is
 * nothing remote to complete and the local barrier is enough. Every thread calls it. */
utc_status_t capp_task_sync(utc_ctx_t *ctx, utc_gdata_t *gd);

/* Inside a task: return a failed UTC call's status from the task function. */
#define CAPP_TRY(call)                                                                   \
    do {                                                                                 \
        int capp_rc_ = (call);                                                           \
        if (capp_rc_ != UTC_OK)                                                          \
            return capp_rc_;                                                             \
    } while (0)

#endif /* UTC_APPS_CLUSTER_APP_H */
