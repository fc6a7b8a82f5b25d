/*
 * Scale (issue 16, label `scale`): 10,000 MPI conduits between two tasks on different
 * ranks, one message each way on every one; 1,000 tasks of one thread (spread over the
 * ranks) created, run and destroyed; 100,000 outstanding utc_conduit_iwrite requests, in
 * process and between ranks, all completed with every message read in order. Behaviour is
 * asserted; the times are printed, never asserted. The in-process conduits' scale test is
 * tests/conduits/test_conduit_scale.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../conduits/conduit_test_util.h"

#define NCONDUITS 10000
#define NTASKS    1000
#define NREQS     100000

/* ---- 10,000 MPI conduits ---- */

typedef struct {
    utc_conduit_t **c;
    int n;
} many_t;

/* each end writes its index on every conduit... */
static int many_a(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    many_t *m = data;
    for (int i = 0; i < m->n; i++) {
        if (!CT_OK(utc_conduit_write(m->c[i], &i, sizeof i, 0)))
            return 0;
    }
    for (int i = 0; i < m->n; i++) {
        int v = -1;
        size_t got = 0;
        if (!CT_OK(utc_conduit_read(m->c[i], &v, sizeof v, 1, &got)))
            return 0;
        CT_CHECK(got == sizeof v && v == -i, "conduit %d: reply %d (%zu bytes)", i, v, got);
    }
    return 0;
}

/* ...the other reads it and answers with its negation */
static int many_b(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    many_t *m = data;
    for (int i = 0; i < m->n; i++) {
        int v = -1;
        size_t got = 0;
        if (!CT_OK(utc_conduit_read(m->c[i], &v, sizeof v, 0, &got)))
            return 0;
        CT_CHECK(got == sizeof v && v == i, "conduit %d: got %d (%zu bytes)", i, v, got);
        v = -v;
        if (!CT_OK(utc_conduit_write(m->c[i], &v, sizeof v, 1)))
            return 0;
    }
    return 0;
}

static void test_many_mpi_conduits(void)
{
    ct_begin();
    int ra, rb;
    if (!ct_remote_ranks(&ra, &rb))
        return;
    utc_task_t *a = ct_task(&ct_ops_a, ra, 1), *b = ct_task(&ct_ops_b, rb, 1);
    many_t m = {.c = calloc(NCONDUITS, sizeof(utc_conduit_t *)), .n = NCONDUITS};
    CU_ASSERT_PTR_NOT_NULL_FATAL(m.c);
    double t0 = utc_wtime();
    for (int i = 0; i < NCONDUITS; i++)
        UTC_ASSERT_OK(utc_conduit_create(a, b, NULL, &m.c[i]));
    double t1 = utc_wtime();
    ct_run2(a, many_a, &m, b, many_b, &m);
    double t2 = utc_wtime();
    for (int i = 0; i < NCONDUITS; i++)
        UTC_ASSERT_OK(utc_conduit_destroy(m.c[i]));
    double t3 = utc_wtime();
    if (utc_rank() == 0)
        printf("\n  %d MPI conduits: create %.2f s (%.1f us each), a message each way %.2f s, "
               "destroy %.2f s\n", NCONDUITS, t1 - t0, (t1 - t0) * 1e6 / NCONDUITS, t2 - t1,
               t3 - t2);
    free(m.c);
    UTC_ASSERT_OK(utc_task_destroy(b));
    UTC_ASSERT_OK(utc_task_destroy(a));
    CT_END();
}

/* ---- 1,000 tasks ---- */

typedef struct {
    utc_task_t base;
    int runs;
} counting_task_t;

static int count_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    ((counting_task_t *)self)->runs += *(int *)arg;
    return 0;
}

static const utc_task_ops_t counting_ops = {.name = "scale-task", .size = sizeof(counting_task_t),
                                            .run = count_run};

static void test_many_tasks(void)
{
    utc_task_t **t = calloc(NTASKS, sizeof *t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    /* no window: 1,000 windows of 16 MiB are not what this measures */
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.window_size = 0;
    double t0 = utc_wtime();
    for (int i = 0; i < NTASKS; i++) {
        int procs[1] = {i % utc_nranks()};
        UTC_ASSERT_OK(utc_task_create(&counting_ops, procs, 1, &o, &t[i]));
    }
    double t1 = utc_wtime();
    int one = 1;
    for (int i = 0; i < NTASKS; i++)
        UTC_ASSERT_OK(utc_task_run(t[i], &one));
    for (int i = 0; i < NTASKS; i++)
        UTC_ASSERT_OK(utc_task_wait(t[i]));
    double t2 = utc_wtime();
    for (int i = 0; i < NTASKS; i++) {
        if (i % utc_nranks() == utc_rank())
            CU_ASSERT_EQUAL(((counting_task_t *)t[i])->runs, 1);
        UTC_ASSERT_OK(utc_task_destroy(t[i]));
    }
    double t3 = utc_wtime();
    if (utc_rank() == 0)
        printf("\n  %d tasks of one thread: create %.2f s, run and wait %.2f s, destroy %.2f s\n",
               NTASKS, t1 - t0, t2 - t1, t3 - t2);
    free(t);
}

/* ---- 100,000 outstanding requests ---- */

static int iwrite_all(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    utc_request_t **r = calloc(NREQS, sizeof *r);
    uint32_t *v = malloc(NREQS * sizeof *v); /* each buffer stays until its request is done */
    CT_CHECK(r && v, "out of memory");
    if (!r || !v) {
        free(r);
        free(v);
        return 0;
    }
    int started = 0;
    for (; started < NREQS; started++) {
        v[started] = (uint32_t)started;
        if (!CT_OK(utc_conduit_iwrite(c, &v[started], sizeof v[started], 2, &r[started])))
            break;
    }
    for (int i = 0; i < started; i++)
        CT_OK(utc_request_wait(&r[i], NULL));
    free(r);
    free(v);
    return 0;
}

static int read_all(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    for (uint32_t i = 0; i < NREQS; i++) {
        uint32_t v = UINT32_MAX;
        size_t got = 0;
        if (!CT_OK(utc_conduit_read(c, &v, sizeof v, 2, &got)))
            return 0;
        if (got != sizeof v || v != i) {
            CT_CHECK(false, "message %u: got %u (%zu bytes)", i, v, got);
            return 0;
        }
    }
    return 0;
}

/* The writer starts all 100,000 before it waits for any (they complete as the reader,
 * running at the same time, takes the messages), then waits for each. */
static void outstanding(int ra, int rb, void *arg)
{
    (void)arg;
    ct_begin();
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, NULL);
    double t0 = utc_wtime();
    ct_pair_run(&p, iwrite_all, read_all);
    double t1 = utc_wtime();
    if (utc_rank() == 0)
        printf("\n  %d outstanding iwrites, %s: %.2f s\n", NREQS,
               ra == rb ? "in-process" : "between ranks", t1 - t0);
    ct_pair_close(&p);
    CT_END();
}

static void test_outstanding_requests(void) { ct_each_placement(true, outstanding, NULL); }

static const utc_test_case_t cases[] = {
    {"10,000 MPI conduits", test_many_mpi_conduits},
    {"1,000 tasks of one thread", test_many_tasks},
    {"100,000 outstanding iwrite requests", test_outstanding_requests},
    UTC_TEST_END};

int main(int argc, char **argv) { return utc_test_main(argc, argv, "scale", cases); }
