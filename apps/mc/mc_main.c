/* mc: what the cluster-app driver needs to know of it (CAPP_APP_MAIN). */
#include <stdio.h>

#include "mc.h"

static const capp_param_t mc_params[] = {
    [MC_P_SAMPLES] = {"samples", "samples N", true,
                      {1LL << 22, 1LL << 27, 1LL << 30, 15360LL << 20}, 1, 1LL << 46},
};

static double mc_bytes(const capp_cfg_t *cfg)
{
    return 8.0 * (double)mc_nblocks(cfg->p[MC_P_SAMPLES]) * 2;
}

static int mc_check_cfg(const capp_cfg_t *cfg, char *msg, size_t len)
{
    if (mc_nblocks(cfg->p[MC_P_SAMPLES]) > (1LL << 31) - 1) {
        snprintf(msg, len, "too many samples: more than 2^31 blocks of %d", MC_BLOCK);
        return 1;
    }
    return 0;
}

static void mc_describe(const capp_cfg_t *cfg, char *buf, size_t len)
{
    snprintf(buf, len, "%lld samples", (long long)cfg->p[MC_P_SAMPLES]);
}

CAPP_APP_MAIN(
    mc, "mc", "Monte Carlo integral of 4/(1+x^2) over [0,1] (= pi), in double",
    "The dissertation gives MC's cluster size only: XL is 15360M samples (table A.3).\n"
    "S 4M, M 128M and L 1G samples are this project's choice. Samples come from a\n"
    "counter-based stream (SplitMix64 over the sample index, keyed by the seed), grouped\n"
    "in blocks of 16384 summed in order; the block sums are added in block order, so the\n"
    "estimate does not depend on ranks or threads. mpi and utc each need one gather of\n"
    "the block sums to rank 0 (utc: a task collective). --verify asks for a bit-equal\n"
    "estimate against seq and checks it is within 6 standard errors of pi.")
