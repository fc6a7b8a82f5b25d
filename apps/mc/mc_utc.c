/*
 * mc, UTC: one task whose threads span all ranks (the GPU task runs the same code with
 * another block function). Each thread sums its share of its rank's blocks into the rank's
 * array (local shared scope, disjoint slots); one task gather brings every rank's array to
 * rank 0 (the collective starts when all the rank's threads have arrived), where local
 * thread 0 adds the block sums in block order.
 */
#include <stdlib.h>

#include "mc.h"

typedef struct mc_run {
    const capp_cfg_t *cfg;
    mc_blocks_fn blocks;
    int64_t samples, nblocks, per_rank; /* per_rank: the gather's count (largest share) */
    double *sums;         /* this rank's block sums, per_rank slots */
    double *all;          /* rank 0: every rank's slots */
    double estimate;      /* rank 0 */
    double seconds, comm; /* written by local thread 0 */
} mc_run_t;

typedef struct mc_task {
    utc_task_t base;
} mc_task_t;

static int mc_task_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self;
    mc_run_t *x = arg;
    int np = ctx->group_size, me = ctx->group_rank, nt = ctx->local_count, lid = ctx->local_id;
    int64_t b0, count, s, k;
    capp_block(x->nblocks, np, me, &b0, &count);
    capp_block(count, nt, lid, &s, &k);

    CAPP_TRY(utc_ctx_barrier(ctx));
    double t0 = capp_now(), xfer = 0;
    if (k > 0)
        CAPP_TRY(x->blocks(mc_key(x->cfg->seed), x->samples, b0 + s, k, x->sums + s, &xfer));
    double tc = capp_now();
    CAPP_TRY(utc_task_gather(ctx, x->sums, x->all, (size_t)x->per_rank, UTC_TYPE_DOUBLE, 0));
    double comm = capp_now() - tc;
    if (lid == 0) {
        if (me == 0) {
            double t = 0; /* block order: rank by rank, each rank's blocks in order */
            for (int r = 0; r < np; r++) {
                capp_block(x->nblocks, np, r, &b0, &count);
                for (int64_t b = 0; b < count; b++)
                    t += x->all[r * x->per_rank + b];
            }
            x->estimate = t / (double)x->samples;
            x->seconds = capp_now() - t0;
        }
        x->comm = comm + xfer;
    }
    return 0;
}

static const utc_task_ops_t mc_ops = {.name = "mc", .size = sizeof(mc_task_t), .run = mc_task_run};

int mc_task(const capp_cfg_t *cfg, capp_result_t *res, utc_task_kind_t kind,
            mc_blocks_fn blocks)
{
    mc_run_t x = {.cfg = cfg, .blocks = blocks, .samples = cfg->p[MC_P_SAMPLES]};
    x.nblocks = mc_nblocks(x.samples);
    x.per_rank = capp_block_max(x.nblocks, cfg->nranks);
    bool root = cfg->rank == 0;
    int rc = CAPP_EXIT_RUNTIME;
    x.sums = capp_alloc(cfg, sizeof(double) * (size_t)x.per_rank, "block sums");
    if (root)
        x.all = capp_alloc(cfg, sizeof(double) * (size_t)(x.per_rank * cfg->nranks), "sums");
    if (!x.sums || (root && !x.all))
        goto out;
    rc = capp_utc_task(cfg, &mc_ops, kind, 0, NULL, &x); /* collectives need no window */
    if (rc)
        goto out;
    res->comm_seconds = x.comm;
    if (root) {
        res->seconds = x.seconds;
        res->check = x.estimate;
        res->out = mc_result(x.estimate, x.samples);
        if (!res->out)
            rc = capp_error(cfg, "out of memory for the result");
    }
out:
    free(x.sums);
    free(x.all);
    return rc;
}

static int mc_cpu_blocks(uint64_t key, int64_t samples, int64_t b0, int64_t count, double *sums,
                         double *xfer)
{
    (void)xfer;
    mc_blocks(key, samples, b0, count, sums);
    return 0;
}

int mc_utc(const capp_cfg_t *cfg, capp_result_t *res)
{
    return mc_task(cfg, res, UTC_TASK_CPU, mc_cpu_blocks);
}
