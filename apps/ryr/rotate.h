/**
 * @file rotate.h
 * @brief Rotation of one 8-bit plane counter-clockwise about its centre (RYR.md).
 *
 * The output is the bounding box of the rotated corners. Each output pixel centre maps
 * back into the source; a point inside the source area takes the bilinear blend of its
 * 4 nearest source pixels (clamped at the edges), a point outside it is 0. Angles that
 * are multiples of 90 degrees are exact pixel permutations: 90 gives the pixels of
 * ImageMagick's `convert in.pgm -rotate -90 out.pgm` (ImageMagick turns clockwise).
 *
 * Compute a ryr_rotation_t once per plane size and angle; rotating is then pure, so
 * threads may fill disjoint row ranges of one output plane at once.
 */
#ifndef RYR_ROTATE_H
#define RYR_ROTATE_H

#include <stdint.h>

#include "error.h"

/** A rotation of a w x h plane, with its output size. */
typedef struct ryr_rotation {
    int w, h;     /**< source size */
    int ow, oh;   /**< output size: bounding box of the rotated corners */
    int quarter;  /**< 0..3: angle is that many quarter turns (exact); -1: general angle */
    double c, s;  /**< cosine and sine of the angle (general angles) */
} ryr_rotation_t;

/**
 * @brief Prepare the rotation of a w x h plane by @p angle_deg degrees counter-clockwise.
 * @return 0, or -1 (message in @p err) when w or h is not positive or the angle is not
 *         finite
 */
int ryr_rotation_init(ryr_rotation_t *rot, int w, int h, double angle_deg, ryr_err_t *err)
    __attribute__((warn_unused_result));

/**
 * @brief Compute output rows [y0, y1) (0 <= y0 <= y1 <= rot->oh).
 * @param src the whole source plane, rot->w x rot->h bytes, row-major
 * @param out receives (y1 - y0) * rot->ow bytes, row y0 first (a caller filling a whole
 *            plane passes plane + y0 * rot->ow)
 */
void ryr_rotate_rows(const ryr_rotation_t *rot, const uint8_t *src, int y0, int y1,
                     uint8_t *out);

/** @brief Rotate a whole plane into @p out (rot->ow * rot->oh bytes). */
void ryr_rotate_plane(const ryr_rotation_t *rot, const uint8_t *src, uint8_t *out);

#endif /* RYR_ROTATE_H */
