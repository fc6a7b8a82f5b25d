/*
 * Helpers shared by the conduit suites: a task type that runs a job function, placement
 * of task pairs by rank count, deterministic message contents, and thread-safe checks
 * (CUnit is not thread-safe: task threads count failures, the main thread asserts).
 */
#ifndef UTC_CONDUIT_TEST_UTIL_H
#define UTC_CONDUIT_TEST_UTIL_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utc_test.h"

typedef int (*ct_fn_t)(utc_ctx_t *ctx, void *data);

/* The argument of utc_task_run: every local thread calls fn(ctx, data). */
typedef struct ct_job {
    ct_fn_t fn;
    void *data;
} ct_job_t;

typedef struct ct_task {
    utc_task_t base;
} ct_task_t;

static inline int ct_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self;
    ct_job_t *job = arg;
    return job->fn(ctx, job->data);
}

__attribute__((unused)) static const utc_task_ops_t ct_ops_a = {
    .name = "task-a", .size = sizeof(ct_task_t), .run = ct_run};
__attribute__((unused)) static const utc_task_ops_t ct_ops_b = {
    .name = "task-b", .size = sizeof(ct_task_t), .run = ct_run};
__attribute__((unused)) static const utc_task_ops_t ct_ops_c = {
    .name = "task-c", .size = sizeof(ct_task_t), .run = ct_run};

/* Failures seen by task threads; the main thread asserts it stays 0. */
static atomic_int ct_failures;

#define CT_CHECK(cond, ...)                                                               \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            if (atomic_fetch_add(&ct_failures, 1) < 20) {                                 \
                fprintf(stderr, "[rank %d] %s:%d: check failed: %s: ", utc_rank(),        \
                        __FILE__, __LINE__, #cond);                                       \
                fprintf(stderr, __VA_ARGS__);                                             \
                fprintf(stderr, "\n");                                                    \
            }                                                                             \
        }                                                                                 \
    } while (0)

/* Check a status inside a task thread; evaluates to whether it was UTC_OK. */
#define CT_OK(expr)                                                                       \
    ({                                                                                    \
        int ct_rc_ = (expr);                                                              \
        CT_CHECK(ct_rc_ == UTC_OK, "%s returned %d (%s): %s", #expr, ct_rc_,              \
                 utc_status_string(ct_rc_), utc_last_error());                            \
        ct_rc_ == UTC_OK;                                                                 \
    })

/* Check an expected error status inside a task thread. */
#define CT_EXPECT(expr, want)                                                             \
    do {                                                                                  \
        int ct_rc_ = (expr);                                                              \
        CT_CHECK(ct_rc_ == (want), "%s returned %d (%s), expected %s: %s", #expr, ct_rc_,  \
                 utc_status_string(ct_rc_), #want, utc_last_error());                     \
    } while (0)

/* Reset the failure count at the start of a test case; assert it at the end. */
static inline void ct_begin(void) { atomic_store(&ct_failures, 0); }
#define CT_END() CU_ASSERT_EQUAL(atomic_load(&ct_failures), 0)

/* A task with the given proc list. */
static inline utc_task_t *ct_task_procs(const utc_task_ops_t *ops, const int *procs, int n)
{
    utc_task_t *t = NULL;
    utc_status_t rc = utc_task_create(ops, procs, n, NULL, &t);
    if (rc != UTC_OK)
        utc_test_report_(__FILE__, __LINE__, "utc_task_create", rc);
    CU_ASSERT_FATAL(rc == UTC_OK);
    return t;
}

/* A task with n threads, all on `rank`. */
static inline utc_task_t *ct_task(const utc_task_ops_t *ops, int rank, int n)
{
    int procs[64];
    for (int i = 0; i < n && i < 64; i++)
        procs[i] = rank;
    return ct_task_procs(ops, procs, n);
}

/* Two ranks for a pair of tasks that should be on different ranks: 0 and 0 with one
 * rank, 0 and 1 with two, 1 and 2 with three (so rank 0 also holds a bystander). */
static inline void ct_pair_ranks(int *a, int *b)
{
    int n = utc_test_nranks();
    *a = n >= 3 ? 1 : 0;
    *b = n >= 3 ? 2 : n - 1;
}

/* Run one job on each of two tasks at once (collective) and wait for both. */
static inline void ct_run2(utc_task_t *a, ct_fn_t fa, void *da, utc_task_t *b, ct_fn_t fb,
                           void *db)
{
    ct_job_t ja = {fa, da}, jb = {fb, db};
    UTC_ASSERT_OK(utc_task_run(a, &ja));
    UTC_ASSERT_OK(utc_task_run(b, &jb));
    UTC_ASSERT_OK(utc_task_wait(a));
    UTC_ASSERT_OK(utc_task_wait(b));
    /* ranks that hold neither task wait here, asleep, rather than in the next MPI
     * collective, where Open MPI would spin on a core the busy ranks need */
    UTC_ASSERT_OK(utc_barrier());
}

/* Run one job on one task (collective) and wait. */
static inline void ct_run1(utc_task_t *a, ct_fn_t fa, void *da)
{
    ct_job_t ja = {fa, da};
    UTC_ASSERT_OK(utc_task_run(a, &ja));
    UTC_ASSERT_OK(utc_task_wait(a));
    UTC_ASSERT_OK(utc_barrier());
}

static inline uint64_t ct_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Fill / check n bytes with contents that depend on seed and position. */
static inline void ct_fill(void *buf, size_t n, uint64_t seed)
{
    unsigned char *p = buf;
    size_t words = n / 8;
    uint64_t s = ct_mix(seed);
    for (size_t i = 0; i < words; i++) {
        uint64_t w = s + i * 0x9e3779b97f4a7c15ull;
        w ^= w >> 29;
        memcpy(p + 8 * i, &w, 8);
    }
    uint64_t t = ct_mix(s ^ n);
    memcpy(p + 8 * words, &t, n - 8 * words);
}

static inline bool ct_verify(const void *buf, size_t n, uint64_t seed)
{
    const unsigned char *p = buf;
    size_t words = n / 8;
    uint64_t s = ct_mix(seed);
    for (size_t i = 0; i < words; i++) {
        uint64_t w = s + i * 0x9e3779b97f4a7c15ull, v;
        w ^= w >> 29;
        memcpy(&v, p + 8 * i, 8);
        if (v != w)
            return false;
    }
    uint64_t t = ct_mix(s ^ n);
    return memcmp(p + 8 * words, &t, n - 8 * words) == 0;
}

#endif /* UTC_CONDUIT_TEST_UTIL_H */
