/* md5, UTC CPU task version: a task of N threads on rank 0; thread t digests the t-th
 * contiguous block of buffers (the same split as OpenMP's static schedule). */
#include "app_utc.h"
#include "md5.h"
#include "md5_impl.h"

typedef struct {
    utc_task_t base;
    const md5_input_t *in; /* shared by the rank's threads */
    uint8_t *digests;
} md5_task_t;

static int md5_task_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    md5_task_t *t = (md5_task_t *)self;
    size_t n = t->in->count, nt = (size_t)ctx->local_count, me = (size_t)ctx->local_id;
    size_t begin = n * me / nt, end = n * (me + 1) / nt;
    for (size_t i = begin; i < end; i++)
        md5_digest(md5_input_buf(t->in, i), md5_input_buf_len(t->in, i),
                   t->digests + MD5_DIGEST_BYTES * i);
    return 0;
}

static const utc_task_ops_t md5_task_ops = {
    .name = "md5", .size = sizeof(md5_task_t), .run = md5_task_run};

int md5_run_utc(const md5_input_t *in, uint8_t *digests, const app_opts_t *opts,
                double *seconds)
{
    utc_task_t *task;
    utc_status_t rc = app_task_create(&md5_task_ops, opts->threads, UTC_TASK_CPU,
                                      opts->memtype, &task);
    if (rc != UTC_OK) {
        app_utc_error("md5", "cannot create the task", rc);
        return APP_EXIT_FAIL;
    }
    md5_task_t *t = (md5_task_t *)task;
    t->in = in;
    t->digests = digests;
    rc = app_task_time(task, NULL, opts->reps, seconds);
    if (rc != UTC_OK)
        app_utc_error("md5", "the task failed", rc);
    (void)utc_task_destroy(task);
    return rc == UTC_OK ? APP_EXIT_OK : APP_EXIT_FAIL;
}
