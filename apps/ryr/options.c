#include "options.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const preset_names[] = {"seq", "v1", "v2", "v3", "v4", "v5", "auto", "gpu"};
static const char *const memtype_names[] = {"pageable", "pinned", "unified"};
static const char *const stage_names[] = {"raytrace", "yuv", "rotate", "output"};

const char *ryr_preset_name(ryr_preset_t p)
{
    return (unsigned)p <= RYR_PRESET_LAST ? preset_names[p] : "?";
}

const char *ryr_memtype_name(ryr_memtype_t m)
{
    return (unsigned)m <= RYR_MEM_UNIFIED ? memtype_names[m] : "?";
}

const char *ryr_stage_name(ryr_stage_t s)
{
    return (unsigned)s < RYR_NSTAGES ? stage_names[s] : "?";
}

void ryr_options_defaults(ryr_options_t *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->width = 800;
    opt->height = 600;
    opt->frames = 10;
    opt->out = "ryr-out";
    opt->angle = 30.0;
    opt->orbit = 0.0;
    opt->preset = RYR_PRESET_AUTO;
    opt->memtype = RYR_MEM_PAGEABLE;
    opt->yuv_repeat = 1;
    opt->fps_num = 24;
    opt->fps_den = 1;
    opt->slow_rank = -1;
    opt->slow_factor = 1.0;
    opt->stage_alone = -1;
}

void ryr_options_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [options]\n"
            "Raytrace-YUV-rotate: raytrace frames, convert them to Y, U, V planes, rotate\n"
            "the planes and write them as PGM files OUT/frame_NNNNN_{y,u,v}.pgm, and with\n"
            "--video as one YUV4MPEG2 video.\n"
            "\n"
            "Input:\n"
            "  --scene FILE          scene file (default: the built-in scene)\n"
            "  --size WxH            frame size, each side 1..%d (default 800x600)\n"
            "  --frames N            number of frames, 1..%d (default 10)\n"
            "  --orbit DEG           turn the camera by DEG per frame about its target\n"
            "                        (default 0)\n"
            "\n"
            "Pipeline:\n"
            "  --preset P            seq|v1|v2|v3|v4|v5|auto|gpu (default auto); gpu:\n"
            "                        raytrace, yuv and rotate on the GPU, the frames kept\n"
            "                        in device memory from stage to stage\n"
            "  --ray-threads N       threads of the raytrace task\n"
            "  --yuv-threads N       threads of the yuv task\n"
            "  --yuv-repeat N        convert each frame N times, 1..%d (default 1)\n"
            "  --rotate-tasks 1|3    one rotate (and output) task, or one per plane\n"
            "  --rotate-threads N    threads of each rotate task\n"
            "  --angle DEG           rotation, counter-clockwise (default 30)\n"
            "  --gpu                 raytrace on the GPU\n"
            "  --memtype M           pageable|pinned|unified GPU buffers (default pageable)\n"
            "  --place STAGE=RANKS,...  ranks of a stage, e.g. raytrace=0,1,2,yuv=1 or\n"
            "                        raytrace=0-3 (stages: raytrace, yuv, rotate, output)\n"
            "  --farm N              N raytrace tasks, 1..%d, each on one raytrace rank\n"
            "                        (round robin), taking whole frames as they get free\n"
            "                        (a share-mode shared conduit); with the GPU, task 0\n"
            "                        renders on it and the others on CPU threads\n"
            "  --mixed               with --farm and a GPU: task 0 is one task of both\n"
            "                        kinds, --ray-threads GPU threads (default 1) and a\n"
            "                        CPU thread on each core they leave, sharing each\n"
            "                        frame's rows; the summary counts the rows of each kind\n"
            "\n"
            "Output:\n"
            "  --out DIR             output folder (default ryr-out)\n"
            "  --rgb                 also write the raytraced frames, OUT/frame_NNNNN.ppm\n"
            "  --video FILE          also write the frames as one YUV4MPEG2 (4:4:4) video,\n"
            "                        e.g. ryr.y4m; '-' streams it to standard output\n"
            "                        (ryr --video - | ffplay -)\n"
            "  --fps N[/D]           frame rate of the video, up to %d (default 24)\n"
            "  --no-output           write no files\n"
            "\n"
            "Diagnostics:\n"
            "  --verify              compare every plane with the sequential path\n"
            "  --json                print the summary as JSON on the last line of stdout\n"
            "  --slow-rank R=F       benchmarks only: raytrace work on rank R takes F times\n"
            "                        as long (1..%g; it sleeps F-1 times each render)\n"
            "  --stage-alone STAGE   benchmarks only, with --preset gpu: run the kernels of\n"
            "                        one stage (raytrace, yuv or rotate) alone on device\n"
            "                        buffers, no conduits, and print their frames/s\n"
            "  -h, --help            this text\n"
            "  --version             the version of UTC this was built with\n",
            prog, RYR_MAX_SIDE, RYR_MAX_FRAMES, RYR_MAX_YUV_REPEAT, RYR_MAX_FARM, RYR_MAX_FPS,
            RYR_MAX_SLOW);
}

