/*
 * utc_bench_conduit: ping-pong one-way latency and bandwidth of conduits, 1 B to 64 MiB,
 * beside raw MPI_Send/MPI_Recv between the same two ranks, in one run:
 *
 *   - inproc:      an in-process conduit between two tasks on rank 0
 *   - owned:       ownership passing (utc_conduit_write_owned / read_owned) in-process
 *   - mpi_conduit: a conduit between a task on rank 0 and one on rank 1
 *   - raw_mpi:     MPI_Send / MPI_Recv between the main threads of ranks 0 and 1
 *
 * Each figure is the best of --reps timed runs of n round trips (n from 5000 for small
 * messages down to 4 for 64 MiB, after a warm-up); one-way latency = time / (2 n). For
 * each size the methods take turns run after run, so load changes touch them alike. Run with 2 ranks (with 1 rank the MPI figures are null):
 *
 *   scripts/utcrun -np 2 build/apps/microbench/utc_bench_conduit [--json] [--threads N]
 *                  [--max-size BYTES] [--reps R] [--iters N] [--bind none|core]
 *
 * --iters caps the round trips of one timed run (default 5000); on a loaded machine many
 * short runs (--reps 20 --iters 500) find the quiet moments better than a few long ones.
 *
 * With --json the last line of standard output is one JSON object.
 */
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utc/utc.h>

#define NSIZES 11
static const size_t sizes[NSIZES] = {1,           8,         64,        512,
                                     4096,        32768,     262144,    (size_t)1 << 20,
                                     (size_t)4 << 20, (size_t)16 << 20, (size_t)64 << 20};
static const char *const labels[NSIZES] = {"1B",     "8B",   "64B",  "512B",  "4KiB", "32KiB",
                                           "256KiB", "1MiB", "4MiB", "16MiB", "64MiB"};

enum { M_INPROC, M_OWNED, M_MPI, M_RAW, NMETHODS };
static const char *const mnames[NMETHODS] = {"inproc", "owned", "mpi_conduit", "raw_mpi"};

static int reps = 5;
static utc_bind_mode_t bind = UTC_BIND_NONE;
static int max_iters = 5000;
static size_t max_size = (size_t)64 << 20;

/* Round trips per timed run: fewer for large sizes, so every size takes similar time. */
static int iters_for(size_t size)
{
    size_t it = ((size_t)128 << 20) / size;
    if (it > (size_t)max_iters)
        it = (size_t)max_iters;
    if (it < 4)
        it = 4;
    return (int)it;
}

typedef struct {
    utc_conduit_t *c;
    int method;
    int pinger;              /* 1: times the round trips */
    int size;                /* index in sizes */
    int warm;                /* 1: warm up before timing */
    unsigned char *buf;      /* shared by the task's threads on this rank */
    void *obuf;              /* owned method: the buffer going back and forth */
    double us;               /* one-way microseconds of this run (pinger) */
} pp_t;

static int fail(const char *what, int rc)
{
    fprintf(stderr, "utc_bench_conduit: %s: %s: %s\n", what, utc_status_string(rc),
            utc_last_error());
    return rc;
}

/* One round trip of `size` bytes. */
static int round_trip(pp_t *p, size_t size)
{
    int rc;
    size_t got;
    if (p->method == M_OWNED) {
        if (p->pinger) {
            if ((rc = utc_conduit_write_owned(p->c, p->obuf, size, 0)) ||
                (rc = utc_conduit_read_owned(p->c, 1, &p->obuf, &got)))
                return fail("owned ping", rc);
        } else {
            if ((rc = utc_conduit_read_owned(p->c, 0, &p->obuf, &got)) ||
                (rc = utc_conduit_write_owned(p->c, p->obuf, got, 1)))
                return fail("owned pong", rc);
        }
        return 0;
    }
    if (p->pinger) {
        if ((rc = utc_conduit_write(p->c, p->buf, size, 0)) ||
            (rc = utc_conduit_read(p->c, p->buf, size, 1, &got)))
            return fail("ping", rc);
    } else {
        if ((rc = utc_conduit_read(p->c, p->buf, size, 0, &got)) ||
            (rc = utc_conduit_write(p->c, p->buf, size, 1)))
            return fail("pong", rc);
    }
    return 0;
}

