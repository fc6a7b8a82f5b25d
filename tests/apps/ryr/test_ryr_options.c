/* RYR command line: every option, the presets of table 4.6, --place, and a clear error
 * for each bad argument. */
#include <stdarg.h>
#include <string.h>

#include "options.h"
#include "utc_test.h"

/* Parse a NULL-terminated list of arguments. */
static int parse_list(ryr_options_t *o, ryr_err_t *err, const char *first, ...)
{
    char *argv[64] = {"ryr"};
    int argc = 1;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && argc < 63; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    err->msg[0] = '\0';
    return ryr_options_parse(argc, argv, o, err);
}

#define PARSE(o, err, ...) parse_list(o, err, __VA_ARGS__, (const char *)NULL)

static void expect_bad(const char *what, const char *a, const char *b)
{
    ryr_options_t o;
    ryr_err_t err;
    int rc = b ? PARSE(&o, &err, a, b) : PARSE(&o, &err, a);
    CU_ASSERT_EQUAL(rc, -1);
    if (rc != -1 || !strstr(err.msg, what))
        fprintf(stderr, "'%s %s': rc %d, message '%s' lacks '%s'\n", a, b ? b : "", rc,
                err.msg, what);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, what));
}

static void test_defaults(void)
{
    ryr_options_t o;
    ryr_err_t err;
    char *argv[] = {"ryr", NULL};
    UTC_ASSERT_OK(ryr_options_parse(1, argv, &o, &err));
    CU_ASSERT_PTR_NULL(o.scene);
    CU_ASSERT_EQUAL(o.width, 800);
    CU_ASSERT_EQUAL(o.height, 600);
    CU_ASSERT_EQUAL(o.frames, 10);
    CU_ASSERT_STRING_EQUAL(o.out, "ryr-out");
    CU_ASSERT_EQUAL(o.angle, 30.0);
    CU_ASSERT_EQUAL(o.orbit, 0.0);
    CU_ASSERT_EQUAL(o.preset, RYR_PRESET_AUTO);
    CU_ASSERT_EQUAL(o.memtype, RYR_MEM_PAGEABLE);
    CU_ASSERT_EQUAL(o.yuv_repeat, 1);
    CU_ASSERT(!o.gpu && !o.verify && !o.json && !o.no_output && !o.rgb);
    for (int s = 0; s < RYR_NSTAGES; s++)
        CU_ASSERT_EQUAL(o.place[s].nranks, 0);
}

static void test_all_options(void)
{
    ryr_options_t o;
    ryr_err_t err;
    int rc = PARSE(&o, &err, "--scene", "a.scene", "--size", "96x64", "--frames=7", "--out",
                   "dir", "--angle", "-12.5", "--orbit=4", "--preset", "v3",
                   "--ray-threads", "6", "--yuv-threads=2", "--rotate-tasks", "1",
                   "--rotate-threads", "4", "--gpu", "--memtype", "pinned", "--place",
                   "raytrace=0,1,2,yuv=1", "--verify", "--json", "--no-output", "--rgb",
                   "--yuv-repeat", "5");
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_STRING_EQUAL(o.scene, "a.scene");
    CU_ASSERT(o.width == 96 && o.height == 64);
    CU_ASSERT_EQUAL(o.frames, 7);
    CU_ASSERT_STRING_EQUAL(o.out, "dir");
    CU_ASSERT_EQUAL(o.angle, -12.5);
    CU_ASSERT_EQUAL(o.orbit, 4.0);
    CU_ASSERT_EQUAL(o.preset, RYR_PRESET_V3);
    CU_ASSERT_EQUAL(o.ray_threads, 6);
    CU_ASSERT_EQUAL(o.yuv_threads, 2);
    CU_ASSERT_EQUAL(o.rotate_tasks, 1);
    CU_ASSERT_EQUAL(o.rotate_threads, 4);
    CU_ASSERT(o.gpu && o.memtype == RYR_MEM_PINNED && o.memtype_given);
    CU_ASSERT_EQUAL(o.place[RYR_STAGE_RAYTRACE].nranks, 3);
    CU_ASSERT_EQUAL(o.place[RYR_STAGE_RAYTRACE].ranks[2], 2);
    CU_ASSERT_EQUAL(o.place[RYR_STAGE_YUV].nranks, 1);
    CU_ASSERT_EQUAL(o.place[RYR_STAGE_YUV].ranks[0], 1);
    CU_ASSERT_EQUAL(o.place[RYR_STAGE_ROTATE].nranks, 0);
    CU_ASSERT(o.verify && o.json && o.no_output && o.rgb);
    CU_ASSERT_EQUAL(o.yuv_repeat, 5);

    CU_ASSERT_EQUAL(PARSE(&o, &err, "--help"), 1);
    CU_ASSERT_EQUAL(PARSE(&o, &err, "-h", "--size", "3x3"), 1);
    CU_ASSERT_EQUAL(PARSE(&o, &err, "--size", "16384X1"), 0);
    CU_ASSERT(o.width == 16384 && o.height == 1);
    const char *presets[] = {"seq", "v1", "v2", "v3", "v4", "v5", "auto", "gpu"};
    for (int i = 0; i < 8; i++) {
        CU_ASSERT_EQUAL(PARSE(&o, &err, "--preset", presets[i]), 0);
        CU_ASSERT_EQUAL((int)o.preset, i);
        CU_ASSERT_STRING_EQUAL(ryr_preset_name(o.preset), presets[i]);
    }
}

