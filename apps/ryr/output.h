/**
 * @file output.h
 * @brief RYR output files: OUT/frame_NNNNN_{y,u,v}.pgm and OUT/frame_NNNNN.ppm.
 */
#ifndef RYR_OUTPUT_H
#define RYR_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/** Planes of a YUV frame, in file and conduit order. */
typedef enum ryr_plane {
    RYR_PLANE_Y,
    RYR_PLANE_U,
    RYR_PLANE_V,
    RYR_NPLANES
} ryr_plane_t;

/** Pass as the plane of ryr_output_path for the raytraced RGB frame (.ppm). */
#define RYR_PLANE_RGB (-1)

/** @brief "y", "u" or "v". */
const char *ryr_plane_name(int plane);

/**
 * @brief Make sure @p dir is a writable folder, creating it (and its parents) if needed.
 * Call before any work starts. @return 0, or -1 with "--out 'DIR': problem"
 */
int ryr_output_prepare(const char *dir, ryr_err_t *err) __attribute__((warn_unused_result));

/**
 * @brief The file name of a frame's plane: DIR/frame_NNNNN_y.pgm (plane 0..2) or
 * DIR/frame_NNNNN.ppm (RYR_PLANE_RGB).
 * @return 0, or -1 when it does not fit in @p len bytes
 */
int ryr_output_path(char *buf, size_t len, const char *dir, int frame, int plane);

/**
 * @brief Write one plane (w x h bytes) of a frame as a binary PGM file.
 * @return 0, or -1 with the file name and the system's reason in @p err
 */
int ryr_output_write_plane(const char *dir, int frame, int plane, const uint8_t *data, int w,
                           int h, ryr_err_t *err) __attribute__((warn_unused_result));

/** @brief Write a raytraced frame (w x h x 3 bytes, RGB) as a binary PPM file. */
int ryr_output_write_rgb(const char *dir, int frame, const uint8_t *rgb, int w, int h,
                         ryr_err_t *err) __attribute__((warn_unused_result));

#endif /* RYR_OUTPUT_H */
