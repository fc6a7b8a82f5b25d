/**
 * @file bfs_graph.h
 * @brief The bfs app's graphs: undirected, in compressed sparse rows (CSR), read from a
 * plain edge list or generated from a seed.
 *
 * Edge list format: one edge per line, two vertex numbers `u v` (0-based, separated by
 * spaces or tabs); `#` starts a comment that runs to the end of the line; blank lines
 * are skipped. The graph has max(vertex) + 1 vertices. Each edge joins u and v both ways;
 * self loops and repeated edges are allowed (they change nothing in a BFS).
 */
#ifndef APP_BFS_GRAPH_H
#define APP_BFS_GRAPH_H

#include <stddef.h>
#include <stdint.h>

/** Largest vertex number a file may use (so levels and ids fit in int32). */
#define BFS_MAX_VERTEX 2147483646

/** A graph in CSR: the neighbours of v are adj[offsets[v] .. offsets[v + 1]). */
typedef struct bfs_graph {
    int32_t n;         /**< vertices (> 0) */
    int64_t m;         /**< edges as given (each stored twice in adj) */
    int64_t *offsets;  /**< n + 1 entries */
    int32_t *adj;      /**< 2 m entries */
} bfs_graph_t;

/**
 * @brief Build a graph of @p n vertices from @p m edges (eu[i], ev[i]), all < n.
 * @return 0; APP_EXIT_FAIL when out of memory (message in err)
 */
int bfs_graph_build(int32_t n, int64_t m, const int32_t *eu, const int32_t *ev, bfs_graph_t *g,
                    char *err, size_t errlen);

/**
 * @brief Generate @p m uniformly random edges over @p n vertices from @p seed.
 * @return 0; APP_EXIT_USAGE (too large for this machine) or APP_EXIT_FAIL, with a message
 */
int bfs_graph_generate(int64_t n, int64_t m, uint64_t seed, bfs_graph_t *g, char *err,
                       size_t errlen);

/**
 * @brief Read an edge list file.
 * @return 0; APP_EXIT_USAGE with "FILE:LINE: problem" (unreadable file, a line that is not
 *         two vertex numbers, a number out of range, no edges); APP_EXIT_FAIL (out of memory)
 */
int bfs_graph_read(const char *path, bfs_graph_t *g, char *err, size_t errlen);

/** @brief Free a graph (safe on a zeroed one). */
void bfs_graph_fini(bfs_graph_t *g);

#endif /* APP_BFS_GRAPH_H */
