/*
 * utc_bench_coll: latency of an 8-byte utc_task_allreduce (one double, sum) over a task of
 * one thread per rank, beside a raw MPI_Allreduce on a communicator of the same ranks, in
 * the same run. Prints the best and the median over reps of the mean per call. Run it
 * with UTC_CHECK=0 and without, taking turns, to see what the cross-rank argument check
 * of the task collectives costs (doc/PERFORMANCE.md).
 *
 *   scripts/utcrun -np 2 utc_bench_coll [--iters N] [--reps R]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utc/utc.h>

#define MAX_REPS 64

static struct {
    int iters, reps;
    double utc_us[MAX_REPS], raw_us[MAX_REPS];
    int failed;
} B = {.iters = 20000, .reps = 7};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int bench_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)arg;
    MPI_Comm raw;
    if (MPI_Comm_dup(MPI_COMM_WORLD, &raw) != MPI_SUCCESS)
        return UTC_ERR_MPI;
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
        else {
            fprintf(stderr, "usage: scripts/utcrun -np 2 utc_bench_coll [--iters N] "
                            "[--reps R (1..%d)]\n", MAX_REPS);
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
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
    if (rc == UTC_OK && utc_rank() == 0) {
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
