/*
 * The waiting caller lends its core (utc_task_wait, where cores are scarce): the process is
 * limited to one CPU, so a 2-thread task has as many threads as CPUs. Every run must still
 * give each local thread's share exactly once, with that thread's ctx, and the caller may
 * run one share itself (as that thread) but never one whose thread took it. With
 * UTC_LEND=0 the caller never runs a share. Pinned threads are lent too: the caller runs
 * the share bound as that thread is, and has its own binding back after each wait.
 * utc_task_run_wait: with one thread, its share is the caller's every time (the thread
 * never takes one), also past the mailbox's 64 slots; the thread still runs a plain run
 * and its fini after. With two threads, and behind a run in flight, it is run + wait.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
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
    atomic_int fini_off_caller;   /* fini ran on a task thread */
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

static void lend_fini(utc_task_t *self, utc_ctx_t *ctx)
{
    (void)ctx;
    lend_task_t *t = (lend_task_t *)self;
    if (!pthread_equal(pthread_self(), t->caller))
        atomic_fetch_add(&t->fini_off_caller, 1);
}

static const utc_task_ops_t lend_ops = {.name = "lend", .size = sizeof(lend_task_t),
                                        .run = lend_run, .fini = lend_fini};

static bool lend_off(void)
{
    const char *env = getenv("UTC_LEND");
    return env && env[0] == '0';
}

/* ROUNDS runs of a task of `nthreads` threads: utc_task_run + utc_task_wait, or
 * utc_task_run_wait when `together`. */
static lend_task_t *rounds_of(utc_bind_mode_t bind, int nthreads, bool together)
{
    int procs[THREADS] = {0, 0};
    utc_task_options_t opts = UTC_TASK_OPTIONS_INIT;
    opts.bind = bind;
    utc_task_t *task;
    UTC_ASSERT_OK(utc_task_create(&lend_ops, procs, nthreads, &opts, &task));
    lend_task_t *t = (lend_task_t *)task;
    t->caller = pthread_self();
    cpu_set_t own, after;
    CU_ASSERT_EQUAL_FATAL(sched_getaffinity(0, sizeof own, &own), 0);
    for (int i = 0; i < ROUNDS; i++) {
        if (together) {
            UTC_ASSERT_OK(utc_task_run_wait(task, NULL));
        } else {
            UTC_ASSERT_OK(utc_task_run(task, NULL));
            UTC_ASSERT_OK(utc_task_wait(task));
        }
        if (sched_getaffinity(0, sizeof after, &after) != 0 || !CPU_EQUAL(&after, &own))
            atomic_fetch_add(&t->caller_moved, 1);
        for (int k = 0; k < nthreads; k++)
            CU_ASSERT_EQUAL_FATAL(atomic_load(&t->runs[k]), i + 1);
    }
    CU_ASSERT_EQUAL(atomic_load(&t->wrong_ctx), 0);
    CU_ASSERT_EQUAL(atomic_load(&t->wrong_mask), 0);
    CU_ASSERT_EQUAL(atomic_load(&t->caller_moved), 0);
    return t;
}

static lend_task_t *rounds(utc_bind_mode_t bind) { return rounds_of(bind, THREADS, false); }

static void done(lend_task_t *t) { UTC_ASSERT_OK(utc_task_destroy(&t->base)); }

static void test_lend_each_share_once(void)
{
    lend_task_t *t = rounds(UTC_BIND_NONE);
    int on_caller = atomic_load(&t->on_caller);
    const char *env = getenv("UTC_LEND");
    printf("\n  %d of %d rounds had a share run by the caller (UTC_LEND=%s)\n", on_caller,
           ROUNDS, env ? env : "unset");
    if (lend_off()) {
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
    if (lend_off())
        CU_ASSERT_EQUAL(atomic_load(&t->on_caller), 0);
    done(t);
}

/* One thread: every share of utc_task_run_wait on the caller (the thread is never woken
 * for one), 2000 runs past the mailbox's 64 slots; then a plain run and the fini still
 * reach the thread, which skips the runs the caller took. */
static void test_run_wait_one_thread(void)
{
    lend_task_t *t = rounds_of(UTC_BIND_NONE, 1, true);
    CU_ASSERT_EQUAL(atomic_load(&t->on_caller), lend_off() ? 0 : ROUNDS);
    utc_task_t *task = &t->base;
    UTC_ASSERT_OK(utc_task_run(task, NULL));
    UTC_ASSERT_OK(utc_task_wait(task));
    CU_ASSERT_EQUAL(atomic_load(&t->runs[0]), ROUNDS + 1);
    UTC_ASSERT_OK(utc_task_destroy(task));
    CU_ASSERT_EQUAL(atomic_load(&t->fini_off_caller), 1);
}

/* Two threads: each share once a run, some on the caller; pinned, the caller runs them
 * bound as that thread and has its binding back. */
static void test_run_wait_two_threads(void)
{
    for (int pinned = 0; pinned < 2; pinned++) {
        lend_task_t *t = rounds_of(pinned ? UTC_BIND_CORE : UTC_BIND_NONE, THREADS, true);
        if (lend_off()) {
            CU_ASSERT_EQUAL(atomic_load(&t->on_caller), 0);
        } else {
            CU_ASSERT(atomic_load(&t->on_caller) > 0);
        }
        UTC_ASSERT_OK(utc_task_destroy(&t->base));
        CU_ASSERT_EQUAL(atomic_load(&t->fini_off_caller), THREADS);
    }
}

/* Behind a run in flight: queued after it (runs in order), every share once. */
static void test_run_wait_behind_a_run(void)
{
    lend_task_t *t = rounds_of(UTC_BIND_NONE, THREADS, false);
    utc_task_t *task = &t->base;
    for (int i = 0; i < 200; i++) {
        UTC_ASSERT_OK(utc_task_run(task, NULL));
        UTC_ASSERT_OK(utc_task_run_wait(task, NULL));
        for (int k = 0; k < THREADS; k++)
            CU_ASSERT_EQUAL_FATAL(atomic_load(&t->runs[k]), ROUNDS + 2 * (i + 1));
    }
    CU_ASSERT_EQUAL(atomic_load(&t->wrong_ctx), 0);
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
        {"run_wait, one thread: every share on the caller, past 64 slots",
         test_run_wait_one_thread},
        {"run_wait, two threads, pinned or not: each share once, some on the caller",
         test_run_wait_two_threads},
        {"run_wait behind a run in flight: in order, each share once",
         test_run_wait_behind_a_run},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "task_lend", cases);
}
