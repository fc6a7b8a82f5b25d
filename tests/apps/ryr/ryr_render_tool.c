/*
 * Test helper: render one frame of a scene with the RYR core into a PPM file, with no
 * framework, so scripts can compare the C renderer with an independent one and builds
 * at different optimization levels with each other.
 *
 *   ryr_render_tool SCENE WxH OUT.ppm [FRAME [ORBIT_DEG]]   (SCENE "-": built-in scene)
 *   ryr_render_tool --default-scene                         (print the built-in scene)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pnm.h"
#include "render.h"
#include "scene.h"

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--default-scene") == 0) {
        fputs(ryr_default_scene_text, stdout);
        return 0;
    }
    if (argc < 4 || argc > 6) {
        fprintf(stderr, "usage: %s SCENE|- WxH OUT.ppm [FRAME [ORBIT_DEG]]\n", argv[0]);
        return 2;
    }
    int w, h, frame = argc > 4 ? atoi(argv[4]) : 0;
    double orbit = argc > 5 ? atof(argv[5]) : 0.0;
    if (sscanf(argv[2], "%dx%d", &w, &h) != 2 || w <= 0 || h <= 0) {
        fprintf(stderr, "bad size '%s'\n", argv[2]);
        return 2;
    }
    ryr_scene_t scene;
    ryr_err_t err;
    if (strcmp(argv[1], "-") == 0 ? ryr_scene_load_default(&scene, &err)
                                  : ryr_scene_load(argv[1], &scene, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    uint8_t *rgb = malloc((size_t)w * h * 3);
    if (!rgb)
        return 1;
    ryr_view_t view;
    ryr_view_for_frame(&view, &scene, frame, orbit);
    /* In two parts, as threads would split the rows. */
    ryr_render_rows(&scene, &view, w, h, 0, h / 3, rgb);
    ryr_render_rows(&scene, &view, w, h, h / 3, h, rgb + (size_t)(h / 3) * w * 3);
    int rc = ryr_pnm_write(argv[3], 3, w, h, rgb, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    free(rgb);
    ryr_scene_fini(&scene);
    return rc ? 1 : 0;
}
