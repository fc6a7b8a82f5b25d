/**
 * @file report.h
 * @brief Progress on stderr and the end-of-run summary (text, or one JSON line).
 */
#ifndef RYR_REPORT_H
#define RYR_REPORT_H

#include <stdio.h>

#include "options.h"

/** @brief Seconds from a monotonic clock. */
double ryr_now(void);

/** One stage of the summary. */
typedef struct ryr_stage_report {
    int tasks;      /**< tasks of the stage (0 for seq) */
    int threads;    /**< threads of all its tasks together (0 for seq) */
    double busy_s;  /**< seconds spent working in the stage (a GPU-resident stage's: the
                         device time of its kernels; its slowest task's, or rank's) */
    int gpu;        /**< 1 when the stage's tasks are GPU tasks */
} ryr_stage_report_t;

/** One member of a farm in the summary. */
typedef struct ryr_member_report {
    long long frames;    /**< frames it rendered */
    long long rows_cpu;  /**< rows its CPU threads rendered */
    long long rows_gpu;  /**< rows its GPU threads rendered */
} ryr_member_report_t;

/** Paths of device conduits (ryr_report_t.device_paths: a set of these bits). */
enum { RYR_PATH_HANDOVER = 1, RYR_PATH_IPC = 2, RYR_PATH_STAGED = 4 };

/** The end-of-run summary. */
typedef struct ryr_report {
    const char *preset;  /**< preset name */
    int frames, width, height;
    double seconds;      /**< wall time of the frame loop */
    int verified;        /**< 1 when --verify compared every plane and all matched */
    int gpu;             /**< 1 when the raytrace stage ran on a GPU task */
    int farm;            /**< 1 with --farm: rows_cpu and rows_gpu are reported */
    long long rows_cpu;  /**< --farm: rows rendered by CPU threads, all tasks and ranks */
    long long rows_gpu;  /**< --farm: rows rendered by GPU threads */
    int nmembers;        /**< --farm: the members (raytrace tasks) */
    ryr_member_report_t members[RYR_MAX_FARM]; /**< --farm: each member's share */
    int resident;        /**< --preset gpu: frames passed on device conduits */
    unsigned device_paths; /**< --preset gpu: the paths those conduits took (RYR_PATH_*) */
    ryr_stage_report_t stages[RYR_NSTAGES];
} ryr_report_t;

/** @brief The stage that sets the pace: the one with the most busy time. */
ryr_stage_t ryr_report_pace(const ryr_report_t *r);

/** @brief A RYR_PATH_* bit from a path's name (utc_conduit_device_path); 0 if unknown. */
unsigned ryr_report_path_bit(const char *name);

/** @brief Human-readable summary: frames, wall time, fps, and per stage tasks, threads,
 * busy time and kind (GPU stages marked), the stage that sets the pace; with --farm, the
 * rows each kind of thread rendered; with --preset gpu, the device conduits' paths. */
void ryr_report_print(FILE *f, const ryr_report_t *r);

/**
 * @brief The summary as one JSON object on one line:
 * {"preset", "frames", "width", "height", "seconds", "fps", "verified", "gpu",
 *  "pace", "stages": {name: {"tasks", "threads", "busy_s", "gpu"}}}, with --farm also
 *  "rows_cpu", "rows_gpu" and "members": [{"frames", "rows_cpu", "rows_gpu"}, ...], with
 *  --preset gpu "device_paths" (a list of "handover", "ipc", "staged"), before "pace".
 *  "pace" names the stage with the most busy time.
 */
void ryr_report_json(FILE *f, const ryr_report_t *r);

/** Progress of a run; one thread updates it. */
typedef struct ryr_progress {
    FILE *f;
    int total;
    int tty;      /* rewrite one line in place, else a line per 10% */
    int shown;    /* last tenth (or frame count on a terminal) printed */
    int open;     /* a terminal line is waiting for its newline */
} ryr_progress_t;

/** @brief Start reporting the progress of @p total frames on @p f (NULL: silent). */
void ryr_progress_init(ryr_progress_t *p, FILE *f, int total);
/** @brief @p done frames are complete. Not thread-safe: call from one thread. */
void ryr_progress_update(ryr_progress_t *p, int done);
/** @brief End the progress line. */
void ryr_progress_finish(ryr_progress_t *p);

#endif /* RYR_REPORT_H */
