/* cudahost: host versions of the apps' kernels: the cluster apps' (apps/mm, heat, kmeans,
 * nbody, mc: *_kernels.cu), md5's and bfs's. Each does what the CUDA threads of its grid
 * do between them, in the order the kernel's own thread sums in (so mm, nbody and mc give
 * the kernel's sums); atomics become plain updates (one thread runs them all). Each
 * element's arithmetic is the apps' own (heat_cell, km_nearest, nb_pull and nb_move,
 * mc_block_sum: the CAPP_HD functions of their *_kernels.h, which the kernels call too);
 * what is written here is each grid's loop and its memory checks. A kernel whose
 * parameters change no longer launches here (cudahost.h). */
#include "heat_kernels.h"
#include "kmeans_kernels.h"
#include "mc_kernels.h"
#include "md5.h"
#include "nbody_kernels.h"

#include "cudahost.h"

#define MM_TILE 32 /* apps/mm/mm_kernels.cu */

/* The threads a launch has along x (y): grid * block. */
static long long threads_x(dim3 g, dim3 b)
{
    return (long long)g.x * b.x;
}

static void mm_run(dim3 grid, dim3 block, void **a)
{
    (void)block;
    int64_t rows = *(int64_t *)a[3], k = *(int64_t *)a[4], n = *(int64_t *)a[5];
    const float *x = ch_kernel_mem(*(const float **)a[0], sizeof(float) * (size_t)(rows * k));
    const float *y = ch_kernel_mem(*(const float **)a[1], sizeof(float) * (size_t)(k * n));
    float *c = ch_kernel_mem(*(float **)a[2], sizeof(float) * (size_t)(rows * n));
    int64_t row_end = (int64_t)grid.y * MM_TILE, col_end = (int64_t)grid.x * MM_TILE;
    for (int64_t r = 0; r < rows && r < row_end; r++)
        for (int64_t col = 0; col < n && col < col_end; col++) {
            float sum = 0.0f;
            for (int64_t p = 0; p < k; p++)
                sum = sum + x[r * k + p] * y[p * n + col];
            c[r * n + col] = sum;
        }
}

static void heat_run(dim3 grid, dim3 block, void **a)
{
    (void)grid, (void)block;
    int64_t count = *(int64_t *)a[2], cols = *(int64_t *)a[3];
    /* rows 0 .. count + 1 are read (the halos), 1 .. count written */
    const float *cur =
        ch_kernel_mem(*(const float **)a[0], sizeof(float) * (size_t)((count + 2) * cols));
    float *next = ch_kernel_mem(*(float **)a[1], sizeof(float) * (size_t)((count + 1) * cols));
    for (int64_t e = 0; e < count * cols; e++)
        next[cols + e] = heat_cell(cur, e, cols);
}

static void km_run(dim3 grid, dim3 block, void **a)
{
    (void)grid, (void)block;
    int64_t count = *(int64_t *)a[1], index0 = *(int64_t *)a[2];
    int f = *(int *)a[3], k = *(int *)a[4];
    const float *pts = ch_kernel_mem(*(const float **)a[0], sizeof(float) * (size_t)(count * f));
    const float *ct = ch_kernel_mem(*(const float **)a[5], sizeof(float) * (size_t)(k * f));
    int32_t *assign = ch_kernel_mem(*(int32_t **)a[6], sizeof(int32_t) * (size_t)count);
    unsigned long long *acc =
        ch_kernel_mem(*(unsigned long long **)a[7], sizeof(unsigned long long) * KM_ACC(k, f));
    for (int64_t p = 0; p < count; p++) {
        const float *x = pts + p * f;
        const int best = km_nearest(x, ct, f, k);
        if (assign[p] != best) {
            acc[k * f + k] += 1;
            assign[p] = best;
        }
        acc[k * f + best] += 1;
        for (int q = 0; q < f; q++)
            acc[best * f + q] += (unsigned long long)(long long)(x[q] * KM_SCALE);
        acc[k * f + k + 1] += (unsigned long long)km_check_term(best, index0 + p);
    }
}

static void nb_run(dim3 grid, dim3 block, void **a)
{
    int64_t n = *(int64_t *)a[3], i0 = *(int64_t *)a[4], count = *(int64_t *)a[5];
    const double *cur = ch_kernel_mem(*(const double **)a[0], sizeof(double) * 4 * (size_t)n);
    double *next = ch_kernel_mem(*(double **)a[1], sizeof(double) * 4 * (size_t)count);
    double *vel = ch_kernel_mem(*(double **)a[2], sizeof(double) * 3 * (size_t)count);
    for (int64_t me = 0; me < count && me < threads_x(grid, block); me++) {
        const int64_t i = i0 + me;
        double a3[3] = {0, 0, 0};
        for (int64_t j = 0; j < n; j++)
            nb_pull(cur[4 * i], cur[4 * i + 1], cur[4 * i + 2], cur + 4 * j, a3);
        nb_move(cur + 4 * i, next + 4 * me, vel + 3 * me, a3);
    }
}

