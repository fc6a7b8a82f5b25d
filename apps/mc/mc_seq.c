/* mc: the sampling kernel every CPU implementation shares, seq and verification. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cluster_rng.h"
#include "mc.h"

uint64_t mc_key(uint64_t seed)
{
    return capp_stream(seed, 40);
}

#define MC_LANES 4

void mc_blocks(uint64_t key, int64_t samples, int64_t b0, int64_t count, double *sums)
{
    int64_t b = b0, end = b0 + count, full = samples / MC_BLOCK;
    /* Four full blocks per pass (independent sums, for the pipelines); each block still
     * adds its samples in order. */
    for (; b + MC_LANES <= end && b + MC_LANES <= full; b += MC_LANES) {
        double s[MC_LANES] = {0};
        for (int64_t i = 0; i < MC_BLOCK; i++)
            for (int q = 0; q < MC_LANES; q++)
                s[q] += mc_f(key, (b + q) * MC_BLOCK + i);
        for (int q = 0; q < MC_LANES; q++)
            sums[b + q - b0] = s[q];
    }
    for (; b < end; b++)
        sums[b - b0] = mc_block_sum(key, samples, b);
}

double mc_total(const double *sums, int64_t nblocks, int64_t samples)
{
    double t = 0;
    for (int64_t b = 0; b < nblocks; b++)
        t += sums[b];
    return t / (double)samples;
}

mc_out_t *mc_result(double estimate, int64_t samples)
{
    mc_out_t *o = malloc(sizeof *o);
    if (o)
        o->estimate = estimate, o->samples = samples;
    return o;
}

static int mc_finish(const capp_cfg_t *cfg, capp_result_t *res, double estimate)
{
    res->out = mc_result(estimate, cfg->p[MC_P_SAMPLES]);
    if (!res->out)
        return capp_error(cfg, "out of memory for the result");
    res->check = estimate;
    return 0;
}

int mc_seq(const capp_cfg_t *cfg, capp_result_t *res)
{
    int64_t n = cfg->p[MC_P_SAMPLES], nb = mc_nblocks(n);
    double *sums = capp_alloc(cfg, sizeof(double) * (size_t)nb, "block sums");
    if (!sums)
        return CAPP_EXIT_RUNTIME;
    double t0 = capp_now();
    mc_blocks(mc_key(cfg->seed), n, 0, nb, sums);
    double estimate = mc_total(sums, nb, n);
    res->seconds = capp_now() - t0;
    free(sums);
    return mc_finish(cfg, res, estimate);
}

int mc_verify(const capp_cfg_t *cfg, const capp_result_t *res, char *msg, size_t len)
{
    const mc_out_t *o = res->out;
    int64_t n = cfg->p[MC_P_SAMPLES], nb = mc_nblocks(n);
    if (!o) {
        snprintf(msg, len, "no result");
        return 0;
    }
    double err = sqrt(MC_VAR / (double)n);
    if (fabs(o->estimate - MC_PI) > 6 * err) {
        snprintf(msg, len, "estimate %.17g is %.1f standard errors from pi", o->estimate,
                 fabs(o->estimate - MC_PI) / err);
        return 0;
    }
    double *sums = malloc(sizeof(double) * (size_t)nb);
    if (!sums) {
        snprintf(msg, len, "out of memory for the reference");
        return 0;
    }
    /* seq, one block at a time (not the kernel's four-block passes) */
    uint64_t key = mc_key(cfg->seed);
    for (int64_t b = 0; b < nb; b++)
        mc_blocks(key, n, b, 1, sums + b);
    double ref = mc_total(sums, nb, n);
    free(sums);
    if (ref != o->estimate) {
        snprintf(msg, len, "estimate %.17g, seq %.17g", o->estimate, ref);
        return 0;
    }
    snprintf(msg, len, "estimate %.17g equals seq bit for bit; %.2f standard errors (%.3g) "
             "from pi", o->estimate, fabs(o->estimate - MC_PI) / err, err);
    return 1;
}
