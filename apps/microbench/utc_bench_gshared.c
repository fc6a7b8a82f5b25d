/*
 * utc_bench_gshared: latency of global shared data's remote load (utc_gdata_rload_block)
 * and remote store + quiet (utc_gdata_rstore_block + utc_gdata_quiet), 8 B to 1 MiB,
 * beside raw MPI_Get / MPI_Put + MPI_Win_flush on a window from MPI_Win_allocate, and on
 * one from MPI_Win_allocate_shared (the flavour UTC picks when a task's ranks share a
 * node), all in the same run. Rank 0's thread reads from and writes to rank 1.
 *
 *   scripts/utcrun -np 2 utc_bench_gshared [--reps R] [--max BYTES] [--iters N] [--json]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utc/utc.h>

#define MAX_BYTES ((size_t)1 << 20)
#define NSIZES    8
static const size_t sizes[NSIZES] = {8, 64, 512, 4096, 32768, 65536, 262144, 1048576};

enum { M_RLOAD, M_RAW_GET, M_SHM_GET, M_RSTORE, M_RAW_PUT, M_SHM_PUT, NMETHODS };
static const char *const method_key[NMETHODS] = {"rload",  "raw_get", "raw_get_shared",
                                                 "rstore", "raw_put", "raw_put_shared"};

typedef struct {
    utc_task_t base;
} bench_task_t;

static struct {
    MPI_Win raw, shm; /* shm is MPI_WIN_NULL where the shared flavour is not available */
    int target;
    int reps;
    size_t max; /* largest size measured */
    int iters;  /* operations per sample; 0: by size */
    double us[NMETHODS][NSIZES];
    int failed;
} B;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int iters_for(size_t bytes)
{
    if (B.iters > 0)
        return B.iters;
    size_t it = ((size_t)32 << 20) / bytes; /* ~32 MiB moved per sample */
    return (int)(it < 100 ? 100 : it > 5000 ? 5000 : it);
}

/* One sample: microseconds per operation of `method` over `it` operations. */
static double sample(int method, utc_gdata_t *gd, char *buf, size_t bytes, int it)
{
    int q = B.target, n = (int)bytes, rc = 0;
    double t0 = MPI_Wtime();
    for (int i = 0; i < it; i++) {
        switch (method) {
        case M_RLOAD:
            rc |= utc_gdata_rload_block(gd, q, 0, bytes, buf);
            break;
        case M_RSTORE:
            rc |= utc_gdata_rstore_block(gd, q, 0, bytes, buf);
            rc |= utc_gdata_quiet(gd);
            break;
        case M_RAW_GET:
        case M_SHM_GET: {
            MPI_Win w = method == M_RAW_GET ? B.raw : B.shm;
            rc |= MPI_Get(buf, n, MPI_BYTE, q, 0, n, MPI_BYTE, w);
            rc |= MPI_Win_flush(q, w);
            break;
        }
        case M_RAW_PUT:
        case M_SHM_PUT: {
            MPI_Win w = method == M_RAW_PUT ? B.raw : B.shm;
            rc |= MPI_Put(buf, n, MPI_BYTE, q, 0, n, MPI_BYTE, w);
            rc |= MPI_Win_flush(q, w);
            break;
        }
        }
    }
    double us = (MPI_Wtime() - t0) / it * 1e6;
    if (rc) {
        fprintf(stderr, "utc_bench_gshared: method %s failed: %s\n", method_key[method],
                utc_last_error());
        B.failed = 1;
    }
    return us;
}