static void test_bad_arguments(void)
{
    expect_bad("must be positive", "--size", "0x64");
    expect_bad("must be positive", "--size", "96x0");
    expect_bad("must be positive", "--size", "-96x64");
    expect_bad("must be positive", "--size", "96x-64");
    expect_bad("too large (at most 16384)", "--size", "16385x10");
    expect_bad("too large", "--size", "10x99999999999999999999");
    expect_bad("expected WxH", "--size", "96");
    expect_bad("not an integer", "--size", "axb");
    expect_bad("not an integer", "--size", "9.5x4");
    expect_bad("expected WxH", "--size", "x4");
    expect_bad("unknown value 'v9'", "--preset", "v9");
    expect_bad("expected seq, v1, v2, v3, v4, v5, auto or gpu", "--preset", "fast");
    expect_bad("--stage-alone: unknown value 'output' (expected raytrace, yuv or rotate)",
               "--stage-alone", "output");
    expect_bad("--stage-alone needs a value", "--stage-alone", NULL);
    expect_bad("unknown option '--bogus'", "--bogus", NULL);
    expect_bad("unknown option '--siz'", "--siz=3x3", NULL);
    expect_bad("unknown option '-s'", "-s", "3x3");
    expect_bad("unexpected argument 'scene.txt'", "scene.txt", NULL);
    expect_bad("--frames needs a value", "--frames", NULL);
    expect_bad("--size needs a value", "--size", NULL);
    expect_bad("--frames needs a value", "--frames", "--json");
    expect_bad("'ten' is not an integer", "--frames", "ten");
    expect_bad("'3.5' is not an integer", "--frames", "3.5");
    expect_bad("out of range (1..100000)", "--frames", "0");
    expect_bad("out of range", "--frames", "-2");
    expect_bad("out of range", "--frames", "100001");
    expect_bad("'' is not an integer", "--ray-threads", "");
    expect_bad("out of range", "--ray-threads", "0");
    expect_bad("out of range", "--yuv-threads", "5000");
    expect_bad("expected 1 or 3", "--rotate-tasks", "2");
    expect_bad("out of range", "--rotate-tasks", "4");
    expect_bad("out of range", "--rotate-threads", "-1");
    expect_bad("'abc' is not a number", "--angle", "abc");
    expect_bad("not a finite number", "--angle", "inf");
    expect_bad("not a finite number", "--orbit", "nan");
    expect_bad("not a number", "--orbit", "");
    expect_bad("expected pageable, pinned or unified", "--memtype", "shared");
    expect_bad("out of range (1..1000)", "--yuv-repeat", "0");
    expect_bad("--gpu takes no value", "--gpu=1", NULL);
    expect_bad("--scene: the value is empty", "--scene", "");
    expect_bad("--out: the value is empty", "--out=", NULL);
}

