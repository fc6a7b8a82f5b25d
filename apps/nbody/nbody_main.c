/* nbody: what the cluster-app driver needs to know of it (CAPP_APP_MAIN). */
#include <limits.h>
#include <stdio.h>

#include "nbody.h"

static const capp_param_t nb_params[] = {
    [NB_P_BODIES] = {"bodies", "bodies", true, {1024, 8192, 32768, 61440}, 1, 1 << 26},
    [NB_P_STEPS] = {"steps", "time steps T", false, {5, 2, 2, 10}, 0, 1 << 30},
};

static int nb_check_cfg(const capp_cfg_t *cfg, char *msg, size_t len)
{
    nb_dims_t d = nb_dims(cfg);
    if (4 * d.n > INT_MAX) {
        snprintf(msg, len, "more than %d bodies are not supported (MPI counts)", INT_MAX / 4);
        return 1;
    }
    return 0;
}

static double nb_bytes(const capp_cfg_t *cfg)
{
    nb_dims_t d = nb_dims(cfg);
    return 8.0 * (double)d.n * 18.0;
}

static void nb_describe(const capp_cfg_t *cfg, char *buf, size_t len)
{
    nb_dims_t d = nb_dims(cfg);
    snprintf(buf, len, "%lld bodies, %lld steps", (long long)d.n, (long long)d.steps);
}

CAPP_APP_MAIN(
    nb, "nbody", "all-pairs n-body gravity in double, T steps, softening 0.01",
    "Sizes: S 1K, M 8K, L 32K bodies (tables A.5-A.7), XL 61440 bodies (table A.3);\n"
    "G = 1, dt = 0.001, eps = 0.01, semi-implicit Euler (v += a dt, then x += v dt).\n"
    "Bodies are split over ranks and threads. mpi broadcasts the positions, scatters the\n"
    "velocities, all-gathers the new positions every step and gathers the velocities;\n"
    "utc broadcasts with a task collective, and every step each thread puts its bodies'\n"
    "new positions into every other rank's global shared data (double-buffered, one\n"
    "barrier per step); rank 0 reads the velocities back one-sidedly. --verify asks for\n"
    "bit-equal positions and velocities against seq and checks that total momentum is\n"
    "conserved.")
