/*
 * Several conduits and tasks at once: a 4-stage pipeline whose stages run concurrently
 * (spread over the ranks, so in-process and MPI conduits mix); three conduits between the
 * same two tasks used at once with the same tags; many conduits created and destroyed.
 */
#include "conduit_test_util.h"

#define NSTAGE 4
#define NITEM 2000
#define ITEM_WORDS 64

typedef struct {
    utc_conduit_t *in, *out; /* NULL at the ends of the pipeline */
    int stage;
    uint64_t item[ITEM_WORDS];
} stage_t;

/* Stage 0 makes items, middle stages add their number to every word, the last checks. */
static int stage_run(utc_ctx_t *ctx, void *d)
{
    stage_t *s = d;
    for (int i = 0; i < NITEM; i++) {
        size_t n = 8 * (size_t)(1 + i % ITEM_WORDS), got = 0;
        if (!s->in) {
            if (ctx->local_id == 0)
                for (int w = 0; w < ITEM_WORDS; w++)
                    s->item[w] = (uint64_t)i * 1000 + (uint64_t)w;
        } else {
            if (!CT_OK(utc_conduit_read(s->in, s->item, sizeof s->item, 0, &got)))
                return -1;
            CT_CHECK(got == n, "stage %d item %d: %zu bytes, want %zu", s->stage, i, got, n);
        }
        if (ctx->local_id == 0 && s->in && s->out)
            for (size_t w = 0; w < n / 8; w++)
                s->item[w] += (uint64_t)s->stage;
        if (s->out) {
            if (!CT_OK(utc_conduit_write(s->out, s->item, n, 0)))
                return -1;
        } else if (ctx->local_id == 0) {
            uint64_t add = 0;
            for (int st = 1; st < NSTAGE - 1; st++)
                add += (uint64_t)st;
            for (size_t w = 0; w < n / 8; w++)
                if (s->item[w] != (uint64_t)i * 1000 + w + add) {
                    CT_CHECK(0, "item %d word %zu is %llu", i, w, (unsigned long long)s->item[w]);
                    return -1;
                }
        }
        utc_ctx_barrier_local(ctx); /* the item buffer is reused */
    }
    return 0;
}

static void test_pipeline(void)
{
    ct_begin();
    int nr = utc_test_nranks();
    utc_task_t *t[NSTAGE];
    utc_conduit_t *c[NSTAGE - 1];
    static stage_t st[NSTAGE];
    for (int i = 0; i < NSTAGE; i++)
        t[i] = ct_task(&ct_ops_a, (i / 2) % nr, 2); /* in-process, MPI, in-process */
    for (int i = 0; i < NSTAGE - 1; i++)
        UTC_ASSERT_OK(utc_conduit_create(t[i], t[i + 1], NULL, &c[i]));
    ct_job_t jobs[NSTAGE];
    for (int i = 0; i < NSTAGE; i++) {
        st[i] = (stage_t){.in = i ? c[i - 1] : NULL, .out = i < NSTAGE - 1 ? c[i] : NULL,
                          .stage = i};
        jobs[i] = (ct_job_t){stage_run, &st[i]};
        UTC_ASSERT_OK(utc_task_run(t[i], &jobs[i])); /* all stages run at once */
    }
    for (int i = 0; i < NSTAGE; i++)
        UTC_ASSERT_OK(utc_task_wait(t[i]));
    UTC_ASSERT_OK(utc_barrier());
    for (int i = 0; i < NSTAGE - 1; i++)
        UTC_ASSERT_OK(utc_conduit_destroy(c[i]));
    for (int i = 0; i < NSTAGE; i++)
        UTC_ASSERT_OK(utc_task_destroy(t[i]));
    CT_END();
}

/* ---- three conduits between the same two tasks, same tags ---- */

#define NC 3
#define PER 3000

typedef struct {
    utc_conduit_t *c[NC];
} trio_t;

static int trio_w(utc_ctx_t *ctx, void *d)
{
    trio_t *k = d;
    int me = ctx->local_id; /* thread i writes on conduit i */
    for (int j = 0; j < PER; j++) {
        int msg[2] = {me, j};
        if (!CT_OK(utc_conduit_write_by(k->c[me], me, msg, sizeof msg, 1)))
            return -1;
    }
    return 0;
}

static int trio_r(utc_ctx_t *ctx, void *d)
{
    trio_t *k = d;
    int me = ctx->local_id;
    for (int j = 0; j < PER; j++) {
        int msg[2] = {-1, -1};
        if (!CT_OK(utc_conduit_read_by(k->c[me], me, msg, sizeof msg, 1, NULL)))
            return -1;
        if (msg[0] != me || msg[1] != j) {
            CT_CHECK(0, "conduit %d message %d: got (%d,%d)", me, j, msg[0], msg[1]);
            return -1;
        }
    }
    return 0;
}

static void parallel_at(int ra, int rb, void *arg)
{
    (void)arg;
    utc_task_t *a = ct_task(&ct_ops_a, ra, NC), *b = ct_task(&ct_ops_b, rb, NC);
    trio_t k;
    for (int i = 0; i < NC; i++)
        UTC_ASSERT_OK(utc_conduit_create(a, b, NULL, &k.c[i]));
    ct_run2(a, trio_w, &k, b, trio_r, &k);
    for (int i = 0; i < NC; i++)
        UTC_ASSERT_OK(utc_conduit_destroy(k.c[i]));
    UTC_ASSERT_OK(utc_task_destroy(a));
    UTC_ASSERT_OK(utc_task_destroy(b));
}

static void test_parallel_conduits(void)
{
    ct_begin();
    ct_each_placement(false, parallel_at, NULL);
    CT_END();
}

/* ---- many conduits: more than the 256 the dissertation's tag scheme allowed ---- */

#define NMANY 300

static utc_conduit_t *many[NMANY];

static int many_w(utc_ctx_t *ctx, void *d)
{
    (void)ctx, (void)d;
    for (int i = 0; i < NMANY; i++)
        if (!CT_OK(utc_conduit_write(many[i], &i, sizeof i, 0)))
            return -1;
    return 0;
}

static int many_r(utc_ctx_t *ctx, void *d)
{
    (void)ctx, (void)d;
    for (int i = NMANY - 1; i >= 0; i--) {
        int v = -1;
        if (!CT_OK(utc_conduit_read(many[i], &v, sizeof v, 0, NULL)))
            return -1;
        CT_CHECK(v == i, "conduit %d carried %d", i, v);
    }
    return 0;
}

static void test_many_conduits(void)
{
    ct_begin();
    int ra, rb;
    ct_pair_ranks(&ra, &rb);
    utc_task_t *a = ct_task(&ct_ops_a, ra, 1), *b = ct_task(&ct_ops_b, rb, 1);
    for (int i = 0; i < NMANY; i++)
        UTC_ASSERT_OK(utc_conduit_create(a, b, NULL, &many[i]));
    ct_run2(a, many_w, NULL, b, many_r, NULL);
    for (int i = 0; i < NMANY; i++)
        UTC_ASSERT_OK(utc_conduit_destroy(many[i]));
    UTC_ASSERT_OK(utc_task_destroy(a));
    UTC_ASSERT_OK(utc_task_destroy(b));
    CT_END();
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"4-stage pipeline, stages at once, spread over ranks", test_pipeline},
        {"3 conduits between the same tasks, same tags", test_parallel_conduits},
        {"300 conduits between two tasks", test_many_conduits},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "conduit multi", cases);
}
