/* mm: what the cluster-app driver needs to know of it (CAPP_APP_MAIN). */
#include <limits.h>
#include <stdio.h>

#include "mm.h"

static const capp_param_t mm_params[] = {
    [MM_P_M] = {"m", "rows of A and C", true, {256, 1024, 4096, 7680}, 1, 1 << 20},
    [MM_P_K] = {"k", "columns of A, rows of B", true, {256, 1024, 4096, 8192}, 1, 1 << 20},
    [MM_P_N] = {"n", "columns of B and C", true, {256, 1024, 4096, 7680}, 1, 1 << 20},
};

static int mm_check_cfg(const capp_cfg_t *cfg, char *msg, size_t len)
{
    mm_dims_t d = mm_dims(cfg);
    /* MPI counts are ints: every matrix must have at most INT_MAX elements. */
    if (d.m * d.k > INT_MAX || d.k * d.n > INT_MAX || d.m * d.n > INT_MAX) {
        snprintf(msg, len, "matrices of more than %d elements are not supported "
                 "(m*k, k*n and m*n must each fit an MPI count)", INT_MAX);
        return 1;
    }
    return 0;
}

static double mm_bytes(const capp_cfg_t *cfg)
{
    mm_dims_t d = mm_dims(cfg);
    double elems = (double)d.m * d.k + (double)d.k * d.n + (double)d.m * d.n;
    return 4.0 * elems * (cfg->verify ? 2 : 1);
}

static void mm_describe(const capp_cfg_t *cfg, char *buf, size_t len)
{
    mm_dims_t d = mm_dims(cfg);
    snprintf(buf, len, "%lldx%lld * %lldx%lld", (long long)d.m, (long long)d.k,
             (long long)d.k, (long long)d.n);
}

CAPP_APP_MAIN(
    mm, "mm", "matrix multiply C = A x B in float (A m x k, B k x n)",
    "Sizes: S 256x256 * 256x256, M 1K x 1K, L 4K x 4K (tables A.5-A.7), XL 7680x8192 *\n"
    "8192x7680 (table A.3). A and B are uniform in [-1,1) from the seed. Rows of C are\n"
    "split over ranks and threads; mpi scatters A, broadcasts B and gathers C; utc puts\n"
    "A's rows into each rank's global shared data, broadcasts B with a task collective and\n"
    "rank 0 reads C's rows back with one-sided loads. Every element is summed in the same\n"
    "order, so --verify asks for equality with seq (plus spot checks by dot products).")
