/* md5, OpenMP version: the sequential loop with a static schedule. */
#include <omp.h>

#include "app_timer.h"
#include "md5.h"
#include "md5_impl.h"

typedef struct {
    const md5_input_t *in;
    uint8_t *digests;
    int threads;
} omp_job_t;

static void omp_digest_all(void *arg)
{
    omp_job_t *job = arg;
    const long long n = (long long)job->in->count;
#pragma omp parallel for schedule(static) num_threads(job->threads)
    for (long long i = 0; i < n; i++)
        md5_digest(md5_input_buf(job->in, (size_t)i), md5_input_buf_len(job->in, (size_t)i),
                   job->digests + MD5_DIGEST_BYTES * (size_t)i);
}

int md5_run_omp(const md5_input_t *in, uint8_t *digests, const app_opts_t *opts,
                double *seconds)
{
    omp_job_t job = {in, digests, opts->threads};
    *seconds = app_time_best(omp_digest_all, &job, opts->reps);
    return APP_EXIT_OK;
}
