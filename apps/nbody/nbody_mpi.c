/*
 * nbody, plain MPI (one process per core): rank 0 broadcasts the positions and scatters
 * the velocities; every step each rank moves its bodies and MPI_Allgatherv shares the new
 * positions; rank 0 gathers the velocities at the end.
 */
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "nbody.h"

int nb_mpi(const capp_cfg_t *cfg, capp_result_t *res)
{
    nb_dims_t d = nb_dims(cfg);
    int me = cfg->rank, np = cfg->nranks, rc = CAPP_EXIT_RUNTIME;
    bool root = me == 0;
    int64_t first, n;
    capp_block(d.n, np, me, &first, &n);

    int *cnt = capp_alloc(cfg, sizeof(int) * 4 * (size_t)np, "counts");
    /* rank 0: out = final positions then all velocities; the others: positions, their
     * velocities */
    double *out = capp_alloc(cfg, sizeof(double) * (size_t)(4 * d.n + 3 * (root ? d.n : n)),
                             "bodies");
    double *tmp = capp_alloc(cfg, sizeof(double) * 4 * (size_t)d.n, "positions");
    if (!cnt || !out || !tmp)
        goto out;
    int *dsp = cnt + np, *vcnt = dsp + np, *vdsp = vcnt + np;
    for (int r = 0; r < np; r++) {
        int64_t s, k;
        capp_block(d.n, np, r, &s, &k);
        cnt[r] = (int)(4 * k), dsp[r] = (int)(4 * s);
        vcnt[r] = (int)(3 * k), vdsp[r] = (int)(3 * s);
    }
    double *vel = out + 4 * d.n;
    if (root)
        nb_generate(cfg->seed, d.n, out, vel);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Bcast(out, (int)(4 * d.n), MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Scatterv(vel, vcnt, vdsp, MPI_DOUBLE, root ? MPI_IN_PLACE : vel, vcnt[me], MPI_DOUBLE,
                 0, MPI_COMM_WORLD);
    double comm = MPI_Wtime() - t0;
    double *cur = out, *next = tmp;
    for (int64_t s = 0; s < d.steps; s++) {
        nb_bodies(cur, next, vel, d.n, first, n); /* rank 0's velocities start at body 0 */
        double tc = MPI_Wtime();
        MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, next, cnt, dsp, MPI_DOUBLE,
                       MPI_COMM_WORLD);
        comm += MPI_Wtime() - tc;
        double *t = cur;
        cur = next, next = t;
    }
    double tg = MPI_Wtime();
    MPI_Gatherv(root ? MPI_IN_PLACE : vel, vcnt[me], MPI_DOUBLE, vel, vcnt, vdsp, MPI_DOUBLE, 0,
                MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    comm += t1 - tg;
    if (root) {
        if (cur != out)
            memcpy(out, cur, sizeof(double) * 4 * (size_t)d.n);
        res->seconds = t1 - t0;
        res->comm_seconds = comm;
        res->out = out;
        res->check = nb_check(out, d.n);
        out = NULL;
    }
    rc = 0;
out:
    free(cnt);
    free(out);
    free(tmp);
    return rc;
}
