/* The window allocator: offsets, reuse, coalescing, exhaustion, and objects' life. */
#include "gs_test.h"
#include "core/alloc.h"

/* ---- the allocator alone ---- */

static size_t nfree_extents(const utc__gs_alloc_t *a)
{
    size_t n = 0;
    for (const utc__gs_extent_t *e = a->free; e; e = e->next)
        n++;
    return n;
}

static utc__gs_extent_t *spare(void)
{
    return malloc(sizeof(utc__gs_extent_t));
}

static void test_allocator_first_fit_and_coalesce(void)
{
    utc__gs_alloc_t a;
    UTC_ASSERT_OK(utc__gs_alloc_init(&a, 1000));
    CU_ASSERT_EQUAL(a.size, 960); /* rounded down to the 64-byte granule */
    CU_ASSERT_EQUAL(utc__gs_alloc_round(1), 64);
    CU_ASSERT_EQUAL(utc__gs_alloc_round(64), 64);
    CU_ASSERT_EQUAL(utc__gs_alloc_round(65), 128);
    CU_ASSERT_EQUAL(utc__gs_alloc_round(SIZE_MAX), 0);

    size_t x, y, z, w;
    UTC_ASSERT_OK(utc__gs_alloc_get(&a, 64, &x));
    UTC_ASSERT_OK(utc__gs_alloc_get(&a, 128, &y));
    UTC_ASSERT_OK(utc__gs_alloc_get(&a, 64, &z));
    CU_ASSERT_EQUAL(x, 0);
    CU_ASSERT_EQUAL(y, 64);
    CU_ASSERT_EQUAL(z, 192);
    CU_ASSERT_EQUAL(a.free_bytes, 960 - 256);

    /* a hole in the middle is reused first (first fit) */
    utc__gs_alloc_put(&a, y, 128, spare());
    CU_ASSERT_EQUAL(nfree_extents(&a), 2);
    UTC_ASSERT_OK(utc__gs_alloc_get(&a, 64, &w));
    CU_ASSERT_EQUAL(w, 64);
    /* too big for the remaining 64-byte hole: taken from the tail */
    UTC_ASSERT_OK(utc__gs_alloc_get(&a, 128, &y));
    CU_ASSERT_EQUAL(y, 256);

    /* free everything in a scrambled order: it merges back into one extent */
    utc__gs_alloc_put(&a, z, 64, spare());  /* 192 */
    utc__gs_alloc_put(&a, x, 64, spare());  /* 0 */
    utc__gs_alloc_put(&a, y, 128, spare()); /* 256: joins the tail */
    utc__gs_alloc_put(&a, w, 64, spare());  /* 64: joins both sides */
    CU_ASSERT_EQUAL(nfree_extents(&a), 1);
    CU_ASSERT_EQUAL(a.free_bytes, 960);
    CU_ASSERT_EQUAL(utc__gs_alloc_largest(&a), 960);

    /* exhaustion */
    CU_ASSERT_EQUAL(utc__gs_alloc_get(&a, 1024, &x), UTC_ERR_NO_MEMORY);
    UTC_ASSERT_OK(utc__gs_alloc_get(&a, 960, &x));
    CU_ASSERT_EQUAL(utc__gs_alloc_get(&a, 64, &y), UTC_ERR_NO_MEMORY);
    CU_ASSERT_EQUAL(a.free_bytes, 0);
    CU_ASSERT_PTR_NULL(a.free);
    utc__gs_alloc_put(&a, x, 960, spare());
    CU_ASSERT_EQUAL(a.free_bytes, 960);
    CU_ASSERT_EQUAL(utc__gs_alloc_get(&a, 100, &x), UTC_ERR_INVALID_ARG); /* not rounded */
    utc__gs_alloc_fini(&a);
}

/* ---- objects in a task's window ---- */

#define SMALL_WINDOW ((size_t)64 << 10)

static void body_reuse(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    const size_t half = SMALL_WINDOW / 2;
    utc_gdata_t *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    GS_OK(t, ctx, utc_gdata_create(ctx, 1, half, &a));
    GS_OK(t, ctx, utc_gdata_create(ctx, 1, half, &b));
    if (!a || !b)
        return;
    char *pa = utc_gdata_ptr(a), *pb = utc_gdata_ptr(b);
    GS_CHECK(t, ctx, pb == pa + half);

    /* full: even one byte does not fit, and the message names the sizes */
    c = (utc_gdata_t *)0x1;
    GS_ERROR(t, ctx, utc_gdata_create(ctx, 8, 3, &c), UTC_ERR_NO_MEMORY, "do not fit");
    GS_CHECK(t, ctx, strstr(utc_last_error(), "3 elements x 8 bytes = 24 bytes") != NULL);
    GS_CHECK(t, ctx, strstr(utc_last_error(), "window_size 65536") != NULL);
    GS_CHECK(t, ctx, c == (utc_gdata_t *)0x1); /* output untouched */

    /* freed space is reused */
    GS_OK(t, ctx, utc_gdata_destroy(ctx, a));
    GS_OK(t, ctx, utc_gdata_create(ctx, 1, half, &c));
    GS_CHECK(t, ctx, c && utc_gdata_ptr(c) == pa);
    /* freeing both halves merges them: the whole window fits again */
    GS_OK(t, ctx, utc_gdata_destroy(ctx, b));
    GS_OK(t, ctx, utc_gdata_destroy(ctx, c));
    GS_ERROR(t, ctx, utc_gdata_create(ctx, 1, SMALL_WINDOW + 1, &d), UTC_ERR_NO_MEMORY,
             "largest free block 65536");
    GS_OK(t, ctx, utc_gdata_create(ctx, 1, SMALL_WINDOW, &d));
    if (!d)
        return;
    GS_CHECK(t, ctx, utc_gdata_ptr(d) == pa);

    /* a new object starts zeroed, whatever the space held before */
    if (ctx->local_id == 0)
        memset(utc_gdata_ptr(d), 0xab, SMALL_WINDOW);
    GS_OK(t, ctx, utc_gdata_destroy(ctx, d));
    utc_gdata_t *e = NULL;
    GS_OK(t, ctx, utc_gdata_create(ctx, 4, SMALL_WINDOW / 4, &e));
    if (!e)
        return;
    const unsigned char *pe = utc_gdata_ptr(e);
    size_t nonzero = 0;
    for (size_t i = (size_t)ctx->local_id; i < SMALL_WINDOW; i += (size_t)ctx->local_count)
        nonzero += pe[i] != 0;
    GS_CHECK(t, ctx, nonzero == 0);
    GS_OK(t, ctx, utc_gdata_destroy(ctx, e));
}