/* A whole-string decimal integer in [min, max]. */
static int parse_int(const char *opt, const char *s, long min, long max, int *out,
                     ryr_err_t *err)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (*p < '0' || *p > '9')
        return ryr_err_set(err, "%s: '%s' is not an integer", opt, s);
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end != '\0')
        return ryr_err_set(err, "%s: '%s' is not an integer", opt, s);
    if (errno == ERANGE || v < min || v > max)
        return ryr_err_set(err, "%s: %s is out of range (%ld..%ld)", opt, s, min, max);
    *out = (int)v;
    return 0;
}

static int parse_double(const char *opt, const char *s, double *out, ryr_err_t *err)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || *s == ' ' || *s == '\t')
        return ryr_err_set(err, "%s: '%s' is not a number", opt, s);
    if (!isfinite(v))
        return ryr_err_set(err, "%s: '%s' is not a finite number", opt, s);
    *out = v;
    return 0;
}

/* One side of --size: a positive integer up to RYR_MAX_SIDE. */
static int parse_side(const char *s, size_t len, const char *arg, const char *what, int *out,
                      ryr_err_t *err)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf)
        return ryr_err_set(err, "--size: '%s': expected WxH, e.g. 800x600", arg);
    memcpy(buf, s, len);
    buf[len] = '\0';
    const char *p = buf;
    if (*p == '-' || *p == '+')
        p++;
    if (*p < '0' || *p > '9')
        return ryr_err_set(err, "--size: '%s': the %s is not an integer", arg, what);
    char *end;
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (*end != '\0')
        return ryr_err_set(err, "--size: '%s': the %s is not an integer", arg, what);
    if (v <= 0)
        return ryr_err_set(err, "--size: '%s': the %s must be positive", arg, what);
    if (errno == ERANGE || v > RYR_MAX_SIDE)
        return ryr_err_set(err, "--size: '%s': the %s is too large (at most %d)", arg, what,
                           RYR_MAX_SIDE);
    *out = (int)v;
    return 0;
}

static int parse_size(const char *s, int *w, int *h, ryr_err_t *err)
{
    const char *x = strpbrk(s, "xX");
    if (!x)
        return ryr_err_set(err, "--size: '%s': expected WxH, e.g. 800x600", s);
    int wv, hv;
    if (parse_side(s, (size_t)(x - s), s, "width", &wv, err) ||
        parse_side(x + 1, strlen(x + 1), s, "height", &hv, err))
        return -1;
    *w = wv;
    *h = hv;
    return 0;
}

