/*
 * The baseline of the Jacobi benchmark: apps/examples/jacobi.c's solver written in plain
 * MPI, as an MPI programmer would (one rank per row block, MPI_Irecv / MPI_Isend /
 * MPI_Waitall for the halo rows, MPI_Allreduce for the residual). Same plate, same sweeps,
 * same output line, no UTC. scripts/bench-jacobi.sh runs both, taking turns.
 *
 *   mpirun -np 2 jacobi_mpi --n 300 [--tol 1e-5] [--max-iters N]
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jacobi_sweep.h" /* apps/examples: the example's own sweep */

enum { TAG_DOWN = 1, TAG_UP = 2 };

int main(int argc, char **argv)
{
    long n = 300, max_iters = 100000;
    double tol = 1e-5;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (!strcmp(argv[i], "--help")) {
            printf("usage: %s [--n POINTS] [--tol T] [--max-iters N]\n"
                   "apps/examples/jacobi.c in plain MPI: the Jacobi benchmark's baseline.\n",
                   argv[0]);
            return 0;
        }
        if (!strcmp(argv[i], "--n") && i + 1 < argc)
            n = strtol(argv[++i], &end, 10);
        else if (!strcmp(argv[i], "--max-iters") && i + 1 < argc)
            max_iters = strtol(argv[++i], &end, 10);
        else if (!strcmp(argv[i], "--tol") && i + 1 < argc)
            tol = strtod(argv[++i], &end);
        if (!end || *end || n < 1 || n > 20000 || max_iters < 1 || !(tol >= 0)) {
            fprintf(stderr, "%s: bad or unknown argument '%s' (see --help)\n", argv[0], argv[i]);
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    int me, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (ranks > n) {
        if (me == 0)
            fprintf(stderr, "%d ranks for %ld rows: give each rank a row at least\n", ranks, n);
        MPI_Finalize();
        return 2;
    }
    int w = (int)n + 2;
    int lo = (int)(n * me / ranks), hi = (int)(n * (me + 1) / ranks), rows = hi - lo;
    double *u = jacobi_plate(rows, w, me == 0), *v = jacobi_plate(rows, w, me == 0);
    if (!u || !v)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), moved = INFINITY;
    int it = 0;
    while (it < max_iters && moved > tol) {
        MPI_Request r[4];
        int nr = 0;
        if (me > 0) {
            MPI_Irecv(u, w, MPI_DOUBLE, me - 1, TAG_DOWN, MPI_COMM_WORLD, &r[nr++]);
            MPI_Isend(u + w, w, MPI_DOUBLE, me - 1, TAG_UP, MPI_COMM_WORLD, &r[nr++]);
        }
        if (me < ranks - 1) {
            MPI_Irecv(u + (size_t)(rows + 1) * w, w, MPI_DOUBLE, me + 1, TAG_UP, MPI_COMM_WORLD,
                      &r[nr++]);
            MPI_Isend(u + (size_t)rows * w, w, MPI_DOUBLE, me + 1, TAG_DOWN, MPI_COMM_WORLD,
                      &r[nr++]);
        }
        MPI_Waitall(nr, r, MPI_STATUSES_IGNORE);
        double mine = jacobi_sweep(u, v, rows, w);
        double *tmp = u;
        u = v;
        v = tmp;
        MPI_Allreduce(&mine, &moved, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        it++;
    }
    double seconds = MPI_Wtime() - t0;
    if (me == 0)
        printf("jacobi: %ld x %ld, %d rank(s), %d sweeps, residual %.3g, %.3f s (MPI)\n", n, n,
               ranks, it, moved, seconds);
    free(u);
    free(v);
    MPI_Finalize();
    return 0;
}
