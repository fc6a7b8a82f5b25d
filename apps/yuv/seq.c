/* yuv, sequential version: plain C, no framework. */
#include "app_timer.h"
#include "yuv_impl.h"

static void seq_convert(void *arg)
{
    yuv_job_t *job = arg;
    ryr_yuv_convert(job->rgb, 0, yuv_job_pixels(job), job->y, job->u, job->v);
}

int yuv_run_seq(yuv_job_t *job, const app_opts_t *opts, double *seconds)
{
    *seconds = app_time_best(seq_convert, job, opts->reps);
    return APP_EXIT_OK;
}