/* --fps N or N/D: a positive rate up to RYR_MAX_FPS (30000/1001 is NTSC's 29.97). */
static int parse_fps(const char *s, int *num, int *den, ryr_err_t *err)
{
    const char *slash = strchr(s, '/');
    char buf[32];
    size_t len = slash ? (size_t)(slash - s) : strlen(s);
    int n, d = 1;
    if (len == 0 || len >= sizeof buf)
        return ryr_err_set(err, "--fps: '%s': expected a frame rate N or N/D, e.g. 24 or "
                           "30000/1001", s);
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (parse_int("--fps", buf, 1, 1000000, &n, err) ||
        (slash && parse_int("--fps", slash + 1, 1, 1000000, &d, err)))
        return ryr_err_set(err, "--fps: '%s': expected a positive frame rate N or N/D, e.g. "
                           "24 or 30000/1001", s);
    if ((double)n / d > RYR_MAX_FPS)
        return ryr_err_set(err, "--fps: '%s' is more than %d frames per second", s,
                           RYR_MAX_FPS);
    *num = n;
    *den = d;
    return 0;
}

/* "R=F": a rank whose raytrace work takes F times as long (a benchmark's slow node). */
static int parse_slow_rank(const char *s, ryr_options_t *opt, ryr_err_t *err)
{
    const char *eq = strchr(s, '=');
    char buf[32];
    size_t len = eq ? (size_t)(eq - s) : 0;
    if (!eq || len == 0 || eq[1] == '\0')
        return ryr_err_set(err, "--slow-rank: '%s': expected R=F, e.g. 1=4 (rank 1's raytrace "
                           "work takes 4 times as long)", s);
    if (len >= sizeof buf)
        return ryr_err_set(err, "--slow-rank: '%s': the rank is too long", s);
    memcpy(buf, s, len);
    buf[len] = '\0';
    int rank;
    double factor = 0;
    if (buf[0] < '0' || buf[0] > '9')
        return ryr_err_set(err, "--slow-rank: '%s': the rank '%s' is not a rank (a number)",
                           s, buf);
    if (parse_int("--slow-rank", buf, 0, RYR_MAX_RANK, &rank, err) ||
        parse_double("--slow-rank", eq + 1, &factor, err))
        return -1;
    if (factor < 1.0 || factor > RYR_MAX_SLOW)
        return ryr_err_set(err, "--slow-rank: '%s': the factor %s is out of range (1..%g)", s,
                           eq + 1, RYR_MAX_SLOW);
    opt->slow_rank = rank;
    opt->slow_factor = factor;
    return 0;
}

static int stage_by_name(const char *s, size_t len)
{
    for (int i = 0; i < RYR_NSTAGES; i++)
        if (strlen(stage_names[i]) == len && strncmp(s, stage_names[i], len) == 0)
            return i;
    if (len == 3 && strncmp(s, "ray", 3) == 0)
        return RYR_STAGE_RAYTRACE;
    return -1;
}

/* One rank or range "A" / "A-B" of --place, added to pl. */
static int place_ranks(const char *tok, const char *stage, ryr_placement_t *pl,
                       ryr_err_t *err)
{
    long lo, hi;
    char *end;
    if (*tok < '0' || *tok > '9')
        return ryr_err_set(err, "--place: %s: '%s' is not a rank (a number or A-B)", stage,
                           tok);
    lo = strtol(tok, &end, 10);
    hi = lo;
    if (*end == '-') {
        const char *b = end + 1;
        if (*b < '0' || *b > '9')
            return ryr_err_set(err, "--place: %s: '%s' is not a rank (a number or A-B)",
                               stage, tok);
        hi = strtol(b, &end, 10);
    }
    if (*end != '\0')
        return ryr_err_set(err, "--place: %s: '%s' is not a rank (a number or A-B)", stage,
                           tok);
    if (lo > RYR_MAX_RANK || hi > RYR_MAX_RANK)
        return ryr_err_set(err, "--place: %s: rank '%s' is too large (at most %d)", stage, tok,
                           RYR_MAX_RANK);
    if (hi < lo)
        return ryr_err_set(err, "--place: %s: empty range '%s'", stage, tok);
    for (long r = lo; r <= hi; r++) {
        for (int i = 0; i < pl->nranks; i++)
            if (pl->ranks[i] == r)
                return ryr_err_set(err, "--place: %s: rank %ld named twice", stage, r);
        if (pl->nranks == RYR_MAX_PLACE_RANKS)
            return ryr_err_set(err, "--place: %s: more than %d ranks", stage,
                               RYR_MAX_PLACE_RANKS);
        pl->ranks[pl->nranks++] = (int)r;
    }
    return 0;
}

