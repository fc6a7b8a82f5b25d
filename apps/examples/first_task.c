/*
 * Example 1: a first task (doc/guide/tutorial.md, step 1).
 *
 * A task is a struct whose first member is utc_task_t, plus a table of functions. Its
 * threads are placed on ranks by a proc list; here, --threads N threads on every rank.
 * Every thread runs `run`; the threads of one rank share the task struct (the "rank
 * instance"), so they count their runs in one of its fields.
 *
 *   utcrun -np 2 example_first_task --threads 3
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utc/utc.h>

/* The task type: the runtime's part first, then our fields (shared by a rank's threads). */
typedef struct {
    utc_task_t base;
    atomic_int greeted; /* how many of this rank's threads have run */
} hello_task_t;

/* Called by every thread of the task on this rank, each with its own ctx. */
static int hello_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    hello_task_t *task = (hello_task_t *)self;
    const char *greeting = arg;
    printf("%s from thread %d of %d (local %d of %d) on rank %d of %d\n", greeting,
           ctx->global_id, ctx->global_count, ctx->local_id, ctx->local_count,
           ctx->world_rank, ctx->world_size);
    atomic_fetch_add(&task->greeted, 1);
    /* wait for every thread of the task, on every rank */
    return utc_ctx_barrier(ctx);
}

static const utc_task_ops_t hello_ops = {
    .name = "hello",
    .size = sizeof(hello_task_t),
    .run = hello_run, /* init and fini are optional */
};

static int usage(const char *prog, int rc)
{
    printf("usage: %s [--threads N] [--help] [--version]\n"
           "Runs a task with N threads (default 2) on every rank; each says hello.\n"
           "Launch with: utcrun -np RANKS %s\n", prog, prog);
    return rc;
}

int main(int argc, char **argv)
{
    int per_rank = 2;
    /* options first: --help and --version need no MPI */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return usage(argv[0], 0);
        if (!strcmp(argv[i], "--version")) {
            printf("example_first_task (UTC) %s\n", utc_version_string());
            return 0;
        }
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            per_rank = atoi(argv[++i]);
        else
            return usage(argv[0], 2);
    }
    if (per_rank < 1 || per_rank > 64) {
        fprintf(stderr, "--threads must be 1..64\n");
        return 2;
    }

    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "utc_init: %s\n", utc_last_error());
        return 1;
    }
    int nranks = utc_nranks();

    /* proc list: per_rank entries for rank 0, then per_rank for rank 1, ... */
    int *procs = malloc(sizeof(int) * (size_t)(nranks * per_rank));
    int n = procs ? utc_procs_spread(procs, nranks * per_rank, 0, nranks, per_rank) : -1;

    /* Creating a task is collective: every rank calls it with the same arguments. */
    utc_task_t *task = NULL;
    utc_status_t rc = n > 0 ? utc_task_create(&hello_ops, procs, n, NULL, &task)
                            : UTC_ERR_NO_MEMORY;
    if (rc == UTC_OK) {
        rc = utc_task_run(task, "hello"); /* returns at once: the threads run */
        if (rc == UTC_OK)
            rc = utc_task_wait(task);    /* until every local thread has finished */
    }
    if (rc == UTC_OK) {
        int greeted = atomic_load(&((hello_task_t *)task)->greeted);
        printf("rank %d: %d of %d local threads ran\n", utc_rank(), greeted, per_rank);
        if (greeted != per_rank)
            rc = UTC_ERR_INTERNAL;
    } else {
        fprintf(stderr, "rank %d: %s (%s)\n", utc_rank(), utc_status_string(rc),
                utc_last_error());
    }
    if (task)
        utc_task_destroy(task); /* collective too */
    free(procs);
    utc_status_t frc = utc_finalize(); /* fails when, say, the UTC_TRACE file was lost */
    if (frc != UTC_OK)
        fprintf(stderr, "utc_finalize: %s\n", utc_last_error());
    return rc == UTC_OK && frc == UTC_OK ? 0 : 1;
}
