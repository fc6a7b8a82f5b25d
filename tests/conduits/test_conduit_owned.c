/*
 * Ownership passing: in-process the very pointer crosses, in constant time whatever the
 * size; across ranks the data arrives in a buffer of the reader's own. Owned and plain
 * forms interoperate both ways, small and large. Misuse is refused and the buffer stays
 * the caller's.
 */
#include <stdbool.h>

#include <utc/gpu.h>

#include "conduit_test_util.h"

#define HUGE_SZ ((size_t)64 << 20)
#define NPASS 20

typedef struct {
    utc_conduit_t *c;
    void *sent;           /* writer's buffer address (same process only) */
    _Atomic(void *) got;  /* reader's buffer address */
    double secs;          /* reader: time per pass */
} own_t;

/* A hands one 64 MiB buffer to B, B hands it back, NPASS times. */
static int pass_a(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    own_t *k = d;
    void *buf = utc_buf_alloc(HUGE_SZ);
    if (!buf)
        return UTC_ERR_NO_MEMORY;
    ct_fill(buf, HUGE_SZ, 9);
    k->sent = buf;
    double t0 = utc_wtime();
    for (int i = 0; i < NPASS; i++) {
        if (!CT_OK(utc_conduit_write_owned(k->c, buf, HUGE_SZ, 1)))
            return -1;
        size_t n = 0;
        buf = NULL;
        if (!CT_OK(utc_conduit_read_owned(k->c, 2, &buf, &n)))
            return -1;
        CT_CHECK(n == HUGE_SZ, "size %zu", n);
    }
    k->secs = (utc_wtime() - t0) / (2 * NPASS);
    CT_CHECK(ct_verify(buf, HUGE_SZ, 9), "contents changed on the way");
    utc_buf_free(buf);
    return 0;
}

static int pass_b(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    own_t *k = d;
    for (int i = 0; i < NPASS; i++) {
        void *buf = NULL;
        size_t n = 0;
        if (!CT_OK(utc_conduit_read_owned(k->c, 1, &buf, &n)))
            return -1;
        atomic_store(&k->got, buf);
        if (!CT_OK(utc_conduit_write_owned(k->c, buf, n, 2)))
            return -1;
    }
    return 0;
}

static void test_inproc_pointer_crosses(void)
{
    ct_begin();
    ct_pair_t p = ct_pair_open(0, 1, 0, 1, NULL);
    own_t k = {.c = p.c};
    atomic_init(&k.got, NULL);
    ct_run2(p.a, pass_a, &k, p.b, pass_b, &k);
    if (utc_test_rank() == 0) {
        CU_ASSERT_PTR_EQUAL(atomic_load(&k.got), k.sent); /* the pointer itself crossed */
        printf("\n    64 MiB owned pass in-process: %.2f us", k.secs * 1e6);
        /* a copy of 64 MiB takes milliseconds; a handed-over pointer microseconds */
        CU_ASSERT(k.secs < 1e-3);
    }
    ct_pair_close(&p);
    CT_END();
}

static void test_remote_owned(void)
{
    int ra, rb;
    if (!ct_remote_ranks(&ra, &rb))
        return;
    ct_begin();
    ct_pair_t p = ct_pair_open(ra, 1, rb, 2, NULL);
    own_t k = {.c = p.c};
    atomic_init(&k.got, NULL);
    ct_run2(p.a, pass_a, &k, p.b, pass_b, &k); /* contents checked after 40 crossings */
    ct_pair_close(&p);
    CT_END();
}

/* ---- owned and plain forms mixed, small and large ---- */

static const size_t mix_sizes[] = {0, 10, 4096, 5000, 3 << 20};
#define NMIX (sizeof mix_sizes / sizeof mix_sizes[0])

static int mix_w(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    unsigned char *plain = malloc(3 << 20);
    for (size_t i = 0; i < NMIX; i++) {
        size_t n = mix_sizes[i];
        /* owned write, plain read */
        void *b = utc_buf_alloc(n);
        ct_fill(b, n, i);
        CT_OK(utc_conduit_write_owned(c, b, n, 1));
        /* plain write, owned read */
        ct_fill(plain, n, 100 + i);
        CT_OK(utc_conduit_write(c, plain, n, 2));
    }
    free(plain);
    return 0;
}

static int mix_r(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    unsigned char *plain = malloc(3 << 20);
    for (size_t i = 0; i < NMIX; i++) {
        size_t n = mix_sizes[i], got = 0;
        CT_OK(utc_conduit_read(c, plain, 3 << 20, 1, &got));
        CT_CHECK(got == n && ct_verify(plain, n, i), "owned -> plain, %zu bytes: got %zu", n, got);
        void *b = NULL;
        CT_OK(utc_conduit_read_owned(c, 2, &b, &got));
        CT_CHECK(b && got == n && ct_verify(b, n, 100 + i), "plain -> owned, %zu bytes: got %zu",
                 n, got);
        utc_buf_free(b);
    }
    free(plain);
    return 0;
}

