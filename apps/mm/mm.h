/*
 * mm: C = A x B in float. A is m x k, B is k x n, all row-major.
 *
 * Every implementation computes C(i,j) = sum over p = 0 .. k-1 of A(i,p) * B(p,j), adding
 * the products in increasing p starting from 0.0f, with no FMA: results are bit-identical
 * across implementations, ranks and threads. Work is split by rows of C: rows over ranks
 * (capp_block), then each rank's rows over its threads.
 */
#ifndef UTC_APPS_MM_H
#define UTC_APPS_MM_H

#include <stdint.h>

#include "cluster_app.h"

enum { MM_P_M = 0, MM_P_K = 1, MM_P_N = 2 };

typedef struct mm_dims {
    int64_t m, k, n;
} mm_dims_t;

static inline mm_dims_t mm_dims(const capp_cfg_t *cfg)
{
    return (mm_dims_t){cfg->p[MM_P_M], cfg->p[MM_P_K], cfg->p[MM_P_N]};
}

/* A and B from the seed: uniform in [-1, 1). */
void mm_generate(uint64_t seed, mm_dims_t d, float *a, float *b);

/* rows rows of C = those rows of A (row stride k) x B (k x n); C's row stride is n. */
void mm_rows(const float *a, const float *b, float *c, int64_t rows, int64_t k, int64_t n);

/* Sum of C's elements, in double (the report's check value). */
double mm_checksum(const float *c, int64_t count);

/* Multiplies one thread's rows (CPU: mm_rows; GPU: through the device). Adds the time
 * spent moving data between host and device to *xfer. Returns a UTC status. */
typedef int (*mm_compute_fn)(const float *a, const float *b, float *c, int64_t rows, int64_t k,
                             int64_t n, double *xfer);

/* The UTC task (mm_utc.c), CPU or GPU kind, computing with `compute`. */
int mm_task(const capp_cfg_t *cfg, capp_result_t *res, utc_task_kind_t kind,
            mm_compute_fn compute);

int mm_seq(const capp_cfg_t *cfg, capp_result_t *res);
int mm_mpi(const capp_cfg_t *cfg, capp_result_t *res);
int mm_utc(const capp_cfg_t *cfg, capp_result_t *res);
int mm_gpu(const capp_cfg_t *cfg, capp_result_t *res);
int mm_verify(const capp_cfg_t *cfg, const capp_result_t *res, char *msg, size_t len);

#endif /* UTC_APPS_MM_H */
