/**
 * @file yuv_impl.h
 * @brief The four versions of the yuv app. Each fills job->y, u, v from job->rgb (the
 * RYR sample's BT.601 conversion), runs its timed part opts->reps times and gives the
 * fastest in @p seconds.
 *
 * @return APP_EXIT_OK, or an exit status after printing what went wrong
 */
#ifndef APP_YUV_IMPL_H
#define APP_YUV_IMPL_H

#include "app_cli.h"
#include "yuv_image.h"

/** Plain C: ryr_yuv_convert over the whole image. */
int yuv_run_seq(yuv_job_t *job, const app_opts_t *opts, double *seconds);

/** OpenMP: rows under a static schedule. */
int yuv_run_omp(yuv_job_t *job, const app_opts_t *opts, double *seconds);

/** A UTC CPU task: thread t converts the t-th block of pixels. */
int yuv_run_utc(yuv_job_t *job, const app_opts_t *opts, double *seconds);

/** A UTC GPU task: each GPU thread a block of pixels, one CUDA thread per pixel. */
int yuv_run_gpu(yuv_job_t *job, const app_opts_t *opts, double *seconds);

#endif /* APP_YUV_IMPL_H */
