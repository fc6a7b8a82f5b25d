/*
 * utc_bench_coll: task collectives over a task of one thread per rank, beside raw MPI on a
 * communicator of the same ranks, taking turns in the same run. Prints the best and the
 * median over reps of the mean per call. Run it with UTC_CHECK=0 and without, taking
 * turns, to see what the cross-rank argument check of the task collectives costs
 * (doc/PERFORMANCE.md).
 *
 * Default: an 8-byte utc_task_allreduce (one double, sum) beside MPI_Allreduce.
 * --alltoall: utc_task_alltoallv and utc_task_alltoall beside MPI_Alltoallv, from MIN to
 * MAX bytes per pair of ranks (1 KiB to 4 MiB), each size's calls taking turns per rep.
 *
 *   scripts/utcrun -np 2 utc_bench_coll [--iters N] [--reps R]
 *   scripts/utcrun -np 3 utc_bench_coll --alltoall [--reps R] [--min BYTES] [--max BYTES]
 */
#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utc/utc.h>

#define MAX_REPS  64
#define MAX_SIZES 32

/* One size of the all-to-all run: each call's mean per call in each rep, microseconds. */
typedef struct {
    size_t bytes; /* per pair of ranks */
    double utcv[MAX_REPS], utc[MAX_REPS], mpiv[MAX_REPS];
} a2a_size_t;

static struct {
    int iters, reps;
    double utc_us[MAX_REPS], raw_us[MAX_REPS];
    int failed;
    int alltoall; /* the --alltoall run */
    size_t min, max;
    int nsizes;
    a2a_size_t sizes[MAX_SIZES];
} B = {.iters = 20000, .reps = 7, .min = 1024, .max = 4 << 20};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Calls per timed turn at `bytes` per pair: about 16 MiB moved per rank, 4 .. 2000. */
static int a2a_iters(size_t bytes, int n)
{
    size_t per_call = bytes * (size_t)n, iters = ((size_t)16 << 20) / per_call;
    return iters < 4 ? 4 : iters > 2000 ? 2000 : (int)iters;
}

/* Fill block j of this rank's send buffer with a pattern; check what came from rank i. */
static void a2a_fill(unsigned char *buf, size_t bytes, int n, int me)
{
    for (int j = 0; j < n; j++)
        memset(buf + (size_t)j * bytes, (me * 16 + j) & 0xff, bytes);
}

static int a2a_bad(const unsigned char *buf, size_t bytes, int n, int me)
{
    for (int i = 0; i < n; i++)
        if (bytes && (buf[(size_t)i * bytes] != ((i * 16 + me) & 0xff) ||
                      buf[(size_t)i * bytes + bytes - 1] != ((i * 16 + me) & 0xff)))
            return 1;
    return 0;
}

