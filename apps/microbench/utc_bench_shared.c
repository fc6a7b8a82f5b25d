/*
 * utc_bench_shared: shared conduits (utc_conduit_create_shared) beside the two-task
 * conduits one would use instead, in one run:
 *
 *   (a) fan-out to 3 readers: a publish-mode shared conduit against 3 two-task conduits
 *       written one after the other.
 *       - latency: round trip of an 8 B message to all 3 readers (each reader answers on
 *         a two-task conduit of its own, the same for both methods);
 *       - bandwidth: a stream of --bw-size messages, MB/s delivered to each reader.
 *   (b) work sharing among 3 readers, one of them 4x slower per item (it sleeps
 *       4 x --work-us per item, the others --work-us): a share-mode shared conduit (each
 *       item to the first reader that asks) against a static round robin over 3 two-task
 *       conduits; items per second, and how many items each reader took.
 *
 * Both parts run "inproc" (the writer and the readers on rank 0) and, with 2 or more
 * ranks, "across_ranks" (the writer on rank 0, reader i on rank 1 + i % (ranks - 1): every
 * message crosses ranks). The methods take turns rep after rep, so a change in the
 * machine's load touches them alike; each figure is the best of --reps.
 *
 *   scripts/utcrun -np 3 build/apps/microbench/utc_bench_shared [--json] [--reps R]
 *       [--iters N] [--bw-size BYTES] [--bw-iters N] [--items N] [--work-us US]
 *
 * With --json the last line of standard output is one JSON object.
 */
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <utc/utc.h>

#define NREADERS    3
#define SLOW_READER (NREADERS - 1) /* the reader that works 4x longer per item in (b) */
#define SLOWDOWN    4

enum { M_PUBLISH, M_P2P, M_SHARE, M_RR, NMETHODS };
static const char *const mnames[NMETHODS] = {"publish", "p2p", "share", "round_robin"};
enum { K_LAT, K_BW, K_WORK };
enum { C_INPROC, C_RANKS, NCONFIGS };
static const char *const cnames[NCONFIGS] = {"inproc", "across_ranks"};

static int reps = 5, lat_iters = 2000, bw_iters = 50, items = 300;
static size_t bw_size = (size_t)1 << 20;
static double work_us = 1000;

/* The tasks and conduits of one placement. pub, p2p and back live through the run; the
 * conduits of part (b) end with utc_conduit_close, so each rep makes its own (work). */
typedef struct {
    utc_task_t *w, *r[NREADERS];
    utc_conduit_t *pub, *p2p[NREADERS], *back[NREADERS];
    utc_conduit_t *work[NREADERS]; /* share: work[0] alone; round robin: one per reader */
} set_t;

/* What one task's run does. */
typedef struct {
    set_t *set;
    int method, kind, index; /* index: the reader's, -1 for the writer */
    size_t size;
    int n, warm;
    unsigned char *buf;
    double seconds; /* writer of (a): the timed part */
    int taken;      /* reader of (b): items it took */
} job_t;

static int fail(const char *what, int rc)
{
    fprintf(stderr, "utc_bench_shared[%d]: %s: %s: %s\n", utc_rank(), what, utc_status_string(rc),
            utc_last_error());
    return rc;
}

