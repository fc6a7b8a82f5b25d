/*
 * mc, plain MPI (one process per core): every rank sums its blocks; one MPI_Gatherv brings
 * the block sums to rank 0, which adds them in block order.
 */
#include <stdlib.h>

#include <mpi.h>

#include "mc.h"

int mc_mpi(const capp_cfg_t *cfg, capp_result_t *res)
{
    int64_t n = cfg->p[MC_P_SAMPLES], nb = mc_nblocks(n);
    int me = cfg->rank, np = cfg->nranks, rc = CAPP_EXIT_RUNTIME;
    bool root = me == 0;
    int64_t b0, count;
    capp_block(nb, np, me, &b0, &count);
    int *cnt = capp_alloc(cfg, sizeof(int) * 2 * (size_t)np, "counts");
    double *sums = capp_alloc(cfg, sizeof(double) * (size_t)(root ? nb : count), "block sums");
    if (!cnt || !sums)
        goto out;
    int *dsp = cnt + np;
    for (int r = 0; r < np; r++) {
        int64_t s, k;
        capp_block(nb, np, r, &s, &k);
        cnt[r] = (int)k, dsp[r] = (int)s;
    }

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    mc_blocks(mc_key(cfg->seed), n, b0, count, sums); /* rank 0's blocks start at 0 */
    double tc = MPI_Wtime();
    MPI_Gatherv(root ? MPI_IN_PLACE : sums, (int)count, MPI_DOUBLE, sums, cnt, dsp, MPI_DOUBLE,
                0, MPI_COMM_WORLD);
    double comm = MPI_Wtime() - tc;
    if (root) {
        double estimate = mc_total(sums, nb, n);
        res->seconds = MPI_Wtime() - t0;
        res->comm_seconds = comm;
        res->out = mc_result(estimate, n);
        if (!res->out) {
            capp_error(cfg, "out of memory for the result");
            goto out;
        }
        res->check = estimate;
    }
    rc = 0;
out:
    free(cnt);
    free(sums);
    return rc;
}