static double a2a_turn_utc(utc_ctx_t *ctx, MPI_Comm raw, bool v, const void *send, void *recv,
                           size_t bytes, const size_t *counts, int iters)
{
    MPI_Barrier(raw);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        int rc = v ? utc_task_alltoallv(ctx, send, counts, NULL, recv, counts, NULL, UTC_TYPE_BYTE)
                   : utc_task_alltoall(ctx, send, recv, bytes, UTC_TYPE_BYTE);
        if (rc != UTC_OK) {
            fprintf(stderr, "utc_task_alltoall%s: %s\n", v ? "v" : "", utc_last_error());
            B.failed = 1;
            return -1;
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / iters;
}

static double a2a_turn_mpi(MPI_Comm raw, const void *send, void *recv, const int *counts,
                           const int *displs, int iters)
{
    MPI_Barrier(raw);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Alltoallv(send, counts, displs, MPI_BYTE, recv, counts, displs, MPI_BYTE, raw);
    return (MPI_Wtime() - t0) * 1e6 / iters;
}

/* The --alltoall run: every size, reps rounds, the three calls taking turns in each. */
static int bench_alltoall(utc_ctx_t *ctx, MPI_Comm raw)
{
    int n = ctx->group_size, me = ctx->group_rank;
    unsigned char *send = malloc(B.max * (size_t)n), *recv = malloc(B.max * (size_t)n);
    size_t *counts = malloc(sizeof *counts * (size_t)n);
    int *icounts = malloc(sizeof *icounts * (size_t)n),
        *idispls = malloc(sizeof *idispls * (size_t)n);
    if (!send || !recv || !counts || !icounts || !idispls) {
        fprintf(stderr, "utc_bench_coll: out of memory for %zu bytes per pair\n", B.max);
        B.failed = 1;
        goto out;
    }
    for (int k = 0; k < B.nsizes && !B.failed; k++) {
        a2a_size_t *z = &B.sizes[k];
        for (int j = 0; j < n; j++) {
            counts[j] = z->bytes;
            icounts[j] = (int)z->bytes;
            idispls[j] = (int)(z->bytes * (size_t)j);
        }
        a2a_fill(send, z->bytes, n, me);
        int iters = a2a_iters(z->bytes, n);
        for (int rep = 0; rep < B.reps && !B.failed; rep++) {
            memset(recv, 0, z->bytes * (size_t)n);
            z->mpiv[rep] = a2a_turn_mpi(raw, send, recv, icounts, idispls, iters);
            B.failed |= a2a_bad(recv, z->bytes, n, me);
            memset(recv, 0, z->bytes * (size_t)n);
            z->utcv[rep] = a2a_turn_utc(ctx, raw, true, send, recv, z->bytes, counts, iters);
            B.failed |= a2a_bad(recv, z->bytes, n, me);
            memset(recv, 0, z->bytes * (size_t)n);
            z->utc[rep] = a2a_turn_utc(ctx, raw, false, send, recv, z->bytes, counts, iters);
            B.failed |= a2a_bad(recv, z->bytes, n, me);
        }
        if (B.failed)
            fprintf(stderr, "utc_bench_coll: wrong data or a failed call at %zu bytes\n", z->bytes);
    }
out:
    free(send), free(recv), free(counts), free(icounts), free(idispls);
    return B.failed ? UTC_ERR_INTERNAL : 0;
}

static void a2a_print(int n)
{
    const char *chk = getenv("UTC_CHECK");
    char load[64] = "?";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (!fgets(load, sizeof load, f))
            snprintf(load, sizeof load, "?");
        load[strcspn(load, "\n")] = '\0';
        fclose(f);
    }
    printf("ranks %d, UTC_CHECK=%s, %d reps, load %s: all-to-all, us per call (best / "
           "median)\n",
           n, chk ? chk : "(unset: on)", B.reps, load);
    printf("%10s %6s  %21s  %21s  %21s  %9s\n", "bytes/pair", "iters", "utc_task_alltoallv",
           "utc_task_alltoall", "MPI_Alltoallv", "v/MPI best");
    for (int k = 0; k < B.nsizes; k++) {
        a2a_size_t *z = &B.sizes[k];
        qsort(z->utcv, (size_t)B.reps, sizeof(double), cmp_double);
        qsort(z->utc, (size_t)B.reps, sizeof(double), cmp_double);
        qsort(z->mpiv, (size_t)B.reps, sizeof(double), cmp_double);
        int m = B.reps / 2;
        printf("%10zu %6d  %10.2f / %8.2f  %10.2f / %8.2f  %10.2f / %8.2f  %9.2f\n", z->bytes,
               a2a_iters(z->bytes, n), z->utcv[0], z->utcv[m], z->utc[0], z->utc[m], z->mpiv[0],
               z->mpiv[m], z->utcv[0] / z->mpiv[0]);
    }
}