static void sleep_us(double us)
{
    struct timespec ts = {(time_t)(us / 1e6), (long)(fmod(us, 1e6) * 1e3)};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

/* Part (a), the writer: `n` messages to every reader by the job's method; latency waits
 * for every reader's answer after each message, bandwidth once after the stream. */
static int write_batch(job_t *j, int n)
{
    set_t *s = j->set;
    int rc;
    for (int i = 0; i < n; i++) {
        if (j->method == M_PUBLISH) {
            if ((rc = utc_conduit_write(s->pub, j->buf, j->size, 0)))
                return fail("publish write", rc);
        } else {
            for (int r = 0; r < NREADERS; r++)
                if ((rc = utc_conduit_write(s->p2p[r], j->buf, j->size, 0)))
                    return fail("two-task write", rc);
        }
        if (j->kind == K_LAT || i == n - 1)
            for (int r = 0; r < NREADERS; r++)
                if ((rc = utc_conduit_read(s->back[r], NULL, 0, 0, NULL)))
                    return fail("answer read", rc);
    }
    return 0;
}

/* Part (a), a reader: `n` messages, answering as write_batch expects. */
static int read_batch(job_t *j, int n)
{
    set_t *s = j->set;
    utc_conduit_t *c = j->method == M_PUBLISH ? s->pub : s->p2p[j->index];
    int rc;
    for (int i = 0; i < n; i++) {
        if ((rc = utc_conduit_read(c, j->buf, j->size, 0, NULL)))
            return fail("read", rc);
        if ((j->kind == K_LAT || i == n - 1) &&
            (rc = utc_conduit_write(s->back[j->index], NULL, 0, 0)))
            return fail("answer write", rc);
    }
    return 0;
}

/* Part (b): the writer hands out `n` items and closes; a reader takes items until its
 * conduit is closed, working (sleeping) on each. */
static int work_writer(job_t *j)
{
    set_t *s = j->set;
    int rc;
    for (int i = 0; i < j->n; i++) {
        utc_conduit_t *c = j->method == M_SHARE ? s->work[0] : s->work[i % NREADERS];
        if ((rc = utc_conduit_write(c, &i, sizeof i, 0)))
            return fail("work write", rc);
    }
    for (int r = 0; r < (j->method == M_SHARE ? 1 : NREADERS); r++)
        if ((rc = utc_conduit_close(s->work[r])))
            return fail("close", rc);
    return 0;
}

static int work_reader(job_t *j)
{
    utc_conduit_t *c = j->method == M_SHARE ? j->set->work[0] : j->set->work[j->index];
    double us = j->index == SLOW_READER ? SLOWDOWN * work_us : work_us;
    for (;;) {
        int item, rc = utc_conduit_read(c, &item, sizeof item, 0, NULL);
        if (rc == UTC_ERR_CLOSED)
            return 0;
        if (rc)
            return fail("work read", rc);
        sleep_us(us);
        j->taken++;
    }
}

static int bench_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self;
    (void)ctx;
    job_t *j = arg;
    if (j->kind == K_WORK)
        return j->index < 0 ? work_writer(j) : work_reader(j);
    if (j->index >= 0)
        return read_batch(j, j->warm) || read_batch(j, j->n) ? -1 : 0;
    if (write_batch(j, j->warm))
        return -1;
    double t0 = utc_wtime();
    if (write_batch(j, j->n))
        return -1;
    j->seconds = utc_wtime() - t0;
    return 0;
}

typedef struct {
    utc_task_t base;
} bench_task_t;

static const utc_task_ops_t bench_ops = {
    .name = "bench", .size = sizeof(bench_task_t), .run = bench_run};

static unsigned char *bufs[1 + NREADERS];

/* One run of every task of the set on one job kind and method (collective). Returns the
 * writer's seconds (parts a) or the wall time (part b), NaN on ranks without the writer. */
