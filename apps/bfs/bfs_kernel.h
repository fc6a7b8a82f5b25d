/**
 * @file bfs_kernel.h
 * @brief The bfs app's CUDA kernels, callable from C (bfs_kernel.cu). Each queues its
 * kernel on @p stream (a cudaStream_t) and returns 0 or the cudaError_t of the launch
 * (left set for utc_gpu_check); none waits.
 */
#ifndef APP_BFS_KERNEL_H
#define APP_BFS_KERNEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** level[v] = -1 for every v, then level[0] = 0 and frontier[0] = 0. */
int bfs_gpu_start(int32_t *level, int32_t n, int32_t *frontier, void *stream);

/**
 * One level: for each cur[i], i < cur_len, each neighbour u whose level is -1 gets level
 * @p depth (atomicCAS decides who claims it) and is appended to next (at atomicAdd of
 * *next_len).
 */
int bfs_gpu_level(const int64_t *offsets, const int32_t *adj, int32_t *level,
                  const int32_t *cur, int32_t cur_len, int32_t depth, int32_t *next,
                  uint32_t *next_len, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* APP_BFS_KERNEL_H */
