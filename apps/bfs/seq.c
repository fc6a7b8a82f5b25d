/* bfs, sequential version: plain C, no framework; a FIFO queue visits the vertices level
 * by level. */
#include <stdio.h>
#include <stdlib.h>

#include "app_timer.h"
#include "bfs_impl.h"

typedef struct {
    const bfs_graph_t *g;
    int32_t *level, *queue;
} seq_job_t;

static void seq_bfs(void *arg)
{
    seq_job_t *job = arg;
    const bfs_graph_t *g = job->g;
    int32_t *level = job->level, *queue = job->queue;
    for (int32_t v = 0; v < g->n; v++)
        level[v] = -1;
    level[0] = 0;
    queue[0] = 0;
    for (int32_t head = 0, tail = 1; head < tail; head++) {
        int32_t v = queue[head];
        for (int64_t e = g->offsets[v]; e < g->offsets[v + 1]; e++) {
            int32_t u = g->adj[e];
            if (level[u] < 0) {
                level[u] = level[v] + 1;
                queue[tail++] = u;
            }
        }
    }
}

int bfs_run_seq(const bfs_graph_t *g, int32_t *level, const app_opts_t *opts, double *seconds)
{
    seq_job_t job = {g, level, malloc((size_t)g->n * sizeof(int32_t))};
    if (!job.queue) {
        fprintf(stderr, "bfs: out of memory for the queue\n");
        return APP_EXIT_FAIL;
    }
    *seconds = app_time_best(seq_bfs, &job, opts->reps);
    free(job.queue);
    return APP_EXIT_OK;
}
