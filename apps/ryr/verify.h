/**
 * @file verify.h
 * @brief --verify: byte-for-byte comparison of an output plane with the sequential one.
 */
#ifndef RYR_VERIFY_H
#define RYR_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/** @brief Index of the first byte where @p a and @p b differ, or -1 when equal. */
long ryr_first_diff(const uint8_t *a, const uint8_t *b, size_t n);

/**
 * @brief Compare a w x h plane of a frame with the reference.
 * @param plane 0..2 (y, u, v) or RYR_PLANE_RGB (-1)
 * @param channels bytes per pixel (1 for planes, 3 for RGB)
 * @return 0 when equal; -1 with "frame F, plane P: first difference at pixel (x, y):
 *         expected E, got G" in @p err
 */
int ryr_verify_plane(int frame, int plane, const uint8_t *ref, const uint8_t *got, int w,
                     int h, int channels, ryr_err_t *err) __attribute__((warn_unused_result));

#endif /* RYR_VERIFY_H */
