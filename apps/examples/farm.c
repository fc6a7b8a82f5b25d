/*
 * A farm: work shared among several tasks with shared conduits (doc/guide/conduits.md,
 * "Farms: work sharing with shared conduits").
 *
 *   dispatch --share--> worker 0..N-1 --publish--> collect
 *
 * The dispatcher writes job numbers on a share-mode shared conduit whose readers are the
 * workers: each job goes to exactly one worker, one that asked (a read asks, up to the
 * conduit's credit window ahead, 2 by default, so a worker's next job is on its way while
 * it works), and a worker that is slower, or busier with a harder job, takes fewer. After
 * the last job it closes the conduit; each worker's next read returns UTC_ERR_CLOSED and
 * the worker closes its side of the results conduit. That one is a publish-mode shared conduit with
 * the workers as writers and the collector as its one reader (a fan-in): the collector
 * reads results in the order they come until every worker has closed.
 *
 * Job j counts the primes in [j * range, (j + 1) * range): later jobs cost more, so
 * the jobs are uneven, as real ones are. The collector checks that every job came back
 * once with the right count and prints how many each worker took.
 *
 *   utcrun -np 2 example_farm --jobs 200 --workers 3
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utc/utc.h>

#define MAX_WORKERS 16

typedef struct {
    int job, primes, worker;
} result_t;

typedef struct {
    utc_task_t base;
    utc_conduit_t *jobs;
    int njobs;
} dispatch_t;

typedef struct {
    utc_task_t base;
    utc_conduit_t *jobs, *results;
    int id;
    long range;
} worker_t;

typedef struct {
    utc_task_t base;
    utc_conduit_t *results;
    int njobs, nworkers;
    long range;
    int taken[MAX_WORKERS]; /* jobs done by each worker */
    int errors;
} collect_t;

static int count_primes(long lo, long hi)
{
    int n = 0;
    for (long v = lo < 2 ? 2 : lo; v < hi; v++) {
        int prime = 1;
        for (long d = 2; d * d <= v && prime; d++)
            prime = v % d != 0;
        n += prime;
    }
    return n;
}

static int dispatch_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    dispatch_t *d = (dispatch_t *)self;
    for (int j = 0; j < d->njobs; j++) {
        /* in share mode a write waits until some worker asks, then goes to that worker */
        utc_status_t rc = utc_conduit_write(d->jobs, &j, sizeof j, 0);
        if (rc != UTC_OK)
            return rc;
    }
    return utc_conduit_close(d->jobs); /* no more jobs: the workers' reads end */
}

static int worker_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    worker_t *w = (worker_t *)self;
    for (;;) {
        int job;
        utc_status_t rc = utc_conduit_read(w->jobs, &job, sizeof job, 0, NULL);
        if (rc == UTC_ERR_CLOSED) /* every job is handed out: end our side of the results */
            return utc_conduit_close(w->results);
        if (rc != UTC_OK)
            return rc;
        result_t r = {job, count_primes(job * w->range, (job + 1) * w->range), w->id};
        if ((rc = utc_conduit_write(w->results, &r, sizeof r, 0)) != UTC_OK)
            return rc;
    }
}

static int collect_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    collect_t *c = (collect_t *)self;
    char *seen = calloc((size_t)c->njobs, 1);
    if (!seen)
        return UTC_ERR_NO_MEMORY;
    utc_status_t rc;
    result_t r;
    /* results of different workers come in any order; UTC_ERR_CLOSED once every worker
     * has closed and every result is read */
    while ((rc = utc_conduit_read(c->results, &r, sizeof r, 0, NULL)) == UTC_OK) {
        if (r.job < 0 || r.job >= c->njobs || seen[r.job] || r.worker < 0 ||
            r.worker >= c->nworkers ||
            r.primes != count_primes(r.job * c->range, (r.job + 1) * c->range)) {
            c->errors++;
            continue;
        }
        seen[r.job] = 1;
        c->taken[r.worker]++;
    }
    for (int j = 0; j < c->njobs; j++)
        c->errors += !seen[j];
    free(seen);
    return rc == UTC_ERR_CLOSED ? UTC_OK : rc;
}

static const utc_task_ops_t dispatch_ops = {
    .name = "dispatch", .size = sizeof(dispatch_t), .run = dispatch_run};
static const utc_task_ops_t worker_ops = {
    .name = "worker", .size = sizeof(worker_t), .run = worker_run};
static const utc_task_ops_t collect_ops = {
    .name = "collect", .size = sizeof(collect_t), .run = collect_run};

