/*
 * utc_bench_conduit_create: what an in-process conduit costs to create, to hold and to
 * destroy. Two tasks of one thread on rank 0; N conduits between them are created, carry
 * one message each way, and are destroyed. Prints, per conduit: creation time, resident
 * memory while idle and after the messages (growth of /proc/self/statm's resident pages),
 * the time of the messages and of the destroys, and the total.
 *
 *   scripts/utcrun -np 1 build/apps/microbench/utc_bench_conduit_create [--count N]
 *                  [--size BYTES] [--reps R] [--json]
 *
 * --count: conduits (default 10000); --size: bytes of each message (default 8); --reps:
 * repeat the whole cycle R times in one process and print each (default 1: the first
 * cycle pays for the pools' first growth, later ones show the steady state). Every rank
 * creates and destroys the conduits (creation is collective); with more than one rank the
 * others hold no end. With --json the last line of standard output is one JSON object.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <utc/utc.h>

#include "app_memory.h"

typedef struct {
    utc_conduit_t **c;
    int n;
    size_t size;
    int bad;   /* messages that arrived wrong (count, size or contents) */
    double us; /* time of the exchange, measured by the source task */
} job_t;

typedef struct {
    utc_task_t base;
} bench_task_t;

static void fill(unsigned char *b, size_t n, int i, int dir)
{
    for (size_t k = 0; k < n; k++)
        b[k] = (unsigned char)(i * 31 + (int)k * 7 + dir);
}

static int check(const unsigned char *b, size_t n, int i, int dir)
{
    for (size_t k = 0; k < n; k++)
        if (b[k] != (unsigned char)(i * 31 + (int)k * 7 + dir))
            return 0;
    return 1;
}

/* Source: one message out on every conduit, then one back from each. */
static int src_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self;
    (void)ctx;
    job_t *j = arg;
    unsigned char *buf = malloc(j->size + 1);
    if (!buf)
        return UTC_ERR_NO_MEMORY;
    double t0 = utc_wtime();
    for (int i = 0; i < j->n; i++) {
        fill(buf, j->size, i, 0);
        int rc = utc_conduit_write(j->c[i], buf, j->size, 1);
        if (rc != UTC_OK) {
            free(buf);
            return rc;
        }
    }
    for (int i = 0; i < j->n; i++) {
        size_t got = 0;
        int rc = utc_conduit_read(j->c[i], buf, j->size + 1, 2, &got);
        if (rc != UTC_OK) {
            free(buf);
            return rc;
        }
        if (got != j->size || !check(buf, got, i, 1))
            j->bad++;
    }
    j->us = (utc_wtime() - t0) * 1e6;
    free(buf);
    return 0;
}

/* Destination: read each message, answer on the same conduit. */
static int dst_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self;
    (void)ctx;
    job_t *j = arg;
    unsigned char *buf = malloc(j->size + 1);
    if (!buf)
        return UTC_ERR_NO_MEMORY;
    for (int i = 0; i < j->n; i++) {
        size_t got = 0;
        int rc = utc_conduit_read(j->c[i], buf, j->size + 1, 1, &got);
        if (rc == UTC_OK) {
            if (got != j->size || !check(buf, got, i, 0))
                j->bad++;
            fill(buf, j->size, i, 1);
            rc = utc_conduit_write(j->c[i], buf, j->size, 2);
        }
        if (rc != UTC_OK) {
            free(buf);
            return rc;
        }
    }
    free(buf);
    return 0;
}

static const utc_task_ops_t src_ops = {
    .name = "bench-src", .size = sizeof(bench_task_t), .run = src_run};
static const utc_task_ops_t dst_ops = {
    .name = "bench-dst", .size = sizeof(bench_task_t), .run = dst_run};

