/* bfs, UTC CPU task version: level-synchronous. Each task thread expands its slice of the
 * frontier (bfs_expand.h, as the OpenMP version), then the rank's threads meet at a local
 * barrier before the next level. */
#include <stdio.h>
#include <stdlib.h>

#include "app_utc.h"
#include "bfs_expand.h"
#include "bfs_impl.h"

typedef struct {
    utc_task_t base;
    const bfs_graph_t *g; /* fields shared by the rank's threads */
    int32_t *out;
    atomic_int *level;
    int32_t *front[2];    /* level d reads front[d % 2] and appends to front[(d + 1) % 2] */
    /* Frontier sizes by level mod 3: level d reads len[d % 3], appends to len[(d + 1) % 3]
     * and clears len[(d + 2) % 3], which every thread read at level d - 1, before the last
     * barrier; so one barrier per level is enough. */
    atomic_llong len[3];
} bfs_task_t;

static int bfs_task_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    bfs_task_t *t = (bfs_task_t *)self;
    const bfs_graph_t *g = t->g;
    const long long n = g->n, me = ctx->local_id, nt = ctx->local_count;
    int rc;
    for (long long v = n * me / nt; v < n * (me + 1) / nt; v++)
        atomic_store_explicit(&t->level[v], v == 0 ? 0 : -1, memory_order_relaxed);
    if (me == 0) { /* with more threads than vertices, vertex 0 may be in another slice */
        t->front[0][0] = 0;
        atomic_store_explicit(&t->len[0], 1, memory_order_relaxed);
        atomic_store_explicit(&t->len[1], 0, memory_order_relaxed);
    }
    if ((rc = utc_ctx_barrier_local(ctx)) != UTC_OK)
        return rc;
    for (int d = 0;; d++) {
        long long cur = atomic_load_explicit(&t->len[d % 3], memory_order_relaxed);
        if (cur == 0)
            break;
        if (me == 0)
            atomic_store_explicit(&t->len[(d + 2) % 3], 0, memory_order_relaxed);
        bfs_expand(g, t->level, t->front[d & 1], cur * me / nt, cur * (me + 1) / nt, d + 1,
                   t->front[(d + 1) & 1], &t->len[(d + 1) % 3]);
        if ((rc = utc_ctx_barrier_local(ctx)) != UTC_OK)
            return rc;
    }
    for (long long v = n * me / nt; v < n * (me + 1) / nt; v++)
        t->out[v] = atomic_load_explicit(&t->level[v], memory_order_relaxed);
    return 0;
}

static const utc_task_ops_t bfs_task_ops = {
    .name = "bfs", .size = sizeof(bfs_task_t), .run = bfs_task_run};

int bfs_run_utc(const bfs_graph_t *g, int32_t *level, const app_opts_t *opts, double *seconds)
{
    utc_task_t *task;
    utc_status_t rc = app_task_create(&bfs_task_ops, opts->threads, UTC_TASK_CPU,
                                      opts->memtype, &task);
    if (rc != UTC_OK) {
        app_utc_error("bfs", "cannot create the task", rc);
        return APP_EXIT_FAIL;
    }
    bfs_task_t *t = (bfs_task_t *)task;
    t->g = g;
    t->out = level;
    t->level = malloc((size_t)g->n * sizeof *t->level);
    t->front[0] = malloc((size_t)g->n * sizeof(int32_t));
    t->front[1] = malloc((size_t)g->n * sizeof(int32_t));
    int status = APP_EXIT_OK;
    if (!t->level || !t->front[0] || !t->front[1]) {
        fprintf(stderr, "bfs: out of memory for the frontiers\n");
        status = APP_EXIT_FAIL;
    } else if ((rc = app_task_time(task, NULL, opts->reps, seconds)) != UTC_OK) {
        app_utc_error("bfs", "the task failed", rc);
        status = APP_EXIT_FAIL;
    }
    free(t->level);
    free(t->front[0]);
    free(t->front[1]);
    (void)utc_task_destroy(task);
    return status;
}
