/*
 * The staged pipeline's bookkeeping (conduits/device/chunk_plan.h), without CUDA: chunk
 * spans, the guards that keep a slot from being refilled while its chunk is still in a
 * transfer or a copy, and the order utc__chunk_plan_next picks. Randomized sizes from 0 to
 * 64 MiB, chunk sizes and depths, checked against a shadow of every slot and every chunk,
 * both driven by the policy (send: every step; receive: the trailing frees left) and by
 * random legal steps.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device/chunk_plan.h"
#include "utc_test.h"

static void test_spans(void)
{
    utc__chunk_plan_t p;
    utc__chunk_plan_init(&p, 0, 4096, 3);
    CU_ASSERT_EQUAL(p.nchunks, 0);
    CU_ASSERT(utc__chunk_plan_done(&p, true));
    CU_ASSERT_EQUAL(utc__chunk_plan_next(&p, true), UTC__CHUNK_NONE);
    CU_ASSERT(!utc__chunk_plan_may(&p, UTC__CHUNK_IN_START));

    size_t off, len;
    utc__chunk_plan_init(&p, 10, 4, 3);
    CU_ASSERT_EQUAL(p.nchunks, 3);
    utc__chunk_plan_span(&p, 0, &off, &len);
    CU_ASSERT(off == 0 && len == 4);
    utc__chunk_plan_span(&p, 2, &off, &len);
    CU_ASSERT(off == 8 && len == 2); /* the last one shorter */

    utc__chunk_plan_init(&p, 8, 4, 3);
    CU_ASSERT_EQUAL(p.nchunks, 2);
    utc__chunk_plan_span(&p, 1, &off, &len);
    CU_ASSERT(off == 4 && len == 4);

    utc__chunk_plan_init(&p, 1, 4u << 20, 3);
    CU_ASSERT_EQUAL(p.nchunks, 1);
    utc__chunk_plan_span(&p, 0, &off, &len);
    CU_ASSERT(off == 0 && len == 1);
}

static void test_guards(void)
{
    utc__chunk_plan_t p;
    utc__chunk_plan_init(&p, 5 * 100, 100, 2);
    CU_ASSERT(!utc__chunk_plan_may(&p, UTC__CHUNK_IN_DONE)); /* nothing started */
    CU_ASSERT_EQUAL(utc__chunk_plan_take(&p, UTC__CHUNK_IN_START), 0);
    CU_ASSERT_EQUAL(utc__chunk_plan_take(&p, UTC__CHUNK_IN_START), 1);
    CU_ASSERT(!utc__chunk_plan_may(&p, UTC__CHUNK_IN_START));  /* both slots busy */
    CU_ASSERT(!utc__chunk_plan_may(&p, UTC__CHUNK_OUT_START)); /* chunk 0 not in yet */
    (void)utc__chunk_plan_take(&p, UTC__CHUNK_IN_DONE);
    (void)utc__chunk_plan_take(&p, UTC__CHUNK_OUT_START);
    CU_ASSERT(!utc__chunk_plan_may(&p, UTC__CHUNK_IN_START));  /* slot 0 still sending */
    CU_ASSERT(!utc__chunk_plan_may(&p, UTC__CHUNK_OUT_START)); /* chunk 1 not in yet */
    (void)utc__chunk_plan_take(&p, UTC__CHUNK_OUT_DONE);
    CU_ASSERT(utc__chunk_plan_may(&p, UTC__CHUNK_IN_START)); /* chunk 2 into slot 0 */
    CU_ASSERT_EQUAL(utc__chunk_plan_slot(&p, utc__chunk_plan_take(&p, UTC__CHUNK_IN_START)), 0);
    CU_ASSERT(!utc__chunk_plan_may(&p, UTC__CHUNK_OUT_DONE)); /* chunk 1 not out yet */
}

/* The policy, step by step, on a depth-3 send of 5 chunks: the copies start ahead, and
 * two transfers stay posted while the next slot fills. */
