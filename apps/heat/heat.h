/*
 * heat: 2D heat conduction on a rows x cols grid of floats, explicit 5-point stencil,
 * fixed boundary, T steps:
 *
 *   u'(i,j) = u(i,j) + alpha * ((u(i-1,j) + u(i+1,j)) + (u(i,j-1) + u(i,j+1)) - 4 u(i,j))
 *
 * with alpha = 0.2 (stable for alpha <= 1/4). The outer rows and columns keep their
 * values: the top row is 1, the other edges 0; the interior starts uniform in [0, 1)
 * from the seed. Every implementation evaluates the same expression per cell, so results
 * are bit-identical. The interior rows are split over ranks (each rank needs one), then
 * over each rank's threads; neighbouring ranks swap one row each way per step.
 */
#ifndef UTC_APPS_HEAT_H
#define UTC_APPS_HEAT_H

#include <stdint.h>

#include "cluster_app.h"
#include "heat_kernels.h" /* HEAT_ALPHA */

enum { HEAT_P_ROWS = 0, HEAT_P_COLS = 1, HEAT_P_STEPS = 2 };

typedef struct heat_dims {
    int64_t rows, cols, steps;
} heat_dims_t;

static inline heat_dims_t heat_dims(const capp_cfg_t *cfg)
{
    return (heat_dims_t){cfg->p[HEAT_P_ROWS], cfg->p[HEAT_P_COLS], cfg->p[HEAT_P_STEPS]};
}

/* The initial grid (rows x cols, boundary included). */
void heat_generate(uint64_t seed, heat_dims_t d, float *grid);

/* One row of the next grid from the rows above, at and below it; out[0] and out[cols-1]
 * (the fixed edges) are copied. */
void heat_row(const float *up, const float *mid, const float *down, float *out, int64_t cols);

/* Rows first .. first+count-1 of `next` from `cur` (row stride cols). */
void heat_rows(const float *cur, float *next, int64_t first, int64_t count, int64_t cols);

double heat_checksum(const float *grid, int64_t count);

/*
 * How the threads of the UTC task compute (heat_utc.c runs the task, CPU or GPU kind).
 * Rows are numbered in the rank's buffers (row 0 and n+1 are halo rows); a thread owns
 * rows first .. first+count-1 (count > 0). Each function returns a UTC status and adds
 * its host/device transfer time to *xfer.
 */
typedef struct heat_backend {
    /* Before the first step; buf is the rank's buffer holding the initial rows. */
    int (*begin)(void **state, const float *buf, int64_t first, int64_t count, int64_t cols,
                 double *xfer);
    /* One step: the thread's rows of `next` from `cur`. `cur` has current halo rows; on
     * return the thread's first and last rows of `next` must be in host memory. */
    int (*step)(void *state, const float *cur, float *next, int64_t first, int64_t count,
                int64_t cols, double *xfer);
    /* After the last step: all the thread's rows of `fin` in host memory; free state. */
    int (*end)(void *state, float *fin, int64_t first, int64_t count, int64_t cols,
               double *xfer);
} heat_backend_t;

int heat_task(const capp_cfg_t *cfg, capp_result_t *res, utc_task_kind_t kind,
              const heat_backend_t *backend);

int heat_seq(const capp_cfg_t *cfg, capp_result_t *res);
int heat_mpi(const capp_cfg_t *cfg, capp_result_t *res);
int heat_utc(const capp_cfg_t *cfg, capp_result_t *res);
int heat_gpu(const capp_cfg_t *cfg, capp_result_t *res);
int heat_verify(const capp_cfg_t *cfg, const capp_result_t *res, char *msg, size_t len);

#endif /* UTC_APPS_HEAT_H */
