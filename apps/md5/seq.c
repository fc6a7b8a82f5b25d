/* md5, sequential version: plain C, no framework. */
#include "app_timer.h"
#include "md5.h"
#include "md5_impl.h"

typedef struct {
    const md5_input_t *in;
    uint8_t *digests;
} seq_job_t;

static void seq_digest_all(void *arg)
{
    seq_job_t *job = arg;
    for (size_t i = 0; i < job->in->count; i++)
        md5_digest(md5_input_buf(job->in, i), md5_input_buf_len(job->in, i),
                   job->digests + MD5_DIGEST_BYTES * i);
}

int md5_run_seq(const md5_input_t *in, uint8_t *digests, const app_opts_t *opts,
                double *seconds)
{
    seq_job_t job = {in, digests};
    *seconds = app_time_best(seq_digest_all, &job, opts->reps);
    return APP_EXIT_OK;
}