static void test_place(void)
{
    ryr_options_t o;
    ryr_err_t err;
    UTC_ASSERT_OK(PARSE(&o, &err, "--place", "ray=0-3,output=2", "--place", "rotate=1,0"));
    CU_ASSERT_EQUAL(o.place[RYR_STAGE_RAYTRACE].nranks, 4);
    CU_ASSERT_EQUAL(o.place[RYR_STAGE_RAYTRACE].ranks[3], 3);
    CU_ASSERT_EQUAL(o.place[RYR_STAGE_OUTPUT].ranks[0], 2);
    CU_ASSERT_EQUAL(o.place[RYR_STAGE_ROTATE].nranks, 2);
    CU_ASSERT_EQUAL(o.place[RYR_STAGE_ROTATE].ranks[0], 1); /* first = entry rank */
    UTC_ASSERT_OK(ryr_options_check_ranks(&o, 4, &err));
    CU_ASSERT_EQUAL(ryr_options_check_ranks(&o, 3, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "rank 3 of raytrace does not exist"));
    UTC_ASSERT_OK(PARSE(&o, &err, "--place", "yuv=5"));
    CU_ASSERT_EQUAL(ryr_options_check_ranks(&o, 1, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "rank 5 of yuv"));

    expect_bad("unknown stage 'gpu'", "--place", "gpu=0");
    expect_bad("expected STAGE=RANKS", "--place", "0,1");
    expect_bad("expected STAGE=RANKS", "--place", ",");
    expect_bad("no ranks after '='", "--place", "yuv=");
    expect_bad("'x' is not a rank", "--place", "yuv=x");
    expect_bad("'-1' is not a rank", "--place", "yuv=-1");
    expect_bad("'1-' is not a rank", "--place", "yuv=1-");
    expect_bad("empty range '3-1'", "--place", "yuv=3-1");
    expect_bad("rank 1 named twice", "--place", "yuv=0,1,1");
    expect_bad("stage yuv given twice", "--place", "yuv=0,yuv=1");
    expect_bad("too large", "--place", "yuv=99999");
}

/* The plan of options parsed (parse_rc: the parse's status) on 16 cores, with or without a
 * GPU: it must succeed (want NULL) or fail with a message that holds `want`. */
static void check_plan(int parse_rc, const ryr_options_t *o, int have_gpu, const char *want,
                       ryr_plan_t *p)
{
    ryr_err_t err;
    UTC_ASSERT_OK(parse_rc);
    int rc = ryr_options_plan(o, 16, have_gpu, p, &err);
    CU_ASSERT_EQUAL(rc, want ? -1 : 0);
    if (rc != (want ? -1 : 0) || (want && !strstr(err.msg, want)))
        fprintf(stderr, "plan: rc %d, message '%s', expected '%s'\n", rc, rc ? err.msg : "",
                want ? want : "success");
    if (want && rc)
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
}
#define PLAN(have_gpu, want, ...) check_plan(PARSE(&o, &err, __VA_ARGS__), &o, have_gpu, want, &p)

/* --preset gpu: every stage a GPU task (one thread each, raytrace --ray-threads per rank),
 * 3 rotate and 3 output tasks; refused without a GPU and with the options it does not
 * take; --stage-alone only with it. */