static void mc_run(dim3 grid, dim3 block, void **a)
{
    uint64_t key = *(uint64_t *)a[0];
    int64_t samples = *(int64_t *)a[1], b0 = *(int64_t *)a[2], count = *(int64_t *)a[3];
    double *sums = ch_kernel_mem(*(double **)a[4], sizeof(double) * (size_t)count);
    for (int64_t me = 0; me < count && me < threads_x(grid, block); me++)
        sums[me] = mc_block_sum(key, samples, b0 + me);
}

static void md5_run(dim3 grid, dim3 block, void **a)
{
    size_t nbytes = *(size_t *)a[1], len = *(size_t *)a[2], count = *(size_t *)a[3];
    const uint8_t *data = ch_kernel_mem(*(const uint8_t **)a[0], nbytes);
    uint8_t *digests = ch_kernel_mem(*(uint8_t **)a[4], MD5_DIGEST_BYTES * count);
    for (size_t i = 0; i < count && (long long)i < threads_x(grid, block); i++) {
        size_t start = i * len;
        size_t n = nbytes - start < len ? nbytes - start : len;
        md5_digest(data + start, n, digests + MD5_DIGEST_BYTES * i);
    }
}

static void bfs_start_run(dim3 grid, dim3 block, void **a)
{
    (void)grid, (void)block;
    int32_t n = *(int32_t *)a[1];
    int32_t *level = ch_kernel_mem(*(int32_t **)a[0], sizeof(int32_t) * (size_t)n);
    int32_t *frontier = ch_kernel_mem(*(int32_t **)a[2], sizeof(int32_t));
    for (int32_t v = 0; v < n; v++)
        level[v] = v == 0 ? 0 : -1;
    frontier[0] = 0;
}

/* The graph's arrays have no length among the arguments: each access is checked against
 * its allocation (ch_kernel_mem of that one element). */
static void bfs_level_run(dim3 grid, dim3 block, void **a)
{
    int32_t cur_len = *(int32_t *)a[4], depth = *(int32_t *)a[5];
    const int64_t *offsets = *(const int64_t **)a[0];
    const int32_t *adj = *(const int32_t **)a[1];
    int32_t *level = *(int32_t **)a[2];
    const int32_t *cur = ch_kernel_mem(*(const int32_t **)a[3], sizeof(int32_t) * (size_t)cur_len);
    int32_t *next = *(int32_t **)a[6];
    uint32_t *next_len = ch_kernel_mem(*(uint32_t **)a[7], sizeof(uint32_t));
    for (int64_t i = 0; i < cur_len && i < threads_x(grid, block); i++) {
        int32_t v = cur[i];
        const int64_t *range = ch_kernel_mem(offsets + v, 2 * sizeof(int64_t));
        for (int64_t e = range[0]; e < range[1]; e++) {
            int32_t u = *(const int32_t *)ch_kernel_mem(adj + e, sizeof(int32_t));
            int32_t *lu = ch_kernel_mem(level + u, sizeof(int32_t));
            if (*lu < 0) {
                *lu = depth;
                *(int32_t *)ch_kernel_mem(next + (*next_len)++, sizeof(int32_t)) = u;
            }
        }
    }
}

#define PTR sizeof(void *)
#define I64 sizeof(int64_t)
const ch_kernel_t ch_kernels_apps[] = {
    {"mm_kernel", "PKfS0_Pflll", 6, {PTR, PTR, PTR, I64, I64, I64}, mm_run},
    {"heat_kernel", "PKfPfll", 4, {PTR, PTR, I64, I64}, heat_run},
    {"km_kernel",
     "PKflliiS0_PiPyi",
     9,
     {PTR, I64, I64, sizeof(int), sizeof(int), PTR, PTR, PTR, sizeof(int)},
     km_run},
    {"nb_kernel", "PKdPdS1_lll", 6, {PTR, PTR, PTR, I64, I64, I64}, nb_run},
    {"mc_kernel", "mlllPd", 5, {8, I64, I64, I64, PTR}, mc_run},
    {"md5_kernel",
     "PKhmmmPh",
     5,
     {PTR, sizeof(size_t), sizeof(size_t), sizeof(size_t), PTR},
     md5_run},
    {"start_kernel", "PiiS0_", 3, {PTR, sizeof(int32_t), PTR}, bfs_start_run},
    {"level_kernel",
     "PKlPKiPiS3_iiS4_Pj",
     8,
     {PTR, PTR, PTR, PTR, sizeof(int32_t), sizeof(int32_t), PTR, PTR},
     bfs_level_run},
    {0},
};