static void test_mixed_forms(void)
{
    ct_begin();
    ct_each_placement_run(1, mix_w, 1, mix_r);
    CT_END();
}

/* ---- one thread of the reader reads owned (read_owned_by); pinned owned buffers ---- */

static int by_w(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    /* with a usable GPU the buffers are pinned, else ordinary ones (and the same calls) */
    bool expect_pinned = utc_gpu_device_count() > 0;
    for (size_t i = 0; i < NMIX; i++) {
        size_t n = mix_sizes[i];
        void *b = utc_buf_alloc_pinned(n);
        CT_CHECK(b && (uintptr_t)b % 64 == 0, "utc_buf_alloc_pinned(%zu): %p", n, b);
        CT_CHECK(utc_buf_is_pinned(b) == expect_pinned, "%zu bytes: pinned %d, expected %d", n,
                 (int)utc_buf_is_pinned(b), (int)expect_pinned);
        ct_fill(b, n, 200 + i);
        CT_OK(utc_conduit_write_owned(c, b, n, 3));
    }
    void *f = utc_buf_alloc_pinned(64);
    utc_buf_free(f);
    CT_CHECK(!utc_buf_is_pinned(f) && !utc_buf_is_pinned(NULL), "a freed buffer is not pinned");
    return 0;
}

static int by_r(utc_ctx_t *ctx, void *d)
{
    utc_conduit_t *c = d;
    int reader = ctx->local_count - 1; /* the last thread reads, the others pass */
    for (size_t i = 0; i < NMIX; i++) {
        size_t n = mix_sizes[i], got = 7;
        void *b = (void *)1;
        CT_OK(utc_conduit_read_owned_by(c, reader, 3, &b, &got));
        if (ctx->local_id != reader) {
            CT_CHECK(b == NULL, "thread %d (not the reader) got %p", ctx->local_id, b);
            continue;
        }
        CT_CHECK(b && got == n && ct_verify(b, n, 200 + i), "%zu bytes: got %zu", n, got);
        utc_buf_free(b);
    }
    return 0;
}

static void test_read_owned_by(void)
{
    ct_begin();
    ct_each_placement_run(1, by_w, 2, by_r);
    CT_END();
}

/* ---- misuse ---- */

static int misuse(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    char *m = malloc(64);
    CT_EXPECT(utc_conduit_write_owned(c, m, 64, 1), UTC_ERR_INVALID_ARG);
    CT_CHECK(strstr(utc_last_error(), "utc_buf_alloc") != NULL, "message: %s", utc_last_error());
    free(m);
    void *b = utc_buf_alloc(16);
    CT_EXPECT(utc_conduit_write_owned(c, b, 17, 1), UTC_ERR_INVALID_ARG);
    CT_CHECK(strstr(utc_last_error(), "17") != NULL, "message: %s", utc_last_error());
    CT_EXPECT(utc_conduit_write_owned(c, NULL, 0, 1), UTC_ERR_INVALID_ARG);
    CT_EXPECT(utc_conduit_write_owned(c, b, 16, -1), UTC_ERR_INVALID_ARG);
    CT_EXPECT(utc_conduit_read_owned(c, 1, NULL, NULL), UTC_ERR_INVALID_ARG);
    void *o = NULL;
    CT_EXPECT(utc_conduit_read_owned_by(c, 0, 1, NULL, NULL), UTC_ERR_INVALID_ARG);
    CT_EXPECT(utc_conduit_read_owned_by(c, 1, 1, &o, NULL), UTC_ERR_OUT_OF_RANGE);
    CT_CHECK(o == NULL && strstr(utc_last_error(), "thread 1") != NULL, "message: %s",
             utc_last_error());
    ((char *)b)[15] = 1; /* still ours after the refusals */
    utc_buf_free(b);
    return 0;
}

static void test_misuse(void)
{
    ct_begin();
    void *z = utc_buf_alloc(0);
    CU_ASSERT_PTR_NOT_NULL(z);
    CU_ASSERT_EQUAL((uintptr_t)z % 64, 0);
    utc_buf_free(z);
    utc_buf_free(NULL);
    ct_pair_t p = ct_pair_open(0, 1, 0, 1, NULL);
    ct_pair_run(&p, misuse, ct_idle);
    ct_pair_close(&p);
    CT_END();
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"in-process: the pointer crosses, 64 MiB in constant time", test_inproc_pointer_crosses},
        {"between ranks: data arrives in the reader's own buffer", test_remote_owned},
        {"owned and plain forms mixed, 0 B to 3 MiB", test_mixed_forms},
        {"read_owned_by: one thread reads, the others pass; pinned owned buffers",
         test_read_owned_by},
        {"misuse is refused, the buffer stays the caller's", test_misuse},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "conduit owned", cases);
}
