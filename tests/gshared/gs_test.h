/*
 * Helpers of the gshared suites: run a body in a task with `per_rank` threads on every
 * rank, and checks that task threads can make (CUnit is not thread-safe: threads count
 * failures, the main thread asserts the count).
 */
#ifndef UTC_GS_TEST_H
#define UTC_GS_TEST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utc_test.h"

typedef struct gs_task gs_task_t;
typedef void (*gs_body_t)(gs_task_t *t, utc_ctx_t *ctx, void *arg);

/* The tests' task type: rank-shared fields for the bodies to use. */
struct gs_task {
    utc_task_t base;
    gs_body_t body;
    atomic_int failures;
    utc_gdata_t *gd, *gd2; /* handles kept for the main thread or other threads */
    void *shared;          /* test-specific rank-shared state */
    atomic_llong sum;      /* rank-shared accumulators */
    atomic_llong count[2];
    int64_t buf[64]; /* rank-shared buffers for collectives */
};

/* In a body: count a failed check with its place and the thread's last error. */
#define GS_CHECK(t, ctx, cond)                                                                     \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            atomic_fetch_add(&(t)->failures, 1);                                                   \
            fprintf(stderr, "[rank %d thread %d] %s:%d: check failed: %s (last error: %s)\n",      \
                    (ctx)->world_rank, (ctx)->local_id, __FILE__, __LINE__, #cond,                 \
                    utc_last_error());                                                             \
        }                                                                                          \
    } while (0)

/* In a body: the call must return `want`. */
#define GS_EXPECT(t, ctx, expr, want)                                                              \
    do {                                                                                           \
        int gs_rc_ = (expr);                                                                       \
        if (gs_rc_ != (want)) {                                                                    \
            atomic_fetch_add(&(t)->failures, 1);                                                   \
            fprintf(stderr, "[rank %d thread %d] %s:%d: %s returned %d (%s), want %d: %s\n",       \
                    (ctx)->world_rank, (ctx)->local_id, __FILE__, __LINE__, #expr, gs_rc_,         \
                    utc_status_string(gs_rc_), (int)(want), utc_last_error());                     \
        }                                                                                          \
    } while (0)

#define GS_OK(t, ctx, expr) GS_EXPECT(t, ctx, expr, UTC_OK)

/* The call must fail with `want` and a last-error message containing `needle`. */
#define GS_ERROR(t, ctx, expr, want, needle)                                                       \
    do {                                                                                           \
        GS_EXPECT(t, ctx, expr, want);                                                             \
        GS_CHECK(t, ctx, strstr(utc_last_error(), (needle)) != NULL);                              \
    } while (0)

static int gs_task_run_(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    gs_task_t *t = (gs_task_t *)self;
    t->body(t, ctx, arg);
    return 0;
}

static const utc_task_ops_t gs_task_ops = {
    .name = "gs_test", .size = sizeof(gs_task_t), .run = gs_task_run_};

/* Create a task with `per_rank` threads on each rank and a window of `window` bytes. */
static inline gs_task_t *gs_task_create(int per_rank, size_t window)
{
    static int procs[UTC_TASK_MAX_THREADS];
    int n = utc_procs_spread(procs, UTC_TASK_MAX_THREADS, 0, utc_nranks(), per_rank);
    CU_ASSERT_FATAL(n > 0);
    utc_task_options_t opts = UTC_TASK_OPTIONS_INIT;
    opts.window_size = window;
    utc_task_t *task = NULL;
    UTC_ASSERT_OK(utc_task_create(&gs_task_ops, procs, n, &opts, &task));
    return (gs_task_t *)task;
}

/* Run body once on every thread of t; assert it ran and no check failed. */
static inline void gs_task_exec(gs_task_t *t, gs_body_t body, void *arg)
{
    t->body = body;
    UTC_ASSERT_OK(utc_task_run(&t->base, arg));
    UTC_ASSERT_OK(utc_task_wait(&t->base));
    CU_ASSERT_EQUAL(atomic_load(&t->failures), 0);
    atomic_store(&t->failures, 0);
}

/* Create a task, run body once, destroy it. */
static inline void gs_run(gs_body_t body, int per_rank, size_t window, void *arg)
{
    gs_task_t *t = gs_task_create(per_rank, window);
    gs_task_exec(t, body, arg);
    UTC_ASSERT_OK(utc_task_destroy(&t->base));
}

/*
 * Task collectives in the suites' two forms, inside a body with `t` and `ctx`: `by` < 0,
 * every local thread makes the call (all_form); otherwise only local thread `by` makes it
 * (by_form) and a local barrier follows, so every thread may read the result.
 */
#define GS_COLL_CALL(by, all_form, by_form)                                                        \
    do {                                                                                           \
        if ((by) < 0)                                                                              \
            GS_OK(t, ctx, all_form);                                                               \
        else                                                                                       \
            GS_OK(t, ctx, by_form);                                                                \
        if ((by) >= 0)                                                                             \
            GS_OK(t, ctx, utc_ctx_barrier_local(ctx));                                             \
    } while (0)

/* Before such a call: the filler thread runs stmt while the others wait (the _by caller
 * may not be the filler; with the all-threads form every thread checks the arguments it
 * passes, counts and displacements in the shared buffers included, so none may call
 * before the filler is done). */
#define GS_COLL_FILL(by, filler, stmt)                                                             \
    do {                                                                                           \
        (void)(by);                                                                                \
        if (filler) {                                                                              \
            stmt;                                                                                  \
        }                                                                                          \
        GS_OK(t, ctx, utc_ctx_barrier_local(ctx));                                                 \
    } while (0)

/* Create a task, give it `bytes` of zeroed rank-shared memory (t->shared), run body once,
 * destroy it. */
static inline void gs_run_shared(gs_body_t body, int per_rank, size_t window, size_t bytes)
{
    gs_task_t *t = gs_task_create(per_rank, window);
    void *shared = calloc(1, bytes);
    CU_ASSERT_FATAL(shared != NULL);
    t->shared = shared;
    gs_task_exec(t, body, NULL);
    UTC_ASSERT_OK(utc_task_destroy(&t->base));
    free(shared);
}

/* xorshift64*: a small per-thread PRNG. */
static inline uint64_t gs_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

#endif /* UTC_GS_TEST_H */
