/*
 * Example 4: global shared data (doc/guide/tutorial.md, step 4).
 *
 * One task with two threads on every rank. It owns two global shared data objects:
 * - `array`: --n doubles on each rank (a distributed array: rank r holds elements
 *   r*n .. r*n+n-1). Each thread fills its half of its rank's part with plain stores, then,
 *   after a barrier, thread 0 of each rank reads the next rank's part with one remote
 *   block load (one-sided: the other rank does nothing to serve it).
 * - `arrivals`: one int64 per rank; every thread adds 1 to rank 0's with an atomic
 *   fetch-add.
 * Finally a task collective (allreduce) adds up every rank's local sum.
 *
 *   utcrun -np 2 example_global_data --n 100000
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utc/utc.h>

typedef struct {
    utc_task_t base;
    size_t n;             /* elements per rank */
    utc_gdata_t *array;   /* n doubles on each rank */
    utc_gdata_t *arrivals;/* one int64 on each rank */
    double local_sum;     /* this rank's part, added up (thread 0) */
    double total;         /* allreduce of local_sum over the task's ranks */
    int errors;           /* found by this rank */
} gdata_task_t;

static int gdata_init(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    gdata_task_t *t = (gdata_task_t *)self;
    /* collective over the task's threads on all its ranks: all get the same objects */
    utc_status_t rc = utc_gdata_create(ctx, sizeof(double), t->n, &t->array);
    if (rc == UTC_OK)
        rc = utc_gdata_create(ctx, sizeof(int64_t), 1, &t->arrivals);
    return rc;
}

static int gdata_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    gdata_task_t *t = (gdata_task_t *)self;
    int me = ctx->group_rank, ranks = ctx->group_size; /* ranks in the task's group */
    size_t n = t->n;

    /* 1. fill this thread's half of this rank's part: plain stores through the pointer */
    double *mine = utc_gdata_ptr(t->array);
    size_t lo = n * (size_t)ctx->local_id / (size_t)ctx->local_count;
    size_t hi = n * (size_t)(ctx->local_id + 1) / (size_t)ctx->local_count;
    for (size_t i = lo; i < hi; i++)
        mine[i] = (double)((size_t)me * n + i);

    /* 2. one atomic add per thread on rank 0's counter (complete when it returns) */
    utc_status_t rc = utc_gdata_fetch_add(t->arrivals, 0, 0, 1, NULL);
    if (rc != UTC_OK)
        return rc;

    /* 3. every thread of the task on every rank: after it, all stores are visible */
    if ((rc = utc_gdata_barrier(t->array)) != UTC_OK)
        return rc;

    /* 4. thread 0 of each rank reads the next rank's whole part, one-sided */
    if (ctx->local_id == 0) {
        int next = (me + 1) % ranks;
        double *copy = malloc(n * sizeof *copy);
        if (!copy)
            return UTC_ERR_NO_MEMORY;
        rc = utc_gdata_rload_block(t->array, next, 0, n, copy);
        for (size_t i = 0; rc == UTC_OK && i < n; i++)
            if (copy[i] != (double)((size_t)next * n + i))
                t->errors++;
        free(copy);
        t->local_sum = 0;
        for (size_t i = 0; i < n; i++)
            t->local_sum += mine[i];
        if (rc != UTC_OK)
            return rc;
    }

    /* 5. a task collective: every thread calls it; one per rank makes the MPI call, after
     * all local threads have arrived (so thread 0's local_sum is ready) */
    rc = utc_task_allreduce(ctx, &t->local_sum, &t->total, 1, UTC_TYPE_DOUBLE, UTC_OP_SUM);
    if (rc != UTC_OK)
        return rc;

    /* 6. rank 0's counter has one arrival per thread of the task */
    if (me == 0 && ctx->local_id == 0) {
        int64_t arrived;
        if ((rc = utc_gdata_rload(t->arrivals, 0, 0, &arrived)) != UTC_OK)
            return rc;
        if (arrived != ctx->global_count)
            t->errors++;
        printf("rank 0: %lld of %d threads arrived\n", (long long)arrived, ctx->global_count);
    }
    return UTC_OK;
}

static void gdata_fini(utc_task_t *self, utc_ctx_t *ctx)
{
    gdata_task_t *t = (gdata_task_t *)self;
    /* collective again; objects left alive would be freed with the task anyway */
    utc_gdata_destroy(ctx, t->arrivals);
    utc_gdata_destroy(ctx, t->array);
}

static const utc_task_ops_t gdata_ops = {.name = "gdata",
                                         .size = sizeof(gdata_task_t),
                                         .init = gdata_init,
                                         .run = gdata_run,
                                         .fini = gdata_fini};

static int usage(const char *prog, int rc)
{
    printf("usage: %s [--n ELEMENTS] [--help] [--version]\n"
           "A task with 2 threads per rank fills a distributed array of ELEMENTS doubles\n"
           "per rank (default 1000), reads its neighbour's part one-sided, counts arrivals\n"
           "with atomics and adds everything up with an allreduce.\n"
           "Launch with: utcrun -np RANKS %s\n", prog, prog);
    return rc;
}

int main(int argc, char **argv)
{
    long n = 1000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return usage(argv[0], 0);
        if (!strcmp(argv[i], "--version")) {
            printf("example_global_data (UTC) %s\n", utc_version_string());
            return 0;
        }
        if (!strcmp(argv[i], "--n") && i + 1 < argc)
            n = atol(argv[++i]);
        else
            return usage(argv[0], 2);
    }
    if (n < 1 || n > (1L << 20)) {
        fprintf(stderr, "--n must be 1 .. %ld (the window holds 16 MiB per rank)\n", 1L << 20);
        return 2;
    }
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "utc_init: %s\n", utc_last_error());
        return 1;
    }
    int ranks = utc_nranks();
    int procs[2 * 64];
    int nthreads = utc_procs_spread(procs, 2 * 64, 0, ranks < 64 ? ranks : 64, 2);

    utc_task_t *task = NULL;
    /* the task's RMA window (per rank) must hold its objects: the default is 16 MiB */
    utc_status_t rc = utc_task_create(&gdata_ops, procs, nthreads, NULL, &task);
    if (rc == UTC_OK) {
        ((gdata_task_t *)task)->n = (size_t)n;
        rc = utc_task_init(task, NULL);
    }
    if (rc == UTC_OK && (rc = utc_task_run(task, NULL)) == UTC_OK)
        rc = utc_task_wait(task);
    if (rc == UTC_OK && utc_task_is_local(task) == 1) {
        gdata_task_t *t = (gdata_task_t *)task;
        double total_n = (double)n * (ranks < 64 ? ranks : 64);
        double expect = total_n * (total_n - 1) / 2; /* 0 + 1 + ... + (ranks*n - 1) */
        printf("rank %d: allreduce total %.0f (expected %.0f), %d errors\n", utc_rank(),
               t->total, expect, t->errors);
        if (t->total != expect || t->errors)
            rc = UTC_ERR_INTERNAL;
    }
    if (rc != UTC_OK)
        fprintf(stderr, "rank %d: %s (%s)\n", utc_rank(), utc_status_string(rc),
                utc_last_error());
    if (task)
        utc_task_destroy(task);
    utc_status_t frc = utc_finalize(); /* fails when, say, the UTC_TRACE file was lost */
    if (frc != UTC_OK)
        fprintf(stderr, "utc_finalize: %s\n", utc_last_error());
    return rc == UTC_OK && frc == UTC_OK ? 0 : 1;
}
