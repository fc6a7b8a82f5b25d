/* md5, UTC GPU task version: each GPU thread takes a block of buffers, keeps them in a
 * utc_gpu_data_t of the task's memory kind, and digests them with one CUDA thread per
 * buffer. The timed part is what the dissertation counts: host-to-device copy, kernel,
 * device-to-host copy. */
#include "app_utc.h"
#include "md5.h"
#include "md5_impl.h"
#include "md5_kernel.h"

#define MD5_GPU_MAX_THREADS 64

typedef struct {
    utc_task_t base;
    const md5_input_t *in;
    uint8_t *digests;
    /* per local thread: its buffers [first, first + count) and their device copies */
    size_t first[MD5_GPU_MAX_THREADS], count[MD5_GPU_MAX_THREADS];
    utc_gpu_data_t *data[MD5_GPU_MAX_THREADS], *sums[MD5_GPU_MAX_THREADS];
} md5_gpu_task_t;

static int md5_gpu_init(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    md5_gpu_task_t *t = (md5_gpu_task_t *)self;
    const md5_input_t *in = t->in;
    int me = ctx->local_id;
    size_t n = in->count, nt = (size_t)ctx->local_count;
    size_t first = n * (size_t)me / nt, end = n * ((size_t)me + 1) / nt;
    t->first[me] = first;
    t->count[me] = end - first;
    if (end == first)
        return 0;
    size_t bytes = (end * in->len < in->total ? end * in->len : in->total) - first * in->len;
    int rc = utc_gpu_data_create_default(1, bytes, 1, 1, &t->data[me]);
    if (rc == 0)
        rc = utc_gpu_data_create_default(MD5_DIGEST_BYTES, end - first, 1, 1, &t->sums[me]);
    if (rc == 0) /* into the host copy (pinned for --memtype pinned), not timed */
        rc = utc_gpu_data_put_host(t->data[me], md5_input_buf(in, first));
    return rc;
}

static int md5_gpu_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    md5_gpu_task_t *t = (md5_gpu_task_t *)self;
    int me = ctx->local_id;
    if (t->count[me] == 0)
        return 0;
    utc_gpu_data_t *data = t->data[me], *sums = t->sums[me];
    int rc;
    /* Each run starts from the host copy, so every repetition pays the transfer. */
    if ((rc = utc_gpu_data_mark_host(data)) || (rc = utc_gpu_data_sync_device(data)))
        return rc;
    if (md5_gpu_launch(utc_gpu_data_device(data), utc_gpu_data_size(data), t->in->len,
                       t->count[me], utc_gpu_data_device(sums), utc_gpu_stream()) != 0)
        return utc_gpu_check("md5 kernel launch");
    if ((rc = utc_gpu_data_mark_device(sums)))
        return rc;
    return utc_gpu_data_fetch_host(sums, t->digests + MD5_DIGEST_BYTES * t->first[me]);
}

static void md5_gpu_fini(utc_task_t *self, utc_ctx_t *ctx)
{
    md5_gpu_task_t *t = (md5_gpu_task_t *)self;
    utc_gpu_data_destroy(t->data[ctx->local_id]);
    utc_gpu_data_destroy(t->sums[ctx->local_id]);
}

static const utc_task_ops_t md5_gpu_ops = {.name = "md5-gpu",
                                           .size = sizeof(md5_gpu_task_t),
                                           .init = md5_gpu_init,
                                           .run = md5_gpu_run,
                                           .fini = md5_gpu_fini};

int md5_run_gpu(const md5_input_t *in, uint8_t *digests, const app_opts_t *opts,
                double *seconds)
{
    utc_task_t *task;
    utc_status_t rc = app_task_create(&md5_gpu_ops, opts->threads, UTC_TASK_GPU, opts->memtype,
                                      &task);
    if (rc != UTC_OK) {
        app_utc_error("md5", "cannot create the GPU task", rc);
        return rc == UTC_ERR_NO_DEVICE || rc == UTC_ERR_NO_GPU_SUPPORT ? APP_EXIT_NO_GPU
                                                                        : APP_EXIT_FAIL;
    }
    md5_gpu_task_t *t = (md5_gpu_task_t *)task;
    t->in = in;
    t->digests = digests;
    rc = utc_task_init(task, NULL);
    if (rc != UTC_OK)
        app_utc_error("md5", "GPU task init (buffers)", rc);
    else if ((rc = app_task_time(task, NULL, opts->reps, seconds)) != UTC_OK)
        app_utc_error("md5", "the GPU task failed", rc);
    (void)utc_task_destroy(task);
    return rc == UTC_OK ? APP_EXIT_OK : APP_EXIT_FAIL;
}
