/*
 * kmeans, plain MPI (one process per core): rank 0 scatters the points and broadcasts the
 * first centroids; each step every rank assigns its points and an MPI_Allreduce sums the
 * step's vector (exact int64 sums, counts, changes, checksum) on every rank.
 */
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "kmeans.h"

int km_mpi(const capp_cfg_t *cfg, capp_result_t *res)
{
    km_dims_t d = km_dims(cfg);
    int me = cfg->rank, np = cfg->nranks, rc = CAPP_EXIT_RUNTIME;
    bool root = me == 0;
    int64_t first, n;
    capp_block(d.n, np, me, &first, &n);
    int nacc = KM_ACC(d.k, d.f);

    int *cnt = capp_alloc(cfg, sizeof(int) * 2 * (size_t)np, "counts");
    float *pts = capp_alloc(cfg, sizeof(float) * (size_t)((root ? d.n : n) * d.f), "points");
    int32_t *assign = capp_alloc(cfg, sizeof(int32_t) * (size_t)n, "assignment");
    int64_t *acc = capp_alloc(cfg, sizeof(int64_t) * (size_t)nacc, "sums");
    float *ct = capp_alloc(cfg, sizeof(float) * (size_t)(d.k * d.f), "centroids");
    if (!cnt || !pts || !assign || !acc || !ct)
        goto out;
    int *dsp = cnt + np;
    for (int r = 0; r < np; r++) {
        int64_t s, k;
        capp_block(d.n, np, r, &s, &k);
        cnt[r] = (int)(k * d.f), dsp[r] = (int)(s * d.f);
    }
    if (root) {
        km_generate(cfg->seed, d, pts);
        km_initial(d, pts, ct);
    }
    for (int64_t i = 0; i < n; i++)
        assign[i] = -1;

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Scatterv(pts, cnt, dsp, MPI_FLOAT, root ? MPI_IN_PLACE : pts, cnt[me], MPI_FLOAT, 0,
                 MPI_COMM_WORLD);
    MPI_Bcast(ct, d.k * d.f, MPI_FLOAT, 0, MPI_COMM_WORLD);
    double comm = MPI_Wtime() - t0;
    int64_t steps = 0;
    do {
        memset(acc, 0, sizeof(int64_t) * (size_t)nacc);
        km_assign(d, pts, n, first, ct, assign, acc);
        double tc = MPI_Wtime();
        MPI_Allreduce(MPI_IN_PLACE, acc, nacc, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        comm += MPI_Wtime() - tc;
        km_update(d, acc, ct);
        steps++;
    } while (acc[d.k * d.f + d.k] > 0 && steps < d.iters);
    double t1 = MPI_Wtime();

    if (root) {
        km_out_t *o = km_result(d, steps, acc, ct);
        if (!o) {
            capp_error(cfg, "out of memory for the result");
            goto out;
        }
        res->seconds = t1 - t0;
        res->comm_seconds = comm;
        res->out = o;
        res->check = (double)o->checksum;
    }
    rc = 0;
out:
    free(cnt);
    free(pts);
    free(assign);
    free(acc);
    free(ct);
    return rc;
}