static void test_reuse_and_exhaustion(void)
{
    gs_run(body_reuse, 2, SMALL_WINDOW, NULL);
}

/* Many objects of mixed sizes, created and destroyed out of order, for a long time: the
 * window never leaks, every rank keeps the same layout (create would report a mismatch),
 * and data written to live objects survives the others' churn. */
static void body_churn(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    enum { LIVE = 8, ROUNDS = 300 };
    utc_gdata_t *live[LIVE] = {0};
    uint64_t seed = 12345; /* the same on every rank and thread: same sequence */
    for (int r = 0; r < ROUNDS; r++) {
        int slot = (int)(gs_rand(&seed) % LIVE);
        size_t count = 1 + gs_rand(&seed) % 700;
        if (live[slot]) {
            /* its contents must still be what was stored at creation */
            int64_t first = -1, last = -1;
            size_t n = utc_gdata_count(live[slot]);
            GS_OK(t, ctx, utc_gdata_load(live[slot], 0, &first));
            GS_OK(t, ctx, utc_gdata_load(live[slot], n - 1, &last));
            GS_CHECK(t, ctx, first == (int64_t)n && last == -(int64_t)n);
            GS_OK(t, ctx, utc_gdata_destroy(ctx, live[slot]));
            live[slot] = NULL;
        }
        GS_OK(t, ctx, utc_gdata_create(ctx, sizeof(int64_t), count, &live[slot]));
        if (!live[slot])
            return;
        if (ctx->local_id == 0) {
            int64_t v = (int64_t)count, w = -(int64_t)count;
            GS_OK(t, ctx, utc_gdata_store(live[slot], 0, &v));
            GS_OK(t, ctx, utc_gdata_store(live[slot], count - 1, &w));
        }
        GS_OK(t, ctx, utc_ctx_barrier_local(ctx));
    }
    for (int i = 0; i < LIVE; i++)
        if (live[i])
            GS_OK(t, ctx, utc_gdata_destroy(ctx, live[i]));
    /* everything was given back: the whole window is one free block again */
    utc_gdata_t *all = NULL;
    GS_OK(t, ctx, utc_gdata_create(ctx, 1, SMALL_WINDOW, &all));
    if (all)
        GS_OK(t, ctx, utc_gdata_destroy(ctx, all));
}

static void test_churn(void)
{
    gs_run(body_churn, 2, SMALL_WINDOW, NULL);
}

/* Ranks that create objects of different sizes are told so (not left with offsets that
 * silently disagree), and the failed object's space is given back. */
static void body_disagree(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    utc_gdata_t *gd = NULL;
    size_t count = ctx->group_rank == 0 ? 8 : 16;
    GS_ERROR(t, ctx, utc_gdata_create(ctx, 64, count, &gd), UTC_ERR_MISMATCH, "disagree");
    GS_OK(t, ctx, utc_gdata_create(ctx, 1, SMALL_WINDOW, &gd));
    if (gd)
        GS_OK(t, ctx, utc_gdata_destroy(ctx, gd));
}

static void test_ranks_disagree(void)
{
    if (utc_test_nranks() < 2)
        return; /* one rank always agrees with itself */
    gs_run(body_disagree, 2, SMALL_WINDOW, NULL);
}

/* An object left alive is freed with its task; the handle stays usable until then. */
static void body_keep(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    utc_gdata_t *gd = NULL;
    GS_OK(t, ctx, utc_gdata_create(ctx, sizeof(double), 100, &gd));
    if (ctx->local_id == 0)
        t->gd = gd;
}

static void body_use_kept(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    double v = 1.5 + ctx->group_rank;
    if (ctx->local_id == 0)
        GS_OK(t, ctx, utc_gdata_store(t->gd, 99, &v));
    GS_OK(t, ctx, utc_gdata_barrier(t->gd));
    double got = 0;
    GS_OK(t, ctx, utc_gdata_load(t->gd, 99, &got));
    GS_CHECK(t, ctx, got == v);
}

static void test_objects_freed_with_task(void)
{
    gs_task_t *t = gs_task_create(2, SMALL_WINDOW);
    gs_task_exec(t, body_keep, NULL);
    gs_task_exec(t, body_use_kept, NULL); /* an object outlives the run that made it */
    UTC_ASSERT_OK(utc_task_destroy(&t->base));
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"allocator: first fit, coalescing, exhaustion", test_allocator_first_fit_and_coalesce},
        {"objects: reuse, exhaustion message, zeroed", test_reuse_and_exhaustion},
        {"objects: 300 rounds of create/destroy churn", test_churn},
        {"objects: ranks that disagree are told", test_ranks_disagree},
        {"objects: freed with their task", test_objects_freed_with_task},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "gshared: allocator", cases);
}
