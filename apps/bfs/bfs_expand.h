/**
 * @file bfs_expand.h
 * @brief One step of the level-synchronous BFS that the omp and utc versions share, so
 * both run the same inner loop: expand a slice of the current frontier into the next.
 *
 * A vertex is claimed for level d + 1 by the thread whose compare-and-swap turns its
 * level from -1 into d + 1, so each vertex enters the next frontier once. Claimed
 * vertices are gathered in a small local buffer and appended to the shared next
 * frontier in blocks (one atomic add per block). The order of the next frontier depends
 * on timing; the levels do not.
 */
#ifndef APP_BFS_EXPAND_H
#define APP_BFS_EXPAND_H

#include <stdatomic.h>
#include <string.h>

#include "bfs_graph.h"

/** Vertices a thread gathers before appending them to the next frontier. */
#define BFS_LOCAL_BLOCK 256

static inline void bfs_append(int32_t *next, atomic_llong *next_len, const int32_t *buf, int k)
{
    /* relaxed: only the position matters; the level's closing barrier publishes the
     * entries to the threads that read them at the next level */
    long long at = atomic_fetch_add_explicit(next_len, k, memory_order_relaxed);
    memcpy(next + at, buf, (size_t)k * sizeof *buf);
}

/**
 * @brief Expand frontier entries cur[begin .. end) into @p next (and @p next_len), giving
 * newly reached vertices level @p depth.
 */
static inline void bfs_expand(const bfs_graph_t *g, atomic_int *level, const int32_t *cur,
                              long long begin, long long end, int depth, int32_t *next,
                              atomic_llong *next_len)
{
    int32_t buf[BFS_LOCAL_BLOCK];
    int k = 0;
    for (long long i = begin; i < end; i++) {
        int32_t v = cur[i];
        for (int64_t e = g->offsets[v]; e < g->offsets[v + 1]; e++) {
            int32_t u = g->adj[e];
            /* relaxed: levels only go from -1 to their final value once, and the CAS
             * decides who claims u; the closing barrier orders them for the next level */
            if (atomic_load_explicit(&level[u], memory_order_relaxed) >= 0)
                continue;
            int unseen = -1;
            if (atomic_compare_exchange_strong_explicit(&level[u], &unseen, depth,
                                                        memory_order_relaxed,
                                                        memory_order_relaxed)) {
                buf[k++] = u;
                if (k == BFS_LOCAL_BLOCK) {
                    bfs_append(next, next_len, buf, k);
                    k = 0;
                }
            }
        }
    }
    if (k)
        bfs_append(next, next_len, buf, k);
}

#endif /* APP_BFS_EXPAND_H */