static void test_preset_gpu(void)
{
    ryr_options_t o;
    ryr_err_t err;
    ryr_plan_t p;
    PLAN(1, NULL, "--preset", "gpu");
    CU_ASSERT(p.preset == RYR_PRESET_GPU && p.resident && p.ray_gpu && p.ray_threads == 1 &&
              p.yuv_threads == 1 && p.rotate_tasks == 3 && p.rotate_threads == 1 &&
              p.output_tasks == 3 && p.output_threads == 1 && !p.farm);
    CU_ASSERT_STRING_EQUAL(ryr_preset_name(p.preset), "gpu");
    PLAN(1, NULL, "--preset", "gpu", "--ray-threads", "2", "--rotate-tasks", "1",
         "--yuv-threads", "1", "--gpu");
    CU_ASSERT(p.resident && p.ray_threads == 2 && p.rotate_tasks == 1 && p.output_tasks == 1);
    /* no other preset is resident */
    PLAN(1, NULL, "--preset", "v5");
    CU_ASSERT(!p.resident);
    PLAN(1, NULL, "--preset", "auto");
    CU_ASSERT(!p.resident);

    /* no GPU: refused, saying what runs without one */
    PLAN(0, "--preset gpu needs a GPU, and none is available (--preset v3", "--preset", "gpu");
    PLAN(1, "--farm does not apply to --preset gpu", "--preset", "gpu", "--farm", "2");
    PLAN(1, "--mixed does not apply to --preset gpu", "--preset", "gpu", "--farm", "2",
         "--mixed");
    PLAN(1, "--memtype does not apply to --preset gpu", "--preset", "gpu", "--memtype",
         "pinned");
    PLAN(1, "--slow-rank does not apply to --preset gpu", "--preset", "gpu", "--slow-rank",
         "0=2");
    PLAN(1, "--yuv-threads 3: --preset gpu runs yuv and each rotate task as one GPU thread",
         "--preset", "gpu", "--yuv-threads", "3");
    PLAN(1, "--rotate-threads 2: --preset gpu", "--preset", "gpu", "--rotate-threads", "2");
    PLAN(1, "--video: the output tasks must share a rank", "--preset", "gpu", "--video",
         "x.y4m", "--place", "output=0,1");

    /* --stage-alone */
    PLAN(1, NULL, "--preset", "gpu", "--stage-alone", "rotate");
    CU_ASSERT(o.stage_alone == RYR_STAGE_ROTATE && p.resident);
    PLAN(1, NULL, "--preset", "gpu", "--stage-alone", "raytrace");
    CU_ASSERT_EQUAL(o.stage_alone, RYR_STAGE_RAYTRACE);
    PLAN(1, NULL, "--preset", "gpu", "--stage-alone=yuv");
    CU_ASSERT_EQUAL(o.stage_alone, RYR_STAGE_YUV);
    PLAN(1, NULL, "--preset", "gpu");
    CU_ASSERT_EQUAL(o.stage_alone, -1);
    PLAN(1, "--stage-alone runs the kernels of a stage of --preset gpu alone: give --preset "
            "gpu too", "--stage-alone", "yuv");
    PLAN(1, "--stage-alone runs the kernels", "--preset", "v5", "--stage-alone", "yuv");
    PLAN(1, "--verify does not apply", "--preset", "gpu", "--stage-alone", "yuv", "--verify");
    PLAN(0, "--preset gpu needs a GPU", "--preset", "gpu", "--stage-alone", "raytrace");
}

