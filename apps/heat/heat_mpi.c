/*
 * heat, plain MPI (one process per core): rank 0 scatters row blocks (the first and last
 * ranks also get the fixed top and bottom rows), every step each rank swaps its edge rows
 * with its neighbours (MPI_Sendrecv) and updates its rows, and rank 0 gathers the result.
 */
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "heat.h"

int heat_mpi(const capp_cfg_t *cfg, capp_result_t *res)
{
    heat_dims_t d = heat_dims(cfg);
    int me = cfg->rank, np = cfg->nranks, rc = CAPP_EXIT_RUNTIME;
    bool root = me == 0;
    int64_t first, n;
    capp_block(d.rows - 2, np, me, &first, &n); /* grid rows first+1 .. first+n */
    int up = me > 0 ? me - 1 : MPI_PROC_NULL, down = me < np - 1 ? me + 1 : MPI_PROC_NULL;
    int cols = (int)d.cols;

    int *cnt = capp_alloc(cfg, sizeof(int) * (size_t)np * 4, "counts");
    float *grid = NULL, *cur = NULL, *next = NULL;
    if (!cnt)
        return rc;
    int *dsp = cnt + np, *gcnt = dsp + np, *gdsp = gcnt + np;
    for (int r = 0; r < np; r++) {
        int64_t s, k;
        capp_block(d.rows - 2, np, r, &s, &k);
        /* rows s+1 .. s+k, and the fixed edge row next to the first and last blocks */
        int64_t lo = r == 0 ? s : s + 1, hi = r == np - 1 ? s + k + 1 : s + k;
        cnt[r] = (int)((hi - lo + 1) * d.cols), dsp[r] = (int)(lo * d.cols);
        gcnt[r] = (int)(k * d.cols), gdsp[r] = (int)((s + 1) * d.cols);
    }
    size_t local = sizeof(float) * (size_t)((n + 2) * d.cols);
    cur = capp_alloc(cfg, local, "rows");
    next = capp_alloc(cfg, local, "rows");
    if (root)
        grid = capp_alloc(cfg, sizeof(float) * (size_t)(d.rows * d.cols), "grid");
    if (!cur || !next || (root && !grid))
        goto out;
    if (root)
        heat_generate(cfg->seed, d, grid);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), comm = 0;
    MPI_Scatterv(grid, cnt, dsp, MPI_FLOAT, root ? cur : cur + d.cols, cnt[me], MPI_FLOAT, 0,
                 MPI_COMM_WORLD);
    /* The fixed edges of the grid are halo rows of the first and last ranks, in both
     * buffers; the other halo rows come from the neighbours each step. */
    memcpy(next, cur, sizeof(float) * (size_t)d.cols);
    memcpy(next + (n + 1) * d.cols, cur + (n + 1) * d.cols, sizeof(float) * (size_t)d.cols);
    comm += MPI_Wtime() - t0;

    for (int64_t s = 0; s < d.steps; s++) {
        double tc = MPI_Wtime();
        MPI_Sendrecv(cur + d.cols, cols, MPI_FLOAT, up, 1, cur + (n + 1) * d.cols, cols,
                     MPI_FLOAT, down, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(cur + n * d.cols, cols, MPI_FLOAT, down, 2, cur, cols, MPI_FLOAT, up, 2,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        comm += MPI_Wtime() - tc;
        heat_rows(cur, next, 1, n, d.cols);
        float *t = cur;
        cur = next, next = t;
    }

    double tg = MPI_Wtime();
    MPI_Gatherv(cur + d.cols, (int)(n * d.cols), MPI_FLOAT, grid, gcnt, gdsp, MPI_FLOAT, 0,
                MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    comm += t1 - tg;
    if (root) {
        res->seconds = t1 - t0;
        res->comm_seconds = comm;
        res->check = heat_checksum(grid, d.rows * d.cols);
        res->out = grid;
        grid = NULL;
    }
    rc = 0;
out:
    free(cnt);
    free(grid);
    free(cur);
    free(next);
    return rc;
}
