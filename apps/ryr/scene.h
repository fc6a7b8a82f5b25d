/**
 * @file scene.h
 * @brief RYR scene: spheres, point lights and one camera, read from the text format of
 * RYR.md ("s", "l" and "c" lines) with strict checks and file:line error messages.
 */
#ifndef RYR_SCENE_H
#define RYR_SCENE_H

#include "error.h"

/** At most this many point lights (c-ray 1.1's MAX_LIGHTS). */
#define RYR_MAX_LIGHTS 16

/** A point or direction in double precision. */
typedef struct ryr_vec3 {
    double x, y, z;
} ryr_vec3_t;

/** A sphere, as given on an `s` line. */
typedef struct ryr_sphere {
    ryr_vec3_t pos;   /**< centre */
    double rad;       /**< radius, > 0 */
    ryr_vec3_t col;   /**< diffuse colour r, g, b (nominally 0..1) */
    double spow;      /**< specular power ("shininess"); no highlight when <= 0 */
    double refl;      /**< reflection weight; no reflection ray when <= 0 */
} ryr_sphere_t;

/** A whole scene. Spheres are kept in file order; the renderer tests them last first. */
typedef struct ryr_scene {
    ryr_sphere_t *spheres;              /**< file order; NULL when there are none */
    int nspheres;
    ryr_vec3_t lights[RYR_MAX_LIGHTS];  /**< file order */
    int nlights;
    ryr_vec3_t cam_pos;                 /**< camera position */
    ryr_vec3_t cam_target;              /**< camera target (never equal to cam_pos) */
    double cam_fov;                     /**< read but unused: c-ray's field of view is fixed */
    char warning[256];                  /**< "" or warnings for the user (no spheres, ...) */
} ryr_scene_t;

/**
 * @brief Read a scene file.
 *
 * Rejects unknown kinds, missing or extra fields, non-finite numbers, radius <= 0,
 * more than RYR_MAX_LIGHTS lights, a second camera, no camera, a camera target equal to
 * its position and a vertical view direction, with "FILE:LINE: problem" in @p err.
 * A scene with no spheres (or no lights) loads, with a note in scene->warning.
 * @param path scene file
 * @param[out] scene filled on success (release with ryr_scene_fini); untouched on error
 * @param err message on failure (may be NULL)
 * @return 0 or -1
 */
int ryr_scene_load(const char *path, ryr_scene_t *scene, ryr_err_t *err)
    __attribute__((warn_unused_result));

/**
 * @brief Parse a scene from memory; @p name is used in messages in place of a file name.
 * @param text the scene text, @p len bytes (need not be NUL-terminated)
 * @return 0 or -1, as ryr_scene_load
 */
int ryr_scene_parse(const char *text, size_t len, const char *name, ryr_scene_t *scene,
                    ryr_err_t *err) __attribute__((warn_unused_result));

/** @brief Load the built-in default scene (see default_scene.c). @return 0 or -1. */
int ryr_scene_load_default(ryr_scene_t *scene, ryr_err_t *err)
    __attribute__((warn_unused_result));

/** The text of the built-in default scene, in the scene file format. */
extern const char ryr_default_scene_text[];

/** @brief Release a scene's memory. Safe on a zeroed or already released scene. */
void ryr_scene_fini(ryr_scene_t *scene);

#endif /* RYR_SCENE_H */
