/*
 * utc_bench_farm: the farm of the user guide (doc/guide/conduits.md, "Farms"), timed, in
 * one of two forms per run, for scripts/bench-farm.sh to compare:
 *
 *   dispatch --share--> worker 0..N-1 --publish--> collect
 *
 *   plain: the guide's worker loop as written: read a job, work on it, write its result.
 *   ahead: the same with the next job read ahead by hand: utc_conduit_iread of the next
 *          job before working on the current one, utc_request_wait for it after.
 *
 * The dispatcher (rank 0) writes --jobs job numbers on a share-mode shared conduit and
 * closes it; worker i (rank i % ranks, one thread) works on each job it reads for about
 * --work-us microseconds of its own CPU time, uneven: job j takes work-us * (1 + spread *
 * (2u - 1)) with u in [0, 1) from a hash of j (--spread 0.5: 0.5 to 1.5 times, 1.0 on
 * average); the collector (rank 0) reads the results on a publish-mode shared conduit and
 * checks that every job came back once.
 *
 *   scripts/utcrun -np 2 build/apps/microbench/utc_bench_farm [--form plain|ahead]
 *       [--jobs N] [--workers N] [--work-us US] [--spread S] [--credits N] [--json]
 *
 * --credits sets the jobs conduit's credit window (utc_conduit_options_t.credits; default:
 * the library's); a build without credit windows refuses it. Run with UTC_STATS=1 for the
 * runtime's own account of each worker's waiting (its "wait%" column). Rank 0 prints the
 * run's seconds, each worker's jobs and the share of its run it spent in job reads (its own
 * clock), on a CPU (its CPU time over its run: what the threads beside it took), the CPU
 * time the dispatcher used, and with --json, last, one JSON object.
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <utc/utc.h>

#define MAX_WORKERS 16

typedef struct {
    int job, worker;
} result_t;

typedef struct {
    utc_task_t base;
    utc_conduit_t *jobs, *results;
    int id;
    double read_s, run_s; /* time in job reads and waits; the whole run */
    double cpu_s;         /* its CPU time over the run */
    int taken;
} worker_t;

typedef struct {
    utc_task_t base;
} plain_task_t;

static int njobs = 2000, nworkers = 2, ahead;
static double work_us = 1000, spread = 0.5;
static utc_conduit_t *jobs_c, *results_c;
static int collect_errors;

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Job j's share of work, in seconds of the calling thread's CPU time. */
static double job_cost(int j)
{
    uint64_t h = (uint64_t)j * 0x9e3779b97f4a7c15ull + 1;
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    double u = (double)(h >> 11) / (double)(1ull << 53);
    return work_us * 1e-6 * (1.0 + spread * (2.0 * u - 1.0));
}

static void work(int j)
{
    double end = cpu_now() + job_cost(j);
    volatile unsigned sink = 0;
    while (cpu_now() < end)
        for (unsigned i = 0; i < 256; i++)
            sink += i;
}

static double dispatch_cpu_s; /* the dispatcher's CPU time: what its waits cost rank 0 */

static int dispatch_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    double c0 = cpu_now();
    utc_status_t rc = UTC_OK;
    for (int j = 0; j < njobs && rc == UTC_OK; j++)
        rc = utc_conduit_write(jobs_c, &j, sizeof j, 0);
    if (rc == UTC_OK)
        rc = utc_conduit_close(jobs_c);
    dispatch_cpu_s = cpu_now() - c0;
    return rc;
}

/* A job's work and its result. */
static utc_status_t do_job(worker_t *w, int job)
{
    work(job);
    w->taken++;
    result_t r = {job, w->id};
    return utc_conduit_write(w->results, &r, sizeof r, 0);
}

/* The guide's loop. */
static utc_status_t worker_plain(worker_t *w)
{
    for (;;) {
        int job;
        double t0 = utc_wtime();
        utc_status_t rc = utc_conduit_read(w->jobs, &job, sizeof job, 0, NULL);
        w->read_s += utc_wtime() - t0;
        if (rc != UTC_OK)
            return rc;
        if ((rc = do_job(w, job)) != UTC_OK)
            return rc;
    }
}

/* The next job read ahead by hand. */
static utc_status_t worker_ahead(worker_t *w)
{
    int job[2], cur = 0;
    double t0 = utc_wtime();
    utc_status_t rc = utc_conduit_read(w->jobs, &job[cur], sizeof job[cur], 0, NULL);
    w->read_s += utc_wtime() - t0;
    while (rc == UTC_OK) {
        utc_request_t *req = NULL;
        if ((rc = utc_conduit_iread(w->jobs, &job[1 - cur], sizeof job[0], 0, &req)) != UTC_OK)
            return rc;
        utc_status_t jrc = do_job(w, job[cur]);
        t0 = utc_wtime();
        rc = utc_request_wait(&req, NULL);
        w->read_s += utc_wtime() - t0;
        if (jrc != UTC_OK)
            return jrc;
        cur = 1 - cur;
    }
    return rc;
}

