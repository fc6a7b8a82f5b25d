/**
 * @file bfs_impl.h
 * @brief The four versions of the bfs app. Each runs a breadth-first search of @p g from
 * vertex 0 and writes the level of every vertex into @p level (n entries: 0 for vertex 0,
 * -1 for vertices it cannot reach). The timed part (levels reset, search, levels out)
 * runs opts->reps times; the fastest goes to @p seconds.
 *
 * @return APP_EXIT_OK, or an exit status after printing what went wrong
 */
#ifndef APP_BFS_IMPL_H
#define APP_BFS_IMPL_H

#include <stdint.h>

#include "app_cli.h"
#include "bfs_graph.h"

/** Plain C: a FIFO queue. */
int bfs_run_seq(const bfs_graph_t *g, int32_t *level, const app_opts_t *opts, double *seconds);

/** OpenMP: level-synchronous; each thread expands its slice of the frontier (bfs_expand.h). */
int bfs_run_omp(const bfs_graph_t *g, int32_t *level, const app_opts_t *opts, double *seconds);

/** A UTC CPU task: the same level-synchronous search, one local barrier per level. */
int bfs_run_utc(const bfs_graph_t *g, int32_t *level, const app_opts_t *opts, double *seconds);

/** A UTC GPU task: one kernel per level, one CUDA thread per frontier vertex. */
int bfs_run_gpu(const bfs_graph_t *g, int32_t *level, const app_opts_t *opts, double *seconds);

#endif /* APP_BFS_IMPL_H */