static int usage(const char *prog, int rc)
{
    printf("usage: %s [--jobs N] [--workers N] [--range R] [--help] [--version]\n"
           "A farm: a dispatcher hands N jobs (default 200) to the workers (1..%d, default\n"
           "3, worker i on rank i %% ranks) on a share-mode shared conduit; each job counts\n"
           "the primes in a range of R numbers (default 2000); a collector gathers the\n"
           "results on a publish-mode shared conduit and checks them.\n"
           "Launch with: utcrun -np 1|2|3 %s\n",
           prog, MAX_WORKERS, prog);
    return rc;
}

int main(int argc, char **argv)
{
    long njobs = 200, nworkers = 3, range = 2000;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        long *v = NULL;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return usage(argv[0], 0);
        if (!strcmp(argv[i], "--version")) {
            printf("example_farm (UTC) %s\n", utc_version_string());
            return 0;
        }
        if (!strcmp(argv[i], "--jobs"))
            v = &njobs;
        else if (!strcmp(argv[i], "--workers"))
            v = &nworkers;
        else if (!strcmp(argv[i], "--range"))
            v = &range;
        if (!v || i + 1 >= argc)
            return usage(argv[0], 2);
        *v = strtol(argv[++i], &end, 10);
        if (*end != '\0')
            return usage(argv[0], 2);
    }
    if (njobs < 0 || njobs > 1000000 || nworkers < 1 || nworkers > MAX_WORKERS || range < 1 ||
        range > 1000000) {
        fprintf(stderr, "--jobs must be 0..1000000, --workers 1..%d, --range 1..1000000\n",
                MAX_WORKERS);
        return 2;
    }
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "utc_init: %s\n", utc_last_error());
        return 1;
    }
    int n = utc_nranks(), zero = 0;
    utc_task_t *disp = NULL, *coll = NULL, *workers[MAX_WORKERS] = {NULL};
    utc_conduit_t *jobs = NULL, *results = NULL;
    /* the dispatcher and the collector on rank 0, worker i on rank i % ranks */
    utc_status_t rc = utc_task_create(&dispatch_ops, &zero, 1, NULL, &disp);
    if (rc == UTC_OK)
        rc = utc_task_create(&collect_ops, &zero, 1, NULL, &coll);
    for (int i = 0; i < nworkers && rc == UTC_OK; i++) {
        int rank = i % n;
        rc = utc_task_create(&worker_ops, &rank, 1, NULL, &workers[i]);
    }
    /* one writer, the workers as readers: each job to one worker */
    if (rc == UTC_OK)
        rc = utc_conduit_create_shared(&disp, 1, workers, (int)nworkers, UTC_SHARED_SHARE, NULL,
                                       &jobs);
    /* the workers as writers, one reader: every result to the collector */
    if (rc == UTC_OK)
        rc = utc_conduit_create_shared(workers, (int)nworkers, &coll, 1, UTC_SHARED_PUBLISH, NULL,
                                       &results);
    if (rc == UTC_OK) {
        dispatch_t *d = (dispatch_t *)disp;
        collect_t *c = (collect_t *)coll;
        d->jobs = jobs;
        d->njobs = c->njobs = (int)njobs;
        c->results = results;
        c->nworkers = (int)nworkers;
        c->range = range;
        for (int i = 0; i < nworkers; i++) {
            worker_t *w = (worker_t *)workers[i];
            w->jobs = jobs;
            w->results = results;
            w->id = i;
            w->range = range;
        }
    }
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
    if (rc == UTC_OK && utc_rank() == 0) {
        collect_t *c = (collect_t *)coll;
        printf("farm: %ld jobs in %.3f s, %d wrong or missing; jobs per worker:", njobs,
               utc_wtime() - t0, c->errors);
        for (int i = 0; i < nworkers; i++)
            printf(" %d", c->taken[i]);
        printf("\n");
        if (c->errors)
            rc = UTC_ERR_INTERNAL;
    }
    if (rc != UTC_OK)
        fprintf(stderr, "rank %d: %s (%s)\n", utc_rank(), utc_status_string(rc), utc_last_error());
    if (results)
        utc_conduit_destroy(results);
    if (jobs)
        utc_conduit_destroy(jobs);
    for (int i = (int)nworkers - 1; i >= 0; i--)
        if (workers[i])
            utc_task_destroy(workers[i]);
    if (coll)
        utc_task_destroy(coll);
    if (disp)
        utc_task_destroy(disp);
    utc_status_t frc = utc_finalize(); /* fails when, say, the UTC_TRACE file was lost */
    if (frc != UTC_OK)
        fprintf(stderr, "utc_finalize: %s\n", utc_last_error());
    return rc == UTC_OK && frc == UTC_OK ? 0 : 1;
}