static int worker_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx, (void)arg;
    worker_t *w = (worker_t *)self;
    double t0 = utc_wtime(), c0 = cpu_now();
    utc_status_t rc = ahead ? worker_ahead(w) : worker_plain(w);
    w->run_s = utc_wtime() - t0;
    w->cpu_s = cpu_now() - c0;
    if (rc == UTC_ERR_CLOSED) /* every job handed out: end our side of the results */
        return utc_conduit_close(w->results);
    fprintf(stderr, "utc_bench_farm: worker %d: %s (%s)\n", w->id, utc_status_string(rc),
            utc_last_error());
    return rc;
}

static int collect_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    char *seen = calloc((size_t)njobs + 1, 1);
    if (!seen)
        return UTC_ERR_NO_MEMORY;
    result_t r;
    utc_status_t rc;
    while ((rc = utc_conduit_read(results_c, &r, sizeof r, 0, NULL)) == UTC_OK) {
        if (r.job < 0 || r.job >= njobs || seen[r.job])
            collect_errors++;
        else
            seen[r.job] = 1;
    }
    for (int j = 0; j < njobs; j++)
        collect_errors += !seen[j];
    free(seen);
    return rc == UTC_ERR_CLOSED ? UTC_OK : rc;
}

static const utc_task_ops_t dispatch_ops = {
    .name = "dispatch", .size = sizeof(plain_task_t), .run = dispatch_run};
static const utc_task_ops_t worker_ops = {
    .name = "worker", .size = sizeof(worker_t), .run = worker_run};
static const utc_task_ops_t collect_ops = {
    .name = "collect", .size = sizeof(plain_task_t), .run = collect_run};

static int usage(const char *prog, int rc)
{
    printf("usage: %s [--form plain|ahead] [--jobs N] [--workers N] [--work-us US]\n"
           "          [--spread S] [--credits N] [--json] [--help] [--version]\n"
           "The user guide's farm, timed: --jobs (default 2000) jobs of --work-us (default\n"
           "1000) us of CPU each, uneven by +-spread (default 0.5), on --workers (1..%d,\n"
           "default 2) workers, worker i on rank i %% ranks; 'ahead' reads the next job ahead\n"
           "by hand (iread). Run with UTC_STATS=1 for the runtime's waiting figures.\n",
           prog, MAX_WORKERS);
    return rc;
}

/* The number in `v` for option `a`, within [lo, hi] (a whole one if `whole`); false with a
 * message if it is not. */
static bool number(const char *a, const char *v, double lo, double hi, bool whole, double *out)
{
    char *end = NULL;
    double x = v ? strtod(v, &end) : 0;
    if (!v || end == v || *end || !(x >= lo && x <= hi) || (whole && x != (double)(long)x)) {
        fprintf(stderr, "utc_bench_farm: argument '%s' needs a %s from %g to %g, got '%s'\n", a,
                whole ? "whole number" : "number", lo, hi, v ? v : "(nothing)");
        return false;
    }
    *out = x;
    return true;
}

int main(int argc, char **argv)
{
    int json = 0, credits = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double x = 0;
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return usage(argv[0], 0);
        if (!strcmp(a, "--version")) {
            printf("utc_bench_farm (UTC) %s\n", utc_version_string());
            return 0;
        }
        if (!strcmp(a, "--json")) {
            json = 1;
            continue;
        }
        i++;
        if (!strcmp(a, "--form")) {
            if (!v || (strcmp(v, "plain") && strcmp(v, "ahead"))) {
                fprintf(stderr, "utc_bench_farm: --form is plain or ahead, got '%s'\n",
                        v ? v : "(nothing)");
                return 2;
            }
            ahead = !strcmp(v, "ahead");
        } else if (!strcmp(a, "--jobs")) {
            if (!number(a, v, 1, 1e7, true, &x))
                return 2;
            njobs = (int)x;
        } else if (!strcmp(a, "--workers")) {
            if (!number(a, v, 1, MAX_WORKERS, true, &x))
                return 2;
            nworkers = (int)x;
        } else if (!strcmp(a, "--credits")) {
            if (!number(a, v, 0, 1e6, true, &x))
                return 2;
            credits = (int)x;
        } else if (!strcmp(a, "--work-us")) {
            if (!number(a, v, 0, 1e6, false, &work_us))
                return 2;
        } else if (!strcmp(a, "--spread")) {
            if (!number(a, v, 0, 1, false, &spread))
                return 2;
        } else {
            fprintf(stderr, "utc_bench_farm: unknown argument '%s' (see --help)\n", a);
            return 2;
        }
    }
    utc_conduit_options_t jo = UTC_CONDUIT_OPTIONS_INIT;
#ifdef UTC_CONDUIT_CREDITS_DEFAULT
    jo.credits = credits;
#else
    if (credits) {
        fprintf(stderr, "utc_bench_farm: this UTC has no credit window (--credits)\n");
        return 2;
    }