static void test_policy_order(void)
{
    utc__chunk_plan_t p;
    utc__chunk_plan_init(&p, 5, 1, 3);
    static const utc__chunk_step_t want[] = {
        UTC__CHUNK_IN_START, UTC__CHUNK_IN_START,  UTC__CHUNK_IN_START,  /* 0 1 2 */
        UTC__CHUNK_IN_DONE,  UTC__CHUNK_OUT_START,                       /* 0 posted */
        UTC__CHUNK_IN_DONE,  UTC__CHUNK_OUT_START,                       /* 1 posted */
        UTC__CHUNK_OUT_DONE, UTC__CHUNK_IN_START,                        /* 0 sent, 3 in */
        UTC__CHUNK_IN_DONE,  UTC__CHUNK_OUT_START,                       /* 2 posted */
        UTC__CHUNK_OUT_DONE, UTC__CHUNK_IN_START,                        /* 1 sent, 4 in */
        UTC__CHUNK_IN_DONE,  UTC__CHUNK_OUT_START,                       /* 3 posted */
        UTC__CHUNK_OUT_DONE, UTC__CHUNK_IN_DONE,   UTC__CHUNK_OUT_START, /* 2; 4 */
        UTC__CHUNK_OUT_DONE, UTC__CHUNK_OUT_DONE,  UTC__CHUNK_NONE};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        utc__chunk_step_t s = utc__chunk_plan_next(&p, true);
        CU_ASSERT_EQUAL(s, want[i]);
        if (s != want[i] || s == UTC__CHUNK_NONE)
            break;
        (void)utc__chunk_plan_take(&p, s);
    }
    CU_ASSERT(utc__chunk_plan_done(&p, true));

    /* the receive leaves the last frees: done once every chunk's H2D is queued */
    utc__chunk_plan_init(&p, 2, 1, 3);
    utc__chunk_step_t s;
    int steps = 0;
    while ((s = utc__chunk_plan_next(&p, false)) != UTC__CHUNK_NONE && steps++ < 100)
        (void)utc__chunk_plan_take(&p, s);
    CU_ASSERT_EQUAL(p.n[UTC__CHUNK_OUT_START], 2);
    CU_ASSERT_EQUAL(p.n[UTC__CHUNK_OUT_DONE], 0);
    CU_ASSERT(utc__chunk_plan_done(&p, false) && !utc__chunk_plan_done(&p, true));
}

/* ---- the shadow ---- */

#define MAXD 6
#define FREE UINT64_MAX

typedef struct shadow {
    uint64_t slot_chunk[MAXD]; /* the chunk in the slot, FREE when none */
    unsigned char *stage;      /* per chunk: steps taken */
    size_t next_off;           /* where the next chunk's span must start */
    int violations;
} shadow_t;

static void violation(shadow_t *s, const utc__chunk_plan_t *p, uint64_t j, const char *what)
{
    if (s->violations++ < 5)
        fprintf(stderr, "[rank %d] size %zu chunk %zu depth %u, chunk %llu: %s\n", utc_test_rank(),
                p->size, p->chunk, p->depth, (unsigned long long)j, what);
}

/* Take `step` for the plan's next chunk, checking it against the shadow. */
static void apply(utc__chunk_plan_t *p, shadow_t *s, utc__chunk_step_t step)
{
    uint64_t j = utc__chunk_plan_take(p, step);
    unsigned slot = utc__chunk_plan_slot(p, j);
    if (j >= p->nchunks) {
        violation(s, p, j, "a chunk beyond the message");
        return;
    }
    if (s->stage[j] != (unsigned char)step)
        violation(s, p, j, "a step out of order");
    s->stage[j] = (unsigned char)(step + 1);
    switch (step) {
    case UTC__CHUNK_IN_START: {
        if (s->slot_chunk[slot] != FREE)
            violation(s, p, j, "its slot refilled while an earlier chunk holds it");
        s->slot_chunk[slot] = j;
        size_t off, len;
        utc__chunk_plan_span(p, j, &off, &len);
        if (off != s->next_off || len == 0 || len > p->chunk ||
            (j + 1 < p->nchunks && len != p->chunk))
            violation(s, p, j, "a span that does not follow the one before");
        s->next_off = off + len;
        break;
    }
    case UTC__CHUNK_OUT_DONE:
        if (s->slot_chunk[slot] != j)
            violation(s, p, j, "freed a slot it does not hold");
        s->slot_chunk[slot] = FREE;
        break;
    default:
        if (s->slot_chunk[slot] != j)
            violation(s, p, j, "a step of a chunk that is not in its slot");
        break;
    }
}

static uint64_t rnd_range(uint64_t lo, uint64_t hi) /* [lo, hi] */
{
    uint64_t r = ((uint64_t)rand() << 31) ^ (uint64_t)rand();
    return lo + r % (hi - lo + 1);
}