static int run_set(set_t *s, int method, int kind, size_t size, int n, int warm, double *seconds,
                   int *taken)
{
    job_t jobs[1 + NREADERS];
    utc_task_t *tasks[1 + NREADERS] = {s->w, s->r[0], s->r[1], s->r[2]};
    for (int k = 0; k <= NREADERS; k++)
        jobs[k] = (job_t){.set = s,
                          .method = method,
                          .kind = kind,
                          .index = k - 1,
                          .size = size,
                          .n = n,
                          .warm = warm,
                          .buf = bufs[k]};
    int rc;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = utc_wtime();
    for (int k = 0; k <= NREADERS; k++)
        if ((rc = utc_task_run(tasks[k], &jobs[k])))
            return fail("run", rc);
    for (int k = 0; k <= NREADERS; k++)
        if ((rc = utc_task_wait(tasks[k])))
            return fail(mnames[method], rc);
    MPI_Barrier(MPI_COMM_WORLD); /* (b): the last reader anywhere is done */
    double wall = utc_wtime() - t0;
    *seconds = utc_task_is_local(s->w) != 1 ? NAN : kind == K_WORK ? wall : jobs[0].seconds;
    /* how many items each reader took, gathered on the writer's rank (rank 0) */
    int mine[NREADERS] = {0};
    for (int k = 0; k < NREADERS; k++)
        if (utc_task_is_local(s->r[k]) == 1)
            mine[k] = jobs[k + 1].taken;
    MPI_Reduce(mine, taken, NREADERS, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    return 0;
}

static int make_set(set_t *s, int config)
{
    int nranks = utc_nranks(), zero = 0, rc;
    memset(s, 0, sizeof *s);
    if ((rc = utc_task_create(&bench_ops, &zero, 1, NULL, &s->w)))
        return fail("task", rc);
    for (int k = 0; k < NREADERS; k++) {
        int rank = config == C_INPROC ? 0 : 1 + k % (nranks - 1);
        if ((rc = utc_task_create(&bench_ops, &rank, 1, NULL, &s->r[k])))
            return fail("task", rc);
    }
    if ((rc = utc_conduit_create_shared(&s->w, 1, s->r, NREADERS, UTC_SHARED_PUBLISH, NULL,
                                        &s->pub)))
        return fail("publish conduit", rc);
    for (int k = 0; k < NREADERS; k++)
        if ((rc = utc_conduit_create(s->w, s->r[k], NULL, &s->p2p[k])) ||
            (rc = utc_conduit_create(s->r[k], s->w, NULL, &s->back[k])))
            return fail("two-task conduit", rc);
    return 0;
}

/* Part (b)'s conduits for one rep: they end with a close. */
static int make_work(set_t *s, int method)
{
    int rc;
    if (method == M_SHARE) {
        if ((rc = utc_conduit_create_shared(&s->w, 1, s->r, NREADERS, UTC_SHARED_SHARE, NULL,
                                            &s->work[0])))
            return fail("share conduit", rc);
        return 0;
    }
    for (int k = 0; k < NREADERS; k++)
        if ((rc = utc_conduit_create(s->w, s->r[k], NULL, &s->work[k])))
            return fail("round-robin conduit", rc);
    return 0;
}

static void drop_work(set_t *s)
{
    for (int k = 0; k < NREADERS; k++)
        if (s->work[k]) {
            (void)utc_conduit_destroy(s->work[k]);
            s->work[k] = NULL;
        }
}

static void drop_set(set_t *s)
{
    drop_work(s);
    for (int k = NREADERS - 1; k >= 0; k--) {
        (void)utc_conduit_destroy(s->back[k]);
        (void)utc_conduit_destroy(s->p2p[k]);
    }
    (void)utc_conduit_destroy(s->pub);
    for (int k = NREADERS - 1; k >= 0; k--)
        (void)utc_task_destroy(s->r[k]);
    (void)utc_task_destroy(s->w);
}

static const char usage_text[] =
    "usage: utc_bench_shared [--json] [--reps R] [--iters N] [--bw-size BYTES]\n"
    "                        [--bw-iters N] [--items N] [--work-us US] [--help] [--version]\n"
    "Shared conduits beside two-task conduits (run with scripts/utcrun -np 3):\n"
    "  publish to 3 readers vs 3 two-task conduits: 8 B round trip, --bw-size bandwidth;\n"
    "  share mode vs round robin, 3 readers, one 4x slower per item: items per second.\n"
    "  --reps R        best of R runs of each (default 5)\n"
    "  --iters N       round trips of one latency run (default 2000)\n"
    "  --bw-size BYTES message size of the bandwidth runs (default 1048576)\n"
    "  --bw-iters N    messages of one bandwidth run (default 50)\n"
    "  --items N       work items of one sharing run (default 300)\n"
    "  --work-us US    microseconds of work per item of a fast reader (default 1000)\n";

/* A whole decimal number in [lo, hi], or -1 after a message naming the option. */
static long long parse_count(const char *opt, const char *text, long long lo, long long hi)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "utc_bench_shared: %s needs a whole number from %lld to %lld, got '%s'\n",
                opt, lo, hi, text);
        return -1;
    }
    return v;
}

static void json_num(double v)
{
    if (isfinite(v) && v > 0)
        printf("%.4g", v);
    else
        printf("null");
}