/* "STAGE=RANKS,..." where a comma-separated item without '=' adds ranks to the stage
 * before it: raytrace=0,1,2,yuv=1 and raytrace=0-2,yuv=1 mean the same. */
static int parse_place(const char *arg, ryr_options_t *opt, ryr_err_t *err)
{
    char buf[1024];
    if (strlen(arg) >= sizeof buf)
        return ryr_err_set(err, "--place: the value is too long");
    strcpy(buf, arg);
    int given[RYR_NSTAGES] = {0};
    ryr_placement_t pl[RYR_NSTAGES];
    memset(pl, 0, sizeof pl);
    int cur = -1;
    char *save = NULL;
    int items = 0;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        items++;
        char *eq = strchr(tok, '=');
        const char *ranks = tok;
        if (eq) {
            cur = stage_by_name(tok, (size_t)(eq - tok));
            if (cur < 0)
                return ryr_err_set(err, "--place: unknown stage '%.*s' (expected raytrace, "
                                   "yuv, rotate or output)", (int)(eq - tok), tok);
            if (given[cur])
                return ryr_err_set(err, "--place: stage %s given twice", stage_names[cur]);
            given[cur] = 1;
            ranks = eq + 1;
            if (*ranks == '\0')
                return ryr_err_set(err, "--place: %s: no ranks after '='", stage_names[cur]);
        } else if (cur < 0) {
            return ryr_err_set(err, "--place: '%s': expected STAGE=RANKS, e.g. raytrace=0,1",
                               arg);
        }
        if (place_ranks(ranks, stage_names[cur], &pl[cur], err))
            return -1;
    }
    if (items == 0)
        return ryr_err_set(err, "--place: '%s': expected STAGE=RANKS, e.g. raytrace=0,1", arg);
    for (int s = 0; s < RYR_NSTAGES; s++)
        if (given[s])
            opt->place[s] = pl[s];
    return 0;
}

static int parse_enum(const char *opt, const char *s, const char *const *names, int n,
                      int *out, ryr_err_t *err)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return 0;
        }
    }
    char list[128] = "";
    for (int i = 0; i < n; i++) {
        strcat(list, i == 0 ? "" : i == n - 1 ? " or " : ", ");
        strcat(list, names[i]);
    }
    return ryr_err_set(err, "%s: unknown value '%s' (expected %s)", opt, s, list);
}

enum opt_id {
    O_SCENE, O_SIZE, O_FRAMES, O_OUT, O_ANGLE, O_ORBIT, O_PRESET, O_RAY_THREADS,
    O_YUV_THREADS, O_ROTATE_TASKS, O_ROTATE_THREADS, O_GPU, O_MEMTYPE, O_PLACE, O_VERIFY,
    O_JSON, O_NO_OUTPUT, O_RGB, O_YUV_REPEAT, O_VIDEO, O_FPS, O_FARM, O_MIXED, O_SLOW_RANK,
    O_STAGE_ALONE, O_HELP, O_VERSION
};

