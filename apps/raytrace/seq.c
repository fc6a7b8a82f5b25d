/* raytrace, sequential version: plain C, no framework. */
#include "app_timer.h"
#include "rt_impl.h"

static void seq_render(void *arg)
{
    rt_job_t *job = arg;
    ryr_render_rows(&job->scene, &job->view, job->w, job->h, 0, job->h, job->rgb);
}

int rt_run_seq(rt_job_t *job, const app_opts_t *opts, double *seconds)
{
    *seconds = app_time_best(seq_render, job, opts->reps);
    return APP_EXIT_OK;
}
