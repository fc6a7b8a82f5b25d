/*
 * The waiting caller lends its core (utc_task_wait, where cores are scarce): the process is
 * limited to one CPU, so a 2-thread task has as many threads as CPUs. Every run must still
 * give each local thread's share exactly once, with that thread's ctx, and the caller may
 * run one share itself (as that thread) but never one whose thread took it. With
 * UTC_LEND=0 the caller never runs a share. Pinned threads are lent too: the caller runs
 * the share bound as that thread is, and has its own binding back after each wait.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "utc_test.h"

#define ROUNDS 2000
#define THREADS 2

typedef struct {
    utc_task_t base;
    pthread_t caller;
    atomic_int runs[THREADS];     /* shares run, per local id */
    atomic_int on_caller;         /* shares the caller ran */
    atomic_int wrong_ctx;         /* utc_ctx_self() was not the ctx given */
    cpu_set_t mask[THREADS];      /* the CPUs each local thread's share first ran on */
    atomic_int seen[THREADS];     /* mask[] is set */
    atomic_int wrong_mask;        /* a share ran bound otherwise than its first time */
    atomic_int caller_moved;      /* the caller's binding after a wait was not its own */
} lend_task_t;

static int lend_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    lend_task_t *t = (lend_task_t *)self;
    if (utc_ctx_self() != ctx || ctx->task != self)
        atomic_fetch_add(&t->wrong_ctx, 1);
    atomic_fetch_add(&t->runs[ctx->local_id], 1);
    cpu_set_t now;
    if (sched_getaffinity(0, sizeof now, &now) == 0) {
        if (!atomic_load(&t->seen[ctx->local_id])) {
            t->mask[ctx->local_id] = now;
            atomic_store(&t->seen[ctx->local_id], 1);
        } else if (!CPU_EQUAL(&now, &t->mask[ctx->local_id])) {
            atomic_fetch_add(&t->wrong_mask, 1);
        }
    }
    if (pthread_equal(pthread_self(), t->caller))
        atomic_fetch_add(&t->on_caller, 1);
    return 0;
}

static const utc_task_ops_t lend_ops = {.name = "lend", .size = sizeof(lend_task_t),
                                        .run = lend_run};

static lend_task_t *rounds(utc_bind_mode_t bind)
{
    int procs[THREADS] = {0, 0};
    utc_task_options_t opts = UTC_TASK_OPTIONS_INIT;
    opts.bind = bind;
    utc_task_t *task;
    UTC_ASSERT_OK(utc_task_create(&lend_ops, procs, THREADS, &opts, &task));
    lend_task_t *t = (lend_task_t *)task;
    t->caller = pthread_self();
    cpu_set_t own, after;
    CU_ASSERT_EQUAL_FATAL(sched_getaffinity(0, sizeof own, &own), 0);
    for (int i = 0; i < ROUNDS; i++) {
        UTC_ASSERT_OK(utc_task_run(task, NULL));
        UTC_ASSERT_OK(utc_task_wait(task));
        if (sched_getaffinity(0, sizeof after, &after) != 0 || !CPU_EQUAL(&after, &own))
            atomic_fetch_add(&t->caller_moved, 1);
        for (int k = 0; k < THREADS; k++)
            CU_ASSERT_EQUAL_FATAL(atomic_load(&t->runs[k]), i + 1);
    }
    CU_ASSERT_EQUAL(atomic_load(&t->wrong_ctx), 0);
    CU_ASSERT_EQUAL(atomic_load(&t->wrong_mask), 0);
    CU_ASSERT_EQUAL(atomic_load(&t->caller_moved), 0);
    return t;
}

static void done(lend_task_t *t) { UTC_ASSERT_OK(utc_task_destroy(&t->base)); }

static void test_lend_each_share_once(void)
{
    lend_task_t *t = rounds(UTC_BIND_NONE);
    int on_caller = atomic_load(&t->on_caller);
    const char *env = getenv("UTC_LEND");
    printf("\n  %d of %d rounds had a share run by the caller (UTC_LEND=%s)\n", on_caller,
           ROUNDS, env ? env : "unset");
    if (env && env[0] == '0') {
        CU_ASSERT_EQUAL(on_caller, 0);
    } else {
        CU_ASSERT(on_caller > 0); /* one CPU: the caller is there before a woken thread */
    }
    CU_ASSERT(on_caller <= ROUNDS); /* at most one share per wait */
    done(t);
}

static void test_pinned_threads_lent_bound(void)
{
    lend_task_t *t = rounds(UTC_BIND_CORE);
    const char *env = getenv("UTC_LEND");
    if (env && env[0] == '0')
        CU_ASSERT_EQUAL(atomic_load(&t->on_caller), 0);
    done(t);
}

int main(int argc, char **argv)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
        perror("sched_setaffinity");
        return 1;
    }
    static const utc_test_case_t cases[] = {
        {"each share once, some by the caller", test_lend_each_share_once},
        {"pinned threads: lent bound as they are, the caller's binding back",
         test_pinned_threads_lent_bound},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "task_lend", cases);
}