static int bench_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)arg;
    utc_gdata_t *gd = NULL;
    utc_status_t rc = utc_gdata_create(ctx, 1, MAX_BYTES, &gd);
    if (rc != UTC_OK) {
        fprintf(stderr, "utc_bench_gshared: utc_gdata_create: %s\n", utc_last_error());
        return rc;
    }
    if (ctx->group_rank == 0) {
        char *buf = malloc(MAX_BYTES);
        memset(buf, 1, MAX_BYTES);
        double *samples = malloc(sizeof(double) * (size_t)B.reps);
        for (int s = 0; s < NSIZES && sizes[s] <= B.max; s++) {
            int it = iters_for(sizes[s]);
            for (int m = 0; m < NMETHODS; m++) /* warm-up */
                if ((m != M_SHM_GET && m != M_SHM_PUT) || B.shm != MPI_WIN_NULL)
                    sample(m, gd, buf, sizes[s], it / 10 + 1);
            for (int m = 0; m < NMETHODS; m++) {
                if ((m == M_SHM_GET || m == M_SHM_PUT) && B.shm == MPI_WIN_NULL) {
                    B.us[m][s] = -1;
                    continue;
                }
            }
            /* methods interleaved rep by rep, so drift on a shared machine hits all alike */
            double all[NMETHODS][64];
            for (int r = 0; r < B.reps; r++)
                for (int m = 0; m < NMETHODS; m++)
                    if (B.us[m][s] >= 0)
                        all[m][r] = sample(m, gd, buf, sizes[s], it);
            for (int m = 0; m < NMETHODS; m++) {
                if (B.us[m][s] < 0)
                    continue;
                memcpy(samples, all[m], sizeof(double) * (size_t)B.reps);
                qsort(samples, (size_t)B.reps, sizeof(double), cmp_double);
                B.us[m][s] = samples[B.reps / 2]; /* median */
            }
        }
        free(samples);
        free(buf);
    }
    rc = utc_gdata_barrier(gd);
    utc_status_t rc2 = utc_gdata_destroy(ctx, gd);
    return rc != UTC_OK ? rc : rc2;
}

static const utc_task_ops_t bench_ops = {
    .name = "bench_gshared", .size = sizeof(bench_task_t), .run = bench_run};

static void size_name(size_t bytes, char *out, size_t len)
{
    if (bytes >= ((size_t)1 << 20))
        snprintf(out, len, "%zuMiB", bytes >> 20);
    else if (bytes >= 1024)
        snprintf(out, len, "%zuKiB", bytes >> 10);
    else
        snprintf(out, len, "%zuB", bytes);
}

