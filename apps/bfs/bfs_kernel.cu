// bfs, CUDA kernels: frontier-based, one thread per frontier vertex per level.
#include <cuda_runtime.h>

#include "bfs_kernel.h"

namespace {

constexpr unsigned kBlock = 256;

__global__ void start_kernel(int32_t *level, int32_t n, int32_t *frontier)
{
    for (int64_t v = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; v < n;
         v += (int64_t)gridDim.x * blockDim.x)
        level[v] = v == 0 ? 0 : -1;
    if (blockIdx.x == 0 && threadIdx.x == 0)
        frontier[0] = 0;
}

__global__ void level_kernel(const int64_t *offsets, const int32_t *adj, int32_t *level,
                             const int32_t *cur, int32_t cur_len, int32_t depth, int32_t *next,
                             uint32_t *next_len)
{
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= cur_len)
        return;
    int32_t v = cur[i];
    for (int64_t e = offsets[v]; e < offsets[v + 1]; e++) {
        int32_t u = adj[e];
        if (level[u] < 0 && atomicCAS((int *)&level[u], -1, depth) == -1)
            next[atomicAdd(next_len, 1u)] = u;
    }
}

unsigned blocks_for(int64_t n, int64_t cap)
{
    int64_t b = (n + kBlock - 1) / kBlock;
    return (unsigned)(b > cap ? cap : b < 1 ? 1 : b);
}

} // namespace

extern "C" int bfs_gpu_start(int32_t *level, int32_t n, int32_t *frontier, void *stream)
{
    start_kernel<<<blocks_for(n, 4096), kBlock, 0, (cudaStream_t)stream>>>(level, n, frontier);
    return (int)cudaPeekAtLastError();
}

extern "C" int bfs_gpu_level(const int64_t *offsets, const int32_t *adj, int32_t *level,
                             const int32_t *cur, int32_t cur_len, int32_t depth, int32_t *next,
                             uint32_t *next_len, void *stream)
{
    level_kernel<<<blocks_for(cur_len, INT64_MAX), kBlock, 0, (cudaStream_t)stream>>>(
        offsets, adj, level, cur, cur_len, depth, next, next_len);
    return (int)cudaPeekAtLastError();
}
