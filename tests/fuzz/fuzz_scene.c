/*
 * Fuzz harness: the RYR scene reader (ryr_scene_parse). Any input either loads a scene
 * that keeps the reader's promises (radius > 0, finite numbers, at most RYR_MAX_LIGHTS
 * lights, a camera whose target differs from its position) or fails with a message and
 * leaves the output untouched.
 */
#include "fuzz_util.h" /* first: it defines _GNU_SOURCE */

#include <math.h>

#include "scene.h"

static int finite3(ryr_vec3_t v)
{
    return isfinite(v.x) && isfinite(v.y) && isfinite(v.z);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ryr_scene_t scene;
    memset(&scene, 0xa5, sizeof scene);
    ryr_err_t err = {{0}};
    if (ryr_scene_parse((const char *)data, size, "fuzz.scene", &scene, &err) != 0) {
        fuzz_check_message(err.msg, sizeof err.msg);
        const unsigned char *b = (const unsigned char *)&scene;
        for (size_t i = 0; i < sizeof scene; i++)
            FUZZ_CHECK(b[i] == 0xa5); /* untouched on error */
        return 0;
    }
    FUZZ_CHECK(scene.nspheres >= 0 && scene.nlights >= 0 && scene.nlights <= RYR_MAX_LIGHTS);
    FUZZ_CHECK((scene.nspheres == 0) == (scene.spheres == NULL));
    for (int i = 0; i < scene.nspheres; i++) {
        const ryr_sphere_t *s = &scene.spheres[i];
        FUZZ_CHECK(s->rad > 0.0 && isfinite(s->rad));
        FUZZ_CHECK(finite3(s->pos) && finite3(s->col) && isfinite(s->spow) &&
                   isfinite(s->refl));
    }
    for (int i = 0; i < scene.nlights; i++)
        FUZZ_CHECK(finite3(scene.lights[i]));
    FUZZ_CHECK(finite3(scene.cam_pos) && finite3(scene.cam_target) && scene.cam_fov > 0.0 &&
               scene.cam_fov < 180.0);
    FUZZ_CHECK(scene.cam_pos.x != scene.cam_target.x || scene.cam_pos.y != scene.cam_target.y ||
               scene.cam_pos.z != scene.cam_target.z);
    FUZZ_CHECK(memchr(scene.warning, '\0', sizeof scene.warning) != NULL);
    ryr_scene_fini(&scene);
    return 0;
}
