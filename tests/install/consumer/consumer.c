/*
 * An out-of-tree program built against an installed UTC (tests/install): checks that the
 * headers and the library agree on the version and runs a small task. Exit 0 on success.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <utc/utc.h>

#if !defined(UTC_VERSION_MAJOR) || !defined(UTC_VERSION_STRING)
#error "utc/version.h did not define the version macros"
#endif

typedef struct {
    utc_task_t base;
    atomic_int ran;
} count_task_t;

static int count_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    atomic_fetch_add(&((count_task_t *)self)->ran, 1);
    return 0;
}

static const utc_task_ops_t count_ops = {
    .name = "count", .size = sizeof(count_task_t), .run = count_run};

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--version")) {
        printf("utc_consumer (UTC) %s\n", utc_version_string());
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "--help")) {
        printf("usage: %s [--help] [--version]\nRuns a 3-thread task on every rank.\n", argv[0]);
        return 0;
    }
    if (strcmp(utc_version_string(), UTC_VERSION_STRING) != 0) {
        fprintf(stderr, "header version %s, library version %s\n", UTC_VERSION_STRING,
                utc_version_string());
        return 1;
    }
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "utc_init: %s\n", utc_last_error());
        return 1;
    }
    int procs[3 * 16];
    int ranks = utc_nranks() < 16 ? utc_nranks() : 16;
    int n = utc_procs_spread(procs, 3 * 16, 0, ranks, 3);
    utc_task_t *task;
    utc_status_t rc = utc_task_create(&count_ops, procs, n, NULL, &task);
    if (rc == UTC_OK) {
        if ((rc = utc_task_run(task, NULL)) == UTC_OK)
            rc = utc_task_wait(task);
        if (rc == UTC_OK && utc_task_is_local(task) == 1 &&
            atomic_load(&((count_task_t *)task)->ran) != 3)
            rc = UTC_ERR_INTERNAL;
        utc_task_destroy(task);
    }
    if (rc == UTC_OK)
        printf("consumer: UTC %s, rank %d: ok\n", utc_version_string(), utc_rank());
    else
        fprintf(stderr, "consumer: %s (%s)\n", utc_status_string(rc), utc_last_error());
    utc_finalize();
    return rc == UTC_OK ? 0 : 1;
}