static int bench_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)arg;
    MPI_Comm raw;
    if (MPI_Comm_dup(MPI_COMM_WORLD, &raw) != MPI_SUCCESS)
        return UTC_ERR_MPI;
    if (B.alltoall) {
        int rc = bench_alltoall(ctx, raw);
        MPI_Comm_free(&raw);
        return rc;
    }
    double in = ctx->world_rank + 1.0, out = 0;
    for (int rep = 0; rep < B.reps; rep++) {
        /* alternate the two within each rep, so drifts of the machine's load hit both */
        MPI_Barrier(raw);
        double t0 = MPI_Wtime();
        for (int i = 0; i < B.iters; i++)
            if (utc_task_allreduce(ctx, &in, &out, 1, UTC_TYPE_DOUBLE, UTC_OP_SUM) != UTC_OK) {
                fprintf(stderr, "utc_task_allreduce: %s\n", utc_last_error());
                B.failed = 1;
                MPI_Comm_free(&raw);
                return UTC_ERR_INTERNAL;
            }
        B.utc_us[rep] = (MPI_Wtime() - t0) * 1e6 / B.iters;
        MPI_Barrier(raw);
        t0 = MPI_Wtime();
        for (int i = 0; i < B.iters; i++)
            MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, raw);
        B.raw_us[rep] = (MPI_Wtime() - t0) * 1e6 / B.iters;
    }
    MPI_Comm_free(&raw);
    return 0;
}

static const utc_task_ops_t bench_ops = {
    .name = "bench-coll", .size = sizeof(utc_task_t), .run = bench_run};

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0)
            B.iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0 &&
                 atoi(argv[i + 1]) <= MAX_REPS)
            B.reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--alltoall") == 0)
            B.alltoall = 1;
        else if ((strcmp(argv[i], "--min") == 0 || strcmp(argv[i], "--max") == 0) && i + 1 < argc &&
                 atol(argv[i + 1]) > 0 && atol(argv[i + 1]) <= INT_MAX / 64)
            *(argv[i][3] == 'i' ? &B.min : &B.max) = (size_t)atol(argv[i + 1]), i++;
        else {
            fprintf(stderr,
                    "usage: scripts/utcrun -np 2 utc_bench_coll [--iters N] "
                    "[--reps R (1..%d)] [--alltoall [--min BYTES] [--max BYTES]]\n",
                    MAX_REPS);
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    if (B.min > B.max) {
        fprintf(stderr, "utc_bench_coll: --min %zu is above --max %zu\n", B.min, B.max);
        return 2;
    }
    for (size_t b = B.min; b <= B.max && B.nsizes < MAX_SIZES; b *= 4)
        B.sizes[B.nsizes++].bytes = b;
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "utc_init: %s\n", utc_last_error());
        return 1;
    }
    int n = utc_nranks(), procs[64];
    if (n > 64) {
        fprintf(stderr, "utc_bench_coll: at most 64 ranks\n");
        utc_finalize();
        return 2;
    }
    for (int r = 0; r < n; r++)
        procs[r] = r;
    utc_task_t *t = NULL;
    int rc = utc_task_create(&bench_ops, procs, n, NULL, &t);
    if (rc == UTC_OK && (rc = utc_task_run(t, NULL)) == UTC_OK)
        rc = utc_task_wait(t);
    if (rc != UTC_OK)
        fprintf(stderr, "utc_bench_coll: %s\n", utc_last_error());
    if (t)
        (void)utc_task_destroy(t);
    if (rc == UTC_OK && utc_rank() == 0 && B.alltoall)
        a2a_print(n);
    else if (rc == UTC_OK && utc_rank() == 0) {
        qsort(B.utc_us, (size_t)B.reps, sizeof(double), cmp_double);
        qsort(B.raw_us, (size_t)B.reps, sizeof(double), cmp_double);
        const char *chk = getenv("UTC_CHECK");
        printf("ranks %d, UTC_CHECK=%s, %d calls x %d reps: 8 B allreduce, us per call\n", n,
               chk ? chk : "(unset: on)", B.iters, B.reps);
        printf("  utc_task_allreduce  best %.3f  median %.3f\n", B.utc_us[0],
               B.utc_us[B.reps / 2]);
        printf("  MPI_Allreduce       best %.3f  median %.3f\n", B.raw_us[0],
               B.raw_us[B.reps / 2]);
    }
    utc_finalize();
    return rc == UTC_OK && !B.failed ? 0 : 1;
}
