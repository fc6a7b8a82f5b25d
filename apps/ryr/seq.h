/**
 * @file seq.h
 * @brief The sequential path: raytrace, yuv, rotate and output of each frame in turn,
 * with no framework. It is `--preset seq`, and the reference that --verify compares the
 * pipeline with (ryr_seq_frame computes one frame's reference planes).
 */
#ifndef RYR_SEQ_H
#define RYR_SEQ_H

#include <stdint.h>

#include "options.h"
#include "output.h"
#include "render.h"
#include "rotate.h"
#include "scene.h"
#include "video.h"

/** Buffers and timing of the sequential path. */
typedef struct ryr_seq {
    const ryr_scene_t *scene;
    int w, h;                       /**< frame size */
    int yuv_repeat;                 /**< conversions per frame */
    double orbit;                   /**< degrees per frame */
    ryr_rotation_t rot;             /**< the rotation of a w x h plane */
    uint8_t *rgb;                   /**< w * h * 3: the raytraced frame */
    uint8_t *plane[RYR_NPLANES];    /**< w * h each: Y, U, V */
    uint8_t *rotated[RYR_NPLANES];  /**< rot.ow * rot.oh each: the rotated planes */
    double busy[RYR_NSTAGES];       /**< seconds spent in each stage so far */
} ryr_seq_t;

/**
 * @brief Allocate the buffers for the options' size, angle, orbit and yuv repeat.
 * @return 0 or -1 (out of memory, bad size)
 */
int ryr_seq_init(ryr_seq_t *seq, const ryr_scene_t *scene, const ryr_options_t *opt,
                 ryr_err_t *err) __attribute__((warn_unused_result));

/** @brief Release the buffers. */
void ryr_seq_fini(ryr_seq_t *seq);

/**
 * @brief Compute frame @p frame: seq->rgb, seq->plane[] and seq->rotated[]; adds the
 * time of raytrace, yuv and rotate to seq->busy.
 */
void ryr_seq_frame(ryr_seq_t *seq, int frame);

/**
 * @brief Write the rotated planes of the frame last computed (and the RGB frame when
 * @p rgb) into @p dir, and the frame to @p video when not NULL; adds the time to
 * seq->busy[RYR_STAGE_OUTPUT].
 * @return 0 or -1 (write error, message in @p err)
 */
int ryr_seq_write(ryr_seq_t *seq, const char *dir, int frame, int rgb, ryr_video_t *video,
                  ryr_err_t *err) __attribute__((warn_unused_result));

/**
 * @brief `--preset seq`: every frame in turn, progress on stderr, then the summary (on
 * stdout; with --json, the text on stderr and one JSON line on stdout).
 *
 * The options must be parsed and checked, the scene loaded and --out prepared (unless
 * --no-output) by the caller, and the --video stream opened (@p video; NULL: none).
 * @return the process exit status: 0, or 1 on a write error or a --verify mismatch
 */
int ryr_run_seq(const ryr_options_t *opt, const ryr_scene_t *scene, ryr_video_t *video);

#endif /* RYR_SEQ_H */
