/*
 * A task that talks to itself (issue 22 item 1): a free-mode conduit from a task to itself
 * joins the task's ranks point to point, in the same iteration as the task's collectives.
 * Each rank swaps halos with its ring neighbours (utc_conduit_sendrecv: 8 B and 64 KiB,
 * the second larger than a write may leave behind) and then takes part in an allreduce of
 * the iteration's values, 200 iterations. At one rank the neighbour is the rank itself (in
 * process). A conduit from a task to itself in single-entry mode is refused.
 */
#include <stdlib.h>

#include "conduit_test_util.h"

#define ITERS 200
#define HALO  (64 << 10)

typedef struct {
    utc_conduit_t *self;
} job_t;

static int stencil_like(utc_ctx_t *ctx, void *data)
{
    job_t *j = data;
    int n = utc_nranks(), me = ctx->world_rank;
    int right = (me + 1) % n, left = (me + n - 1) % n;
    unsigned char *out = malloc(HALO), *in = malloc(HALO);
    CT_CHECK(out && in, "out of memory");
    for (int it = 0; out && in && it < ITERS; it++) {
        size_t n_bytes = it % 2 ? HALO : 8, got = 0;
        ct_fill(out, n_bytes, (uint64_t)me * 1000 + (uint64_t)it);
        /* my right halo goes right; my left neighbour's comes in */
        if (!CT_OK(utc_conduit_sendrecv(j->self, right, out, n_bytes, 1, left, in, HALO, 1,
                                        &got)))
            break;
        CT_CHECK(got == n_bytes && ct_verify(in, n_bytes, (uint64_t)left * 1000 + (uint64_t)it),
                 "iteration %d: %zu bytes from rank %d, expected %zu", it, got, left, n_bytes);
        /* the same iteration's collective over the same task */
        double mine = me + it, sum = -1;
        if (!CT_OK(utc_task_allreduce(ctx, &mine, &sum, 1, UTC_TYPE_DOUBLE, UTC_OP_SUM)))
            break;
        double want = (double)n * (n - 1) / 2 + (double)n * it;
        CT_CHECK(sum == want, "iteration %d: allreduce %g, expected %g", it, sum, want);
    }
    free(out);
    free(in);
    return 0;
}

static void test_self_conduit(void)
{
    ct_begin();
    int n = utc_nranks(), procs[3] = {0, 1, 2};
    utc_task_t *t = ct_task_procs(&ct_ops_a, procs, n);
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.mode = UTC_CONDUIT_FREE;
    job_t j = {NULL};
    UTC_ASSERT_OK(utc_conduit_create(t, t, &o, &j.self));
    ct_run1(t, stencil_like, &j);
    UTC_ASSERT_OK(utc_conduit_destroy(j.self));
    /* single-entry mode has no way to name a rank: refused, with the reason */
    utc_conduit_t *c = NULL;
    CU_ASSERT_EQUAL(utc_conduit_create(t, t, NULL, &c), UTC_ERR_INVALID_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(utc_last_error(), "free mode"));
    UTC_ASSERT_OK(utc_task_destroy(t));
    CT_END();
}

static const utc_test_case_t cases[] = {
    {"halos on a conduit to itself, then an allreduce, 200 iterations", test_self_conduit},
    UTC_TEST_END};

int main(int argc, char **argv) { return utc_test_main(argc, argv, "self conduit", cases); }
