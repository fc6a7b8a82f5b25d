#include "seq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "verify.h"
#include "yuv.h"

int ryr_seq_init(ryr_seq_t *seq, const ryr_scene_t *scene, const ryr_options_t *opt,
                 ryr_err_t *err)
{
    memset(seq, 0, sizeof *seq);
    seq->scene = scene;
    seq->w = opt->width;
    seq->h = opt->height;
    seq->yuv_repeat = opt->yuv_repeat > 0 ? opt->yuv_repeat : 1;
    seq->orbit = opt->orbit;
    if (ryr_rotation_init(&seq->rot, seq->w, seq->h, opt->angle, err))
        return -1;
    size_t n = (size_t)seq->w * (size_t)seq->h;
    size_t on = (size_t)seq->rot.ow * (size_t)seq->rot.oh;
    seq->rgb = malloc(n * 3);
    int ok = seq->rgb != NULL;
    for (int p = 0; p < RYR_NPLANES; p++) {
        seq->plane[p] = malloc(n);
        seq->rotated[p] = malloc(on);
        ok = ok && seq->plane[p] && seq->rotated[p];
    }
    if (!ok) {
        ryr_seq_fini(seq);
        return ryr_err_set(err, "out of memory for %dx%d frames", opt->width, opt->height);
    }
    return 0;
}

void ryr_seq_fini(ryr_seq_t *seq)
{
    free(seq->rgb);
    seq->rgb = NULL;
    for (int p = 0; p < RYR_NPLANES; p++) {
        free(seq->plane[p]);
        free(seq->rotated[p]);
        seq->plane[p] = seq->rotated[p] = NULL;
    }
}

void ryr_seq_frame(ryr_seq_t *seq, int frame)
{
    ryr_view_t view;
    double t0 = ryr_now();
    ryr_view_for_frame(&view, seq->scene, frame, seq->orbit);
    ryr_render_rows(seq->scene, &view, seq->w, seq->h, 0, seq->h, seq->rgb);
    double t1 = ryr_now();
    size_t n = (size_t)seq->w * (size_t)seq->h;
    for (int r = 0; r < seq->yuv_repeat; r++)
        ryr_yuv_convert(seq->rgb, 0, n, seq->plane[0], seq->plane[1], seq->plane[2]);
    double t2 = ryr_now();
    for (int p = 0; p < RYR_NPLANES; p++)
        ryr_rotate_plane(&seq->rot, seq->plane[p], seq->rotated[p]);
    double t3 = ryr_now();
    seq->busy[RYR_STAGE_RAYTRACE] += t1 - t0;
    seq->busy[RYR_STAGE_YUV] += t2 - t1;
    seq->busy[RYR_STAGE_ROTATE] += t3 - t2;
}

int ryr_seq_write(ryr_seq_t *seq, const char *dir, int frame, int rgb, ryr_video_t *video,
                  ryr_err_t *err)
{
    double t0 = ryr_now();
    int rc = 0;
    for (int p = 0; p < RYR_NPLANES && rc == 0; p++)
        rc = ryr_output_write_plane(dir, frame, p, seq->rotated[p], seq->rot.ow, seq->rot.oh,
                                    err);
    if (rc == 0 && rgb)
        rc = ryr_output_write_rgb(dir, frame, seq->rgb, seq->w, seq->h, err);
    for (int p = 0; p < RYR_NPLANES && rc == 0 && video; p++)
        rc = ryr_video_put(video, frame, p, seq->rotated[p], err);
    seq->busy[RYR_STAGE_OUTPUT] += ryr_now() - t0;
    return rc;
}

/* --verify for seq: a second, independent computation of the frame must match. */
static int verify_frame(ryr_seq_t *ref, const ryr_seq_t *got, int frame, ryr_err_t *err)
{
    ryr_seq_frame(ref, frame);
    for (int p = 0; p < RYR_NPLANES; p++)
        if (ryr_verify_plane(frame, p, ref->rotated[p], got->rotated[p], got->rot.ow,
                             got->rot.oh, 1, err))
            return -1;
    return 0;
}

int ryr_run_seq(const ryr_options_t *opt, const ryr_scene_t *scene, ryr_video_t *video)
{
    ryr_seq_t seq, ref;
    ryr_err_t err;
    int status = 0;
    if (ryr_seq_init(&seq, scene, opt, &err)) {
        fprintf(stderr, "ryr: %s\n", err.msg);
        return 1;
    }
    if (opt->verify && ryr_seq_init(&ref, scene, opt, &err)) {
        fprintf(stderr, "ryr: %s\n", err.msg);
        ryr_seq_fini(&seq);
        return 1;
    }
    ryr_progress_t progress;
    ryr_progress_init(&progress, stderr, opt->frames);
    double verify_s = 0.0;
    int verify_failed = 0;
    double t0 = ryr_now();
    int f;
    for (f = 0; f < opt->frames; f++) {
        ryr_seq_frame(&seq, f);
        if (!opt->no_output && ryr_seq_write(&seq, opt->out, f, opt->rgb, video, &err)) {
            status = 1;
            break;
        }
        if (opt->verify) {
            double tv = ryr_now();
            int bad = verify_frame(&ref, &seq, f, &err);
            verify_s += ryr_now() - tv;
            if (bad) {
                status = 1;
                verify_failed = 1;
                break;
            }
        }
        ryr_progress_update(&progress, f + 1);
    }
    double seconds = ryr_now() - t0 - verify_s;
    ryr_progress_finish(&progress);
    if (status) {
        fprintf(stderr, "ryr: %s%s\n", verify_failed ? "verify failed: " : "", err.msg);
    } else {
        ryr_report_t rep;
        memset(&rep, 0, sizeof rep);
        rep.preset = ryr_preset_name(RYR_PRESET_SEQ);
        rep.frames = f;
        rep.width = opt->width;
        rep.height = opt->height;
        rep.seconds = seconds;
        rep.verified = opt->verify;
        for (int s = 0; s < RYR_NSTAGES; s++) {
            rep.stages[s].tasks = 0;
            rep.stages[s].threads = 1;
            rep.stages[s].busy_s = seq.busy[s];
        }
        ryr_report_print(ryr_options_report_stream(opt), &rep);
        if (opt->json)
            ryr_report_json(stdout, &rep);
    }
    if (opt->verify)
        ryr_seq_fini(&ref);
    ryr_seq_fini(&seq);
    return status;
}