/* One message, driven by the policy (random == 0) or by random legal steps. */
static void drive(size_t size, size_t chunk, unsigned depth, bool need_out_done, int random)
{
    utc__chunk_plan_t p;
    utc__chunk_plan_init(&p, size, chunk, depth);
    shadow_t s = {.stage = calloc(p.nchunks + 1, 1)};
    CU_ASSERT_FATAL(s.stage != NULL);
    for (unsigned i = 0; i < MAXD; i++)
        s.slot_chunk[i] = FREE;
    uint64_t limit = 4 * p.nchunks + 8, steps = 0;
    for (; steps < limit; steps++) {
        utc__chunk_step_t step = utc__chunk_plan_next(&p, need_out_done);
        if (step == UTC__CHUNK_NONE)
            break;
        if (!utc__chunk_plan_may(&p, step)) {
            violation(&s, &p, p.n[step], "the policy picked a step its guard refuses");
            break;
        }
        /* the policy starts what it can before it blocks */
        if ((step == UTC__CHUNK_IN_DONE || step == UTC__CHUNK_OUT_DONE) &&
            (utc__chunk_plan_may(&p, UTC__CHUNK_IN_START) ||
             utc__chunk_plan_may(&p, UTC__CHUNK_OUT_START)))
            violation(&s, &p, p.n[step], "blocks while a start is possible");
        if (random) {
            /* any legal step instead: the guards alone must keep the slots safe */
            utc__chunk_step_t legal[UTC__CHUNK_STEPS];
            int n = 0;
            for (int k = 0; k < UTC__CHUNK_STEPS; k++)
                if (utc__chunk_plan_may(&p, (utc__chunk_step_t)k))
                    legal[n++] = (utc__chunk_step_t)k;
            step = legal[rand() % n];
        }
        apply(&p, &s, step);
    }
    CU_ASSERT(steps < limit); /* no stall, no endless loop */
    CU_ASSERT(utc__chunk_plan_done(&p, need_out_done));
    CU_ASSERT_EQUAL(s.next_off, size);
    for (uint64_t j = 0; j < p.nchunks; j++)
        if (s.stage[j] < (need_out_done ? 4 : 3))
            violation(&s, &p, j, "left before its last step");
    CU_ASSERT_EQUAL(s.violations, 0);
    free(s.stage);
}

static size_t random_size(void)
{
    switch (rand() % 4) {
    case 0:
        return (size_t)rnd_range(0, 64); /* tiny, and 0 */
    case 1:
        return (size_t)rnd_range(0, 1 << 20);
    default:
        return (size_t)rnd_range(0, (uint64_t)64 << 20); /* up to 64 MiB */
    }
}

static size_t random_chunk(size_t size)
{
    size_t c;
    switch (rand() % 3) {
    case 0:
        c = (size_t)rnd_range(64 << 10, 8 << 20); /* the bounds' useful range */
        break;
    case 1:
        c = (size_t)rnd_range(1, 4096);
        break;
    default: /* an exact divisor or one off it */
        c = size / (size_t)rnd_range(1, 16) + (size_t)rnd_range(0, 2) - 1;
        break;
    }
    if (c == 0)
        c = 1;
    /* at most ~100,000 chunks: the walk stays quick */
    if (size / c > 100000)
        c = size / 100000 + 1;
    return c;
}

static void test_random_policy(void)
{
    srand(1234u + (unsigned)utc_test_rank());
    for (int i = 0; i < 1500; i++) {
        size_t size = random_size();
        unsigned depth = (unsigned)rnd_range(1, MAXD);
        drive(size, random_chunk(size), depth, rand() & 1, 0);
    }
    /* the edges: the message exactly a multiple of the chunk, and one byte either side */
    for (unsigned depth = 1; depth <= MAXD; depth++)
        for (int d = -1; d <= 1; d++) {
            drive((size_t)(16 << 20) + (size_t)d, 4 << 20, depth, true, 0);
            drive((size_t)(16 << 20) + (size_t)d, 4 << 20, depth, false, 0);
        }
}

static void test_random_legal_steps(void)
{
    srand(99u + (unsigned)utc_test_rank());
    for (int i = 0; i < 1500; i++) {
        size_t size = random_size();
        unsigned depth = (unsigned)rnd_range(1, MAXD);
        drive(size, random_chunk(size), depth, true, 1);
    }
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"spans", test_spans},
        {"guards", test_guards},
        {"policy order", test_policy_order},
        {"random sizes, the policy, shadow", test_random_policy},
        {"random sizes, random legal steps, shadow", test_random_legal_steps},
        UTC_TEST_END,
    };
    return utc_test_main(argc, argv, "chunk_plan", cases);
}
