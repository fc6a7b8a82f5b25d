/* yuv, OpenMP version: image rows under a static schedule. */
#include "app_timer.h"
#include "yuv_impl.h"

typedef struct {
    yuv_job_t *job;
    int threads;
} omp_job_t;

static void omp_convert(void *arg)
{
    omp_job_t *o = arg;
    yuv_job_t *job = o->job;
    const size_t w = (size_t)job->w;
#pragma omp parallel for schedule(static) num_threads(o->threads)
    for (int row = 0; row < job->h; row++)
        ryr_yuv_convert(job->rgb, row * w, (row + 1) * w, job->y, job->u, job->v);
}

int yuv_run_omp(yuv_job_t *job, const app_opts_t *opts, double *seconds)
{
    omp_job_t o = {job, opts->threads};
    *seconds = app_time_best(omp_convert, &o, opts->reps);
    return APP_EXIT_OK;
}
