/**
 * @file options.h
 * @brief The RYR command line (RYR.md) and the dissertation's presets (table 4.6).
 *
 * Parsing only checks what can be checked without the machine: a writable --out, a
 * present GPU and the ranks named by --place are checked later (ryr_output_prepare,
 * ryr_options_plan with have_gpu, ryr_options_check_ranks), still before any work.
 */
#ifndef RYR_OPTIONS_H
#define RYR_OPTIONS_H

#include <stdio.h>

#include "error.h"

#define RYR_MAX_SIDE 16384      /**< largest --size width or height */
#define RYR_MAX_FRAMES 100000   /**< frame numbers have 5 digits in file names */
#define RYR_MAX_THREADS 1024    /**< largest thread count of one stage or task */
#define RYR_MAX_YUV_REPEAT 1000 /**< largest --yuv-repeat */
#define RYR_MAX_RANK 4095       /**< largest rank --place accepts */
#define RYR_MAX_PLACE_RANKS 64  /**< most ranks one stage can be placed on */
#define RYR_MAX_FPS 1000        /**< largest --fps */
#define RYR_MAX_FARM 64         /**< most raytrace tasks of --farm */
#define RYR_MAX_SLOW 100.0      /**< largest factor of --slow-rank */

/** --preset */
typedef enum ryr_preset {
    RYR_PRESET_SEQ,  /**< plain sequential loop, no framework */
    RYR_PRESET_V1,   /**< one single-thread task per stage */
    RYR_PRESET_V2,   /**< v1 with 10 raytrace threads */
    RYR_PRESET_V3,   /**< v2 with 3 rotate and 3 output tasks */
    RYR_PRESET_V4,   /**< GPU raytrace, 1-thread yuv, 3 rotate and 3 output tasks */
    RYR_PRESET_V5,   /**< v4 with 3 yuv threads and 3 threads per rotate task */
    RYR_PRESET_AUTO, /**< sized to the machine's cores; GPU raytrace when one is present */
    RYR_PRESET_GPU,  /**< beyond the dissertation: raytrace, yuv and rotate as GPU tasks,
                          frames passed device to device (device conduits); output copies
                          back (3 rotate and 3 output tasks) */
} ryr_preset_t;

/** The last preset (for range checks). */
#define RYR_PRESET_LAST RYR_PRESET_GPU

/** --memtype: host memory of GPU buffers */
typedef enum ryr_memtype {
    RYR_MEM_PAGEABLE,
    RYR_MEM_PINNED,
    RYR_MEM_UNIFIED,
} ryr_memtype_t;

/** The pipeline stages, in flow order. */
typedef enum ryr_stage {
    RYR_STAGE_RAYTRACE,
    RYR_STAGE_YUV,
    RYR_STAGE_ROTATE,
    RYR_STAGE_OUTPUT,
    RYR_NSTAGES
} ryr_stage_t;

/**
 * --place STAGE=RANKS: the ranks a stage's threads run on, first rank = entry rank.
 * nranks == 0: not given (the pipeline's default placement applies).
 */
typedef struct ryr_placement {
    int nranks;
    int ranks[RYR_MAX_PLACE_RANKS];
} ryr_placement_t;

/** The parsed command line. Strings point into argv. */
typedef struct ryr_options {
    const char *scene;      /**< --scene FILE; NULL: the built-in scene */
    int width, height;      /**< --size WxH (default 800x600) */
    int frames;             /**< --frames N (default 10) */
    const char *out;        /**< --out DIR (default "ryr-out") */
    double angle;           /**< --angle DEG (default 30) */
    double orbit;           /**< --orbit DEG per frame (default 0) */
    ryr_preset_t preset;    /**< --preset (default auto) */
    int ray_threads;        /**< --ray-threads N; 0: from the preset */
    int yuv_threads;        /**< --yuv-threads N; 0: from the preset */
    int rotate_tasks;       /**< --rotate-tasks 1|3; 0: from the preset */
    int rotate_threads;     /**< --rotate-threads N (per rotate task); 0: from the preset */
    int gpu;                /**< --gpu given */
    ryr_memtype_t memtype;  /**< --memtype (default pageable) */
    int memtype_given;      /**< --memtype was on the command line */
    ryr_placement_t place[RYR_NSTAGES]; /**< --place */
    int verify;             /**< --verify */
    int json;               /**< --json */
    int no_output;          /**< --no-output */
    int rgb;                /**< --rgb */
    int yuv_repeat;         /**< --yuv-repeat N (default 1) */
    const char *video;      /**< --video FILE ("-": standard output); NULL: no video */
    int fps_num, fps_den;   /**< --fps N or N/D (default 24/1) */
    int fps_given;          /**< --fps was on the command line */
    int farm;               /**< --farm N: N raytrace tasks sharing the frames; 0: off */
    int mixed;              /**< --mixed: farm task 0 has GPU and CPU threads */
    int slow_rank;          /**< --slow-rank R=F: the rank R; -1: not given */
    double slow_factor;     /**< ... and F (>= 1): raytrace work on R takes F times as long */
    int stage_alone;        /**< --stage-alone STAGE (with --preset gpu): RYR_STAGE_RAYTRACE,
                                 _YUV or _ROTATE, whose kernels run alone; -1: not given */
} ryr_options_t;

