/**
 * @file md5_impl.h
 * @brief The four versions of the md5 app. Each digests every buffer of @p in into
 * @p digests (16 bytes per buffer, in order), runs its timed part opts->reps times and
 * gives the fastest in @p seconds.
 *
 * @return APP_EXIT_OK, or an exit status after printing what went wrong
 */
#ifndef APP_MD5_IMPL_H
#define APP_MD5_IMPL_H

#include <stdint.h>

#include "app_cli.h"
#include "md5_input.h"

/** Plain C: one loop over the buffers. */
int md5_run_seq(const md5_input_t *in, uint8_t *digests, const app_opts_t *opts,
                double *seconds);

/** OpenMP: the same loop, split statically over opts->threads threads. */
int md5_run_omp(const md5_input_t *in, uint8_t *digests, const app_opts_t *opts,
                double *seconds);

/** A UTC CPU task of opts->threads threads; thread t digests the t-th block of buffers. */
int md5_run_utc(const md5_input_t *in, uint8_t *digests, const app_opts_t *opts,
                double *seconds);

/** A UTC GPU task: each GPU thread digests its block of buffers, one CUDA thread per buffer. */
int md5_run_gpu(const md5_input_t *in, uint8_t *digests, const app_opts_t *opts,
                double *seconds);

#endif /* APP_MD5_IMPL_H */
