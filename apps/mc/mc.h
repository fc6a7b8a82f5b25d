/*
 * mc: Monte Carlo estimate of the integral of f(x) = 4 / (1 + x^2) over [0, 1] (= pi), in
 * double, from N samples.
 *
 * Sample i is x_i = the i-th value of a counter-based stream (SplitMix64's output for
 * counter i under a key from the seed, 53 bits into [0, 1)): any thread draws any sample
 * with no state. Samples are grouped in fixed blocks of MC_BLOCK; a block's sum adds its
 * f(x_i) in increasing i, and the estimate is (the blocks' sums added in block order) / N.
 * Blocks, not threads, fix the order of the additions, so the estimate is bit-identical for
 * any implementation, rank count and thread count. Blocks are split over ranks and threads;
 * one gather brings the block sums to rank 0.
 */
#ifndef UTC_APPS_MC_H
#define UTC_APPS_MC_H

#include <stdint.h>

#include "cluster_app.h"
#include "mc_kernels.h" /* MC_BLOCK */

enum { MC_P_SAMPLES = 0 };

/* Variance of f(U) for U uniform in [0,1): E f^2 - pi^2 = 4 + 2 pi - pi^2. */
#define MC_PI 3.14159265358979323846
#define MC_VAR (4.0 + 2.0 * MC_PI - MC_PI * MC_PI)

typedef struct mc_out {
    double estimate;
    int64_t samples;
} mc_out_t;

static inline int64_t mc_nblocks(int64_t samples)
{
    return (samples + MC_BLOCK - 1) / MC_BLOCK;
}

/* The stream's key for a seed. */
uint64_t mc_key(uint64_t seed);

/* Sums of blocks b0 .. b0+count-1 into sums[0 .. count-1]. */
void mc_blocks(uint64_t key, int64_t samples, int64_t b0, int64_t count, double *sums);

/* The estimate from all block sums, in block order. */
double mc_total(const double *sums, int64_t nblocks, int64_t samples);

/* How the threads of the UTC task compute their block sums (mc_utc.c runs the task, CPU
 * or GPU kind). Returns a UTC status; adds host/device transfer time to *xfer. */
typedef int (*mc_blocks_fn)(uint64_t key, int64_t samples, int64_t b0, int64_t count,
                            double *sums, double *xfer);

int mc_task(const capp_cfg_t *cfg, capp_result_t *res, utc_task_kind_t kind,
            mc_blocks_fn blocks);

int mc_seq(const capp_cfg_t *cfg, capp_result_t *res);
int mc_mpi(const capp_cfg_t *cfg, capp_result_t *res);
int mc_utc(const capp_cfg_t *cfg, capp_result_t *res);
int mc_gpu(const capp_cfg_t *cfg, capp_result_t *res);
int mc_verify(const capp_cfg_t *cfg, const capp_result_t *res, char *msg, size_t len);
mc_out_t *mc_result(double estimate, int64_t samples);

#endif /* UTC_APPS_MC_H */
