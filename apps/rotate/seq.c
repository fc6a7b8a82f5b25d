/* rotate, sequential version: plain C, no framework. */
#include "app_timer.h"
#include "rotate_impl.h"

static void seq_rotate(void *arg)
{
    rotate_job_t *job = arg;
    for (int p = 0; p < job->planes; p++)
        ryr_rotate_plane(&job->rot, job->src[p], job->dst[p]);
}

int rotate_run_seq(rotate_job_t *job, const app_opts_t *opts, double *seconds)
{
    *seconds = app_time_best(seq_rotate, job, opts->reps);
    return APP_EXIT_OK;
}