/* One timed run of n round trips of one size (after a warm-up if asked). */
static int pp_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self;
    pp_t *p = arg;
    size_t size = sizes[p->size];
    int n = iters_for(size);
    for (int i = 0; p->warm && i < n / 10 + 2; i++)
        if (round_trip(p, size))
            return -1;
    double t0 = utc_wtime();
    for (int i = 0; i < n; i++)
        if (round_trip(p, size))
            return -1;
    if (ctx->local_id == 0)
        p->us = (utc_wtime() - t0) / (2.0 * n) * 1e6;
    return 0;
}

typedef struct {
    utc_task_t base;
} bench_task_t;

static const utc_task_ops_t ping_ops = {.name = "ping", .size = sizeof(bench_task_t), .run = pp_run};
static const utc_task_ops_t pong_ops = {.name = "pong", .size = sizeof(bench_task_t), .run = pp_run};

static unsigned char *bufa, *bufb;
static void *owned_buf; /* the pinger's owned buffer between runs */

/* One timed run of one method and size on a pair of tasks; returns the pinger's figure
 * (NaN on ranks without the pinger). Collective. */
static int run_pair(utc_task_t *a, utc_task_t *b, utc_conduit_t *c, int method, int s, int warm,
                    double *us)
{
    pp_t pa = {.c = c, .method = method, .pinger = 1, .size = s, .warm = warm, .buf = bufa,
               .obuf = owned_buf};
    pp_t pb = {.c = c, .method = method, .pinger = 0, .size = s, .warm = warm, .buf = bufb};
    int rc;
    if ((rc = utc_task_run(a, &pa)) || (rc = utc_task_run(b, &pb)) || (rc = utc_task_wait(a)) ||
        (rc = utc_task_wait(b)))
        return fail(mnames[method], rc);
    *us = utc_task_is_local(a) == 1 ? pa.us : NAN;
    if (method == M_OWNED)
        owned_buf = pa.obuf;
    return utc_barrier(); /* idle ranks sleep here, not in the next MPI call */
}

/* One timed run of raw MPI ping-pong between the main threads of ranks 0 and 1. */
static double raw_mpi(MPI_Comm comm, int s, int warm)
{
    int me;
    MPI_Comm_rank(comm, &me);
    int n = iters_for(sizes[s]), cnt = (int)sizes[s];
    double us = NAN;
    for (int phase = warm ? 0 : 1; phase < 2 && me < 2; phase++) {
        int iters = phase == 0 ? n / 10 + 2 : n;
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            if (me == 0) {
                MPI_Send(bufa, cnt, MPI_BYTE, 1, 0, comm);
                MPI_Recv(bufa, cnt, MPI_BYTE, 1, 1, comm, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(bufa, cnt, MPI_BYTE, 0, 0, comm, MPI_STATUS_IGNORE);
                MPI_Send(bufa, cnt, MPI_BYTE, 0, 1, comm);
            }
        }
        us = (MPI_Wtime() - t0) / (2.0 * iters) * 1e6;
    }
    MPI_Barrier(comm);
    return us;
}

static void json_num(double v)
{
    if (isfinite(v) && v > 0)
        printf("%.4g", v);
    else
        printf("null");
}

static const char usage_text[] =
    "usage: utc_bench_conduit [--json] [--threads N] [--reps R] [--iters N] [--bind none|core]\n"
    "                         [--max-size BYTES] [--help] [--version]\n"
    "Ping-pong one-way latency and bandwidth, 1 B to 64 MiB: in-process conduit, owned\n"
    "buffers, MPI conduit and raw MPI_Send/MPI_Recv (run with scripts/utcrun -np 2).\n";

