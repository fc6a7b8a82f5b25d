/*
 * Building and running the RYR pipeline: placement of the stages on ranks, task and
 * conduit creation (collective, same order on every rank), the run, the summary, and
 * --verify against the sequential path.
 *
 * --farm N replaces the one raytrace task with N (each on one of the raytrace ranks), a
 * dispatcher handing them frame numbers on a share-mode shared conduit, and a publish-mode
 * shared conduit from all of them to yuv (one reader: a fan-in).
 */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pipeline.h"
#include "report.h"
#include "seq.h"
#include "verify.h"

#define MAX_TASKS_PER_STAGE 3

typedef struct pipeline {
    ryr_pipe_t pipe;
    ryr_ray_task_t *ray;                  /* the one raytrace task; NULL with --farm */
    ryr_ray_task_t *farm[RYR_MAX_FARM];   /* --farm: the raytrace tasks */
    int nfarm;
    ryr_dispatch_task_t *dispatch;        /* --farm: hands out the frame numbers */
    ryr_yuv_task_t *yuv;
    ryr_rotate_task_t *rotate[MAX_TASKS_PER_STAGE];
    ryr_output_task_t *output[MAX_TASKS_PER_STAGE];
    int nrotate;
    utc_conduit_t *conduits[2 + 2 * MAX_TASKS_PER_STAGE];
    int nconduits;
} pipeline_t;

