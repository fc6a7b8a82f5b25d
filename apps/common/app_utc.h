/**
 * @file app_utc.h
 * @brief What the utc and gpu versions of the apps share: starting UTC, checking for a
 * GPU, making a task of N threads on rank 0, and reporting UTC errors.
 */
#ifndef APP_UTC_H
#define APP_UTC_H

#include <utc/utc.h>

#include "app_cli.h"

/**
 * @brief utc_init, and check that the app runs on one rank (these apps are single-node).
 * Prints the problem on failure.
 * @return APP_EXIT_OK, or the exit status to return (UTC is then not running)
 */
int app_utc_start(const char *app, int *argc, char ***argv);

/**
 * @brief utc_finalize (when UTC is running); a failure of it (a trace that could not be
 * written) is printed and turns a successful exit status into APP_EXIT_FAIL.
 * @param app the program's name, for the message
 * @param rc  the exit status so far
 * @return the exit status to return: rc, or APP_EXIT_FAIL where rc was APP_EXIT_OK and
 *         utc_finalize failed
 */
int app_utc_stop(const char *app, int rc);

/**
 * @brief Check that --impl gpu can run: a CUDA build and at least one visible device.
 * Call after app_utc_start. Prints a clear message when it cannot.
 * @return APP_EXIT_OK or APP_EXIT_NO_GPU
 */
int app_gpu_check(const char *app);

/** @brief utc_mem_kind_t of a --memtype. */
utc_mem_kind_t app_mem_kind(app_memtype_t mem);

/**
 * @brief Create a task of @p nthreads threads, all on rank 0, with no RMA window.
 * @param kind UTC_TASK_CPU or UTC_TASK_GPU
 * @param mem memory kind of its GPU buffers
 * @return as utc_task_create
 */
utc_status_t app_task_create(const utc_task_ops_t *ops, int nthreads, utc_task_kind_t kind,
                             app_memtype_t mem, utc_task_t **out)
    __attribute__((warn_unused_result));

/**
 * @brief Run a created (and initialized) task @p reps times, each a utc_task_run +
 * utc_task_wait, and give the fastest in @p best.
 * @return UTC_OK or the first error of a run
 */
utc_status_t app_task_time(utc_task_t *task, void *arg, int reps, double *best)
    __attribute__((warn_unused_result));

/** @brief Print "APP: WHAT: status (detail)" on stderr for a failed UTC call. */
void app_utc_error(const char *app, const char *what, int status);

#endif /* APP_UTC_H */
