/**
 * @file yuv_image.h
 * @brief The yuv app's job: an RGB image (generated from a seed or read from a PPM) and
 * its Y, U and V planes.
 */
#ifndef APP_YUV_IMAGE_H
#define APP_YUV_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "yuv.h" /* ryr_yuv_convert: the RYR sample's conversion */

/** An RGB image and its planes. */
typedef struct yuv_job {
    int w, h;
    uint8_t *rgb;          /**< w * h * 3 bytes, R G B per pixel */
    uint8_t *y, *u, *v;    /**< w * h bytes each (one allocation, y first) */
} yuv_job_t;

/** @brief Pixels in the image. */
static inline size_t yuv_job_pixels(const yuv_job_t *job)
{
    return (size_t)job->w * (size_t)job->h;
}

/**
 * @brief Make a job: generate a w x h RGB image from @p seed, or read the PPM @p path.
 * @return 0; APP_EXIT_USAGE (bad or gray file, bad size, too large) or APP_EXIT_FAIL (out
 *         of memory), with a message
 */
int yuv_job_make(yuv_job_t *job, const char *path, long long w, long long h, uint64_t seed,
                 char *err, size_t errlen);

/** @brief Write Y, U and V stacked top to bottom as one w x 3h PGM. @return 0 or -1. */
int yuv_job_write(const yuv_job_t *job, const char *path, char *err, size_t errlen);

/** @brief Free the job (safe on a zeroed one). */
void yuv_job_fini(yuv_job_t *job);

#endif /* APP_YUV_IMAGE_H */
