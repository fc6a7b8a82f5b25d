/**
 * @file rotate_image.h
 * @brief The rotate app's image: 1 (gray) or 3 (RGB) planes of 8-bit pixels, generated
 * from a seed or read from a PGM/PPM file, and the rotated result.
 */
#ifndef APP_ROTATE_IMAGE_H
#define APP_ROTATE_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "rotate.h" /* ryr_rotation_t, ryr_rotate_rows: the RYR sample's rotation */

/** Largest number of planes (channels). */
#define ROTATE_MAX_PLANES 3

/** A job: source planes, the rotation, and the output planes. */
typedef struct rotate_job {
    int planes;                          /**< 1 or 3 */
    ryr_rotation_t rot;                  /**< sizes and angle */
    uint8_t *src[ROTATE_MAX_PLANES];     /**< rot.w * rot.h bytes each */
    uint8_t *dst[ROTATE_MAX_PLANES];     /**< rot.ow * rot.oh bytes each */
} rotate_job_t;

/**
 * @brief Make a job: generate a w x h RGB image from @p seed, or read @p path (PGM or
 * PPM) when it is not NULL; split it into planes; prepare the rotation by @p angle_deg.
 * @return 0; APP_EXIT_USAGE (bad file, bad size, too large) or APP_EXIT_FAIL (out of
 *         memory), with a message
 */
int rotate_job_make(rotate_job_t *job, const char *path, long long w, long long h,
                    uint64_t seed, double angle_deg, char *err, size_t errlen);

/** @brief Write the rotated planes as one PGM (1 plane) or PPM (3 planes). @return 0 or -1. */
int rotate_job_write(const rotate_job_t *job, const char *path, char *err, size_t errlen);

/** @brief Rotate output rows [r0, r1) of the planes stacked top to bottom (plane p's row y
 * is row p * oh + y): what a thread's share of the work is, in every version. */
void rotate_job_rows(const rotate_job_t *job, long long r0, long long r1);

/** @brief Free the planes (safe on a zeroed job). */
void rotate_job_fini(rotate_job_t *job);

#endif /* APP_ROTATE_IMAGE_H */
