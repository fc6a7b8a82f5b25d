/* raytrace, UTC CPU task version: a task of N threads on rank 0; each thread takes the
 * next row from a counter shared by the rank's threads (dynamic, like OpenMP's
 * schedule(dynamic, 1)), since rows cost very different amounts. */
#include <stdatomic.h>

#include "app_utc.h"
#include "rt_impl.h"

typedef struct {
    utc_task_t base;
    rt_job_t *job;        /* shared by the rank's threads */
    atomic_int next_row;  /* next row to render */
    atomic_int finished;  /* threads done with this run */
} rt_task_t;

static int rt_task_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    rt_task_t *t = (rt_task_t *)self;
    rt_job_t *job = t->job;
    const size_t row = (size_t)job->w * 3;
    /* relaxed: the counter only hands out row numbers; the rows' pixels are published to
     * the caller by utc_task_wait */
    for (int y; (y = atomic_fetch_add_explicit(&t->next_row, 1, memory_order_relaxed)) < job->h;)
        ryr_render_rows(&job->scene, &job->view, job->w, job->h, y, y + 1, job->rgb + y * row);
    /* The last thread out resets the counters for the next run; runs are queued after
     * utc_task_wait, which orders these stores before them. acq_rel: pairs with the other
     * threads' increments, so the last one sees they are done with next_row. */
    if (atomic_fetch_add_explicit(&t->finished, 1, memory_order_acq_rel) + 1 == ctx->local_count) {
        atomic_store_explicit(&t->next_row, 0, memory_order_relaxed);
        atomic_store_explicit(&t->finished, 0, memory_order_relaxed);
    }
    return 0;
}

static const utc_task_ops_t rt_task_ops = {
    .name = "raytrace", .size = sizeof(rt_task_t), .run = rt_task_run};

int rt_run_utc(rt_job_t *job, const app_opts_t *opts, double *seconds)
{
    utc_task_t *task;
    utc_status_t rc = app_task_create(&rt_task_ops, opts->threads, UTC_TASK_CPU, opts->memtype,
                                      &task);
    if (rc != UTC_OK) {
        app_utc_error("raytrace", "cannot create the task", rc);
        return APP_EXIT_FAIL;
    }
    ((rt_task_t *)task)->job = job; /* the counters start at 0: the instance is zeroed */
    rc = app_task_time(task, NULL, opts->reps, seconds);
    if (rc != UTC_OK)
        app_utc_error("raytrace", "the task failed", rc);
    (void)utc_task_destroy(task);
    return rc == UTC_OK ? APP_EXIT_OK : APP_EXIT_FAIL;
}