/* A whole decimal number in [lo, hi], or -1 after a message naming the option. */
static long long parse_count(const char *opt, const char *text, long long lo, long long hi)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "utc_bench_conduit: %s needs a whole number from %lld to %lld, got '%s'\n",
                opt, lo, hi, text);
        return -1;
    }
    return v;
}

int main(int argc, char **argv)
{
    int json = 0, threads = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long long v = 0;
        if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage_text, stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            printf("utc_bench_conduit (UTC) %s\n", utc_version_string());
            return 0;
        } else if (i + 1 >= argc && (!strcmp(a, "--threads") || !strcmp(a, "--reps") ||
                                     !strcmp(a, "--iters") || !strcmp(a, "--bind") ||
                                     !strcmp(a, "--max-size"))) {
            fprintf(stderr, "utc_bench_conduit: %s needs a value (see --help)\n", a);
            return 2;
        } else if (!strcmp(a, "--threads")) {
            if ((v = parse_count(a, argv[++i], 1, 64)) < 0)
                return 2;
            threads = (int)v;
        } else if (!strcmp(a, "--reps")) {
            if ((v = parse_count(a, argv[++i], 1, 100000)) < 0)
                return 2;
            reps = (int)v;
        } else if (!strcmp(a, "--iters")) {
            if ((v = parse_count(a, argv[++i], 4, 100000000)) < 0)
                return 2;
            max_iters = (int)v;
        } else if (!strcmp(a, "--max-size")) {
            if ((v = parse_count(a, argv[++i], 1, (long long)1 << 40)) < 0)
                return 2;
            max_size = (size_t)v;
        } else if (!strcmp(a, "--bind")) {
            i++;
            if (!strcmp(argv[i], "core"))
                bind = UTC_BIND_CORE;
            else if (strcmp(argv[i], "none")) {
                fprintf(stderr, "utc_bench_conduit: --bind takes none or core, got '%s'\n", argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "utc_bench_conduit: unknown argument '%s'\n%s", a, usage_text);
            return 2;
        }
    }
    int rc = utc_init(&argc, &argv);
    if (rc != UTC_OK)
        return fail("utc_init", rc), 1;
    int me = utc_rank(), nranks = utc_nranks();
    double lat[NMETHODS][NSIZES];
    for (int m = 0; m < NMETHODS; m++)
        for (int s = 0; s < NSIZES; s++)
            lat[m][s] = NAN;

    bufa = malloc(max_size);
    bufb = malloc(max_size);
    if (!bufa || !bufb || !(owned_buf = utc_buf_alloc(max_size)))
        return fail("malloc", UTC_ERR_NO_MEMORY), 1;
    memset(bufa, 1, max_size); /* touch the pages before timing */
    memset(bufb, 2, max_size);
    memset(owned_buf, 3, max_size);

    int procs[64], procs1[64];
    for (int i = 0; i < threads; i++) {
        procs[i] = 0;
        procs1[i] = 1;
    }
    utc_task_t *a, *b, *c = NULL, *d = NULL;
    utc_conduit_t *ab, *cd = NULL;
    MPI_Comm comm = MPI_COMM_NULL;
    /* --bind core: each rank's cursor spreads the threads, so ping and pong sit on
     * different cores */
    utc_task_options_t topts = UTC_TASK_OPTIONS_INIT;
    topts.bind = bind;
    if ((rc = utc_task_create(&ping_ops, procs, threads, &topts, &a)) ||
        (rc = utc_task_create(&pong_ops, procs, threads, &topts, &b)) ||
        (rc = utc_conduit_create(a, b, NULL, &ab)))
        return fail("setup", rc), 1;
    if (nranks >= 2) {
        if ((rc = utc_task_create(&ping_ops, procs, threads, &topts, &c)) ||
            (rc = utc_task_create(&pong_ops, procs1, threads, &topts, &d)) ||
            (rc = utc_conduit_create(c, d, NULL, &cd)))
            return fail("setup", rc), 1;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    }

    /* For each size, the methods take turns, rep after rep, so a change in the machine's
     * load touches them all alike; each figure is the best of its reps. */
    for (int s = 0; s < NSIZES && sizes[s] <= max_size; s++) {
        for (int r = 0; r < reps; r++) {
            double us[NMETHODS] = {NAN, NAN, NAN, NAN};
            if (run_pair(a, b, ab, M_INPROC, s, r == 0, &us[M_INPROC]) ||
                run_pair(a, b, ab, M_OWNED, s, r == 0, &us[M_OWNED]))
                return 1;
            if (cd) {
                if (run_pair(c, d, cd, M_MPI, s, r == 0, &us[M_MPI]))
                    return 1;
                us[M_RAW] = raw_mpi(comm, s, r == 0);
            }
            for (int m = 0; m < NMETHODS; m++)
                if (!isnan(us[m]) && (isnan(lat[m][s]) || us[m] < lat[m][s]))
                    lat[m][s] = us[m];
        }
    }

    if (me == 0) {
        printf("utc_bench_conduit: %d rank(s), %d thread(s) per task, best of %d runs of up to "
               "%d round trips, binding %s\n", nranks, threads, reps, max_iters,
               bind == UTC_BIND_CORE ? "core" : "none");
        printf("one-way latency in us (bandwidth in MB/s)\n%8s", "size");
        for (int m = 0; m < NMETHODS; m++)
            printf("  %22s", mnames[m]);
        printf("\n");
        for (int s = 0; s < NSIZES && sizes[s] <= max_size; s++) {
            printf("%8s", labels[s]);
            for (int m = 0; m < NMETHODS; m++) {
                if (isnan(lat[m][s]))
                    printf("  %22s", "-");
                else
                    printf("  %10.2f (%9.1f)", lat[m][s], (double)sizes[s] / lat[m][s]);
            }
            printf("\n");
        }
        if (json) {
            printf("{\"bench\":\"conduit\",\"ranks\":%d,\"threads\":%d,\"reps\":%d,\"iters\":%d,\"bind\":\"%s\"",
                   nranks, threads, reps, max_iters, bind == UTC_BIND_CORE ? "core" : "none");
            for (int m = 0; m < NMETHODS; m++)
                for (int s = 0; s < NSIZES; s++) {
                    printf(",\"%s_lat_us_%s\":", mnames[m], labels[s]);
                    json_num(lat[m][s]);
                    printf(",\"%s_bw_MBps_%s\":", mnames[m], labels[s]);
                    json_num((double)sizes[s] / lat[m][s]);
                }
            /* the targets, as ratios against raw MPI from this same run */
            printf(",\"inproc_over_raw_8B\":");
            json_num(lat[M_INPROC][1] / lat[M_RAW][1]);
            printf(",\"mpi_conduit_over_raw_8B\":");
            json_num(lat[M_MPI][1] / lat[M_RAW][1]);
            printf(",\"mpi_conduit_over_raw_4MiB\":");
            json_num(lat[M_MPI][8] / lat[M_RAW][8]);
            printf(",\"raw_over_owned_16MiB\":");
            json_num(lat[M_RAW][9] / lat[M_OWNED][9]);
            printf("}\n");
        }
        fflush(stdout);
    }
    if (cd) {
        MPI_Comm_free(&comm);
        utc_conduit_destroy(cd);
        utc_task_destroy(c);
        utc_task_destroy(d);
    }
    utc_conduit_destroy(ab);
    utc_task_destroy(a);
    utc_task_destroy(b);
    utc_buf_free(owned_buf);
    free(bufa);
    free(bufb);
    return utc_finalize() == UTC_OK ? 0 : 1;
}
