// nbody: one thread per body adds the forces of all bodies in increasing j (tiles of j in
// shared memory, in order), with nb_bodies' expressions; the build passes --fmad=false and
// double sqrt and division are IEEE-rounded, so the results equal the CPU's.
#include <cuda_runtime.h>

#include "nbody_kernels.h"

#define NB_TILE 256

__global__ void nb_kernel(const double *__restrict__ cur, double *__restrict__ next,
                          double *__restrict__ vel, int64_t n, int64_t i0, int64_t count)
{
    __shared__ double tile[4 * NB_TILE];
    const int64_t me = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t i = i0 + me;
    const bool live = me < count;
    double xi = 0, yi = 0, zi = 0, ax = 0, ay = 0, az = 0;
    if (live)
        xi = cur[4 * i], yi = cur[4 * i + 1], zi = cur[4 * i + 2];
    for (int64_t j0 = 0; j0 < n; j0 += NB_TILE) {
        const int64_t m = n - j0 < NB_TILE ? n - j0 : NB_TILE;
        __syncthreads();
        for (int64_t e = threadIdx.x; e < 4 * m; e += blockDim.x)
            tile[e] = cur[4 * j0 + e];
        __syncthreads();
        if (live)
            for (int64_t j = 0; j < m; j++) {
                double dx = tile[4 * j] - xi, dy = tile[4 * j + 1] - yi, dz = tile[4 * j + 2] - zi;
                double r2 = dx * dx + dy * dy + dz * dz + NB_EPS2;
                double s = tile[4 * j + 3] / (r2 * sqrt(r2));
                ax += dx * s;
                ay += dy * s;
                az += dz * s;
            }
    }
    if (!live)
        return;
    double *v = vel + 3 * me;
    v[0] += ax * NB_DT;
    v[1] += ay * NB_DT;
    v[2] += az * NB_DT;
    next[4 * me] = xi + v[0] * NB_DT;
    next[4 * me + 1] = yi + v[1] * NB_DT;
    next[4 * me + 2] = zi + v[2] * NB_DT;
    next[4 * me + 3] = cur[4 * i + 3];
}

extern "C" int nb_gpu_launch(const double *cur, double *next, double *vel, int64_t n,
                             int64_t i0, int64_t count, void *stream)
{
    if (count <= 0)
        return 0; // no body to move (a zero grid is a launch error)
    unsigned blocks = (unsigned)((count + NB_TILE - 1) / NB_TILE);
    nb_kernel<<<blocks, NB_TILE, 0, static_cast<cudaStream_t>(stream)>>>(cur, next, vel, n, i0,
                                                                         count);
    // peek, not get: the error stays for utc_gpu_check (capp_gpu_status) to report
    return static_cast<int>(cudaPeekAtLastError());
}
