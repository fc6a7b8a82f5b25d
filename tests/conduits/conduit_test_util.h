/*
 * Helpers shared by the conduit suites (conduit_test_util.c): a task type that runs a job
 * function, placement of task pairs by rank count, a pair of tasks joined by a conduit,
 * deterministic message contents, and thread-safe checks (CUnit is not thread-safe: task
 * threads count failures, the main thread asserts).
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

/* Three task types that run a ct_job_t: "task-a", "task-b", "task-c". */
extern const utc_task_ops_t ct_ops_a, ct_ops_b, ct_ops_c;

/* Failures seen by task threads; the main thread asserts it stays 0. */
extern atomic_int ct_failures;

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
void ct_begin(void);
#define CT_END() CU_ASSERT_EQUAL(atomic_load(&ct_failures), 0)

/* A task with the given proc list. */
utc_task_t *ct_task_procs(const utc_task_ops_t *ops, const int *procs, int n);

/* A task with n threads (at most 64), all on `rank`. */
utc_task_t *ct_task(const utc_task_ops_t *ops, int rank, int n);

/* Two ranks for a pair of tasks that should be on different ranks: 0 and 0 with one
 * rank, 0 and 1 with two, 1 and 2 with three (so rank 0 also holds a bystander). */
void ct_pair_ranks(int *a, int *b);

/* ct_pair_ranks for a case that needs two ranks: false, with a note in the test's output,
 * when there is only one. */
bool ct_remote_ranks(int *a, int *b);

/* Run one job on each of two tasks at once (collective) and wait for both. */
void ct_run2(utc_task_t *a, ct_fn_t fa, void *da, utc_task_t *b, ct_fn_t fb, void *db);

/* Run one job on one task (collective) and wait. */
void ct_run1(utc_task_t *a, ct_fn_t fa, void *da);

/* A job that does nothing, for the end of a pair that has no part in a case. */
int ct_idle(utc_ctx_t *ctx, void *data);

/* ---- a pair of tasks joined by one conduit ---- */

typedef struct ct_pair {
    utc_task_t *a; /* "task-a", the conduit's source */
    utc_task_t *b; /* "task-b", its destination */
    utc_conduit_t *c;
} ct_pair_t;

/* Tasks of na threads on rank ra and nb threads on rank rb, and a conduit from the first
 * to the second with opts (NULL: defaults). Collective. */
ct_pair_t ct_pair_open(int ra, int na, int rb, int nb, const utc_conduit_options_t *opts);

/* The same with the tasks' proc lists given. Collective. */
ct_pair_t ct_pair_open_procs(const int *pa, int na, const int *pb, int nb,
                             const utc_conduit_options_t *opts);

/* Destroy the conduit, then both tasks. Collective. */
void ct_pair_close(ct_pair_t *p);

/* ct_run2 on the pair with the conduit as both jobs' data. Collective. */
void ct_pair_run(const ct_pair_t *p, ct_fn_t fa, ct_fn_t fb);

/* Run fa on task a and fb on task b, where fa's run fails with fa_rc (the status
 * utc_task_wait reports on a's ranks; fb's run must succeed), then a barrier. Collective. */
void ct_pair_run_failing(const ct_pair_t *p, ct_fn_t fa, int fa_rc, ct_fn_t fb);
/* A case run once per placement of its two tasks. */
typedef void (*ct_place_fn_t)(int ra, int rb, void *arg);

/* Call fn(0, 0, arg) (both tasks in-process on rank 0), then fn with the ranks of
 * ct_pair_ranks (between ranks when there are two or more). With one rank the second
 * call is in-process again, unless `distinct`, which leaves it out. Collective. */
void ct_each_placement(bool distinct, ct_place_fn_t fn, void *arg);

/* For each placement (both calls, `distinct` false): open a pair with na and nb threads
 * and default options, ct_pair_run it with fa and fb, close it. Collective. */
void ct_each_placement_run(int na, ct_fn_t fa, int nb, ct_fn_t fb);

/* ---- message contents ---- */

/* A 64-bit mix of x (splitmix64's finalizer). */
uint64_t ct_mix(uint64_t x);

/* Fill / check n bytes with contents that depend on seed and position. */
void ct_fill(void *buf, size_t n, uint64_t seed);
bool ct_verify(const void *buf, size_t n, uint64_t seed);

#endif /* UTC_CONDUIT_TEST_UTIL_H */
