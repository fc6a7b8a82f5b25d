/*
 * The overlapped GPU pipeline's ring (gpu/pipeline_ring.h), without CUDA: the guards that
 * decide when an item may be read, copied in, handed out, computed, copied back and
 * delivered. A simulation drives rings of every depth with random completion orders and
 * checks, against a shadow of each slot's four buffers, that no buffer is refilled while
 * an earlier item still needs it, that reads never run more than `depth` items ahead, and
 * that every item reaches the end (no stall), with and without a known count.
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline_ring.h"
#include "utc_test.h"

static void test_depth_one_is_sequential(void)
{
    utc__pring_t r;
    utc__pring_init(&r, 1, 0);
    CU_ASSERT(utc__pring_may(&r, UTC__PRING_POST));
    CU_ASSERT_EQUAL(utc__pring_take(&r, UTC__PRING_POST), 0);
    CU_ASSERT(!utc__pring_may(&r, UTC__PRING_POST)); /* no read ahead */
    CU_ASSERT(!utc__pring_may(&r, UTC__PRING_LOAD)); /* not arrived */
    (void)utc__pring_take(&r, UTC__PRING_ARRIVE);
    (void)utc__pring_take(&r, UTC__PRING_LOAD);
    (void)utc__pring_take(&r, UTC__PRING_FREE_IN);
    CU_ASSERT(!utc__pring_may(&r, UTC__PRING_POST)); /* item 0 not computed yet */
    (void)utc__pring_take(&r, UTC__PRING_HAND);
    CU_ASSERT(!utc__pring_may(&r, UTC__PRING_HAND)); /* one item out at a time */
    (void)utc__pring_take(&r, UTC__PRING_COMPUTE);
    CU_ASSERT(!utc__pring_may(&r, UTC__PRING_POST)); /* result 0 not delivered yet */
    (void)utc__pring_take(&r, UTC__PRING_COPY_OUT);
    (void)utc__pring_take(&r, UTC__PRING_DELIVER);
    CU_ASSERT(!utc__pring_may(&r, UTC__PRING_POST)); /* written, not yet released */
    (void)utc__pring_take(&r, UTC__PRING_RELEASE);
    CU_ASSERT(utc__pring_may(&r, UTC__PRING_POST)); /* now item 1 may be read */
    (void)utc__pring_take(&r, UTC__PRING_POST);
    (void)utc__pring_take(&r, UTC__PRING_ARRIVE);
    (void)utc__pring_take(&r, UTC__PRING_LOAD);
    (void)utc__pring_take(&r, UTC__PRING_HAND);
    CU_ASSERT(utc__pring_may(&r, UTC__PRING_COMPUTE));
}

static void test_depth_two_overlaps(void)
{
    utc__pring_t r;
    utc__pring_init(&r, 2, 0);
    /* items 0 and 1 read and loaded before item 0 is handed out */
    for (int i = 0; i < 2; i++) {
        (void)utc__pring_take(&r, UTC__PRING_POST);
        (void)utc__pring_take(&r, UTC__PRING_ARRIVE);
        (void)utc__pring_take(&r, UTC__PRING_LOAD);
    }
    CU_ASSERT(!utc__pring_may(&r, UTC__PRING_POST)); /* both input stagings busy */
    (void)utc__pring_take(&r, UTC__PRING_FREE_IN);
    CU_ASSERT(!utc__pring_may(&r, UTC__PRING_POST)); /* no more than depth reads ahead */
    (void)utc__pring_take(&r, UTC__PRING_HAND);
    (void)utc__pring_take(&r, UTC__PRING_COMPUTE);
    CU_ASSERT(utc__pring_may(&r, UTC__PRING_POST)); /* item 2 into slot 0's staging */
    (void)utc__pring_take(&r, UTC__PRING_POST);
    (void)utc__pring_take(&r, UTC__PRING_ARRIVE);
    CU_ASSERT(utc__pring_may(&r, UTC__PRING_LOAD)); /* after item 0's kernel event */
    (void)utc__pring_take(&r, UTC__PRING_HAND);
    CU_ASSERT(utc__pring_may(&r, UTC__PRING_COMPUTE)); /* two results may be in flight */
    (void)utc__pring_take(&r, UTC__PRING_COMPUTE);
    (void)utc__pring_take(&r, UTC__PRING_LOAD);
    (void)utc__pring_take(&r, UTC__PRING_HAND);
    CU_ASSERT(!utc__pring_may(&r, UTC__PRING_COMPUTE)); /* result 0 holds slot 0 */
}

static void test_count_and_end(void)
{
    utc__pring_t r;
    utc__pring_init(&r, 4, 3);
    for (int i = 0; i < 3; i++)
        (void)utc__pring_take(&r, UTC__PRING_POST);
    CU_ASSERT(!utc__pring_may(&r, UTC__PRING_POST)); /* never beyond the count */
    CU_ASSERT(!utc__pring_exhausted(&r));

    utc__pring_init(&r, 3, 0);
    for (int i = 0; i < 3; i++)
        (void)utc__pring_take(&r, UTC__PRING_POST);
    (void)utc__pring_take(&r, UTC__PRING_ARRIVE);
    utc__pring_end(&r, 1); /* the read of item 1 found the stream closed */
    CU_ASSERT_EQUAL(r.limit, 1);
    CU_ASSERT(!utc__pring_may(&r, UTC__PRING_ARRIVE));
    CU_ASSERT(!utc__pring_may(&r, UTC__PRING_POST));
    (void)utc__pring_take(&r, UTC__PRING_LOAD);
    (void)utc__pring_take(&r, UTC__PRING_HAND);
    CU_ASSERT(utc__pring_exhausted(&r));
    CU_ASSERT(!utc__pring_drained(&r));
    (void)utc__pring_take(&r, UTC__PRING_COMPUTE);
    (void)utc__pring_take(&r, UTC__PRING_COPY_OUT);
    (void)utc__pring_take(&r, UTC__PRING_DELIVER);
    (void)utc__pring_take(&r, UTC__PRING_RELEASE);
    CU_ASSERT(utc__pring_drained(&r));
}

