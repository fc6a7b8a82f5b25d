/*
 * utc_bench_signal: a token passed round a ring of ranks, hop after hop, with global
 * shared data's signals (utc_gdata_rstore_signal of the token into the next rank's element,
 * utc_gdata_wait_until on one's own) and with conduits (a blocking 8 B utc_conduit_write to
 * the next rank, utc_conduit_read from the previous), taking turns in one run. Each rank
 * has one thread in the ring; with more ranks than cores (3 ranks on 2 cores) the ranks
 * that wait share the cores with the one that holds the token, which is what the figures
 * show.
 *
 *   scripts/utcrun -np N build/apps/microbench/utc_bench_signal [--hops H] [--reps R]
 *                                                                  [--work US] [--json]
 *
 * Each rep times H hops (rounded up to a lap of N) of each method after one lap of warm-up;
 * the figures are the best and the median per-hop time over the reps, in microseconds.
 * With --work US each rank computes (spins) US microseconds with the token before it
 * passes it on, so the others wait that long: the figures are then the time a hop adds to
 * the work (per-hop time - US), which shows how soon a waiter that has gone to sleep
 * wakes.
 * With --json the last line of standard output is one JSON object. Needs 2 ranks or more.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utc/utc.h>

enum { M_SIGNAL, M_CONDUIT, NMETHODS };
static const char *const mnames[NMETHODS] = {"signal", "conduit"};

typedef struct {
    utc_task_t base;
    utc_gdata_t *gd; /* signal ring: element 0 of each rank's part holds the token */
    int64_t next;    /* signal ring: the hop this rank waits for next */
} ring_task_t;

static int nranks, me;
static long hops = 20000;
static double work_us;                     /* --work: spun by the token's holder before each pass */
static double us[NMETHODS];                /* this rep's per-hop time, on rank 0 */
static utc_conduit_t *to_next, *from_prev; /* conduit ring: this rank's two conduits */

/* The holder's work: spin (not sleep) work_us microseconds. */
static void work(void)
{
    if (work_us <= 0)
        return;
    double end = utc_wtime() + work_us * 1e-6;
    while (utc_wtime() < end)
        ;
}

static int fail(const char *what, int rc)
{
    fprintf(stderr, "utc_bench_signal: rank %d: %s: %s: %s\n", me, what, utc_status_string(rc),
            utc_last_error());
    return rc;
}

/* Hops h = 1, 2, ... go to rank h % n: a rank waits for its next hop, then passes hop + 1
 * on. Rank 0 starts each lap; `count` hops in all, a whole number of laps. */
static int signal_laps(ring_task_t *t, long count)
{
    int n = nranks, r = me, rc;
    int64_t end = t->next + count; /* the last hop, which ends the lap at rank 0 */
    if (r == 0 && (rc = utc_gdata_rstore_signal(t->gd, 1 % n, 0, 0, NULL, 0, t->next + 1)))
        return fail("rstore_signal", rc);
    for (int64_t h = t->next + (r == 0 ? n : r); h <= end; h += n) {
        if ((rc = utc_gdata_wait_until(t->gd, 0, UTC_CMP_GE, h, 60.0, NULL)))
            return fail("wait_until", rc);
        if (h == end)
            break; /* rank 0: the last lap has come back */
        work();
        if ((rc = utc_gdata_rstore_signal(t->gd, (r + 1) % n, 0, 0, NULL, 0, h + 1)))
            return fail("rstore_signal", rc);
    }
    t->next += count;
    return 0;
}

static int signal_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx, (void)arg;
    ring_task_t *t = (ring_task_t *)self;
    if (signal_laps(t, nranks)) /* warm-up: every rank is in its loop after a lap */
        return -1;
    double t0 = utc_wtime();
    if (signal_laps(t, hops))
        return -1;
    if (me == 0)
        us[M_SIGNAL] = (utc_wtime() - t0) / (double)hops * 1e6 - work_us;
    return 0;
}

static int signal_init(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    ring_task_t *t = (ring_task_t *)self;
    t->next = 0;
    return utc_gdata_create(ctx, sizeof(int64_t), 8, &t->gd);
}

static int conduit_laps(long count)
{
    int64_t tok = 0;
    int rc;
    size_t got;
    for (long lap = 0; lap < count / nranks; lap++) {
        if (me == 0 && (rc = utc_conduit_write(to_next, &tok, sizeof tok, 0)))
            return fail("conduit write", rc);
        if ((rc = utc_conduit_read(from_prev, &tok, sizeof tok, 0, &got)))
            return fail("conduit read", rc);
        tok++;
        work();
        if (me != 0 && (rc = utc_conduit_write(to_next, &tok, sizeof tok, 0)))
            return fail("conduit write", rc);
    }
    return 0;
}

static int conduit_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    if (conduit_laps(nranks))
        return -1;
    double t0 = utc_wtime();
    if (conduit_laps(hops))
        return -1;
    if (me == 0)
        us[M_CONDUIT] = (utc_wtime() - t0) / (double)hops * 1e6 - work_us;
    return 0;
}

static const utc_task_ops_t signal_ops = {
    .name = "signal_ring", .size = sizeof(ring_task_t), .init = signal_init, .run = signal_run};
