/**
 * @file rt_impl.h
 * @brief The four versions of the raytrace app. Each renders job->rgb with the RYR
 * sample's c-ray renderer, runs its timed part opts->reps times and gives the fastest in
 * @p seconds.
 *
 * @return APP_EXIT_OK, or an exit status after printing what went wrong
 */
#ifndef APP_RT_IMPL_H
#define APP_RT_IMPL_H

#include "app_cli.h"
#include "rt_scene.h"

/** Plain C: ryr_render_rows over the whole frame. */
int rt_run_seq(rt_job_t *job, const app_opts_t *opts, double *seconds);

/** OpenMP: rows under a dynamic schedule (rows cost very different amounts). */
int rt_run_omp(rt_job_t *job, const app_opts_t *opts, double *seconds);

/** A UTC CPU task: threads take the next row from a shared counter (dynamic, as omp). */
int rt_run_utc(rt_job_t *job, const app_opts_t *opts, double *seconds);

/** A UTC GPU task: the RYR sample's GPU renderer, each GPU thread a block of rows. */
int rt_run_gpu(rt_job_t *job, const app_opts_t *opts, double *seconds);

#endif /* APP_RT_IMPL_H */