int main(int argc, char **argv)
{
    int json = 0;
    static const struct {
        const char *name;
        long long lo, hi;
    } counts[] = {{"--reps", 1, 1000},        {"--iters", 1, 10000000}, {"--bw-size", 1, 1LL << 30},
                  {"--bw-iters", 1, 1000000}, {"--items", 1, 10000000}, {"--work-us", 0, 10000000}};
    long long values[6] = {reps,     lat_iters, (long long)bw_size,
                           bw_iters, items,     (long long)work_us};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--json")) {
            json = 1;
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage_text, stdout);
            return 0;
        }
        if (!strcmp(a, "--version")) {
            printf("utc_bench_shared (UTC) %s\n", utc_version_string());
            return 0;
        }
        int k = 0;
        while (k < 6 && strcmp(a, counts[k].name))
            k++;
        if (k == 6) {
            fprintf(stderr, "utc_bench_shared: unknown argument '%s'\n%s", a, usage_text);
            return 2;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "utc_bench_shared: %s needs a value (see --help)\n", a);
            return 2;
        }
        if ((values[k] = parse_count(a, argv[++i], counts[k].lo, counts[k].hi)) < 0)
            return 2;
    }
    reps = (int)values[0];
    lat_iters = (int)values[1];
    bw_size = (size_t)values[2];
    bw_iters = (int)values[3];
    items = (int)values[4];
    work_us = (double)values[5];

    int rc = utc_init(&argc, &argv);
    if (rc != UTC_OK)
        return fail("utc_init", rc), 1;
    int nranks = utc_nranks(), nconfigs = nranks >= 2 ? 2 : 1;
    for (int k = 0; k <= NREADERS; k++) {
        if (!(bufs[k] = malloc(bw_size)))
            return fail("malloc", UTC_ERR_NO_MEMORY), 1;
        memset(bufs[k], k, bw_size); /* touch the pages before timing */
    }

    /* best figures: [config][method] */
    double lat[NCONFIGS][NMETHODS], bw[NCONFIGS][NMETHODS], rate[NCONFIGS][NMETHODS];
    int taken[NCONFIGS][NMETHODS][NREADERS];
    memset(taken, 0, sizeof taken);
    for (int c = 0; c < NCONFIGS; c++)
        for (int m = 0; m < NMETHODS; m++)
            lat[c][m] = bw[c][m] = rate[c][m] = NAN;

    for (int c = 0; c < nconfigs; c++) {
        set_t s;
        if (make_set(&s, c))
            return 1;
        for (int r = 0; r < reps; r++) {
            int warm = r == 0;
            for (int m = M_PUBLISH; m <= M_P2P; m++) {
                double t;
                int tk[NREADERS];
                if (run_set(&s, m, K_LAT, 8, lat_iters, warm ? lat_iters / 10 + 2 : 0, &t, tk))
                    return 1;
                double us = t / lat_iters * 1e6;
                if (!isnan(us) && (isnan(lat[c][m]) || us < lat[c][m]))
                    lat[c][m] = us;
                if (run_set(&s, m, K_BW, bw_size, bw_iters, warm ? bw_iters / 10 + 2 : 0, &t, tk))
                    return 1;
                double mbps = (double)bw_size * bw_iters / t / 1e6;
                if (!isnan(mbps) && (isnan(bw[c][m]) || mbps > bw[c][m]))
                    bw[c][m] = mbps;
            }
            for (int m = M_SHARE; m <= M_RR; m++) {
                double t;
                int tk[NREADERS];
                if (make_work(&s, m) || run_set(&s, m, K_WORK, 0, items, 0, &t, tk))
                    return 1;
                drop_work(&s);
                double per_s = items / t;
                if (!isnan(per_s) && (isnan(rate[c][m]) || per_s > rate[c][m])) {
                    rate[c][m] = per_s;
                    memcpy(taken[c][m], tk, sizeof tk);
                }
            }
        }
        drop_set(&s);
    }

    if (utc_rank() == 0) {
        printf("utc_bench_shared: %d rank(s), best of %d runs; (a) %d round trips of 8 B, "
               "%d messages of %zu B; (b) %d items, %.0f us per item (reader %d: %d x)\n",
               nranks, reps, lat_iters, bw_iters, bw_size, items, work_us, SLOW_READER, SLOWDOWN);
        for (int c = 0; c < nconfigs; c++) {
            printf("%s:\n", cnames[c]);
            printf("  (a) 8 B round trip to 3 readers: publish %8.2f us   3 two-task %8.2f us\n",
                   lat[c][M_PUBLISH], lat[c][M_P2P]);
            printf("  (a) %zu B to each of 3 readers: publish %8.1f MB/s 3 two-task %8.1f MB/s\n",
                   bw_size, bw[c][M_PUBLISH], bw[c][M_P2P]);
            printf("  (b) items/s: share %8.1f (taken %d/%d/%d)   round robin %8.1f "
                   "(taken %d/%d/%d)\n",
                   rate[c][M_SHARE], taken[c][M_SHARE][0], taken[c][M_SHARE][1],
                   taken[c][M_SHARE][2], rate[c][M_RR], taken[c][M_RR][0], taken[c][M_RR][1],
                   taken[c][M_RR][2]);
        }
        if (json) {
            printf("{\"bench\":\"shared\",\"ranks\":%d,\"reps\":%d,\"bw_size\":%zu,\"items\":%d,"
                   "\"work_us\":%.0f",
                   nranks, reps, bw_size, items, work_us);
            for (int c = 0; c < nconfigs; c++) {
                printf(",\"%s\":{", cnames[c]);
                for (int m = M_PUBLISH; m <= M_P2P; m++) {
                    printf("%s\"%s_lat_us\":", m ? "," : "", mnames[m]);
                    json_num(lat[c][m]);
                    printf(",\"%s_bw_MBps\":", mnames[m]);
                    json_num(bw[c][m]);
                }
                for (int m = M_SHARE; m <= M_RR; m++) {
                    printf(",\"%s_items_per_s\":", mnames[m]);
                    json_num(rate[c][m]);
                    printf(",\"%s_taken\":[%d,%d,%d]", mnames[m], taken[c][m][0], taken[c][m][1],
                           taken[c][m][2]);
                }
                printf(",\"share_over_round_robin\":");
                json_num(rate[c][M_SHARE] / rate[c][M_RR]);
                printf("}");
            }
            printf("}\n");
        }
        fflush(stdout);
    }
    for (int k = 0; k <= NREADERS; k++)
        free(bufs[k]);
    return utc_finalize() == UTC_OK ? 0 : 1;
}
