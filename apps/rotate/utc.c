/* rotate, UTC CPU task version: a task of N threads on rank 0; thread t rotates the t-th
 * contiguous block of output rows (the planes stacked), like OpenMP's static schedule. */
#include "app_utc.h"
#include "rotate_impl.h"

typedef struct {
    utc_task_t base;
    rotate_job_t *job; /* shared by the rank's threads */
} rotate_task_t;

static int rotate_task_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    rotate_job_t *job = ((rotate_task_t *)self)->job;
    const long long rows = (long long)job->planes * job->rot.oh;
    const long long me = ctx->local_id, nt = ctx->local_count;
    rotate_job_rows(job, rows * me / nt, rows * (me + 1) / nt);
    return 0;
}

static const utc_task_ops_t rotate_task_ops = {
    .name = "rotate", .size = sizeof(rotate_task_t), .run = rotate_task_run};

int rotate_run_utc(rotate_job_t *job, const app_opts_t *opts, double *seconds)
{
    utc_task_t *task;
    utc_status_t rc = app_task_create(&rotate_task_ops, opts->threads, UTC_TASK_CPU,
                                      opts->memtype, &task);
    if (rc != UTC_OK) {
        app_utc_error("rotate", "cannot create the task", rc);
        return APP_EXIT_FAIL;
    }
    ((rotate_task_t *)task)->job = job;
    rc = app_task_time(task, NULL, opts->reps, seconds);
    if (rc != UTC_OK)
        app_utc_error("rotate", "the task failed", rc);
    (void)utc_task_destroy(task);
    return rc == UTC_OK ? APP_EXIT_OK : APP_EXIT_FAIL;
}
