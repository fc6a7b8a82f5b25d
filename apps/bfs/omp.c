/* bfs, OpenMP version: level-synchronous. Inside one parallel region each thread expands
 * its static slice of the frontier, then all meet at a barrier before the next level. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_timer.h"
#include "bfs_expand.h"
#include "bfs_impl.h"

typedef struct {
    const bfs_graph_t *g;
    int32_t *out;
    atomic_int *level;
    int32_t *front[2];
    atomic_llong len[3]; /* frontier sizes, by level mod 3 (see utc.c) */
    int threads;
} omp_job_t;

static void omp_bfs(void *arg)
{
    omp_job_t *job = arg;
    const bfs_graph_t *g = job->g;
    const long long n = g->n;
#pragma omp parallel num_threads(job->threads)
    {
        const long long me = omp_get_thread_num(), nt = omp_get_num_threads();
        for (long long v = n * me / nt; v < n * (me + 1) / nt; v++)
            atomic_store_explicit(&job->level[v], v == 0 ? 0 : -1, memory_order_relaxed);
        if (me == 0) {
            job->front[0][0] = 0;
            atomic_store_explicit(&job->len[0], 1, memory_order_relaxed);
            atomic_store_explicit(&job->len[1], 0, memory_order_relaxed);
        }
#pragma omp barrier
        for (int d = 0;; d++) {
            long long cur = atomic_load_explicit(&job->len[d % 3], memory_order_relaxed);
            if (cur == 0)
                break;
            if (me == 0)
                atomic_store_explicit(&job->len[(d + 2) % 3], 0, memory_order_relaxed);
            bfs_expand(g, job->level, job->front[d & 1], cur * me / nt, cur * (me + 1) / nt,
                       d + 1, job->front[(d + 1) & 1], &job->len[(d + 1) % 3]);
#pragma omp barrier
        }
        for (long long v = n * me / nt; v < n * (me + 1) / nt; v++)
            job->out[v] = atomic_load_explicit(&job->level[v], memory_order_relaxed);
    }
}

int bfs_run_omp(const bfs_graph_t *g, int32_t *level, const app_opts_t *opts, double *seconds)
{
    omp_job_t job = {.g = g, .out = level, .threads = opts->threads};
    job.level = malloc((size_t)g->n * sizeof *job.level);
    job.front[0] = malloc((size_t)g->n * sizeof(int32_t));
    job.front[1] = malloc((size_t)g->n * sizeof(int32_t));
    int rc = APP_EXIT_OK;
    if (!job.level || !job.front[0] || !job.front[1]) {
        fprintf(stderr, "bfs: out of memory for the frontiers\n");
        rc = APP_EXIT_FAIL;
    } else {
        *seconds = app_time_best(omp_bfs, &job, opts->reps);
    }
    free(job.level);
    free(job.front[0]);
    free(job.front[1]);
    return rc;
}