void ryr_slow_down(const ryr_pipe_t *p, double t0)
{
    if (p->slow <= 1.0)
        return;
    /* sleeping, not spinning: the slow rank's cores stay free, as on a slower node */
    double s = (p->slow - 1.0) * (utc_wtime() - t0);
    if (s <= 0)
        return;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

/* Ranks of a stage: --place, else raytrace on every rank and the rest on rank 0. */
static int stage_ranks(const ryr_options_t *opt, ryr_stage_t stage, int nranks, int *ranks)
{
    const ryr_placement_t *pl = &opt->place[stage];
    if (pl->nranks > 0) {
        memcpy(ranks, pl->ranks, sizeof(int) * (size_t)pl->nranks);
        return pl->nranks;
    }
    if (stage == RYR_STAGE_RAYTRACE) {
        for (int r = 0; r < nranks; r++)
            ranks[r] = r;
        return nranks;
    }
    ranks[0] = 0;
    return 1;
}

static int fail(const char *what)
{
    if (utc_rank() == 0)
        fprintf(stderr, "ryr: %s: %s\n", what, utc_last_error());
    return 1;
}

/* --preset gpu: a stage's threads on a rank share its device buffers (a raytrace band,
 * rotate's frame), so they share one device, device 0, where a rank sees several (UTC
 * would give local thread i device i % count). */
static const int resident_device[1] = {0};

/* Task i of a stage runs all its threads on the stage's rank i (round robin); a GPU task
 * with --preset gpu. */
static utc_status_t create_stage_task(const ryr_plan_t *plan, const utc_task_ops_t *ops,
                                      const int *ranks, int nranks, int index, int threads,
                                      utc_task_t **out)
{
    int procs[RYR_MAX_THREADS];
    for (int i = 0; i < threads; i++)
        procs[i] = ranks[index % nranks];
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.kind = plan->resident ? UTC_TASK_GPU : UTC_TASK_CPU;
    if (plan->resident) {
        o.devices = resident_device;
        o.devices_len = 1;
    }
    o.window_size = 0; /* these stages use no global shared data */
    return utc_task_create(ops, procs, threads, &o, out);
}

/* --farm: member i on the raytrace stage's rank i (round robin), all its threads there;
 * member 0 on the GPU when the plan says so, or (--mixed) of both kinds: its GPU threads
 * first, then its CPU threads. */
static int create_farm(pipeline_t *pl)
{
    const ryr_plan_t *plan = pl->pipe.plan;
    const ryr_options_t *opt = pl->pipe.opt;
    int ranks[RYR_MAX_PLACE_RANKS], procs[RYR_MAX_THREADS];
    int n = stage_ranks(opt, RYR_STAGE_RAYTRACE, utc_nranks(), ranks);
    for (int i = 0; i < plan->farm; i++) {
        int gpu = plan->farm_gpu && i == 0, mixed = gpu && plan->farm_mixed;
        int threads = !gpu ? plan->farm_cpu_threads
                      : plan->ray_threads + (mixed ? plan->farm_mixed_cpu_threads : 0);
        for (int k = 0; k < threads; k++)
            procs[k] = ranks[i % n];
        utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
        o.kind = mixed ? UTC_TASK_MIXED : gpu ? UTC_TASK_GPU : UTC_TASK_CPU;
        o.gpu_threads = mixed ? plan->ray_threads : 0;
        o.mem_kind = (utc_mem_kind_t)opt->memtype;
        o.window_size = 0; /* a member renders on one rank: no global shared data */
        const utc_task_ops_t *ops = mixed ? &ryr_ray_mixed_ops
                                    : gpu ? &ryr_ray_gpu_ops : &ryr_ray_cpu_ops;
        utc_task_t *t;
        if (utc_task_create(ops, procs, threads, &o, &t))
            return fail("creating a raytrace task of the farm");
        pl->farm[pl->nfarm++] = (ryr_ray_task_t *)t;
    }
    return 0;
}

/* The one raytrace task: ray_threads threads on each of its ranks. */
static int create_ray(pipeline_t *pl)
{
    const ryr_plan_t *plan = pl->pipe.plan;
    const ryr_options_t *opt = pl->pipe.opt;
    int ranks[RYR_MAX_PLACE_RANKS];
    int n = stage_ranks(opt, RYR_STAGE_RAYTRACE, utc_nranks(), ranks);
    int *procs = malloc(sizeof(int) * (size_t)n * (size_t)plan->ray_threads);
    if (!procs)
        return fail("out of memory");
    int np = 0;
    for (int r = 0; r < n; r++)
        for (int k = 0; k < plan->ray_threads; k++)
            procs[np++] = ranks[r];
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.kind = plan->ray_gpu ? UTC_TASK_GPU : UTC_TASK_CPU;
    o.mem_kind = (utc_mem_kind_t)opt->memtype;
    if (plan->resident) { /* its threads render into one band */
        o.devices = resident_device;
        o.devices_len = 1;
    }
    /* a task spread over ranks gathers its rows in its window on the entry rank (with
     * --preset gpu each rank writes its rows to yuv itself, on a device conduit) */
    o.window_size = n > 1 && !plan->resident
                        ? (size_t)pl->pipe.w * (size_t)pl->pipe.h * 3 + (64 << 10) : 0;
    const utc_task_ops_t *ops = plan->resident ? &ryr_dev_ray_ops
                                : plan->ray_gpu ? &ryr_ray_gpu_ops : &ryr_ray_cpu_ops;
    utc_task_t *t;
    utc_status_t rc = utc_task_create(ops, procs, np, &o, &t);
    free(procs);
    if (rc)
        return fail("creating the raytrace task");
    pl->ray = (ryr_ray_task_t *)t;
    return 0;
}

static int create_tasks(pipeline_t *pl)
{
    const ryr_plan_t *plan = pl->pipe.plan;
    const ryr_options_t *opt = pl->pipe.opt;
    int nranks = utc_nranks(), ranks[RYR_MAX_PLACE_RANKS];
    utc_task_t *t;
    int n;

    if (plan->farm) {
        if (create_farm(pl))
            return 1;
        /* the dispatcher: one thread beside yuv, where the frames come back */
        n = stage_ranks(opt, RYR_STAGE_YUV, nranks, ranks);
        if (create_stage_task(plan, &ryr_dispatch_ops, ranks, n, 0, 1, &t))
            return fail("creating the farm's dispatcher task");
        pl->dispatch = (ryr_dispatch_task_t *)t;
    } else if (create_ray(pl)) {
        return 1;
    }

    int dev = plan->resident;
    n = stage_ranks(opt, RYR_STAGE_YUV, nranks, ranks);
    if (create_stage_task(plan, dev ? &ryr_dev_yuv_ops : &ryr_yuv_ops, ranks, n, 0,
                          plan->yuv_threads, &t))
        return fail("creating the yuv task");
    pl->yuv = (ryr_yuv_task_t *)t;

    pl->nrotate = plan->rotate_tasks;
    n = stage_ranks(opt, RYR_STAGE_ROTATE, nranks, ranks);
    for (int i = 0; i < pl->nrotate; i++) {
        if (create_stage_task(plan, dev ? &ryr_dev_rotate_ops : &ryr_rotate_ops, ranks, n, i,
                              plan->rotate_threads, &t))
            return fail("creating a rotate task");
        pl->rotate[i] = (ryr_rotate_task_t *)t;
    }
    n = stage_ranks(opt, RYR_STAGE_OUTPUT, nranks, ranks);
    for (int i = 0; i < pl->nrotate; i++) {
        if (create_stage_task(plan, dev ? &ryr_dev_output_ops : &ryr_output_ops, ranks, n, i,
                              plan->output_threads, &t))
            return fail("creating an output task");
        pl->output[i] = (ryr_output_task_t *)t;
    }
    return 0;
}

/* A conduit from a to b: a device conduit with --preset gpu (in free mode: `free_mode`). */
static int connect(pipeline_t *pl, utc_task_t *a, utc_task_t *b, int free_mode,
                   utc_conduit_t **out)
{
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    if (pl->pipe.plan->resident)
        o.memory = UTC_CONDUIT_MEM_DEVICE;
    if (free_mode)
        o.mode = UTC_CONDUIT_FREE;
    if (utc_conduit_create(a, b, &o, out))
        return fail(o.memory == UTC_CONDUIT_MEM_DEVICE ? "creating a device conduit"
                                                       : "creating a conduit");
    pl->conduits[pl->nconduits++] = *out;
    return 0;
}

/* --farm: dispatcher -> members (share mode: each frame number to one member, the first
 * to ask) and members -> yuv (publish mode with one reader: every frame reaches yuv). */
static int connect_farm(pipeline_t *pl)
{
    utc_task_t *members[RYR_MAX_FARM], *dispatch = &pl->dispatch->base, *yuv = &pl->yuv->base;
    utc_conduit_t *jobs, *frames;
    for (int i = 0; i < pl->nfarm; i++)
        members[i] = &pl->farm[i]->base;
    if (utc_conduit_create_shared(&dispatch, 1, members, pl->nfarm, UTC_SHARED_SHARE, NULL,
                                  &jobs))
        return fail("creating the farm's jobs conduit");
    pl->conduits[pl->nconduits++] = jobs;
    if (utc_conduit_create_shared(members, pl->nfarm, &yuv, 1, UTC_SHARED_PUBLISH, NULL,
                                  &frames))
        return fail("creating the farm's conduit to yuv");
    pl->conduits[pl->nconduits++] = frames;
    pl->dispatch->jobs = jobs;
    pl->dispatch->first = pl->nfarm; /* frames 0 .. nfarm - 1: one to each member */
    for (int i = 0; i < pl->nfarm; i++) {
        pl->farm[i]->jobs = jobs;
        pl->farm[i]->out = frames;
        pl->farm[i]->first = i;
    }
    pl->yuv->in = frames;
    return 0;
}

/* Conduits: raytrace -> yuv -> rotate i -> output i. One rotate task takes the three
 * planes on one conduit with tags 0, 1, 2; three take one plane each on their own. */
static int connect_stages(pipeline_t *pl)
{
    utc_conduit_t *c;
    if (pl->nfarm) {
        if (connect_farm(pl))
            return 1;
    } else {
        /* --preset gpu: every raytrace rank writes its rows to yuv (free mode) */
        int resident = pl->pipe.plan->resident;
        if (connect(pl, &pl->ray->base, &pl->yuv->base, resident, &c))
            return 1;
        pl->ray->out = c;
        pl->yuv->in = c;
        if (resident) {
            int yuv_ranks[RYR_MAX_PLACE_RANKS];
            stage_ranks(pl->pipe.opt, RYR_STAGE_YUV, utc_nranks(), yuv_ranks);
            pl->ray->yuv_rank = yuv_ranks[0];
            pl->yuv->nray = stage_ranks(pl->pipe.opt, RYR_STAGE_RAYTRACE, utc_nranks(),
                                        pl->yuv->ray_rank);
        }
    }
    ryr_plane_links_t *yl = &pl->yuv->links;
    yl->nplanes = RYR_NPLANES;
    for (int i = 0; i < pl->nrotate; i++) {
        ryr_plane_links_t *rl = &pl->rotate[i]->links, *ol = &pl->output[i]->links;
        utc_conduit_t *to_rotate, *to_output;
        if (connect(pl, &pl->yuv->base, &pl->rotate[i]->base, 0, &to_rotate) ||
            connect(pl, &pl->rotate[i]->base, &pl->output[i]->base, 0, &to_output))
            return 1;
        int nplanes = pl->nrotate == 1 ? RYR_NPLANES : 1;
        rl->nplanes = ol->nplanes = nplanes;
        for (int k = 0; k < nplanes; k++) {
            int plane = pl->nrotate == 1 ? k : i;
            yl->plane[plane] = plane;
            yl->out[plane] = to_rotate;
            yl->tag[plane] = rl->tag[k] = ol->tag[k] = k;
            rl->plane[k] = ol->plane[k] = plane;
            rl->in[k] = to_rotate;
            rl->out[k] = ol->in[k] = to_output;
        }
    }
    return 0;
}

static void set_pipe(pipeline_t *pl)
{
    if (pl->ray)
        pl->ray->pipe = &pl->pipe;
    for (int i = 0; i < pl->nfarm; i++)
        pl->farm[i]->pipe = &pl->pipe;
    if (pl->dispatch)
        pl->dispatch->pipe = &pl->pipe;
    pl->yuv->pipe = &pl->pipe;
    for (int i = 0; i < pl->nrotate; i++)
        pl->rotate[i]->pipe = pl->output[i]->pipe = &pl->pipe;
}

/* --verify: every kept plane of this rank's output tasks against the sequential path. */
static int verify_local(pipeline_t *pl)
{
    const ryr_pipe_t *p = &pl->pipe;
    int any = 0;
    for (int i = 0; i < pl->nrotate; i++)
        any |= pl->output[i]->kept != NULL;
    if (!any)
        return 0;
    ryr_seq_t ref;
    ryr_err_t err;
    if (ryr_seq_init(&ref, p->scene, p->opt, &err)) {
        fprintf(stderr, "ryr: verify: %s\n", err.msg);
        return 1;
    }
    int bad = 0;
    for (int f = 0; f < p->frames && !bad; f++) {
        ryr_seq_frame(&ref, f);
        for (int i = 0; i < pl->nrotate && !bad; i++) {
            ryr_output_task_t *o = pl->output[i];
            for (int k = 0; o->kept && k < o->links.nplanes && !bad; k++) {
                int plane = o->links.plane[k];
                const uint8_t *got = o->kept[(size_t)f * o->links.nplanes + k];
                if (!got || ryr_verify_plane(f, plane, ref.rotated[plane], got, ref.rot.ow,
                                             ref.rot.oh, 1, &err)) {
                    fprintf(stderr, "ryr: verify failed: %s\n",
                            got ? err.msg : "a plane never arrived");
                    bad = 1;
                }
            }
        }
    }
    ryr_seq_fini(&ref);
    return bad;
}

static void keep_for_verify(pipeline_t *pl)
{
    for (int i = 0; i < pl->nrotate; i++) {
        ryr_output_task_t *o = pl->output[i];
        if (pl->pipe.opt->verify && utc_task_is_local(&o->base) == 1)
            o->kept = calloc((size_t)pl->pipe.frames * (size_t)o->links.nplanes, sizeof(uint8_t *));
    }
}

static void free_kept(pipeline_t *pl)
{
    for (int i = 0; i < pl->nrotate; i++) {
        ryr_output_task_t *o = pl->output[i];
        if (!o->kept)
            continue;
        for (size_t k = 0; k < (size_t)pl->pipe.frames * (size_t)o->links.nplanes; k++)
            utc_buf_free(o->kept[k]);
        free(o->kept);
        o->kept = NULL;
    }
}

static void destroy_all(pipeline_t *pl)
{
    for (int i = pl->nconduits - 1; i >= 0; i--)
        (void)utc_conduit_destroy(pl->conduits[i]);
    for (int i = pl->nrotate - 1; i >= 0; i--) {
        if (pl->output[i])
            (void)utc_task_destroy(&pl->output[i]->base);
        if (pl->rotate[i])
            (void)utc_task_destroy(&pl->rotate[i]->base);
    }
    if (pl->yuv)
        (void)utc_task_destroy(&pl->yuv->base);
    if (pl->dispatch)
        (void)utc_task_destroy(&pl->dispatch->base);
    for (int i = pl->nfarm - 1; i >= 0; i--)
        (void)utc_task_destroy(&pl->farm[i]->base);
    if (pl->ray)
        (void)utc_task_destroy(&pl->ray->base);
}

/* Run every task and wait; rank 0 shows progress from its output tasks' busy counters. */
static int run_all(pipeline_t *pl)
{
    utc_task_t *tasks[RYR_MAX_FARM + 2 + 2 * MAX_TASKS_PER_STAGE];
    int n = 0, status = 0;
    if (pl->ray)
        tasks[n++] = &pl->ray->base;
    for (int i = 0; i < pl->nfarm; i++)
        tasks[n++] = &pl->farm[i]->base;
    if (pl->dispatch)
        tasks[n++] = &pl->dispatch->base;
    tasks[n++] = &pl->yuv->base;
    for (int i = 0; i < pl->nrotate; i++) {
        tasks[n++] = &pl->rotate[i]->base;
        tasks[n++] = &pl->output[i]->base;
    }
    /* the one raytrace task makes its global shared data (farm members, on one rank each,
     * make none, but they have the init function all the same: CPU, GPU and mixed) */
    if (pl->ray && utc_task_init(&pl->ray->base, NULL))
        return fail("initializing the raytrace task");
    for (int i = 0; i < pl->nfarm; i++)
        if (utc_task_init(&pl->farm[i]->base, NULL))
            return fail("initializing a raytrace task of the farm");
    for (int i = 0; i < n; i++)
        if (utc_task_run(tasks[i], NULL))
            return fail("starting a task");
    /* progress, where every output task is on this rank: planes written so far / 3 */
    int all_local = 1;
    for (int i = 0; i < pl->nrotate; i++)
        all_local &= utc_task_is_local(&pl->output[i]->base) == 1;
    if (all_local) {
        ryr_progress_t progress;
        ryr_progress_init(&progress, stderr, pl->pipe.frames);
        int done;
        while ((done = atomic_load(&pl->pipe.planes_done) / RYR_NPLANES) < pl->pipe.frames) {
            ryr_progress_update(&progress, done);
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
            if (atomic_load(&pl->pipe.stopped))
                break;
        }
        ryr_progress_update(&progress, pl->pipe.frames);
        ryr_progress_finish(&progress);
    }
    for (int i = 0; i < n; i++) {
        utc_status_t rc = utc_task_wait(tasks[i]);
        if (rc) {
            fprintf(stderr, "ryr[%d]: %s\n", utc_rank(), utc_last_error());
            status = 1;
        }
    }
    return status;
}

/* --preset gpu: the paths (RYR_PATH_* bits) this rank's ends of the device conduits take. */
static unsigned device_paths(const pipeline_t *pl)
{
    unsigned bits = 0;
    for (int i = 0; pl->pipe.plan->resident && i < pl->nconduits; i++) {
        const char *name;
        if (utc_conduit_device_path(pl->conduits[i], &name) == UTC_OK)
            bits |= ryr_report_path_bit(name);
    }
    return bits;
}

static double stage_busy(pipeline_t *pl, ryr_stage_t s)
{
    double b = 0;
    switch (s) {
    case RYR_STAGE_RAYTRACE:
        if (pl->ray)
            b = pl->ray->busy;
        for (int i = 0; i < pl->nfarm; i++) /* farm: the busiest member */
            b = pl->farm[i]->busy > b ? pl->farm[i]->busy : b;
        break;
    case RYR_STAGE_YUV: b = pl->yuv->busy; break;
    case RYR_STAGE_ROTATE:
        for (int i = 0; i < pl->nrotate; i++)
            b = pl->rotate[i]->busy > b ? pl->rotate[i]->busy : b;
        break;
    case RYR_STAGE_OUTPUT:
        for (int i = 0; i < pl->nrotate; i++)
            b = pl->output[i]->busy > b ? pl->output[i]->busy : b;
        break;
    default: break;
    }
    return b;
}

int ryr_run_pipeline(const ryr_options_t *opt, const ryr_plan_t *plan, const ryr_scene_t *scene,
                     ryr_video_t *video)
{
    pipeline_t pl;
    memset(&pl, 0, sizeof pl);
    ryr_err_t err;
    pl.pipe = (ryr_pipe_t){.opt = opt, .plan = plan, .scene = scene,
                           .w = opt->width, .h = opt->height, .frames = opt->frames,
                           .video = video,
                           .slow = opt->slow_rank == utc_rank() ? opt->slow_factor : 1.0};
    if (ryr_rotation_init(&pl.pipe.rot, opt->width, opt->height, opt->angle, &err)) {
        fprintf(stderr, "ryr: %s\n", err.msg);
        return 2;
    }
    int status = create_tasks(&pl);
    if (!status) {
        set_pipe(&pl);
        status = connect_stages(&pl);
    }
    double seconds = 0;
    if (!status) {
        keep_for_verify(&pl);
        utc_barrier();
        double t0 = utc_wtime();
        status = run_all(&pl);
        /* on each rank, from the common start to its last output; the longest is the run */
        double mine = atomic_load(&pl.pipe.t_end) > 0 ? atomic_load(&pl.pipe.t_end) - t0 : 0;
        MPI_Allreduce(&mine, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }

    /* every rank reports its tasks; rank 0 prints the summary */
    double busy[RYR_NSTAGES] = {0}, max_busy[RYR_NSTAGES];
    /* a farm's members: frames, rows of CPU threads, rows of GPU threads (each member's
     * counts are on its rank, zeros elsewhere) */
    long long members[RYR_MAX_FARM][3], all_members[RYR_MAX_FARM][3];
    memset(members, 0, sizeof members);
    if (!status)
        for (int s = 0; s < RYR_NSTAGES; s++)
            busy[s] = stage_busy(&pl, s);
    for (int i = 0; i < pl.nfarm && !status; i++) {
        members[i][0] = pl.farm[i]->frames_done;
        for (int k = 0; k < 2; k++)
            members[i][1 + k] = atomic_load(&pl.farm[i]->rows[k]);
    }
    MPI_Reduce(members, all_members, RYR_MAX_FARM * 3, MPI_LONG_LONG, MPI_SUM, 0,
               MPI_COMM_WORLD);
    unsigned paths = status ? 0 : device_paths(&pl), all_paths = 0;
    MPI_Reduce(&paths, &all_paths, 1, MPI_UNSIGNED, MPI_BOR, 0, MPI_COMM_WORLD);
    int bad = status ? 0 : verify_local(&pl), any_bad = 0, any_status = 0;
    MPI_Reduce(busy, max_busy, RYR_NSTAGES, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&status, &any_status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (utc_rank() == 0 && !any_status) {
        ryr_report_t rep;
        memset(&rep, 0, sizeof rep);
        rep.preset = ryr_preset_name(plan->preset);
        rep.frames = opt->frames;
        rep.width = opt->width;
        rep.height = opt->height;
        rep.seconds = seconds;
        rep.verified = opt->verify && !any_bad;
        rep.gpu = plan->ray_gpu;
        rep.farm = pl.nfarm > 0;
        rep.nmembers = pl.nfarm;
        for (int i = 0; i < pl.nfarm; i++) {
            rep.members[i] = (ryr_member_report_t){all_members[i][0],
                                                   all_members[i][1 + UTC_TASK_CPU],
                                                   all_members[i][1 + UTC_TASK_GPU]};
            rep.rows_cpu += rep.members[i].rows_cpu;
            rep.rows_gpu += rep.members[i].rows_gpu;
        }
        rep.resident = plan->resident;
        rep.device_paths = all_paths;
        int ray_threads = pl.ray ? utc_task_nthreads(&pl.ray->base) : 0;
        for (int i = 0; i < pl.nfarm; i++)
            ray_threads += utc_task_nthreads(&pl.farm[i]->base);
        int threads[RYR_NSTAGES] = {ray_threads, plan->yuv_threads,
                                    plan->rotate_threads * pl.nrotate, plan->output_threads * pl.nrotate};
        int tasks[RYR_NSTAGES] = {pl.ray ? 1 : pl.nfarm, 1, pl.nrotate, pl.nrotate};
        for (int s = 0; s < RYR_NSTAGES; s++)
            rep.stages[s] = (ryr_stage_report_t){tasks[s], threads[s], max_busy[s],
                                                 s == RYR_STAGE_RAYTRACE ? plan->ray_gpu
                                                                         : plan->resident};
        ryr_report_print(ryr_options_report_stream(opt), &rep);
        if (opt->json)
            ryr_report_json(stdout, &rep);
        if (!opt->no_output)
            fprintf(ryr_options_report_stream(opt), "images: %s/frame_NNNNN_{y,u,v}.pgm\n",
                    opt->out);
    }
    free_kept(&pl);
    destroy_all(&pl);
    return any_status ? 1 : any_bad ? 3 : 0;
}