/* ---- the simulation ---- */

#define MAXD 8
#define NONE UINT64_MAX

typedef struct {
    uint64_t in_host[MAXD], out_host[MAXD]; /* the item whose data the staging holds */
    unsigned char *computed;                /* COMPUTE taken, per item */
    int violations;
} shadow_t;

static void violation(shadow_t *s, const char *what, uint64_t j, unsigned depth)
{
    if (s->violations++ < 5)
        fprintf(stderr, "[rank %d] depth %u, item %llu: %s\n", utc_test_rank(), depth,
                (unsigned long long)j, what);
}

/* One step of item j, checked against the shadow. */
static void apply(utc__pring_t *r, shadow_t *s, utc__pring_step_t step)
{
    unsigned d = r->depth;
    uint64_t j = utc__pring_take(r, step);
    unsigned k = utc__pring_slot(r, j);
    switch (step) {
    case UTC__PRING_POST:
        if (s->in_host[k] != NONE)
            violation(s, "read into an input staging the copy in has not emptied", j, d);
        if (j >= r->n[UTC__PRING_COMPUTE] + d)
            violation(s, "read more than depth items ahead", j, d);
        if (d == 1 && j > r->n[UTC__PRING_RELEASE])
            violation(s, "depth 1 read before the last result was delivered", j, d);
        s->in_host[k] = j;
        break;
    case UTC__PRING_LOAD:
        if (s->in_host[k] != j)
            violation(s, "copy in from a staging holding another item", j, d);
        if (j >= d && !s->computed[j - d])
            violation(s, "copy in before the kernel event of the slot's last item", j, d);
        break;
    case UTC__PRING_FREE_IN:
        s->in_host[k] = NONE;
        break;
    case UTC__PRING_HAND:
        if (j >= d && !s->computed[j - d])
            violation(s, "kernel before the copy back of the slot's last item was queued", j, d);
        if (j > 0 && !s->computed[j - 1])
            violation(s, "two items out at once", j, d);
        break;
    case UTC__PRING_COMPUTE:
        if (s->out_host[k] != NONE)
            violation(s, "copy back into an output staging not yet released", j, d);
        s->out_host[k] = j;
        s->computed[j] = 1;
        break;
    case UTC__PRING_RELEASE:
        if (s->out_host[k] != j)
            violation(s, "released a staging holding another item", j, d);
        s->out_host[k] = NONE;
        break;
    default:
        break;
    }
}

/* Drive a ring of `depth` over `items` items with random completion orders; `closed`:
 * the count is unknown and the writer closes after `items`. */
static void simulate(unsigned depth, uint64_t items, int closed, unsigned seed)
{
    utc__pring_t r;
    utc__pring_init(&r, depth, closed ? 0 : items);
    shadow_t s;
    memset(&s, 0, sizeof s);
    for (unsigned k = 0; k < MAXD; k++)
        s.in_host[k] = s.out_host[k] = NONE;
    s.computed = calloc(items + 1, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s.computed);
    srand(seed);
    long stuck = 0;
    while (!(utc__pring_exhausted(&r) && utc__pring_drained(&r))) {
        utc__pring_step_t step = (utc__pring_step_t)(rand() % UTC__PRING_STEPS);
        int any = 0;
        for (int i = 0; i < UTC__PRING_STEPS; i++)
            any |= utc__pring_may(&r, (utc__pring_step_t)i) ||
                   (i == UTC__PRING_ARRIVE && closed && r.n[i] == items && r.n[i] < r.n[0]);
        if (!any) {
            violation(&s, "no step can be taken: the ring is stuck", r.n[UTC__PRING_HAND], depth);
            break;
        }
        if (closed && step == UTC__PRING_ARRIVE && r.n[step] == items && r.n[step] < r.limit &&
            r.n[step] < r.n[UTC__PRING_POST]) {
            utc__pring_end(&r, items); /* the read past the last item finds the end */
            continue;
        }
        if (utc__pring_may(&r, step))
            apply(&r, &s, step);
        else if (++stuck > 100000000L)
            break;
    }
    CU_ASSERT_EQUAL(s.violations, 0);
    CU_ASSERT_EQUAL(r.n[UTC__PRING_RELEASE], items);
    CU_ASSERT_EQUAL(r.limit, items);
    CU_ASSERT(r.n[UTC__PRING_POST] <= items + (closed ? depth : 0));
    free(s.computed);
}

static void test_simulated_orders(void)
{
    for (unsigned depth = 1; depth <= MAXD; depth++)
        for (unsigned seed = 1; seed <= 20; seed++) {
            simulate(depth, 200, 0, seed * 7919u + depth);
            simulate(depth, 37, 1, seed * 104729u + depth);
        }
    simulate(3, 0, 1, 5); /* a stream closed before its first item */
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"depth 1: one item at a time", test_depth_one_is_sequential},
        {"depth 2: copies of the next item before the kernel", test_depth_two_overlaps},
        {"count and end of stream", test_count_and_end},
        {"random completion orders, every depth", test_simulated_orders},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "gpu pipeline ring", cases);
}
