/*
 * kmeans: Lloyd's algorithm on n points of f float features, k clusters, until no point
 * changes cluster or after a step limit.
 *
 * Exactness: features are generated on a grid of 2^-16 in [0, 256), so every feature is
 * an integer multiple of 2^-16 below 2^24 of them. Centroid sums are kept as 64-bit
 * integers in those units: sums are exact and do not depend on the order of addition, so
 * every implementation, rank count and thread count gives bit-identical centroids,
 * assignments and step counts. A point goes to the nearest centroid (squared distance
 * summed over features in order; ties to the lowest index); a centroid is the mean of its
 * points, (float)(sum / (65536 * count)) in double; an empty cluster keeps its centroid.
 *
 * One step's reduction is a vector of KM_ACC(k, f) int64: k*f sums, k counts, the number
 * of points that changed cluster and a checksum of the assignment.
 */
#ifndef UTC_APPS_KMEANS_H
#define UTC_APPS_KMEANS_H

#include <stdint.h>

#include "cluster_app.h"
#include "kmeans_kernels.h" /* KM_SCALE, KM_ACC */

enum { KM_P_POINTS = 0, KM_P_FEATURES = 1, KM_P_CLUSTERS = 2, KM_P_ITERS = 3 };


typedef struct km_dims {
    int64_t n;
    int f, k;
    int64_t iters; /* step limit */
} km_dims_t;

static inline km_dims_t km_dims(const capp_cfg_t *cfg)
{
    return (km_dims_t){cfg->p[KM_P_POINTS], (int)cfg->p[KM_P_FEATURES],
                       (int)cfg->p[KM_P_CLUSTERS], cfg->p[KM_P_ITERS]};
}

/* The result (rank 0). */
typedef struct km_out {
    int64_t steps;    /* Lloyd steps run (the last one changed nothing, unless at the limit) */
    int64_t changed;  /* points that changed cluster in the last step */
    int64_t checksum; /* sum over points i of (cluster(i) + 1) * (i % 65521 + 1) */
    float cent[];     /* k x f centroids */
} km_out_t;

/* The points (n x f, row-major) from the seed: k blobs. */
void km_generate(uint64_t seed, km_dims_t d, float *pts);

/* Initial centroids, transposed (f x k): points i * n / k. */
void km_initial(km_dims_t d, const float *pts, float *ct);

/* Assign points [0, count) (global indices from index0) to their nearest centroid (ct is
 * f x k), and add their part of the step's reduction into acc (KM_ACC int64s).
 * assign[] holds each point's cluster from the previous step (-1 at first). */
void km_assign(km_dims_t d, const float *pts, int64_t count, int64_t index0, const float *ct,
               int32_t *assign, int64_t *acc);

/* New centroids (f x k, transposed) from a reduced acc; empty clusters keep theirs. */
void km_update(km_dims_t d, const int64_t *acc, float *ct);

/* Fill a km_out_t (malloc'd, cent un-transposed) at the end of a run. */
km_out_t *km_result(km_dims_t d, int64_t steps, const int64_t *acc, const float *ct);

/*
 * How the threads of the UTC task assign their points (kmeans_utc.c runs the task, CPU or
 * GPU kind). Each function returns a UTC status and adds host/device transfer time to
 * *xfer. begin and end may be NULL.
 */
typedef struct km_backend {
    /* Before the first step: the thread's `count` points. */
    int (*begin)(void **state, km_dims_t d, const float *pts, int64_t count, double *xfer);
    /* As km_assign, for the thread's points. */
    int (*assign)(void *state, km_dims_t d, const float *pts, int64_t count, int64_t index0,
                  const float *ct, int32_t *assign, int64_t *acc, double *xfer);
    void (*end)(void *state);
} km_backend_t;

int km_task(const capp_cfg_t *cfg, capp_result_t *res, utc_task_kind_t kind,
            const km_backend_t *backend);

int km_seq(const capp_cfg_t *cfg, capp_result_t *res);
int km_mpi(const capp_cfg_t *cfg, capp_result_t *res);
int km_utc(const capp_cfg_t *cfg, capp_result_t *res);
int km_gpu(const capp_cfg_t *cfg, capp_result_t *res);
int km_verify(const capp_cfg_t *cfg, const capp_result_t *res, char *msg, size_t len);

#endif /* UTC_APPS_KMEANS_H */
