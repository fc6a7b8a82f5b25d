/* nbody: the app's table for the cluster-app driver. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

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

static const capp_app_t nb_app = {
    .name = "nbody",
    .summary = "all-pairs n-body gravity in double, T steps, softening 0.01",
    .details =
        "Sizes: S 1K, M 8K, L 32K bodies (tables A.5-A.7), XL 61440 bodies (table A.3);\n"
        "G = 1, dt = 0.001, eps = 0.01, semi-implicit Euler (v += a dt, then x += v dt).\n"
        "Bodies are split over ranks and threads. mpi broadcasts the positions, scatters the\n"
        "velocities, all-gathers the new positions every step and gathers the velocities;\n"
        "utc broadcasts with a task collective, and every step each thread puts its bodies'\n"
        "new positions into every other rank's global shared data (double-buffered, one\n"
        "barrier per step); rank 0 reads the velocities back one-sidedly. --verify asks for\n"
        "bit-equal positions and velocities against seq and checks that total momentum is\n"
        "conserved.",
    .params = nb_params,
    .nparams = 2,
    .check = nb_check_cfg,
    .bytes = nb_bytes,
    .describe = nb_describe,
    .run = {nb_seq, nb_mpi, nb_utc,
#ifdef CAPP_WITH_CUDA
            nb_gpu
#else
            NULL
#endif
    },
    .verify = nb_verify,
    .free_out = free,
};

int main(int argc, char **argv)
{
    return capp_main(argc, argv, &nb_app);
}
