/* rotate, OpenMP version: the output rows of all planes under a static schedule. */
#include "app_timer.h"
#include "rotate_impl.h"

typedef struct {
    rotate_job_t *job;
    int threads;
} omp_job_t;

static void omp_rotate(void *arg)
{
    omp_job_t *o = arg;
    const long long rows = (long long)o->job->planes * o->job->rot.oh;
#pragma omp parallel for schedule(static) num_threads(o->threads)
    for (long long r = 0; r < rows; r++)
        rotate_job_rows(o->job, r, r + 1);
}

int rotate_run_omp(rotate_job_t *job, const app_opts_t *opts, double *seconds)
{
    omp_job_t o = {job, opts->threads};
    *seconds = app_time_best(omp_rotate, &o, opts->reps);
    return APP_EXIT_OK;
}