static int fail(const char *what, int rc)
{
    fprintf(stderr, "utc_bench_conduit_create: %s: %s: %s\n", what, utc_status_string(rc),
            utc_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    int n = 10000, reps = 1, json = 0;
    size_t size = 8;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--count") && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--size") && i + 1 < argc)
            size = (size_t)atoll(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--json"))
            json = 1;
        else {
            fprintf(stderr, "usage: utc_bench_conduit_create [--count N] [--size BYTES] "
                            "[--reps R] [--json]\n");
            return 2;
        }
    }
    if (n < 1 || reps < 1) {
        fprintf(stderr, "utc_bench_conduit_create: --count and --reps must be at least 1\n");
        return 2;
    }
    int rc = utc_init(&argc, &argv);
    if (rc != UTC_OK)
        return fail("utc_init", rc);
    int me = utc_rank();
    const int procs[1] = {0};
    utc_task_t *a = NULL, *b = NULL;
    if ((rc = utc_task_create(&src_ops, procs, 1, NULL, &a)) != UTC_OK ||
        (rc = utc_task_create(&dst_ops, procs, 1, NULL, &b)) != UTC_OK)
        return fail("utc_task_create", rc);
    utc_conduit_t **c = calloc((size_t)n, sizeof *c);
    if (!c)
        return fail("calloc", UTC_ERR_NO_MEMORY);
    double create_us = 0, xfer_us = 0, destroy_us = 0;
    long idle_b = 0, busy_b = 0, after_b = 0;
    int bad = 0;
    if (me == 0)
        printf("# %d in-process conduits between two tasks of one thread, one %zu B message "
               "each way, %d rank(s)\n# rep create_us/conduit idle_B/conduit busy_B/conduit "
               "exchange_s destroy_us/conduit total_s left_B/conduit\n",
               n, size, utc_nranks());
    for (int r = 0; r < reps; r++) {
        long rss0 = app_rss_bytes();
        double t0 = utc_wtime();
        for (int i = 0; i < n; i++)
            if ((rc = utc_conduit_create(a, b, NULL, &c[i])) != UTC_OK)
                return fail("utc_conduit_create", rc);
        double t1 = utc_wtime();
        long rss1 = app_rss_bytes();
        job_t ja = {c, n, size, 0, 0}, jb = {c, n, size, 0, 0};
        if ((rc = utc_task_run(a, &ja)) != UTC_OK || (rc = utc_task_run(b, &jb)) != UTC_OK ||
            (rc = utc_task_wait(a)) != UTC_OK || (rc = utc_task_wait(b)) != UTC_OK)
            return fail("the exchange", rc);
        double t2 = utc_wtime();
        long rss2 = app_rss_bytes();
        for (int i = 0; i < n; i++)
            if ((rc = utc_conduit_destroy(c[i])) != UTC_OK)
                return fail("utc_conduit_destroy", rc);
        double t3 = utc_wtime();
        long rss3 = app_rss_bytes();
        create_us = (t1 - t0) * 1e6 / n;
        xfer_us = t2 - t1;
        destroy_us = (t3 - t2) * 1e6 / n;
        idle_b = (rss1 - rss0) / n;
        busy_b = (rss2 - rss0) / n;
        after_b = (rss3 - rss0) / n;
        bad = ja.bad + jb.bad;
        if (me == 0)
            printf("%d %.2f %ld %ld %.3f %.2f %.3f %ld%s\n", r, create_us, idle_b, busy_b, xfer_us,
                   destroy_us, t3 - t0, after_b, bad ? "  (messages wrong!)" : "");
    }
    if (me == 0 && json)
        printf("{\"count\":%d,\"size\":%zu,\"ranks\":%d,\"create_us\":%.3f,\"idle_bytes\":%ld,"
               "\"busy_bytes\":%ld,\"exchange_s\":%.4f,\"destroy_us\":%.3f,\"bad\":%d}\n",
               n, size, utc_nranks(), create_us, idle_b, busy_b, xfer_us, destroy_us, bad);
    free(c);
    utc_task_destroy(a);
    utc_task_destroy(b);
    utc_finalize();
    return bad ? 1 : 0;
}
