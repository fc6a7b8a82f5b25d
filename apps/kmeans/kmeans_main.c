/* kmeans: what the cluster-app driver needs to know of it (CAPP_APP_MAIN). */
#include <limits.h>
#include <stdio.h>

#include "kmeans.h"

static const capp_param_t km_params[] = {
    [KM_P_POINTS] = {"points", "points (objects)", true, {8192, 131072, 2097152, 6144000}, 1,
                     1LL << 32},
    [KM_P_FEATURES] = {"features", "features per point", true, {16, 16, 16, 16}, 1, 1024},
    [KM_P_CLUSTERS] = {"clusters", "clusters k", true, {16, 16, 16, 16}, 1, 1024},
    [KM_P_ITERS] = {"iters", "step limit (stops earlier when no point changes)", false,
                    {100, 50, 50, 50}, 1, 1 << 20},
};

static int km_check_cfg(const capp_cfg_t *cfg, char *msg, size_t len)
{
    km_dims_t d = km_dims(cfg);
    if (d.k > d.n) {
        snprintf(msg, len, "%d clusters need at least %d points, got %lld", d.k, d.k,
                 (long long)d.n);
        return 1;
    }
    if (d.n * d.f > INT_MAX) {
        snprintf(msg, len, "more than %d features in all are not supported (MPI counts)",
                 INT_MAX);
        return 1;
    }
    return 0;
}

static double km_bytes(const capp_cfg_t *cfg)
{
    km_dims_t d = km_dims(cfg);
    return (double)d.n * (4.0 * d.f + 4.0) * (cfg->verify ? 2 : 1);
}

static void km_describe(const capp_cfg_t *cfg, char *buf, size_t len)
{
    km_dims_t d = km_dims(cfg);
    snprintf(buf, len, "%lld points x %d features, %d clusters, at most %lld steps",
             (long long)d.n, d.f, d.k, (long long)d.iters);
}

CAPP_APP_MAIN(
    km, "kmeans", "k-means clustering, Lloyd's algorithm on float features",
    "Sizes: S 8K, M 128K, L 2M points of 16 features (tables A.5-A.7), XL 6144000 points\n"
    "(table A.3); 16 clusters (the dissertation does not say: a choice). The points are\n"
    "16 blobs from the seed, on a grid of 2^-16 in [0,256); the first centroids are points\n"
    "i*n/k. Steps run until no point changes cluster, or --iters steps. Centroid sums are\n"
    "exact 64-bit integers in units of 2^-16, so the result does not depend on the order\n"
    "of summation: --verify asks for equal step count, assignment checksum and bit-equal\n"
    "centroids against seq and, when converged, checks that each centroid is the mean of\n"
    "its points and each point is nearest its own centroid. mpi scatters the points and\n"
    "all-reduces each step's sums; utc puts the points into global shared data and\n"
    "all-reduces with a task collective, the threads of a rank first adding their sums\n"
    "into one rank buffer atomically.")
