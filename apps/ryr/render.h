/**
 * @file render.h
 * @brief The c-ray 1.1 compatible ray tracer of RYR (1 ray per pixel).
 *
 * Byte-exact rules (RYR.md): constants below; spheres tested in reverse file order and a
 * hit replaces the nearest only when strictly nearer; the camera matrix is rounded to
 * float; the camera position is added to the primary direction as well; pixel channel
 * = (int)(min(c, 1) * 255) & 0xff. Everything else is double precision, evaluated in
 * the order written (this file must be built without fast-math or FMA contraction).
 *
 * Thread safety: every function here is pure (reads its inputs, writes only its output
 * buffer), so threads may render disjoint row ranges of one frame at once.
 */
#ifndef RYR_RENDER_H
#define RYR_RENDER_H

#include <stdint.h>

#include "scene.h"

#define RYR_RAY_MAG 1000.0       /**< primary and reflection rays have this magnitude */
#define RYR_MAX_RAY_DEPTH 5      /**< recursion limit: depth >= this traces black */
#define RYR_FOV 0.78539816       /**< fixed field of view (radians) */
#define RYR_HALF_FOV 0.39269908  /**< RYR_FOV / 2 */
#define RYR_ERR_MARGIN 1e-6      /**< hits nearer than this are ignored (no acne) */

/**
 * The camera of one frame, as the renderer uses it. A GPU renderer gets the same
 * struct: compute it once per frame on the host with ryr_view_for_frame.
 */
typedef struct ryr_view {
    ryr_vec3_t pos;  /**< camera position: ray origin, and added to every direction */
    float m[3][3];   /**< columns i, j, k of the camera basis, rounded to float */
} ryr_view_t;

/**
 * @brief The c-ray camera basis for a position and a target:
 * k = normalize(target - pos), i = cross((0,1,0), k), j = cross(k, i), each element
 * rounded to float. The target must differ from the position and not lie straight above
 * or below it (the scene reader checks this).
 */
void ryr_view_init(ryr_view_t *view, ryr_vec3_t pos, ryr_vec3_t target);

/**
 * @brief The view of frame @p frame with `--orbit orbit_deg`: the scene's camera turned
 * by frame * orbit_deg degrees about the vertical axis through its target,
 * counter-clockwise seen from above (+y): (x, z) relative to the target becomes
 * (x cos a + z sin a, -x sin a + z cos a); y is unchanged. A turn that is a multiple of
 * 360 degrees (frame 0, or orbit 0) leaves the camera exactly as in the file.
 */
void ryr_view_for_frame(ryr_view_t *view, const ryr_scene_t *scene, int frame,
                        double orbit_deg);

/** @brief A ray: origin and (unnormalized) direction. */
typedef struct ryr_ray {
    ryr_vec3_t orig, dir;
} ryr_ray_t;

/** @brief The primary ray of pixel (x, y) of a w x h frame. */
ryr_ray_t ryr_primary_ray(const ryr_view_t *view, int w, int h, int x, int y);

/**
 * @brief Colour seen along a ray (channels unclamped), c-ray's trace().
 * @param depth recursion depth, 0 for primary rays
 */
ryr_vec3_t ryr_trace(const ryr_scene_t *scene, ryr_ray_t ray, int depth);

/** @brief One colour channel to a byte: (int)(min(c, 1) * 255) & 0xff. */
uint8_t ryr_channel_byte(double c);

/**
 * @brief Render rows [y0, y1) of a w x h frame.
 * @param out receives (y1 - y0) * w * 3 bytes, R G B per pixel, row y0 first (a caller
 *            rendering into a whole frame passes frame + y0 * w * 3)
 * Requires 0 <= y0 <= y1 <= h and w, h > 0.
 */
void ryr_render_rows(const ryr_scene_t *scene, const ryr_view_t *view, int w, int h, int y0,
                     int y1, uint8_t *out);

#endif /* RYR_RENDER_H */