/** The shape of the pipeline: a preset with the command line's overrides applied. */
typedef struct ryr_plan {
    ryr_preset_t preset;  /**< the preset asked for (auto stays auto; the other fields say what it chose) */
    int ray_gpu;          /**< raytrace is a GPU task */
    int ray_threads;      /**< threads of the raytrace task (GPU threads when ray_gpu) */
    int yuv_threads;      /**< threads of the yuv task */
    int rotate_tasks;     /**< 1, or 3 (one per plane) */
    int rotate_threads;   /**< threads of each rotate task */
    int output_tasks;     /**< one per rotate task */
    int output_threads;   /**< threads of each output task (1) */
    int farm;             /**< raytrace tasks of a farm (--farm); 0: one raytrace task */
    int farm_gpu;         /**< farm member 0 is a GPU task (ray_threads GPU threads) */
    int farm_cpu_threads; /**< threads of each CPU member of the farm */
    int farm_mixed;       /**< --mixed: member 0 is a mixed task (ray_threads GPU threads
                               and farm_mixed_cpu_threads CPU threads) */
    int farm_mixed_cpu_threads; /**< CPU threads of the mixed member */
    int resident;         /**< --preset gpu: raytrace (ray_threads GPU threads per rank), yuv,
                               rotate and output are GPU tasks of one thread (but raytrace),
                               joined by device conduits */
} ryr_plan_t;

/** @brief Set every option to its default. */
void ryr_options_defaults(ryr_options_t *opt);

/**
 * @brief Parse the command line (argv[0] is the program name). Accepts `--opt VALUE` and
 * `--opt=VALUE`.
 * @param[out] opt defaults, then the options given
 * @param err a clear message on error ("--size: ...", "unknown option '--x'", ...)
 * @return 0 to run; 1 when --help was asked for (the caller prints ryr_options_usage and
 *         exits 0); 2 for --version; -1 on a bad argument
 */
int ryr_options_parse(int argc, char **argv, ryr_options_t *opt, ryr_err_t *err)
    __attribute__((warn_unused_result));

/** @brief Print the usage text. */
void ryr_options_usage(FILE *f, const char *prog);

/**
 * @brief Resolve the preset with the overrides into a pipeline shape.
 *
 * `auto` takes @p ncores and @p have_gpu into account. Fails when the GPU is asked for
 * (--gpu, v4, v5, gpu) and @p have_gpu is 0, for options that --preset gpu does not take
 * (--farm, --mixed, --memtype, --slow-rank, more than one yuv or rotate thread), for
 * --stage-alone without --preset gpu, for pipeline options given with `seq`, and for
 * --video when --place spreads several output tasks over ranks (a frame's planes must
 * meet on one rank). With --farm, a plan that puts raytrace on the GPU makes farm member 0
 * a GPU task and the others CPU tasks of @p ncores threads; --mixed (which needs --farm
 * and a GPU) makes member 0 a task of both kinds: its ray_threads GPU threads and a CPU
 * thread on each of the @p ncores they leave (at least one).
 * @param ncores cores of the machine (>= 1)
 * @param have_gpu whether a usable GPU is present
 * @return 0 or -1
 */
int ryr_options_plan(const ryr_options_t *opt, int ncores, int have_gpu, ryr_plan_t *plan,
                     ryr_err_t *err) __attribute__((warn_unused_result));

/**
 * @brief Check that every rank named by --place and --slow-rank exists (is below @p nranks).
 * @return 0 or -1 ("--place: rank 3 of yuv does not exist (ranks 0..1)")
 */
int ryr_options_check_ranks(const ryr_options_t *opt, int nranks, ryr_err_t *err)
    __attribute__((warn_unused_result));

/**
 * @brief The rank that writes the --video stream: the rank of the output stage's tasks
 * (ryr_options_plan has checked that they share one).
 */
int ryr_options_video_rank(const ryr_options_t *opt);

/**
 * @brief Where the summary goes: standard output, or standard error when standard output
 * carries the JSON line (--json) or the video (--video -).
 */
FILE *ryr_options_report_stream(const ryr_options_t *opt);

/** @brief "seq", "v1", ..., "auto", "gpu". */
const char *ryr_preset_name(ryr_preset_t preset);
/** @brief "pageable", "pinned", "unified". */
const char *ryr_memtype_name(ryr_memtype_t memtype);
/** @brief "raytrace", "yuv", "rotate", "output". */
const char *ryr_stage_name(ryr_stage_t stage);

#endif /* RYR_OPTIONS_H */