static const struct {
    const char *name;
    int has_value;
} opt_table[] = {
    [O_SCENE] = {"--scene", 1},
    [O_SIZE] = {"--size", 1},
    [O_FRAMES] = {"--frames", 1},
    [O_OUT] = {"--out", 1},
    [O_ANGLE] = {"--angle", 1},
    [O_ORBIT] = {"--orbit", 1},
    [O_PRESET] = {"--preset", 1},
    [O_RAY_THREADS] = {"--ray-threads", 1},
    [O_YUV_THREADS] = {"--yuv-threads", 1},
    [O_ROTATE_TASKS] = {"--rotate-tasks", 1},
    [O_ROTATE_THREADS] = {"--rotate-threads", 1},
    [O_GPU] = {"--gpu", 0},
    [O_MEMTYPE] = {"--memtype", 1},
    [O_PLACE] = {"--place", 1},
    [O_VERIFY] = {"--verify", 0},
    [O_JSON] = {"--json", 0},
    [O_NO_OUTPUT] = {"--no-output", 0},
    [O_RGB] = {"--rgb", 0},
    [O_YUV_REPEAT] = {"--yuv-repeat", 1},
    [O_VIDEO] = {"--video", 1},
    [O_FPS] = {"--fps", 1},
    [O_FARM] = {"--farm", 1},
    [O_MIXED] = {"--mixed", 0},
    [O_SLOW_RANK] = {"--slow-rank", 1},
    [O_STAGE_ALONE] = {"--stage-alone", 1},
    [O_HELP] = {"--help", 0},
    [O_VERSION] = {"--version", 0},
};

static int apply(int id, const char *name, const char *v, ryr_options_t *opt, ryr_err_t *err)
{
    int iv = 0;
    switch (id) {
    case O_SCENE:
    case O_OUT:
    case O_VIDEO:
        if (*v == '\0')
            return ryr_err_set(err, "%s: the value is empty", name);
        if (id == O_SCENE)
            opt->scene = v;
        else if (id == O_OUT)
            opt->out = v;
        else
            opt->video = v;
        return 0;
    case O_FPS:
        opt->fps_given = 1;
        return parse_fps(v, &opt->fps_num, &opt->fps_den, err);
    case O_SIZE:
        return parse_size(v, &opt->width, &opt->height, err);
    case O_FRAMES:
        return parse_int(name, v, 1, RYR_MAX_FRAMES, &opt->frames, err);
    case O_ANGLE:
        return parse_double(name, v, &opt->angle, err);
    case O_ORBIT:
        return parse_double(name, v, &opt->orbit, err);
    case O_PRESET:
        if (parse_enum(name, v, preset_names, RYR_PRESET_LAST + 1, &iv, err))
            return -1;
        opt->preset = (ryr_preset_t)iv;
        return 0;
    case O_RAY_THREADS:
        return parse_int(name, v, 1, RYR_MAX_THREADS, &opt->ray_threads, err);
    case O_YUV_THREADS:
        return parse_int(name, v, 1, RYR_MAX_THREADS, &opt->yuv_threads, err);
    case O_ROTATE_TASKS:
        if (parse_int(name, v, 1, 3, &iv, err))
            return -1;
        if (iv != 1 && iv != 3)
            return ryr_err_set(err, "%s: %s: expected 1 or 3 (one task per plane)", name, v);
        opt->rotate_tasks = iv;
        return 0;
    case O_ROTATE_THREADS:
        return parse_int(name, v, 1, RYR_MAX_THREADS, &opt->rotate_threads, err);
    case O_MEMTYPE:
        if (parse_enum(name, v, memtype_names, 3, &iv, err))
            return -1;
        opt->memtype = (ryr_memtype_t)iv;
        opt->memtype_given = 1;
        return 0;
    case O_PLACE:
        return parse_place(v, opt, err);
    case O_YUV_REPEAT:
        return parse_int(name, v, 1, RYR_MAX_YUV_REPEAT, &opt->yuv_repeat, err);
    case O_FARM:
        return parse_int(name, v, 1, RYR_MAX_FARM, &opt->farm, err);
    case O_SLOW_RANK:
        return parse_slow_rank(v, opt, err);
    case O_STAGE_ALONE:
        /* the GPU stages: raytrace, yuv, rotate (output is not a kernel) */
        if (parse_enum(name, v, stage_names, RYR_STAGE_ROTATE + 1, &iv, err))
            return -1;
        opt->stage_alone = iv;
        return 0;
    case O_GPU:
        opt->gpu = 1;
        return 0;
    case O_MIXED:
        opt->mixed = 1;
        return 0;
    case O_VERIFY:
        opt->verify = 1;
        return 0;
    case O_JSON:
        opt->json = 1;
        return 0;
    case O_NO_OUTPUT:
        opt->no_output = 1;
        return 0;
    case O_RGB:
        opt->rgb = 1;
        return 0;
    default:
        return 0;
    }
}

