/*
 * The Jacobi solver's arithmetic, shared by the example (jacobi.c) and its plain-MPI
 * baseline (apps/microbench/jacobi_mpi.c), so the benchmark compares the communication
 * and nothing else: one sweep, and the plate with its edges.
 */
#ifndef UTC_EXAMPLES_JACOBI_SWEEP_H
#define UTC_EXAMPLES_JACOBI_SWEEP_H

#include <math.h>
#include <stdlib.h>

/* One sweep over rows 1 .. rows of u (with a ghost row above and below and a boundary
 * column on each side) into v; returns the largest change. */
static inline double jacobi_sweep(const double *u, double *v, int rows, int w)
{
    double moved = 0;
    for (int i = 1; i <= rows; i++) {
        for (int j = 1; j < w - 1; j++) {
            double x = 0.25 * (u[(i - 1) * w + j] + u[(i + 1) * w + j] + u[i * w + j - 1] +
                               u[i * w + j + 1]);
            double d = fabs(x - u[i * w + j]);
            if (d > moved)
                moved = d;
            v[i * w + j] = x;
        }
    }
    return moved;
}

/* The plate with its edges: rows+2 by w, top edge 1 on the first rank's ghost row. NULL
 * when out of memory. */
static inline double *jacobi_plate(int rows, int w, int top_is_edge)
{
    double *u = calloc((size_t)(rows + 2) * (size_t)w, sizeof *u);
    if (u && top_is_edge)
        for (int j = 0; j < w; j++)
            u[j] = 1.0;
    return u;
}

#endif /* UTC_EXAMPLES_JACOBI_SWEEP_H */
