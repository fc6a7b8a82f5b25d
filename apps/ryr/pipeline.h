/*
 * The UTC pipeline of the RYR sample: raytrace -> yuv -> rotate (1 or 3) -> output (1 or 3),
 * each stage a UTC task (task_*.c), joined by conduits. Frames cross the conduits as owned
 * buffers (utc_buf_alloc): in-process only the pointer moves.
 */
#ifndef RYR_PIPELINE_H
#define RYR_PIPELINE_H

#include <stdatomic.h>
#include <stdint.h>
#include <utc/utc.h>

#include "options.h"
#include "output.h"
#include "render.h"
#include "rotate.h"
#include "scene.h"
#include "video.h"

/* What every stage knows: the same on every rank (built from the same options). */
typedef struct ryr_pipe {
    const ryr_options_t *opt;
    const ryr_plan_t *plan;
    const ryr_scene_t *scene;
    ryr_rotation_t rot; /* of a w x h plane */
    int w, h, frames;
    atomic_int planes_done; /* planes handled by this rank's output tasks (progress) */
    atomic_int stopped;     /* an output task of this rank stopped early */
    _Atomic double t_end;   /* when this rank's last output task finished (utc_wtime) */
    ryr_video_t *video;     /* --video on the rank of the output tasks, else NULL */
    double slow;            /* --slow-rank: this rank's factor of raytrace work (1: none) */
} ryr_pipe_t;

/* --preset gpu: the rows of a w x h frame that the raytrace task's rank i of n renders and
 * writes to yuv, [*y0, *y1) (its threads' shares, which are contiguous on a rank). */
void ryr_dev_rank_rows(int h, int i, int n, int *y0, int *y1);

/* Conduit ends of a stage that handles planes: per plane, the conduit and the tag. */
typedef struct ryr_plane_links {
    int nplanes;                      /* planes this task handles: 3, or 1 */
    int plane[RYR_NPLANES];           /* which planes */
    utc_conduit_t *in[RYR_NPLANES];   /* where plane i comes from */
    utc_conduit_t *out[RYR_NPLANES];  /* where plane i goes */
    int tag[RYR_NPLANES];             /* tag of plane i on both conduits */
} ryr_plane_links_t;

/* The stage tasks. Each run processes every frame, then returns. */
typedef struct ryr_ray_task {
    utc_task_t base;
    const ryr_pipe_t *pipe;
    utc_conduit_t *out;      /* to yuv; in a farm shared by the members, tag = frame */
    utc_conduit_t *jobs;     /* farm: frame numbers from the dispatcher (share mode) */
    int yuv_rank;            /* --preset gpu: the yuv task's rank, where each rank of this
                                task writes its rows (a free-mode device conduit) */
    atomic_int dev_failed;   /* --preset gpu: a thread of this rank failed (all stop) */
    int job;                 /* farm: the frame number read (thread 0 reads for all) */
    int first;               /* farm: the member's own first frame (its index in the farm;
                              * >= frames: none), rendered before it asks the dispatcher */
    long long frames_done;   /* farm: frames this member rendered (thread 0 counts) */
    double busy;             /* seconds rendering (entry rank, thread 0) */
    /* one rank: threads take row chunks from a shared counter */
    atomic_int next_row;
    /* a mixed member: rows of the frame kept for each kind (by utc_task_kind_t) until that
     * kind's speed is measured: [res_next, res_end), taken before the shared counter */
    atomic_int res_next[2];
    int res_end[2];
    uint8_t *frame;
    /* several ranks: rows gathered in global shared data on the entry rank */
    utc_gdata_t *gframe, *gcounter;
    /* farm: rows rendered by this rank's threads of each kind (by utc_task_kind_t: CPU,
     * GPU), for the summary */
    atomic_llong rows[2];
    /* farm: seconds one thread of each kind takes per row (a running average; 0: not
     * measured yet): how a mixed member shares a frame's rows between the kinds */
    _Atomic double row_s[2];
} ryr_ray_task_t;

/*
 * How one thread of a farm member renders the frame's rows it takes (task_raytrace.c's
 * ryr_ray_run_rows): a CPU member's threads take a few rows at a time; a mixed member's
 * threads as ryr_ray_mixed_chunk says.
 */
