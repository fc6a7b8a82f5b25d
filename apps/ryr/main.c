/*
 * ryr: the raytrace-YUV-rotate sample (shared/RYR.md).
 *
 * main parses and checks everything that can be checked before work starts, then hands
 * the run to the path of the preset. Only `--preset seq` exists in this build; the UTC
 * pipeline presets plug in here (apps/ryr/pipeline*.c).
 */
#include <stdio.h>
#include <unistd.h>

#include "options.h"
#include "output.h"
#include "scene.h"
#include "seq.h"

int main(int argc, char **argv)
{
    ryr_options_t opt;
    ryr_err_t err;
    int rc = ryr_options_parse(argc, argv, &opt, &err);
    if (rc < 0) {
        fprintf(stderr, "ryr: %s\n", err.msg);
        return 2;
    }
    if (rc > 0) {
        ryr_options_usage(stdout, "ryr");
        return 0;
    }

    long ncores = sysconf(_SC_NPROCESSORS_ONLN);
    ryr_plan_t plan;
    if (ryr_options_plan(&opt, ncores > 0 ? (int)ncores : 1, 0, &plan, &err)) {
        fprintf(stderr, "ryr: %s\n", err.msg);
        return 2;
    }
    if (plan.preset != RYR_PRESET_SEQ) {
        fprintf(stderr, "ryr: --preset %s needs the UTC pipeline, which this build does not "
                        "have yet; use --preset seq\n", ryr_preset_name(plan.preset));
        return 2;
    }

    ryr_scene_t scene;
    if ((opt.scene ? ryr_scene_load(opt.scene, &scene, &err)
                   : ryr_scene_load_default(&scene, &err))) {
        fprintf(stderr, "ryr: %s\n", err.msg);
        return 2;
    }
    if (scene.warning[0])
        fprintf(stderr, "ryr: warning: %s\n", scene.warning);
    if (!opt.no_output && ryr_output_prepare(opt.out, &err)) {
        fprintf(stderr, "ryr: %s\n", err.msg);
        ryr_scene_fini(&scene);
        return 2;
    }

    rc = ryr_run_seq(&opt, &scene);
    ryr_scene_fini(&scene);
    return rc;
}
