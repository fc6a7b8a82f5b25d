/*
 * ryr: the raytrace-YUV-rotate sample (shared/RYR.md).
 *
 * main parses and checks everything that can be checked before work starts, opens the
 * --video stream, then hands the run to the path of the preset: the plain sequential loop
 * (seq.c) or the UTC pipeline (pipeline.c and its stage tasks, task_*.c). From its first
 * line, SIGINT, SIGTERM and SIGHUP stop the run without leaving a file half written
 * (interrupt.c).
 */

#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "interrupt.h"
#include "options.h"
#include "output.h"
#include "pipeline.h"
#include "scene.h"
#include "seq.h"
#include "video.h"

/* --video on the rank of the output tasks (every rank calls it: it is collective). The
 * video is as large as a rotated plane. Returns 0, or 2 when the stream cannot be opened
 * (reported by the rank that tried). */
static int open_video(const ryr_options_t *opt, ryr_video_t **video)
{
    int bad = 0;
    *video = NULL;
    if (opt->video && utc_rank() == ryr_options_video_rank(opt)) {
        ryr_rotation_t rot;
        ryr_err_t err;
        /* a reader that goes away (ffplay closed) is a write error, not a silent death */
        signal(SIGPIPE, SIG_IGN);
        bad = ryr_rotation_init(&rot, opt->width, opt->height, opt->angle, &err) ||
              ryr_video_open(opt->video, rot.ow, rot.oh, opt->frames, opt->fps_num,
                             opt->fps_den, video, &err);
        if (bad)
            fprintf(stderr, "ryr: %s\n", err.msg);
    }
    int any_bad = 0;
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any_bad ? 2 : 0;
}

/* Keep the video when the run succeeded (rc 0), else remove it; say where it is. */
static int close_video(const ryr_options_t *opt, ryr_video_t *video, int rc)
{
    if (!video)
        return rc;
    ryr_err_t err;
    int frames = ryr_video_frames_written(video);
    if (ryr_video_close(video, rc == 0, &err)) {
        fprintf(stderr, "ryr: %s\n", err.msg);
        return 1;
    }
    if (rc == 0 && strcmp(opt->video, "-") != 0)
        fprintf(ryr_options_report_stream(opt), "video: %s (%d frames, %d/%d fps)\n",
                opt->video, frames, opt->fps_num, opt->fps_den);
    return rc;
}

int main(int argc, char **argv)
{
    ryr_options_t opt;
    ryr_err_t err;
    if (ryr_interrupt_install(&err)) {
        fprintf(stderr, "ryr: %s\n", err.msg);
        return 1;
    }
    int rc = ryr_options_parse(argc, argv, &opt, &err);
    if (rc < 0) {
        fprintf(stderr, "ryr: %s\n", err.msg);
        return 2;
    }
    if (rc == 2) {
        printf("ryr (UTC) %s\n", utc_version_string());
        return 0;
    }
    if (rc > 0) {
        ryr_options_usage(stdout, "ryr");
        return 0;
    }

    /* the runtime starts first: --place and `auto` need the ranks, `auto` the GPU */
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "ryr: cannot start UTC: %s\n", utc_last_error());
        return 1;
    }
    int me = utc_rank();
    ryr_interrupt_set_rank(me);
    /* MPI has started: the handlers again, should it have set its own */
    if (ryr_interrupt_install(&err)) {
        fprintf(stderr, "ryr: %s\n", err.msg);
        utc_finalize();
        return 1;
    }
    long ncores = sysconf(_SC_NPROCESSORS_ONLN);
    ryr_plan_t plan;
    if (ryr_options_plan(&opt, ncores > 0 ? (int)ncores : 1, ryr_gpu_available(), &plan, &err) ||
        ryr_options_check_ranks(&opt, utc_nranks(), &err)) {
        if (me == 0) {
            fprintf(stderr, "ryr: %s\n", err.msg);
            if (utc_gpu_unavailable_reason() && strstr(err.msg, "needs a GPU"))
                fprintf(stderr, "ryr: no GPU: %s\n", utc_gpu_unavailable_reason());
        }
        utc_finalize();
        return 2;
    }

    /* the same checks give the same answer on every rank; rank 0 tells the user */
    ryr_scene_t scene;
    if ((opt.scene ? ryr_scene_load(opt.scene, &scene, &err)
                   : ryr_scene_load_default(&scene, &err))) {
        if (me == 0)
            fprintf(stderr, "ryr: %s\n", err.msg);
        utc_finalize();
        return 2;
    }
    if (scene.warning[0] && me == 0)
        fprintf(stderr, "ryr: warning: %s\n", scene.warning);
    /* --stage-alone writes nothing */
    int bad_out = !opt.no_output && opt.stage_alone < 0 && me == 0 &&
                  ryr_output_prepare(opt.out, &err);
    if (bad_out)
        fprintf(stderr, "ryr: %s\n", err.msg);
    MPI_Bcast(&bad_out, 1, MPI_INT, 0, MPI_COMM_WORLD);
    ryr_video_t *video = NULL;
    if (bad_out || open_video(&opt, &video)) {
        ryr_scene_fini(&scene);
        utc_finalize();
        return 2;
    }

    if (plan.preset == RYR_PRESET_SEQ)
        /* the plain sequential loop: no tasks; one rank does it all */
        rc = me == 0 ? ryr_run_seq(&opt, &scene, video) : 0;
    else if (opt.stage_alone >= 0)
        rc = ryr_run_stage_alone(&opt, &plan, &scene);
    else
        rc = ryr_run_pipeline(&opt, &plan, &scene, video);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    rc = close_video(&opt, video, rc);
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    ryr_scene_fini(&scene);
    utc_status_t frc = utc_finalize(); /* fails when, say, the UTC_TRACE file was lost */
    if (frc != UTC_OK) {
        fprintf(stderr, "ryr: utc_finalize: %s\n", utc_last_error());
        if (rc == 0)
            rc = 1;
    }
    return rc;
}
