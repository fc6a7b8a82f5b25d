/* heat: what the cluster-app driver needs to know of it (CAPP_APP_MAIN). */
#include <limits.h>
#include <stdio.h>

#include "heat.h"

static const capp_param_t heat_params[] = {
    [HEAT_P_ROWS] = {"rows", "grid rows, boundary included (split over ranks)", true,
                     {128, 512, 2048, 92160}, 3, 1 << 24},
    [HEAT_P_COLS] = {"cols", "grid columns, boundary included", true,
                     {128, 512, 2048, 4096}, 3, 1 << 24},
    [HEAT_P_STEPS] = {"steps", "time steps T", false, {100, 2000, 200, 100}, 0, 1 << 30},
};

static int heat_check_cfg(const capp_cfg_t *cfg, char *msg, size_t len)
{
    heat_dims_t d = heat_dims(cfg);
    if (d.rows - 2 < cfg->nranks) {
        snprintf(msg, len, "the grid's %lld interior rows cannot be split over %d ranks (each "
                 "rank needs at least one row): use more rows or fewer ranks",
                 (long long)(d.rows - 2), cfg->nranks);
        return 1;
    }
    if (d.rows * d.cols > INT_MAX) {
        snprintf(msg, len, "grids of more than %d cells are not supported (MPI counts)",
                 INT_MAX);
        return 1;
    }
    return 0;
}

static double heat_bytes(const capp_cfg_t *cfg)
{
    heat_dims_t d = heat_dims(cfg);
    return 4.0 * (double)d.rows * (double)d.cols * (cfg->verify ? 4 : 3);
}

static void heat_describe(const capp_cfg_t *cfg, char *buf, size_t len)
{
    heat_dims_t d = heat_dims(cfg);
    snprintf(buf, len, "%lldx%lld grid, %lld steps", (long long)d.rows, (long long)d.cols,
             (long long)d.steps);
}

CAPP_APP_MAIN(
    heat, "heat", "2D heat conduction, explicit 5-point stencil, fixed boundary, T steps (float)",
    "u' = u + 0.2 * ((up + down) + (left + right) - 4u) on the interior; the edges stay\n"
    "fixed (top row 1, others 0); the interior starts uniform in [0,1) from the seed.\n"
    "Sizes: S 128x128, M 512x512, L 2Kx2K (tables A.5-A.7), XL 92160x4096 (table A.3's\n"
    "4096*92160, rows split over the nodes). Interior rows are split over ranks (each\n"
    "rank needs one) and threads. mpi scatters row blocks, swaps halo rows with\n"
    "MPI_Sendrecv each step and gathers; utc puts row blocks and, each step, the edge\n"
    "rows into the neighbours' global shared data (double-buffered, one barrier per\n"
    "step), and rank 0 reads the result back one-sidedly. --verify asks for equality\n"
    "with seq and checks the maximum principle.")