int ryr_options_parse(int argc, char **argv, ryr_options_t *opt, ryr_err_t *err)
{
    ryr_options_t o;
    ryr_options_defaults(&o);
    int help = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0) {
            help = 1;
            continue;
        }
        if (arg[0] == '-' && arg[1] != '-' && arg[1] != '\0')
            return ryr_err_set(err, "unknown option '%s' (options are long, e.g. --size; see "
                               "--help)", arg);
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
            return ryr_err_set(err, "unexpected argument '%s' (options start with --; see "
                               "--help)", arg);
        const char *eq = strchr(arg, '=');
        size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
        int id = -1;
        for (size_t k = 0; k < sizeof opt_table / sizeof opt_table[0]; k++) {
            if (strlen(opt_table[k].name) == nlen && strncmp(arg, opt_table[k].name, nlen) == 0)
                id = (int)k;
        }
        if (id < 0)
            return ryr_err_set(err, "unknown option '%.*s' (see --help)", (int)nlen, arg);
        const char *name = opt_table[id].name;
        const char *value = NULL;
        if (opt_table[id].has_value) {
            if (eq) {
                value = eq + 1;
            } else {
                /* "--frames --json": the value is missing, not "--json" */
                if (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0)
                    return ryr_err_set(err, "%s needs a value (see --help)", name);
                value = argv[++i];
            }
        } else if (eq) {
            return ryr_err_set(err, "%s takes no value", name);
        }
        if (id == O_HELP || id == O_VERSION) {
            help = help ? help : id == O_HELP ? 1 : 2;
            continue;
        }
        if (apply(id, name, value, &o, err))
            return -1;
    }
    if (o.video && o.no_output)
        return ryr_err_set(err, "--video and --no-output: --no-output writes nothing, the "
                           "video included (give one of them)");
    if (o.fps_given && !o.video)
        return ryr_err_set(err, "--fps is the frame rate of --video, which is not given");
    if (o.video && strcmp(o.video, "-") == 0 && o.json)
        return ryr_err_set(err, "--video - and --json both write to standard output (write "
                           "the video to a file, or leave out --json)");
    *opt = o;
    return help;
}

/* The checks every pipeline plan passes last; then *plan = *p. */
static int finish_plan(const ryr_options_t *opt, const ryr_plan_t *p, ryr_plan_t *plan,
                       ryr_err_t *err)
{
    if (opt->video && p->output_tasks > 1 && opt->place[RYR_STAGE_OUTPUT].nranks > 1)
        return ryr_err_set(err, "--video: the output tasks must share a rank to put each "
                           "frame's planes together (give --place output=R with one rank)");
    *plan = *p;
    return 0;
}

/* --preset gpu: every stage a GPU task, frames in device memory (device conduits). */
static int plan_resident(const ryr_options_t *opt, int have_gpu, ryr_plan_t *plan,
                         ryr_err_t *err)
{
    static const char *why = "(--preset gpu keeps every frame in device memory, one GPU "
                             "thread per stage)";
    if (opt->farm || opt->mixed)
        return ryr_err_set(err, "%s does not apply to --preset gpu %s: leave it out",
                           opt->mixed ? "--mixed" : "--farm", why);
    if (opt->memtype_given)
        return ryr_err_set(err, "--memtype does not apply to --preset gpu: its frames are "
                           "in device memory, not in GPU buffers with a host copy");
    if (opt->slow_rank >= 0)
        return ryr_err_set(err, "--slow-rank does not apply to --preset gpu (its raytrace "
                           "kernels are timed on the device): leave it out");
    if (opt->yuv_threads > 1 || opt->rotate_threads > 1)
        return ryr_err_set(err, "%s %d: --preset gpu runs yuv and each rotate task as one "
                           "GPU thread (one kernel covers the frame); give 1 or leave it out",
                           opt->yuv_threads > 1 ? "--yuv-threads" : "--rotate-threads",
                           opt->yuv_threads > 1 ? opt->yuv_threads : opt->rotate_threads);
    if (!have_gpu)
        return ryr_err_set(err, "--preset gpu needs a GPU, and none is available (--preset "
                           "v3 runs every stage on CPU threads)");
    ryr_plan_t p;
    memset(&p, 0, sizeof p);
    p.preset = RYR_PRESET_GPU;
    p.resident = p.ray_gpu = 1;
    p.ray_threads = opt->ray_threads ? opt->ray_threads : 1; /* GPU threads per rank */
    p.yuv_threads = p.rotate_threads = p.output_threads = 1;
    p.rotate_tasks = p.output_tasks = opt->rotate_tasks ? opt->rotate_tasks : 3;
    return finish_plan(opt, &p, plan, err);
}

