/*
 * utc_bench_task: the round trip of an empty utc_task_run + utc_task_wait, and of the
 * same run in one utc_task_run_wait, beside pthread_create + pthread_join and an empty
 * OpenMP parallel region, in the same run.
 *
 *   utc_bench_task [--reps N] [--json]
 */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utc/utc.h>

typedef struct {
    utc_task_t base;
} empty_task_t;

static int empty_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    return 0;
}

static const utc_task_ops_t empty_ops = {.name = "empty", .size = sizeof(empty_task_t), .run = empty_run};

static void *empty_thread(void *arg) { return arg; }

static volatile int sink;

/* One run: utc_task_run + utc_task_wait, or utc_task_run_wait when `together`. */
static void run_once(utc_task_t *task, int together)
{
    int rc = together ? utc_task_run_wait(task, NULL)
                      : (utc_task_run(task, NULL) == UTC_OK ? utc_task_wait(task) : -1);
    if (rc != UTC_OK) {
        fprintf(stderr, "utc_bench_task: a run failed: %s\n", utc_last_error());
        exit(1);
    }
}

static double bench_utc(int nthreads, int reps, int together)
{
    int procs[8] = {0};
    utc_task_t *task;
    if (utc_task_create(&empty_ops, procs, nthreads, NULL, &task) != UTC_OK) {
        fprintf(stderr, "utc_bench_task: %s\n", utc_last_error());
        exit(1);
    }
    for (int i = 0; i < reps / 10; i++) /* warm-up */
        run_once(task, together);
    double t0 = utc_wtime();
    for (int i = 0; i < reps; i++)
        run_once(task, together);
    double us = (utc_wtime() - t0) / reps * 1e6;
    utc_task_destroy(task);
    return us;
}

static double bench_pthread(int nthreads, int reps)
{
    pthread_t th[8];
    double t0 = utc_wtime();
    for (int i = 0; i < reps; i++) {
        for (int k = 0; k < nthreads; k++)
            pthread_create(&th[k], NULL, empty_thread, NULL);
        for (int k = 0; k < nthreads; k++)
            pthread_join(th[k], NULL);
    }
    return (utc_wtime() - t0) / reps * 1e6;
}

static double bench_omp(int nthreads, int reps)
{
    for (int i = 0; i < reps / 10; i++) {
#pragma omp parallel num_threads(nthreads)
        sink = omp_get_thread_num();
    }
    double t0 = utc_wtime();
    for (int i = 0; i < reps; i++) {
#pragma omp parallel num_threads(nthreads)
        sink = omp_get_thread_num();
    }
    return (utc_wtime() - t0) / reps * 1e6;
}

int main(int argc, char **argv)
{
    int reps = 20000, json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: utc_bench_task [--reps N] [--json]\n"
                   "Round trip of an empty utc_task_run + utc_task_wait, and of one\n"
                   "utc_task_run_wait, for 1, 2 and 4 threads, beside pthread_create +\n"
                   "pthread_join and an empty OpenMP parallel region.\n");
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("utc_bench_task (UTC) %s\n", utc_version_string());
            return 0;
        } else {
            fprintf(stderr, "utc_bench_task: unknown or incomplete argument '%s' (see --help)\n",
                    argv[i]);
            return 2;
        }
    }
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "utc_bench_task: utc_init: %s\n", utc_last_error());
        return 1;
    }
    static const int counts[3] = {1, 2, 4};
    double u[3], uw[3], p[3], o[3];
    for (int i = 0; i < 3; i++) {
        u[i] = bench_utc(counts[i], reps, 0);
        uw[i] = bench_utc(counts[i], reps, 1);
        p[i] = bench_pthread(counts[i], reps / 4);
        o[i] = bench_omp(counts[i], reps);
    }
    if (utc_rank() == 0) {
        printf("%-8s %14s %14s %22s %16s %12s %12s\n", "threads", "utc run+wait",
               "utc run_wait", "pthread create+join", "omp parallel", "create/utc", "utc/omp");
        for (int i = 0; i < 3; i++)
            printf("%-8d %11.2f us %11.2f us %19.2f us %13.2f us %11.1fx %11.2fx\n", counts[i],
                   u[i], uw[i], p[i], o[i], p[i] / u[i], u[i] / o[i]);
        if (json) {
            printf("{");
            for (int i = 0; i < 3; i++)
                printf("\"utc_run_wait_us_t%d\": %.3f, \"utc_run_wait_call_us_t%d\": %.3f, "
                       "\"pthread_create_join_us_t%d\": %.3f, \"omp_parallel_us_t%d\": %.3f%s",
                       counts[i], u[i], counts[i], uw[i], counts[i], p[i], counts[i], o[i],
                       i < 2 ? ", " : "");
            printf("}\n");
        }
    }
    utc_finalize();
    return 0;
}