typedef struct ryr_rows_worker {
    /* rows to take when `left` rows of the frame are not taken yet; 0: take no more of
     * this frame */
    int (*chunk)(const ryr_ray_task_t *t, int kind, int left, void *st);
    /* render rows y0 .. y1 - 1 of frame f (its `view`) into `dst` (host memory) */
    int (*render)(const ryr_pipe_t *p, const ryr_view_t *view, int f, int y0, int y1,
                  uint8_t *dst, void *st);
    void *st;
} ryr_rows_worker_t;

/*
 * A mixed member's share of a frame for a thread of `kind` when `left` rows are not
 * taken: each kind in proportion to its measured speed (row_s), a GPU thread its share
 * in one chunk (so one kernel a frame when the CPU threads have little to add), a CPU
 * thread one row, and none when the GPU threads would render all that is left before
 * that row is done. Before both speeds are measured, small chunks of both kinds.
 * (Until a kind's speed is measured, its first rows of each frame are kept for it:
 * ryr_ray_run_rows hands those out first, so both kinds render rows of the member's first
 * frame whatever the timing.)
 */
int ryr_ray_mixed_chunk(const ryr_ray_task_t *t, int kind, int left);

/* --farm: hands frame numbers `first`, first + 1, ... to the raytrace tasks, each to the
 * first that asks, then closes the stream (member i renders frame i, below `first`, without
 * asking: every member takes part). One thread, on the yuv task's rank. */
typedef struct ryr_dispatch_task {
    utc_task_t base;
    const ryr_pipe_t *pipe;
    utc_conduit_t *jobs;
    int first;               /* the first frame it hands out: the members render frames
                              * 0 .. first - 1 (one each) without asking */
} ryr_dispatch_task_t;

typedef struct ryr_yuv_task {
    utc_task_t base;
    const ryr_pipe_t *pipe;
    utc_conduit_t *in;                   /* from raytrace */
    ryr_plane_links_t links;             /* planes out to rotate */
    uint8_t *rgb, *plane[RYR_NPLANES];
    /* --preset gpu: the raytrace task's ranks in its placement order; rank i writes the
     * rows ryr_dev_rank_rows gives it */
    int nray;
    int ray_rank[RYR_MAX_PLACE_RANKS];
    double busy;
    int error;                           /* first error of the --rgb writer */
} ryr_yuv_task_t;

typedef struct ryr_rotate_task {
    utc_task_t base;
    const ryr_pipe_t *pipe;
    ryr_plane_links_t links;
    uint8_t *src, *dst;
    double busy;
} ryr_rotate_task_t;

typedef struct ryr_output_task {
    utc_task_t base;
    const ryr_pipe_t *pipe;
    ryr_plane_links_t links;
    double busy;
    uint8_t **kept;          /* --verify: kept[frame * nplanes + i], else NULL */
    char error[512];         /* first write error; the task drains the rest */
} ryr_output_task_t;

extern const utc_task_ops_t ryr_ray_cpu_ops;
extern const utc_task_ops_t ryr_dispatch_ops;
extern const utc_task_ops_t ryr_ray_gpu_ops;
/* --mixed: one farm member with GPU threads (run_gpu) and CPU threads (run) */
extern const utc_task_ops_t ryr_ray_mixed_ops;
extern const utc_task_ops_t ryr_yuv_ops;
extern const utc_task_ops_t ryr_rotate_ops;
extern const utc_task_ops_t ryr_output_ops;
/* --preset gpu: the GPU-resident stages (task_dev_*.c). Frames stay in device memory,
 * passed on device conduits (UTC_CONDUIT_MEM_DEVICE); each stage's busy time is the device
 * time of its kernels (the output stage's: its copies back and its writing). One GPU thread
 * per task, but raytrace, which has --ray-threads on each of its ranks. */
extern const utc_task_ops_t ryr_dev_ray_ops;
extern const utc_task_ops_t ryr_dev_yuv_ops;
extern const utc_task_ops_t ryr_dev_rotate_ops;
extern const utc_task_ops_t ryr_dev_output_ops;

