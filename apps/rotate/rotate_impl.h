/**
 * @file rotate_impl.h
 * @brief The four versions of the rotate app. Each fills job->dst (every plane rotated
 * with the RYR sample's ryr_rotate_rows rules), runs its timed part opts->reps times and
 * gives the fastest in @p seconds.
 *
 * @return APP_EXIT_OK, or an exit status after printing what went wrong
 */
#ifndef APP_ROTATE_IMPL_H
#define APP_ROTATE_IMPL_H

#include "app_cli.h"
#include "rotate_image.h"

/** Plain C: ryr_rotate_plane on each plane. */
int rotate_run_seq(rotate_job_t *job, const app_opts_t *opts, double *seconds);

/** OpenMP: a static schedule over the output rows of all planes. */
int rotate_run_omp(rotate_job_t *job, const app_opts_t *opts, double *seconds);

/** A UTC CPU task: thread t rotates the t-th block of output rows. */
int rotate_run_utc(rotate_job_t *job, const app_opts_t *opts, double *seconds);

/** A UTC GPU task: each GPU thread a block of rows, one CUDA thread per output pixel. */
int rotate_run_gpu(rotate_job_t *job, const app_opts_t *opts, double *seconds);

#endif /* APP_ROTATE_IMPL_H */
