/**
 * @file pnm.h
 * @brief Binary PGM (P5, 1 channel) and PPM (P6, 3 channels) files with maxval 255.
 */
#ifndef RYR_PNM_H
#define RYR_PNM_H

#include <stdint.h>

#include "error.h"

/** Largest width or height the reader accepts. */
#define RYR_PNM_MAX_SIDE 65536
/** Largest file ryr_pnm_read reads (an image of 16384 x 16384 x 3 bytes and its header). */
#define RYR_PNM_MAX_BYTES ((size_t)16384 * 16384 * 3 + 4096)

/**
 * @brief Write an image: P5 when @p channels is 1, P6 when it is 3.
 *
 * Every write error is reported, including those only seen when the file is flushed
 * and closed (a full disk, /dev/full). A partial file may be left behind on error.
 * @param data w * h * channels bytes, row-major, channels interleaved
 * @return 0, or -1 with "PATH: problem" in @p err
 */
int ryr_pnm_write(const char *path, int channels, int w, int h, const uint8_t *data,
                  ryr_err_t *err) __attribute__((warn_unused_result));

/**
 * @brief Read a P5 or P6 file strictly: magic, width, height and maxval 255 separated by
 * whitespace (comments allowed), one whitespace byte, then exactly w * h * channels bytes
 * and nothing after them.
 * @param[out] channels 1 (P5) or 3 (P6)
 * @param[out] data malloc'd pixels; the caller frees them
 * @return 0, or -1 with "PATH: problem" in @p err (outputs untouched)
 */
int ryr_pnm_read(const char *path, int *channels, int *w, int *h, uint8_t **data,
                 ryr_err_t *err) __attribute__((warn_unused_result));

#endif /* RYR_PNM_H */