#endif
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "utc_bench_farm: utc_init: %s\n", utc_last_error());
        return 1;
    }
    int n = utc_nranks(), zero = 0;
    utc_task_t *disp = NULL, *coll = NULL, *workers[MAX_WORKERS] = {NULL};
    utc_status_t rc = utc_task_create(&dispatch_ops, &zero, 1, NULL, &disp);
    if (rc == UTC_OK)
        rc = utc_task_create(&collect_ops, &zero, 1, NULL, &coll);
    for (int i = 0; i < nworkers && rc == UTC_OK; i++) {
        int rank = i % n;
        rc = utc_task_create(&worker_ops, &rank, 1, NULL, &workers[i]);
    }
    if (rc == UTC_OK)
        rc = utc_conduit_create_shared(&disp, 1, workers, nworkers, UTC_SHARED_SHARE, &jo, &jobs_c);
    if (rc == UTC_OK)
        rc = utc_conduit_create_shared(workers, nworkers, &coll, 1, UTC_SHARED_PUBLISH, NULL,
                                       &results_c);
    for (int i = 0; i < nworkers && rc == UTC_OK; i++) {
        worker_t *w = (worker_t *)workers[i];
        w->jobs = jobs_c;
        w->results = results_c;
        w->id = i;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = utc_wtime();
    utc_task_t *all[MAX_WORKERS + 2] = {disp, coll};
    for (int i = 0; i < nworkers; i++)
        all[2 + i] = workers[i];
    for (int i = 0; i < nworkers + 2 && rc == UTC_OK; i++)
        rc = utc_task_run(all[i], NULL);
    if (rc == UTC_OK)
        for (int i = 0; i < nworkers + 2; i++) {
            utc_status_t w = utc_task_wait(all[i]);
            rc = rc == UTC_OK ? w : rc;
        }
    double elapsed = utc_wtime() - t0;
    /* each worker's figures, from its rank to rank 0 */
    double mine[4 * MAX_WORKERS] = {0}, all_w[4 * MAX_WORKERS];
    for (int i = 0; i < nworkers; i++)
        if (utc_task_is_local(workers[i])) {
            worker_t *w = (worker_t *)workers[i];
            mine[4 * i] = w->read_s;
            mine[4 * i + 1] = w->run_s;
            mine[4 * i + 2] = w->taken;
            mine[4 * i + 3] = w->cpu_s;
        }
    MPI_Reduce(mine, all_w, 4 * MAX_WORKERS, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rc == UTC_OK && utc_rank() == 0) {
        double read = 0, run = 0, cpu = 0;
        printf("farm (%s): %d jobs of %.0f us +-%.0f%% on %d worker(s), %d rank(s): %.4f s, "
               "%d wrong or missing; the dispatcher used %.3f s of CPU\n",
               ahead ? "ahead" : "plain", njobs, work_us, spread * 100, nworkers, n, elapsed,
               collect_errors, dispatch_cpu_s);
        for (int i = 0; i < nworkers; i++) {
            const double *f = &all_w[4 * i]; /* read s, run s, jobs, CPU s */
            read += f[0];
            run += f[1];
            cpu += f[3];
            printf("  worker %d: %4.0f jobs, %.2f%% of its run in job reads, on a CPU %.1f%% of "
                   "its run\n",
                   i, f[2], f[1] > 0 ? 100 * f[0] / f[1] : 0, f[1] > 0 ? 100 * f[3] / f[1] : 0);
        }
        if (json)
            printf("{\"form\": \"%s\", \"jobs\": %d, \"workers\": %d, \"ranks\": %d, "
                   "\"work_us\": %g, \"spread\": %g, \"credits\": %d, \"seconds\": %.6f, "
                   "\"read_pct\": %.3f, \"cpu_pct\": %.3f, \"dispatch_cpu_s\": %.6f, "
                   "\"errors\": %d}\n",
                   ahead ? "ahead" : "plain", njobs, nworkers, n, work_us, spread, credits, elapsed,
                   run > 0 ? 100 * read / run : 0, run > 0 ? 100 * cpu / run : 0, dispatch_cpu_s,
                   collect_errors);
        if (collect_errors)
            rc = UTC_ERR_INTERNAL;
    }
    if (rc != UTC_OK)
        fprintf(stderr, "utc_bench_farm[%d]: %s (%s)\n", utc_rank(), utc_status_string(rc),
                utc_last_error());
    if (results_c)
        (void)utc_conduit_destroy(results_c);
    if (jobs_c)
        (void)utc_conduit_destroy(jobs_c);
    for (int i = nworkers - 1; i >= 0; i--)
        if (workers[i])
            (void)utc_task_destroy(workers[i]);
    if (coll)
        (void)utc_task_destroy(coll);
    if (disp)
        (void)utc_task_destroy(disp);
    utc_finalize();
    return rc == UTC_OK ? 0 : 1;
}