/* Raw baseline windows on a duplicate of the world, locked like UTC's. */
static int open_raw_windows(MPI_Comm comm)
{
    void *base;
    if (MPI_Win_allocate((MPI_Aint)MAX_BYTES, 1, MPI_INFO_NULL, comm, &base, &B.raw) != MPI_SUCCESS)
        return -1;
    memset(base, 0, MAX_BYTES);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, B.raw);
    B.shm = MPI_WIN_NULL;
    MPI_Comm node;
    int node_size = 0, world_size = 0;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_size(comm, &world_size);
    MPI_Comm_free(&node);
    if (node_size == world_size) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
        if (MPI_Win_allocate_shared((MPI_Aint)MAX_BYTES, 1, info, comm, &base, &B.shm) ==
            MPI_SUCCESS) {
            memset(base, 0, MAX_BYTES);
            MPI_Win_lock_all(MPI_MODE_NOCHECK, B.shm);
        } else {
            B.shm = MPI_WIN_NULL;
        }
        MPI_Info_free(&info);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int json = 0;
    B.reps = 9;
    B.max = MAX_BYTES;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0 &&
                 atoi(argv[i + 1]) <= 64)
            B.reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0)
            B.iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "--max") == 0 && i + 1 < argc && atol(argv[i + 1]) >= 8)
            B.max = (size_t)atol(argv[++i]);
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: scripts/utcrun -np 2 utc_bench_gshared [--reps R (1..64)] [--max BYTES]"
                   " [--iters N] [--json]\n"
                   "Latency of utc_gdata_rload and rstore+quiet, 8 B to 1 MiB, beside raw\n"
                   "MPI_Get/MPI_Put + MPI_Win_flush (MPI_Win_allocate and, on one node,\n"
                   "MPI_Win_allocate_shared windows). Median of R interleaved samples.\n");
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("utc_bench_gshared (UTC) %s\n", utc_version_string());
            return 0;
        } else {
            fprintf(stderr, "utc_bench_gshared: unknown or incomplete argument '%s' (see --help)\n",
                    argv[i]);
            return 2;
        }
    }
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "utc_bench_gshared: utc_init: %s\n", utc_last_error());
        return 1;
    }
    int nranks = utc_nranks(), me = utc_rank();
    if (nranks < 2 && me == 0)
        fprintf(stderr, "utc_bench_gshared: one rank: measuring access to itself "
                        "(run with scripts/utcrun -np 2)\n");
    B.target = nranks > 1 ? 1 : 0;

    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (open_raw_windows(comm) != 0) {
        fprintf(stderr, "utc_bench_gshared: MPI_Win_allocate failed\n");
        return 1;
    }

    int procs[2] = {0, nranks > 1 ? 1 : 0};
    int nthreads = nranks > 1 ? 2 : 1;
    utc_task_options_t opts = UTC_TASK_OPTIONS_INIT;
    opts.window_size = MAX_BYTES + 4096;
    utc_task_t *task;
    utc_status_t rc = utc_task_create(&bench_ops, procs, nthreads, &opts, &task);
    if (rc == UTC_OK)
        rc = utc_task_run(task, NULL);
    if (rc == UTC_OK)
        rc = utc_task_wait(task);
    if (rc != UTC_OK) {
        fprintf(stderr, "utc_bench_gshared: %s: %s\n", utc_status_string(rc), utc_last_error());
        return 1;
    }
    utc_task_destroy(task);

    if (me == 0) {
        printf("# UTC global shared data latency, rank 0 -> rank %d, median of %d samples\n",
               B.target, B.reps);
        printf("# raw: MPI_Get/MPI_Put + MPI_Win_flush; shared: on MPI_Win_allocate_shared\n");
        printf("%-8s %10s %10s %10s %7s | %10s %10s %10s %7s\n", "size", "rload", "raw_get",
               "get_shm", "ratio", "rstore+q", "raw_put", "put_shm", "ratio");
        for (int s = 0; s < NSIZES && sizes[s] <= B.max; s++) {
            char name[24];
            size_name(sizes[s], name, sizeof name);
            printf("%-8s %8.3fus %8.3fus %8.3fus %6.2fx | %8.3fus %8.3fus %8.3fus %6.2fx\n", name,
                   B.us[M_RLOAD][s], B.us[M_RAW_GET][s], B.us[M_SHM_GET][s],
                   B.us[M_RLOAD][s] / B.us[M_RAW_GET][s], B.us[M_RSTORE][s], B.us[M_RAW_PUT][s],
                   B.us[M_SHM_PUT][s], B.us[M_RSTORE][s] / B.us[M_RAW_PUT][s]);
        }
        if (json) {
            printf("{\"benchmark\":\"utc_bench_gshared\",\"nranks\":%d,\"reps\":%d,"
                   "\"shared_window_available\":%s",
                   nranks, B.reps, B.shm != MPI_WIN_NULL ? "true" : "false");
            for (int s = 0; s < NSIZES && sizes[s] <= B.max; s++) {
                char name[24];
                size_name(sizes[s], name, sizeof name);
                for (int m = 0; m < NMETHODS; m++)
                    if (B.us[m][s] >= 0)
                        printf(",\"%s_us_%s\":%.4f", method_key[m], name, B.us[m][s]);
                printf(",\"ratio_rload_%s\":%.3f,\"ratio_rstore_%s\":%.3f", name,
                       B.us[M_RLOAD][s] / B.us[M_RAW_GET][s], name,
                       B.us[M_RSTORE][s] / B.us[M_RAW_PUT][s]);
            }
            printf("}\n");
        }
        fflush(stdout);
    }
    MPI_Win_unlock_all(B.raw);
    MPI_Win_free(&B.raw);
    if (B.shm != MPI_WIN_NULL) {
        MPI_Win_unlock_all(B.shm);
        MPI_Win_free(&B.shm);
    }
    MPI_Comm_free(&comm);
    int failed = B.failed;
    (void)utc_finalize();
    return failed ? 1 : 0;
}