/* An output task's delivery of plane i (of its links) of frame f, in host memory: the
 * PGM file, the video, --verify's copy (kept: `plane` must then be a utc_buf_alloc buffer,
 * which the task keeps), progress. `owned`: free `plane` (utc_buf_free) when not kept. A
 * write error is reported once (*failed set); later planes are dropped. Thread 0. */
void ryr_output_deliver(ryr_output_task_t *t, int f, int i, uint8_t *plane, int owned,
                        int *failed);

/* An output task's end on this rank: records when its last output task finished. */
void ryr_output_finished(const ryr_pipe_t *p);

/*
 * The next frame a raytrace task renders. Called by every local thread of the task with
 * its own `*f` (-1 before the first frame). One raytrace task: every frame in order. A
 * farm member: the next frame number handed out on its jobs conduit. Returns 1 with `*f`
 * set, 0 when there is no frame left (the farm's stream is closed), or a negative status.
 */
int ryr_ray_next_frame(ryr_ray_task_t *t, int *f);

/* Hand frame `f` (an owned buffer) to yuv: tag 0 from the one raytrace task, tag f from a
 * farm member (yuv reads the farm's frames by tag, so in order). Every local thread. */
utc_status_t ryr_ray_send(ryr_ray_task_t *t, void *frame, size_t bytes, int f);

/* After the last frame: a farm member closes its side of the conduit to yuv (nothing to do
 * for the one raytrace task). Every local thread. */
utc_status_t ryr_ray_done(ryr_ray_task_t *t);

/* --slow-rank: on the slow rank, sleep (factor - 1) times the work done since `t0`
 * (utc_wtime), so that work seems to take factor times as long. No-op elsewhere. */
void ryr_slow_down(const ryr_pipe_t *p, double t0);

/* The raytrace task's init and fini (CPU and GPU): when it spans several ranks, they make
 * and free its global shared data (gframe, gcounter). */
int ryr_ray_init(utc_task_t *self, utc_ctx_t *ctx, void *arg);
void ryr_ray_fini(utc_task_t *self, utc_ctx_t *ctx);

/* Several ranks, after this thread stored its rows of frame f in gframe (rc: how that
 * went): the entry rank sends the whole frame to yuv once every thread has stored its rows.
 * Every thread of the task; returns the first error (task_raytrace.c). */
int ryr_ray_gather_send(ryr_ray_task_t *t, utc_ctx_t *ctx, int f, double t0, int rc);

/*
 * A farm member on one rank: for every frame it is handed, its threads take rows from a
 * shared counter (each as much as `w->chunk` says) and render them with `w->render` into
 * the frame, which is sent to yuv once all are done. Counts the rows in t->rows[kind]
 * (the calling thread's kind). Every local thread, each with its own worker.
 */
int ryr_ray_run_rows(ryr_ray_task_t *t, utc_ctx_t *ctx, const ryr_rows_worker_t *w);

/* The CPU threads' body of a --mixed farm member (task_raytrace.c). */
int ryr_ray_mixed_cpu_run(utc_task_t *self, utc_ctx_t *ctx, void *arg);

/* Whether this build can raytrace on a GPU (CUDA built in and a device visible). */
int ryr_gpu_available(void);

/*
 * Run the pipeline of `plan` on all ranks (collective). Rank 0 prints the summary. The
 * output tasks put their planes into `video` (--video; NULL on ranks other than the
 * output tasks' rank, and without --video).
 * Returns the process exit status (0 success, 1 runtime failure, 3 verify mismatch).
 */
int ryr_run_pipeline(const ryr_options_t *opt, const ryr_plan_t *plan, const ryr_scene_t *scene,
                     ryr_video_t *video);

/*
 * --stage-alone (with --preset gpu): run the kernels of one GPU stage alone on device
 * buffers, no conduits, on rank 0 (stage_alone.c), and print their frames/s (rank 0; with
 * --json also one JSON line, {"stage_alone", "preset", "frames", "width", "height",
 * "threads", "seconds", "fps"}). Collective. Returns the process exit status (0, or 1 on
 * a failure).
 */
int ryr_run_stage_alone(const ryr_options_t *opt, const ryr_plan_t *plan,
                        const ryr_scene_t *scene);

#endif /* RYR_PIPELINE_H */
