/* nbody: constants shared with the CUDA kernel, and its launcher (nbody_kernels.cu). */
#ifndef UTC_APPS_NBODY_KERNELS_H
#define UTC_APPS_NBODY_KERNELS_H

#include <stdint.h>

#define NB_EPS2 1e-4 /* softening eps^2 (eps = 0.01) */
#define NB_DT 1e-3   /* time step */

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
