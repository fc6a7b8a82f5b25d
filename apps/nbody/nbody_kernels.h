/* nbody: constants shared with the CUDA kernel, and its launcher (nbody_kernels.cu). */
#ifndef UTC_APPS_NBODY_KERNELS_H
#define UTC_APPS_NBODY_KERNELS_H

#include <math.h>
#include <stdint.h>

#include "capp_hd.h"

#define NB_EPS2 1e-4 /* softening eps^2 (eps = 0.01) */
#define NB_DT 1e-3   /* time step */

/* Adds to a (ax, ay, az) the pull on a body at (xi, yi, zi) of body bj (x, y, z, mass).
 * Every implementation adds the bodies' pulls in increasing j, so with IEEE-rounded
 * division and sqrt (and no contraction) the GPU's sums equal the CPU's. */
static inline CAPP_HD void nb_pull(double xi, double yi, double zi, const double *bj, double a[3])
{
    double dx = bj[0] - xi, dy = bj[1] - yi, dz = bj[2] - zi;
    double r2 = dx * dx + dy * dy + dz * dz + NB_EPS2;
    double s = bj[3] / (r2 * sqrt(r2));
    a[0] += dx * s;
    a[1] += dy * s;
    a[2] += dz * s;
}

/* A body's step from its acceleration a: velocity v (3 doubles) first, then its next
 * position and mass (bnext) from the current ones (bcur). */
static inline CAPP_HD void nb_move(const double *bcur, double *bnext, double *v, const double a[3])
{
    v[0] += a[0] * NB_DT;
    v[1] += a[1] * NB_DT;
    v[2] += a[2] * NB_DT;
    bnext[0] = bcur[0] + v[0] * NB_DT;
    bnext[1] = bcur[1] + v[1] * NB_DT;
    bnext[2] = bcur[2] + v[2] * NB_DT;
    bnext[3] = bcur[3];
}

#ifdef __cplusplus
extern "C" {
#endif

/* nb_bodies on the device for bodies i0 .. i0+count-1: cur (4n doubles, all bodies),
 * next (4*count doubles: those bodies only) and vel (3*count) are device pointers.
 * Returns a CUDA error code. */
int nb_gpu_launch(const double *cur, double *next, double *vel, int64_t n, int64_t i0,
                  int64_t count, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* UTC_APPS_NBODY_KERNELS_H */
