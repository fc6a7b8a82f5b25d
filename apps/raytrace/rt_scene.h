/**
 * @file rt_scene.h
 * @brief The raytrace app's job: a scene (generated from a seed, or a scene file in the
 * RYR format, shared/RYR.md), the camera, and the frame to render.
 */
#ifndef APP_RT_SCENE_H
#define APP_RT_SCENE_H

#include <stddef.h>
#include <stdint.h>

#include "render.h" /* ryr_render_rows: the RYR sample's c-ray renderer */
#include "scene.h"

/** Spheres in a generated scene, besides the floor. */
#define RT_GEN_SPHERES 16

/** A frame to render. */
typedef struct rt_job {
    ryr_scene_t scene;
    ryr_view_t view; /**< the scene's camera */
    int w, h;
    uint8_t *rgb;    /**< w * h * 3 bytes */
} rt_job_t;

/**
 * @brief The text of the scene of @p seed: a floor, RT_GEN_SPHERES spheres resting on
 * it, three lights and a camera, in the scene file format.
 * @return the length written (< cap), or -1 when cap is too small
 */
int rt_scene_text(uint64_t seed, char *text, size_t cap);

/**
 * @brief Make a job: the scene of @p seed, or the scene file @p path; a w x h frame.
 * @return 0; APP_EXIT_USAGE (bad scene file, bad size, too large) or APP_EXIT_FAIL (out of
 *         memory), with a message
 */
int rt_job_make(rt_job_t *job, const char *path, long long w, long long h, uint64_t seed,
                char *err, size_t errlen);

/** @brief Write the frame as a PPM. @return 0 or -1. */
int rt_job_write(const rt_job_t *job, const char *path, char *err, size_t errlen);

/** @brief Free the job (safe on a zeroed one). */
void rt_job_fini(rt_job_t *job);

#endif /* APP_RT_SCENE_H */