static const utc_task_ops_t conduit_ops = {
    .name = "conduit_ring", .size = sizeof(ring_task_t), .run = conduit_run};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int json = 0, reps = 7;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--hops") == 0 && i + 1 < argc && atol(argv[i + 1]) > 0) {
            hops = atol(argv[++i]);
        } else if (strcmp(argv[i], "--work") == 0 && i + 1 < argc && atof(argv[i + 1]) >= 0) {
            work_us = atof(argv[++i]);
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0 &&
                   atoi(argv[i + 1]) <= 100) {
            reps = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: scripts/utcrun -np N utc_bench_signal [--hops H] [--reps R (1..100)] "
                   "[--work US] [--json]\n"
                   "Per-hop time of a token passed round a ring of N >= 2 ranks with\n"
                   "utc_gdata_rstore_signal / utc_gdata_wait_until and with conduits, taking\n"
                   "turns; best and median of R reps of H hops each. --work: the holder\n"
                   "spins US microseconds before passing the token; the figures are then\n"
                   "the time a hop adds to that.\n");
            return 0;
        } else {
            fprintf(stderr, "utc_bench_signal: unknown or incomplete argument '%s' (see --help)\n",
                    argv[i]);
            return 2;
        }
    }
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "utc_bench_signal: utc_init: %s\n", utc_last_error());
        return 1;
    }
    nranks = utc_nranks();
    me = utc_rank();
    if (nranks < 2) {
        if (me == 0)
            fprintf(stderr, "utc_bench_signal: a ring needs 2 ranks or more (scripts/utcrun -np "
                            "3 ...)\n");
        (void)utc_finalize();
        return 2;
    }
    hops = (hops + nranks - 1) / nranks * nranks;

    /* the signal ring: one task, one thread per rank */
    int procs[256];
    if (nranks > 256) {
        fprintf(stderr, "utc_bench_signal: at most 256 ranks\n");
        return 2;
    }
    for (int r = 0; r < nranks; r++)
        procs[r] = r;
    utc_task_t *sig, *ring[256];
    int rc = utc_task_create(&signal_ops, procs, nranks, NULL, &sig);
    if (rc == UTC_OK)
        rc = utc_task_init(sig, NULL);
    /* the conduit ring: task r on rank r, conduit r joins task r and task r+1 */
    for (int r = 0; r < nranks && rc == UTC_OK; r++)
        rc = utc_task_create(&conduit_ops, &procs[r], 1, NULL, &ring[r]);
    utc_conduit_t *c[256];
    for (int r = 0; r < nranks && rc == UTC_OK; r++)
        rc = utc_conduit_create(ring[r], ring[(r + 1) % nranks], NULL, &c[r]);
    if (rc != UTC_OK)
        return fail("setup", rc), 1;
    to_next = c[me];
    from_prev = c[(me + nranks - 1) % nranks];

    double *all = calloc((size_t)reps * NMETHODS, sizeof *all);
    if (!all)
        return fail("calloc", UTC_ERR_NO_MEMORY), 1;
    for (int k = 0; k < reps && rc == UTC_OK; k++) {
        /* taking turns, and which goes first alternates too */
        for (int j = 0; j < NMETHODS && rc == UTC_OK; j++) {
            int m = (j + k) % NMETHODS;
            if (m == M_SIGNAL) {
                rc = utc_task_run(sig, NULL);
                if (rc == UTC_OK)
                    rc = utc_task_wait(sig);
            } else {
                rc = utc_task_run(ring[me], NULL);
                if (rc == UTC_OK)
                    rc = utc_task_wait(ring[me]);
            }
            all[m * reps + k] = us[m];
        }
        if (rc == UTC_OK)
            rc = utc_barrier();
    }
    if (rc != UTC_OK)
        return fail("run", rc), 1;

    if (me == 0) {
        double best[NMETHODS], med[NMETHODS];
        for (int m = 0; m < NMETHODS; m++) {
            qsort(all + m * reps, (size_t)reps, sizeof *all, cmp_double);
            best[m] = all[m * reps];
            med[m] = all[m * reps + reps / 2];
        }
        printf("# token ring of %d ranks, %ld hops per rep, %d reps taking turns: us per hop",
               nranks, hops, reps);
        if (work_us > 0)
            printf(" beyond %.0f us of work", work_us);
        printf("\n");
        printf("%-8s %10s %10s\n", "method", "best", "median");
        for (int m = 0; m < NMETHODS; m++)
            printf("%-8s %10.3f %10.3f\n", mnames[m], best[m], med[m]);
        printf("signal / conduit: best %.2fx, median %.2fx\n", best[M_SIGNAL] / best[M_CONDUIT],
               med[M_SIGNAL] / med[M_CONDUIT]);
        if (json)
            printf("{\"benchmark\":\"utc_bench_signal\",\"nranks\":%d,\"hops\":%ld,\"reps\":%d,"
                   "\"work_us\":%.1f,\"signal_best_us\":%.4f,\"signal_median_us\":%.4f,\"conduit_"
                   "best_us\":%.4f,"
                   "\"conduit_median_us\":%.4f}\n",
                   nranks, hops, reps, work_us, best[M_SIGNAL], med[M_SIGNAL], best[M_CONDUIT],
                   med[M_CONDUIT]);
        fflush(stdout);
    }
    free(all);
    for (int r = 0; r < nranks; r++)
        (void)utc_conduit_destroy(c[r]);
    for (int r = 0; r < nranks; r++)
        (void)utc_task_destroy(ring[r]);
    (void)utc_task_destroy(sig);
    return utc_finalize() == UTC_OK ? 0 : 1;
}
