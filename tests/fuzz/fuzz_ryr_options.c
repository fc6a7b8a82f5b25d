/*
 * Fuzz harness: the RYR command line (ryr_options_parse, then ryr_options_plan and
 * ryr_options_check_ranks as main does). The input is the argument list, one argument
 * per line (or NUL-separated). Whatever the arguments, the parser returns 0, 1 or -1;
 * on 0 every value is within its documented range; on -1 there is a message.
 */
#include "fuzz_util.h" /* first: it defines _GNU_SOURCE */
#include "options.h"

static void check_options(const ryr_options_t *o)
{
    FUZZ_CHECK(o->width >= 1 && o->width <= RYR_MAX_SIDE);
    FUZZ_CHECK(o->height >= 1 && o->height <= RYR_MAX_SIDE);
    FUZZ_CHECK(o->frames >= 1 && o->frames <= RYR_MAX_FRAMES);
    FUZZ_CHECK(o->out && o->out[0] != '\0');
    FUZZ_CHECK(!o->scene || o->scene[0] != '\0');
    FUZZ_CHECK((unsigned)o->preset <= RYR_PRESET_LAST);
    FUZZ_CHECK((unsigned)o->memtype <= RYR_MEM_UNIFIED);
    FUZZ_CHECK(o->ray_threads >= 0 && o->ray_threads <= RYR_MAX_THREADS);
    FUZZ_CHECK(o->yuv_threads >= 0 && o->yuv_threads <= RYR_MAX_THREADS);
    FUZZ_CHECK(o->rotate_threads >= 0 && o->rotate_threads <= RYR_MAX_THREADS);
    FUZZ_CHECK(o->rotate_tasks == 0 || o->rotate_tasks == 1 || o->rotate_tasks == 3);
    FUZZ_CHECK(o->yuv_repeat >= 1 && o->yuv_repeat <= RYR_MAX_YUV_REPEAT);
    for (int s = 0; s < RYR_NSTAGES; s++) {
        const ryr_placement_t *pl = &o->place[s];
        FUZZ_CHECK(pl->nranks >= 0 && pl->nranks <= RYR_MAX_PLACE_RANKS);
        for (int i = 0; i < pl->nranks; i++) {
            FUZZ_CHECK(pl->ranks[i] >= 0 && pl->ranks[i] <= RYR_MAX_RANK);
            for (int j = 0; j < i; j++)
                FUZZ_CHECK(pl->ranks[j] != pl->ranks[i]);
        }
    }
}

static void check_plan(const ryr_plan_t *p)
{
    FUZZ_CHECK((unsigned)p->preset <= RYR_PRESET_LAST); /* auto stays auto, for the report */
    FUZZ_CHECK(p->ray_threads >= 1 && p->yuv_threads >= 1 && p->rotate_threads >= 1);
    FUZZ_CHECK(p->rotate_tasks == 1 || p->rotate_tasks == 3);
    FUZZ_CHECK(p->output_tasks == p->rotate_tasks && p->output_threads >= 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char prog[] = "ryr";
    char *argv[FUZZ_MAX_ARGS + 1];
    char *buf;
    int argc = fuzz_argv(data, size, prog, argv, &buf);
    ryr_options_t opt;
    ryr_err_t err = {{0}};
    int rc = ryr_options_parse(argc, argv, &opt, &err);
    FUZZ_CHECK(rc == 0 || rc == 1 || rc == -1);
    if (rc == -1) {
        fuzz_check_message(err.msg, sizeof err.msg);
    } else if (rc == 0) {
        check_options(&opt);
        /* the machine's shape, as main would see it: a few cores, a GPU or not */
        static const int cores[] = {1, 2, 64};
        for (int gpu = 0; gpu <= 1; gpu++) {
            for (size_t c = 0; c < sizeof cores / sizeof *cores; c++) {
                ryr_plan_t plan;
                ryr_err_t perr = {{0}};
                if (ryr_options_plan(&opt, cores[c], gpu, &plan, &perr) == 0)
                    check_plan(&plan);
                else
                    fuzz_check_message(perr.msg, sizeof perr.msg);
            }
        }
        for (int nranks = 1; nranks <= 4; nranks++) {
            ryr_err_t rerr = {{0}};
            if (ryr_options_check_ranks(&opt, nranks, &rerr) != 0)
                fuzz_check_message(rerr.msg, sizeof rerr.msg);
        }
    }
    free(buf);
    return 0;
}
