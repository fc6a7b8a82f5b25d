/* raytrace, OpenMP version: one row at a time under a dynamic schedule. */
#include "app_timer.h"
#include "rt_impl.h"

typedef struct {
    rt_job_t *job;
    int threads;
} omp_job_t;

static void omp_render(void *arg)
{
    omp_job_t *o = arg;
    rt_job_t *job = o->job;
    const size_t row = (size_t)job->w * 3;
#pragma omp parallel for schedule(dynamic, 1) num_threads(o->threads)
    for (int y = 0; y < job->h; y++)
        ryr_render_rows(&job->scene, &job->view, job->w, job->h, y, y + 1, job->rgb + y * row);
}

int rt_run_omp(rt_job_t *job, const app_opts_t *opts, double *seconds)
{
    omp_job_t o = {job, opts->threads};
    *seconds = app_time_best(omp_render, &o, opts->reps);
    return APP_EXIT_OK;
}