int ryr_options_plan(const ryr_options_t *opt, int ncores, int have_gpu, ryr_plan_t *plan,
                     ryr_err_t *err)
{
    ryr_plan_t p;
    memset(&p, 0, sizeof p);
    p.preset = opt->preset;
    if (ncores < 1)
        ncores = 1;

    if (opt->stage_alone >= 0 && opt->preset != RYR_PRESET_GPU)
        return ryr_err_set(err, "--stage-alone runs the kernels of a stage of --preset gpu "
                           "alone: give --preset gpu too");
    if (opt->stage_alone >= 0 && (opt->verify || opt->video || opt->rgb))
        return ryr_err_set(err, "--stage-alone runs one stage's kernels alone and writes "
                           "nothing: %s does not apply (leave it out)",
                           opt->verify ? "--verify" : opt->video ? "--video" : "--rgb");
    if (opt->preset == RYR_PRESET_GPU)
        return plan_resident(opt, have_gpu, plan, err);

    if (opt->preset == RYR_PRESET_SEQ) {
        static const char *what[] = {"--ray-threads", "--yuv-threads", "--rotate-tasks",
                                     "--rotate-threads", "--gpu", "--memtype", "--place",
                                     "--farm", "--slow-rank", "--mixed"};
        int given[] = {opt->ray_threads, opt->yuv_threads, opt->rotate_tasks,
                       opt->rotate_threads, opt->gpu, opt->memtype_given, 0,
                       opt->farm, opt->slow_rank >= 0, opt->mixed};
        for (int s = 0; s < RYR_NSTAGES; s++)
            given[6] |= opt->place[s].nranks > 0;
        for (int k = 0; k < 10; k++)
            if (given[k])
                return ryr_err_set(err, "%s does not apply to --preset seq (a plain "
                                   "sequential loop with no tasks)", what[k]);
        p.ray_threads = p.yuv_threads = p.rotate_tasks = p.rotate_threads = 1;
        p.output_tasks = p.output_threads = 1;
        *plan = p;
        return 0;
    }

    /* Table 4.6 of the dissertation. */
    static const ryr_plan_t table[] = {
        [RYR_PRESET_V1] = {RYR_PRESET_V1, 0, 1, 1, 1, 1, 1, 1},
        [RYR_PRESET_V2] = {RYR_PRESET_V2, 0, 10, 1, 1, 1, 1, 1},
        [RYR_PRESET_V3] = {RYR_PRESET_V3, 0, 10, 1, 3, 1, 3, 1},
        [RYR_PRESET_V4] = {RYR_PRESET_V4, 1, 1, 1, 3, 1, 3, 1},
        [RYR_PRESET_V5] = {RYR_PRESET_V5, 1, 1, 3, 3, 3, 3, 1},
    };
    if (opt->preset == RYR_PRESET_AUTO) {
        p.preset = RYR_PRESET_AUTO;
        p.ray_gpu = have_gpu;
        /* The stages overlap in a pipeline: raytrace (about 80% of the work) gets every
         * core, the light stages grow only on larger machines. */
        p.ray_threads = have_gpu ? 1 : ncores;
        p.yuv_threads = ncores >= 8 ? 3 : 1;
        p.rotate_tasks = ncores >= 4 ? 3 : 1;
        p.rotate_threads = ncores >= 12 ? 3 : 1;
        p.output_tasks = p.rotate_tasks;
        p.output_threads = 1;
    } else {
        p = table[opt->preset];
    }
    if (opt->mixed && !opt->farm)
        return ryr_err_set(err, "--mixed makes task 0 of a farm a task of both kinds: give "
                           "--farm N too");
    if ((opt->gpu || opt->mixed) && !p.ray_gpu) {
        p.ray_gpu = 1;
        p.ray_threads = 1;
    }
    if (p.ray_gpu && !have_gpu)
        return ryr_err_set(err, "%s needs a GPU, and none is available%s",
                           opt->mixed ? "--mixed" : opt->gpu ? "--gpu"
                           : opt->preset == RYR_PRESET_V4    ? "--preset v4"
                                                             : "--preset v5",
                           opt->mixed ? " (without one, leave out --mixed: the farm's "
                                        "tasks then all render on CPU threads)" : "");
    if (opt->ray_threads)
        p.ray_threads = opt->ray_threads;
    if (opt->yuv_threads)
        p.yuv_threads = opt->yuv_threads;
    if (opt->rotate_tasks)
        p.rotate_tasks = opt->rotate_tasks;
    if (opt->rotate_threads)
        p.rotate_threads = opt->rotate_threads;
    p.output_tasks = p.rotate_tasks;
    p.output_threads = 1;
    if (opt->farm) {
        /* A farm mixes devices simply: one GPU member (the plan's GPU threads) when the
         * plan renders on the GPU, the others on CPU threads; each takes frames at its own
         * pace, so the GPU member just takes more. */
        p.farm = opt->farm;
        p.farm_gpu = p.ray_gpu;
        p.farm_cpu_threads = !p.ray_gpu ? p.ray_threads
                             : ncores < RYR_MAX_THREADS ? ncores : RYR_MAX_THREADS;
        /* --mixed: task 0 keeps its GPU threads and gets a CPU thread on each core they
         * leave (the other stages mostly wait on conduits; each GPU thread drives its
         * kernels from a core of its own) */
        p.farm_mixed = opt->mixed;
        if (p.farm_mixed) {
            int left = ncores - p.ray_threads;
            p.farm_mixed_cpu_threads = left < 1 ? 1 : left;
            if (p.ray_threads + p.farm_mixed_cpu_threads > RYR_MAX_THREADS)
                p.farm_mixed_cpu_threads = RYR_MAX_THREADS - p.ray_threads;
            if (p.farm_mixed_cpu_threads < 1)
                return ryr_err_set(err, "--mixed: --ray-threads %d leaves no room for CPU "
                                   "threads (at most %d threads in a task)", p.ray_threads,
                                   RYR_MAX_THREADS);
        }
    }
    return finish_plan(opt, &p, plan, err);
}

int ryr_options_video_rank(const ryr_options_t *opt)
{
    const ryr_placement_t *pl = &opt->place[RYR_STAGE_OUTPUT];
    return pl->nranks > 0 ? pl->ranks[0] : 0;
}

FILE *ryr_options_report_stream(const ryr_options_t *opt)
{
    return opt->json || (opt->video && strcmp(opt->video, "-") == 0) ? stderr : stdout;
}

int ryr_options_check_ranks(const ryr_options_t *opt, int nranks, ryr_err_t *err)
{
    if (opt->slow_rank >= nranks)
        return ryr_err_set(err, "--slow-rank: rank %d does not exist (ranks 0..%d)",
                           opt->slow_rank, nranks - 1);
    for (int s = 0; s < RYR_NSTAGES; s++)
        for (int i = 0; i < opt->place[s].nranks; i++)
            if (opt->place[s].ranks[i] >= nranks)
                return ryr_err_set(err, "--place: rank %d of %s does not exist (ranks 0..%d)",
                                   opt->place[s].ranks[i], stage_names[s], nranks - 1);
    return 0;
}
