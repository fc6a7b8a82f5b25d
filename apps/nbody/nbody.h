/*
 * nbody: all-pairs gravity in double, T steps (G = 1, softening eps = 0.01, dt = 0.001).
 *
 * Per step, for every body i (with the positions of the step before):
 *   a_i = sum over j = 0 .. n-1 of m_j d_ij / (r2 sqrt(r2)),  d_ij = x_j - x_i,
 *         r2 = |d_ij|^2 + eps^2  (j = i adds 0)
 *   v_i += a_i dt;  x_i += v_i dt
 * Every implementation adds the terms in increasing j with the same expression and no FMA,
 * so positions and velocities are bit-identical across implementations, ranks and threads.
 * Positions are stored as (x, y, z, m) per body, velocities as (vx, vy, vz).
 */
#ifndef UTC_APPS_NBODY_H
#define UTC_APPS_NBODY_H

#include <stdint.h>

#include "cluster_app.h"
#include "nbody_kernels.h" /* NB_EPS2, NB_DT */

enum { NB_P_BODIES = 0, NB_P_STEPS = 1 };

typedef struct nb_dims {
    int64_t n, steps;
} nb_dims_t;

static inline nb_dims_t nb_dims(const capp_cfg_t *cfg)
{
    return (nb_dims_t){cfg->p[NB_P_BODIES], cfg->p[NB_P_STEPS]};
}

/* Bodies from the seed: positions uniform in [-1,1)^3, masses (0.5 + U) / n,
 * velocities uniform in [-0.05, 0.05)^3. */
void nb_generate(uint64_t seed, int64_t n, double *pos, double *vel);

/* One step for bodies i0 .. i0+count-1: their next positions (and masses) into next,
 * their velocities (vel points at body i0's) updated. */
void nb_bodies(const double *cur, double *next, double *vel, int64_t n, int64_t i0,
               int64_t count);

/* Total momentum (3 doubles). */
void nb_momentum(const double *pos, const double *vel, int64_t n, double p[3]);

/*
 * How the threads of the UTC task compute (nbody_utc.c runs the task, CPU or GPU kind).
 * Each returns a UTC status and adds host/device transfer time to *xfer; begin and end may
 * be NULL. vel points at the thread's first body's velocity.
 */
typedef struct nb_backend {
    int (*begin)(void **state, int64_t n, const double *vel, int64_t count, double *xfer);
    int (*step)(void *state, const double *cur, double *next, double *vel, int64_t n,
                int64_t i0, int64_t count, double *xfer);
    int (*end)(void *state, double *vel, int64_t count, double *xfer);
} nb_backend_t;

int nb_task(const capp_cfg_t *cfg, capp_result_t *res, utc_task_kind_t kind,
            const nb_backend_t *backend);

int nb_seq(const capp_cfg_t *cfg, capp_result_t *res);
int nb_mpi(const capp_cfg_t *cfg, capp_result_t *res);
int nb_utc(const capp_cfg_t *cfg, capp_result_t *res);
int nb_gpu(const capp_cfg_t *cfg, capp_result_t *res);
int nb_verify(const capp_cfg_t *cfg, const capp_result_t *res, char *msg, size_t len);

/* The result (rank 0): 4n position doubles, then 3n velocity doubles. */
static inline double nb_check(const double *out, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += out[4 * i] + out[4 * i + 1] + out[4 * i + 2];
    return s;
}

#endif /* UTC_APPS_NBODY_H */