static void test_presets(void)
{
    ryr_options_t o;
    ryr_err_t err;
    ryr_plan_t p;
    struct {
        const char *preset;
        ryr_plan_t want;
    } table[] = {
        {"v1", {RYR_PRESET_V1, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0}},
        {"v2", {RYR_PRESET_V2, 0, 10, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0}},
        {"v3", {RYR_PRESET_V3, 0, 10, 1, 3, 1, 3, 1, 0, 0, 0, 0, 0, 0}},
        {"v4", {RYR_PRESET_V4, 1, 1, 1, 3, 1, 3, 1, 0, 0, 0, 0, 0, 0}},
        {"v5", {RYR_PRESET_V5, 1, 1, 3, 3, 3, 3, 1, 0, 0, 0, 0, 0, 0}},
    };
    for (int i = 0; i < 5; i++) {
        UTC_ASSERT_OK(PARSE(&o, &err, "--preset", table[i].preset));
        UTC_ASSERT_OK(ryr_options_plan(&o, 16, 1, &p, &err));
        CU_ASSERT_EQUAL(memcmp(&p, &table[i].want, sizeof p), 0);
    }
    /* the GPU presets need a GPU */
    UTC_ASSERT_OK(PARSE(&o, &err, "--preset", "v4"));
    CU_ASSERT_EQUAL(ryr_options_plan(&o, 16, 0, &p, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--preset v4 needs a GPU"));
    UTC_ASSERT_OK(PARSE(&o, &err, "--preset", "v2", "--gpu"));
    CU_ASSERT_EQUAL(ryr_options_plan(&o, 16, 0, &p, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--gpu needs a GPU"));
    UTC_ASSERT_OK(ryr_options_plan(&o, 16, 1, &p, &err));
    CU_ASSERT(p.ray_gpu && p.ray_threads == 1);

    /* overrides */
    UTC_ASSERT_OK(PARSE(&o, &err, "--preset", "v3", "--ray-threads", "4", "--rotate-tasks",
                        "1", "--rotate-threads", "2", "--yuv-threads", "2"));
    UTC_ASSERT_OK(ryr_options_plan(&o, 2, 0, &p, &err));
    CU_ASSERT(p.ray_threads == 4 && p.yuv_threads == 2 && p.rotate_tasks == 1 &&
              p.rotate_threads == 2 && p.output_tasks == 1);

    /* auto: sized to the cores, GPU when present */
    UTC_ASSERT_OK(PARSE(&o, &err, "--preset", "auto"));
    UTC_ASSERT_OK(ryr_options_plan(&o, 2, 0, &p, &err));
    CU_ASSERT(p.preset == RYR_PRESET_AUTO && !p.ray_gpu && p.ray_threads == 2 &&
              p.yuv_threads == 1 && p.rotate_tasks == 1 && p.output_tasks == 1);
    UTC_ASSERT_OK(ryr_options_plan(&o, 16, 1, &p, &err));
    CU_ASSERT(p.ray_gpu && p.ray_threads == 1 && p.yuv_threads == 3 && p.rotate_tasks == 3 &&
              p.rotate_threads == 3 && p.output_tasks == 3);
    UTC_ASSERT_OK(ryr_options_plan(&o, 0, 0, &p, &err));
    CU_ASSERT_EQUAL(p.ray_threads, 1);

    /* seq has no tasks: pipeline options are refused */
    UTC_ASSERT_OK(PARSE(&o, &err, "--preset", "seq"));
    UTC_ASSERT_OK(ryr_options_plan(&o, 2, 0, &p, &err));
    CU_ASSERT_EQUAL(p.preset, RYR_PRESET_SEQ);
    UTC_ASSERT_OK(PARSE(&o, &err, "--preset", "seq", "--ray-threads", "3"));
    CU_ASSERT_EQUAL(ryr_options_plan(&o, 2, 0, &p, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--ray-threads does not apply to --preset seq"));
    UTC_ASSERT_OK(PARSE(&o, &err, "--preset", "seq", "--place", "yuv=0"));
    CU_ASSERT_EQUAL(ryr_options_plan(&o, 2, 0, &p, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--place does not apply"));
}

/* --video and --fps: values, defaults, and the combinations that make no sense. */
static void test_video(void)
{
    ryr_options_t o;
    ryr_err_t err;
    UTC_ASSERT_OK(PARSE(&o, &err, "--size", "8x8"));
    CU_ASSERT_PTR_NULL(o.video);
    CU_ASSERT_EQUAL(o.fps_num, 24);
    CU_ASSERT_EQUAL(o.fps_den, 1);
    CU_ASSERT_PTR_EQUAL(ryr_options_report_stream(&o), stdout);
    UTC_ASSERT_OK(PARSE(&o, &err, "--video", "a.y4m", "--fps", "30"));
    CU_ASSERT_STRING_EQUAL(o.video, "a.y4m");
    CU_ASSERT_EQUAL(o.fps_num, 30);
    CU_ASSERT_EQUAL(o.fps_den, 1);
    UTC_ASSERT_OK(PARSE(&o, &err, "--video=-", "--fps=30000/1001"));
    CU_ASSERT_STRING_EQUAL(o.video, "-");
    CU_ASSERT_EQUAL(o.fps_num, 30000);
    CU_ASSERT_EQUAL(o.fps_den, 1001);
    /* the video has standard output: the summary goes to standard error */
    CU_ASSERT_PTR_EQUAL(ryr_options_report_stream(&o), stderr);

    const char *bad_fps[][2] = {{"0", "positive frame rate"}, {"-1", "positive frame rate"},
                                {"abc", "positive frame rate"}, {"24/0", "positive frame rate"},
                                {"/2", "expected a frame rate"}, {"2.5", "positive frame rate"},
                                {"1001", "more than 1000 frames per second"},
                                {"5000/2", "more than 1000"}};
    for (size_t i = 0; i < sizeof bad_fps / sizeof bad_fps[0]; i++) {
        CU_ASSERT_EQUAL(PARSE(&o, &err, "--video", "a.y4m", "--fps", bad_fps[i][0]), -1);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad_fps[i][1]));
    }
    CU_ASSERT_EQUAL(PARSE(&o, &err, "--video", "a.y4m", "--no-output"), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--video and --no-output"));
    CU_ASSERT_EQUAL(PARSE(&o, &err, "--fps", "30"), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--fps is the frame rate of --video"));
    CU_ASSERT_EQUAL(PARSE(&o, &err, "--video", "-", "--json"), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "both write to standard output"));
    expect_bad("--video: the value is empty", "--video", "");
    expect_bad("--video needs a value", "--video", NULL);

    /* a frame's planes must meet on one rank */
    ryr_plan_t p;
    UTC_ASSERT_OK(PARSE(&o, &err, "--preset", "v3", "--video", "a.y4m", "--place", "output=0,1"));
    CU_ASSERT_EQUAL(ryr_options_plan(&o, 2, 0, &p, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--place output=R with one rank"));
    UTC_ASSERT_OK(PARSE(&o, &err, "--preset", "v3", "--video", "a.y4m", "--place", "output=1"));
    UTC_ASSERT_OK(ryr_options_plan(&o, 2, 0, &p, &err));
    CU_ASSERT_EQUAL(ryr_options_video_rank(&o), 1);
    /* one output task on two ranks is on the first: nothing to put together across ranks */
    UTC_ASSERT_OK(PARSE(&o, &err, "--preset", "v1", "--video", "a.y4m", "--place", "output=1,0"));
    UTC_ASSERT_OK(ryr_options_plan(&o, 2, 0, &p, &err));
    CU_ASSERT_EQUAL(ryr_options_video_rank(&o), 1);
}

/* --farm N and the benchmark knob --slow-rank R=F: values, plans, ranks, bad values. */
static void test_farm(void)
{
    ryr_options_t o;
    ryr_err_t err;
    ryr_plan_t p;
    UTC_ASSERT_OK(PARSE(&o, &err, "--size", "8x8"));
    CU_ASSERT(o.farm == 0 && o.slow_rank == -1 && o.slow_factor == 1.0);
    UTC_ASSERT_OK(ryr_options_plan(&o, 4, 0, &p, &err));
    CU_ASSERT(p.farm == 0 && p.farm_gpu == 0 && p.farm_cpu_threads == 0);

    UTC_ASSERT_OK(PARSE(&o, &err, "--farm", "3", "--slow-rank", "1=4", "--ray-threads", "2"));
    CU_ASSERT(o.farm == 3 && o.slow_rank == 1 && o.slow_factor == 4.0);
    UTC_ASSERT_OK(ryr_options_plan(&o, 4, 0, &p, &err));
    CU_ASSERT(p.farm == 3 && !p.farm_gpu && p.farm_cpu_threads == 2 && p.ray_threads == 2);
    UTC_ASSERT_OK(ryr_options_check_ranks(&o, 2, &err));
    CU_ASSERT_EQUAL(ryr_options_check_ranks(&o, 1, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--slow-rank: rank 1 does not exist (ranks 0..0)"));
    UTC_ASSERT_OK(PARSE(&o, &err, "--farm=64", "--slow-rank=0=1.5"));
    CU_ASSERT(o.farm == 64 && o.slow_rank == 0 && o.slow_factor == 1.5);
    /* with the GPU: member 0 on it, the others on the cores */
    UTC_ASSERT_OK(PARSE(&o, &err, "--farm", "2", "--gpu"));
    UTC_ASSERT_OK(ryr_options_plan(&o, 6, 1, &p, &err));
    CU_ASSERT(p.farm == 2 && p.farm_gpu && p.ray_gpu && p.ray_threads == 1 &&
              p.farm_cpu_threads == 6);
    /* a plain sequential loop has no raytrace tasks to farm or slow down */
    UTC_ASSERT_OK(PARSE(&o, &err, "--preset", "seq", "--farm", "2"));
    CU_ASSERT_EQUAL(ryr_options_plan(&o, 2, 0, &p, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--farm does not apply to --preset seq"));
    UTC_ASSERT_OK(PARSE(&o, &err, "--preset", "seq", "--slow-rank", "0=2"));
    CU_ASSERT_EQUAL(ryr_options_plan(&o, 2, 0, &p, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--slow-rank does not apply to --preset seq"));

    expect_bad("--farm: 0 is out of range (1..64)", "--farm", "0");
    expect_bad("--farm: 65 is out of range (1..64)", "--farm", "65");
    expect_bad("--farm: 'two' is not an integer", "--farm", "two");
    expect_bad("--farm: '' is not an integer", "--farm=", NULL);
    expect_bad("--farm needs a value", "--farm", NULL);
    expect_bad("expected R=F, e.g. 1=4", "--slow-rank", "1");
    expect_bad("expected R=F", "--slow-rank", "=4");
    expect_bad("expected R=F", "--slow-rank", "1=");
    expect_bad("the rank 'x' is not a rank", "--slow-rank", "x=2");
    expect_bad("the rank '-1' is not a rank", "--slow-rank", "-1=2");
    expect_bad("--slow-rank: 4096 is out of range (0..4095)", "--slow-rank", "4096=2");
    expect_bad("--slow-rank: 'fast' is not a number", "--slow-rank", "1=fast");
    expect_bad("not a finite number", "--slow-rank", "1=inf");
    expect_bad("the factor 0.5 is out of range (1..100)", "--slow-rank", "1=0.5");
    expect_bad("the factor 101 is out of range (1..100)", "--slow-rank", "1=101");
    expect_bad("--slow-rank needs a value", "--slow-rank", NULL);
}

/* --mixed: farm member 0 of both kinds; needs --farm and a GPU, says so otherwise. */
static void test_mixed(void)
{
    ryr_options_t o;
    ryr_err_t err;
    ryr_plan_t p;
    UTC_ASSERT_OK(PARSE(&o, &err, "--farm", "2", "--mixed"));
    CU_ASSERT(o.mixed == 1);
    UTC_ASSERT_OK(ryr_options_plan(&o, 6, 1, &p, &err));
    /* one GPU thread (the default), a CPU thread on each of the 5 cores it leaves */
    CU_ASSERT(p.farm == 2 && p.farm_gpu && p.farm_mixed && p.ray_gpu && p.ray_threads == 1 &&
              p.farm_mixed_cpu_threads == 5 && p.farm_cpu_threads == 6);
    UTC_ASSERT_OK(PARSE(&o, &err, "--farm", "1", "--mixed", "--ray-threads", "2"));
    UTC_ASSERT_OK(ryr_options_plan(&o, 2, 1, &p, &err));
    CU_ASSERT(p.ray_threads == 2 && p.farm_mixed_cpu_threads == 1); /* at least one */
    /* no GPU: refused, with what to do instead */
    UTC_ASSERT_OK(PARSE(&o, &err, "--farm", "2", "--mixed"));
    CU_ASSERT_EQUAL(ryr_options_plan(&o, 6, 0, &p, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--mixed needs a GPU, and none is available"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "leave out --mixed"));
    /* not a farm */
    UTC_ASSERT_OK(PARSE(&o, &err, "--mixed"));
    CU_ASSERT_EQUAL(ryr_options_plan(&o, 6, 1, &p, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "give --farm N too"));
    UTC_ASSERT_OK(PARSE(&o, &err, "--preset", "seq", "--mixed"));
    CU_ASSERT_EQUAL(ryr_options_plan(&o, 2, 1, &p, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--mixed does not apply to --preset seq"));
    /* a farm without --mixed is as before */
    UTC_ASSERT_OK(PARSE(&o, &err, "--farm", "2", "--gpu"));
    UTC_ASSERT_OK(ryr_options_plan(&o, 6, 1, &p, &err));
    CU_ASSERT(p.farm_gpu && !p.farm_mixed && p.farm_mixed_cpu_threads == 0);
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"defaults", test_defaults},
        {"every option", test_all_options},
        {"bad arguments", test_bad_arguments},
        {"--place", test_place},
        {"presets (table 4.6)", test_presets},
        {"--preset gpu, --stage-alone", test_preset_gpu},
        {"--video, --fps", test_video},
        {"--farm, --slow-rank", test_farm},
        {"--mixed", test_mixed},
        UTC_TEST_END,
    };
    return utc_test_main(argc, argv, "ryr_options", cases);
}
