/**
 * @file app_cli.h
 * @brief The command line shared by the benchmark apps:
 *
 *     NAME [--impl seq|omp|utc|gpu] [--threads N] [--size S|M|L|AxB]
 *          [--memtype pageable|pinned|unified] [--verify] [--json] [--seed N] [--reps N]
 *          [--input FILE] [--output FILE] [app options] [--help] [--version]
 *
 * Options take their value as the next argument or after '=' (`--size=M`). An app adds
 * its own options through app_info_t.options and a callback.
 */
#ifndef APP_CLI_H
#define APP_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "app_size.h"

/** Exit status of the apps (the same numbers as the cluster apps' driver). */
enum {
    APP_EXIT_OK = 0,       /**< done (and verified, when asked) */
    APP_EXIT_MISMATCH = 1, /**< --verify found a result different from seq's */
    APP_EXIT_USAGE = 2,    /**< bad command line, or an input file that is unreadable or malformed */
    APP_EXIT_NO_GPU = 3,   /**< --impl gpu, but no GPU support in this build or no device */
    APP_EXIT_FAIL = 4      /**< failure at run time: out of memory, a UTC or CUDA error, a write error */
};

/** The implementations each app has. */
typedef enum app_impl {
    APP_IMPL_SEQ = 0, /**< plain C, no framework */
    APP_IMPL_OMP,     /**< OpenMP (the baseline) */
    APP_IMPL_UTC,     /**< a multi-threaded UTC CPU task on rank 0 */
    APP_IMPL_GPU      /**< a UTC GPU task with a CUDA kernel */
} app_impl_t;

/** Memory kind of GPU buffers (maps to utc_mem_kind_t). */
typedef enum app_memtype {
    APP_MEM_PAGEABLE = 0,
    APP_MEM_PINNED,
    APP_MEM_UNIFIED
} app_memtype_t;

/** An app-specific option. */
typedef struct app_option {
    const char *name; /**< with its dashes: "--angle" */
    const char *arg;  /**< name of its value for the help ("DEG"), NULL for a flag */
    const char *help; /**< one line */
} app_option_t;

/** What an app tells the parser about itself. */
typedef struct app_info {
    const char *name;             /**< program name: "md5" */
    const char *summary;          /**< one line: what it computes */
    app_size_t sizes[3];          /**< S, M, L */
    const char *size_help;        /**< meaning of a custom AxB: "W x H pixels" */
    const char *input_help;       /**< what --input reads, or NULL when it has no --input */
    const char *output_help;      /**< what --output writes */
    const app_option_t *options;  /**< extra options, ended by {NULL}; may be NULL */
    /**
     * Called for each extra option given; value is NULL for flags. Returns 0, or -1 with
     * a message in err (the parser prints it and the app exits with APP_EXIT_USAGE).
     */
    int (*option)(void *cfg, const char *name, const char *value, char *err, size_t errlen);
    int gpu_max_threads;          /**< most threads --impl gpu takes (>= 1) */
} app_info_t;

/** The parsed common options. */
typedef struct app_opts {
    app_impl_t impl;       /**< default seq */
    int threads;           /**< default: online CPUs (1 for seq and gpu) */
    app_size_t size;       /**< default S */
    app_memtype_t memtype; /**< default pageable */
    int verify;            /**< --verify: compare with seq, exactly */
    int json;              /**< --json: one JSON object last on stdout */
    uint64_t seed;         /**< default 1 */
    int reps;              /**< times the timed part runs; the fastest is reported */
    const char *input;     /**< NULL: generate from the seed */
    const char *output;    /**< NULL: write nothing */
} app_opts_t;

/** Results of app_cli_parse. */
enum { APP_CLI_RUN = 0, APP_CLI_DONE = 1, APP_CLI_ERROR = -1 };

/**
 * @brief Parse argv. Prints --help / --version output on stdout and errors on stderr.
 * @param cfg passed to info->option
 * @return APP_CLI_RUN (opts filled), APP_CLI_DONE (help or version printed: exit 0) or
 *         APP_CLI_ERROR (message printed: exit APP_EXIT_USAGE)
 */
int app_cli_parse(const app_info_t *info, void *cfg, int argc, char **argv, app_opts_t *opts);

/** @brief "seq", "omp", "utc" or "gpu". */
const char *app_impl_name(app_impl_t impl);

/** @brief "pageable", "pinned" or "unified". */
const char *app_memtype_name(app_memtype_t mem);

#endif /* APP_CLI_H */
