/* bfs, UTC GPU task version (one GPU thread): the graph goes to the device once per run,
 * then one kernel per level; after each level the size of the next frontier (4 bytes)
 * comes back to decide whether to go on, as in the dissertation's BFS. */
#include <stdint.h>

#include "app_utc.h"
#include "bfs_impl.h"
#include "bfs_kernel.h"

typedef struct {
    utc_task_t base;
    const bfs_graph_t *g;
    int32_t *out;
    utc_gpu_data_t *offsets, *adj, *level, *front[2], *count;
} bfs_gpu_task_t;

static int bfs_gpu_init(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx, (void)arg;
    bfs_gpu_task_t *t = (bfs_gpu_task_t *)self;
    const bfs_graph_t *g = t->g;
    size_t n = (size_t)g->n, m2 = (size_t)(2 * g->m);
    int rc;
    if ((rc = utc_gpu_data_create_default(sizeof(int64_t), n + 1, 1, 1, &t->offsets)) ||
        (rc = utc_gpu_data_create_default(sizeof(int32_t), m2 ? m2 : 1, 1, 1, &t->adj)) ||
        (rc = utc_gpu_data_create_default(sizeof(int32_t), n, 1, 1, &t->level)) ||
        (rc = utc_gpu_data_create_default(sizeof(int32_t), n, 1, 1, &t->front[0])) ||
        (rc = utc_gpu_data_create_default(sizeof(int32_t), n, 1, 1, &t->front[1])) ||
        (rc = utc_gpu_data_create_default(sizeof(uint32_t), 1, 1, 1, &t->count)))
        return rc;
    /* into the host copies (pinned for --memtype pinned), not timed */
    if ((rc = utc_gpu_data_put_host(t->offsets, g->offsets)))
        return rc;
    return m2 ? utc_gpu_data_put_host(t->adj, g->adj) : 0;
}

static int bfs_gpu_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx, (void)arg;
    bfs_gpu_task_t *t = (bfs_gpu_task_t *)self;
    void *stream = utc_gpu_stream();
    int rc;
    /* Each run starts from the host copies, so every repetition pays the transfers. */
    if ((rc = utc_gpu_data_mark_host(t->offsets)) || (rc = utc_gpu_data_mark_host(t->adj)) ||
        (rc = utc_gpu_data_sync_device(t->offsets)) || (rc = utc_gpu_data_sync_device(t->adj)))
        return rc;
    if (bfs_gpu_start(utc_gpu_data_device(t->level), t->g->n, utc_gpu_data_device(t->front[0]),
                      stream) != 0)
        return utc_gpu_check("bfs start kernel");
    uint32_t len = 1;
    for (int32_t d = 0; len > 0; d++) {
        const uint32_t zero = 0;
        if ((rc = utc_gpu_data_put_device(t->count, &zero)))
            return rc;
        if (bfs_gpu_level(utc_gpu_data_device(t->offsets), utc_gpu_data_device(t->adj),
                          utc_gpu_data_device(t->level), utc_gpu_data_device(t->front[d & 1]),
                          (int32_t)len, d + 1, utc_gpu_data_device(t->front[(d + 1) & 1]),
                          utc_gpu_data_device(t->count), stream) != 0)
            return utc_gpu_check("bfs level kernel");
        if ((rc = utc_gpu_data_mark_device(t->count)) ||
            (rc = utc_gpu_data_fetch_device(t->count, &len)))
            return rc;
    }
    if ((rc = utc_gpu_data_mark_device(t->level)))
        return rc;
    return utc_gpu_data_fetch_host(t->level, t->out);
}

static void bfs_gpu_fini(utc_task_t *self, utc_ctx_t *ctx)
{
    (void)ctx;
    bfs_gpu_task_t *t = (bfs_gpu_task_t *)self;
    utc_gpu_data_destroy(t->offsets);
    utc_gpu_data_destroy(t->adj);
    utc_gpu_data_destroy(t->level);
    utc_gpu_data_destroy(t->front[0]);
    utc_gpu_data_destroy(t->front[1]);
    utc_gpu_data_destroy(t->count);
}

static const utc_task_ops_t bfs_gpu_ops = {.name = "bfs-gpu",
                                           .size = sizeof(bfs_gpu_task_t),
                                           .init = bfs_gpu_init,
                                           .run = bfs_gpu_run,
                                           .fini = bfs_gpu_fini};

int bfs_run_gpu(const bfs_graph_t *g, int32_t *level, const app_opts_t *opts, double *seconds)
{
    utc_task_t *task;
    utc_status_t rc = app_task_create(&bfs_gpu_ops, 1, UTC_TASK_GPU, opts->memtype, &task);
    if (rc != UTC_OK) {
        app_utc_error("bfs", "cannot create the GPU task", rc);
        return rc == UTC_ERR_NO_DEVICE || rc == UTC_ERR_NO_GPU_SUPPORT ? APP_EXIT_NO_GPU
                                                                        : APP_EXIT_FAIL;
    }
    bfs_gpu_task_t *t = (bfs_gpu_task_t *)task;
    t->g = g;
    t->out = level;
    rc = utc_task_init(task, NULL);
    if (rc != UTC_OK)
        app_utc_error("bfs", "GPU task init (buffers)", rc);
    else if ((rc = app_task_time(task, NULL, opts->reps, seconds)) != UTC_OK)
        app_utc_error("bfs", "the GPU task failed", rc);
    (void)utc_task_destroy(task);
    return rc == UTC_OK ? APP_EXIT_OK : APP_EXIT_FAIL;
}
