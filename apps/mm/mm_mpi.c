/*
 * mm, plain MPI (one process per core): rank 0 scatters A's rows and broadcasts B, every
 * rank multiplies its rows, rank 0 gathers C.
 */
#include <stdlib.h>

#include <mpi.h>

#include "mm.h"

int mm_mpi(const capp_cfg_t *cfg, capp_result_t *res)
{
    mm_dims_t d = mm_dims(cfg);
    int me = cfg->rank, np = cfg->nranks, rc = CAPP_EXIT_RUNTIME;
    bool root = me == 0;
    int64_t row0, rows;
    capp_block(d.m, np, me, &row0, &rows);

    int *cnt_a = capp_alloc(cfg, sizeof(int) * (size_t)np * 4, "counts");
    float *a = NULL, *b = NULL, *c = NULL;
    if (!cnt_a)
        return rc;
    int *dsp_a = cnt_a + np, *cnt_c = dsp_a + np, *dsp_c = cnt_c + np;
    for (int r = 0; r < np; r++) {
        int64_t s, n;
        capp_block(d.m, np, r, &s, &n);
        cnt_a[r] = (int)(n * d.k), dsp_a[r] = (int)(s * d.k);
        cnt_c[r] = (int)(n * d.n), dsp_c[r] = (int)(s * d.n);
    }
    /* Rank 0 holds the whole of A and C; the others their rows. */
    a = capp_alloc(cfg, sizeof(float) * (size_t)((root ? d.m : rows) * d.k), "A");
    b = capp_alloc(cfg, sizeof(float) * (size_t)(d.k * d.n), "B");
    c = capp_alloc(cfg, sizeof(float) * (size_t)((root ? d.m : rows) * d.n), "C");
    if (!a || !b || !c)
        goto out;
    if (root)
        mm_generate(cfg->seed, d, a, b);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Scatterv(a, cnt_a, dsp_a, MPI_FLOAT, root ? MPI_IN_PLACE : a, (int)(rows * d.k),
                 MPI_FLOAT, 0, MPI_COMM_WORLD);
    MPI_Bcast(b, (int)(d.k * d.n), MPI_FLOAT, 0, MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    mm_rows(a, b, c, rows, d.k, d.n); /* rank 0's rows start at 0 */
    double t2 = MPI_Wtime();
    MPI_Gatherv(root ? MPI_IN_PLACE : c, (int)(rows * d.n), MPI_FLOAT, c, cnt_c, dsp_c,
                MPI_FLOAT, 0, MPI_COMM_WORLD);
    double t3 = MPI_Wtime();

    res->comm_seconds = (t1 - t0) + (t3 - t2);
    if (root) {
        res->seconds = t3 - t0;
        res->check = mm_checksum(c, d.m * d.n);
        res->out = c;
        c = NULL;
    }
    rc = 0;
out:
    free(cnt_a);
    free(a);
    free(b);
    free(c);
    return rc;
}
