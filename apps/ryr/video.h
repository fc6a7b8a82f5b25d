/**
 * @file video.h
 * @brief RYR video output: the rotated frames as one YUV4MPEG2 stream (4:4:4, `C444`),
 * which ffmpeg, ffplay and mpv play as it is.
 *
 * A regular file is written under a temporary name in the same folder and renamed into
 * place by ryr_video_close when the run succeeded, so a failed run leaves no partial video.
 * "-" is standard output; an existing device or pipe (/dev/null, a FIFO) is written in place.
 *
 * Frames may arrive plane by plane and out of order (one output task per plane): each
 * plane is put with its frame number, and a frame is written once its three planes are in,
 * always in frame order.
 */
#ifndef RYR_VIDEO_H
#define RYR_VIDEO_H

#include <stdint.h>

#include "error.h"

/** An open video stream. */
typedef struct ryr_video ryr_video_t;

/**
 * @brief Open a stream of @p frames frames of @p w x @p h pixels at fps_num/fps_den
 * frames per second, and write its header.
 * @param path a file name, or "-" for standard output
 * @param[out] out the stream, set only on success
 * @return 0, or -1 with "--video 'PATH': problem" in @p err
 */
int ryr_video_open(const char *path, int w, int h, int frames, int fps_num, int fps_den,
                   ryr_video_t **out, ryr_err_t *err) __attribute__((warn_unused_result));

/**
 * @brief Hand one plane (w x h bytes) of frame @p frame to the stream; it is copied when
 * the frame cannot be written yet. Thread-safe: output tasks may call it at once.
 *
 * After a write error every later put is dropped and returns 0: the error is reported once.
 * @param plane 0 (Y), 1 (U) or 2 (V)
 * @return 0, or -1 when this call failed to write (message in @p err)
 */
int ryr_video_put(ryr_video_t *v, int frame, int plane, const uint8_t *data, ryr_err_t *err)
    __attribute__((warn_unused_result));

/**
 * @brief Finish the stream and free it (@p v may be NULL: nothing to do).
 *
 * With @p keep, checks that every frame was written and flushed, then renames the file
 * into place. Without @p keep (the run failed), removes what was written (a regular file).
 * @return 0, or -1 with the problem in @p err (nothing left behind then, either)
 */
int ryr_video_close(ryr_video_t *v, int keep, ryr_err_t *err);

/** @brief Frames written so far. */
int ryr_video_frames_written(const ryr_video_t *v);

#endif /* RYR_VIDEO_H */
