/*
 * Messages over 2 GiB (MPI's int count) between ranks, on the copy and the owned path
 * (issue 16): 2.5 GiB each way whole and in order, checked word by word. It needs about
 * 6 GB of memory (label `large`); it runs at 2 ranks.
 */
#include <stdlib.h>

#include "conduit_test_util.h"

#define BIG (((size_t)5 << 30) / 2) /* 2.5 GiB */

/* Word i of message `seed`: cheap enough for 2.5 GiB, different at every position. */
static inline uint64_t word(uint64_t seed, size_t i)
{
    return (i + 1) * 0x9e3779b97f4a7c15ull ^ seed;
}

static void fill(uint64_t *w, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n / 8; i++)
        w[i] = word(seed, i);
}

/* The index of the first wrong word, or n / 8 when all are right. */
static size_t first_wrong(const uint64_t *w, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n / 8; i++)
        if (w[i] != word(seed, i))
            return i;
    return n / 8;
}

static int big_writer(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    uint64_t *buf = malloc(BIG);
    CT_CHECK(buf != NULL, "no memory for 2.5 GiB");
    if (!buf)
        return 0;
    fill(buf, BIG, 1);
    CT_OK(utc_conduit_write(c, buf, BIG, 3));
    free(buf);
    /* owned: the runtime's buffer crosses (between ranks, sent; in-process, handed over) */
    uint64_t *own = utc_buf_alloc(BIG);
    CT_CHECK(own != NULL, "no memory for an owned 2.5 GiB buffer");
    if (!own)
        return 0;
    fill(own, BIG, 2);
    CT_OK(utc_conduit_write_owned(c, own, BIG, 4));
    return 0;
}

static int big_reader(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    uint64_t *buf = malloc(BIG);
    CT_CHECK(buf != NULL, "no memory for 2.5 GiB");
    if (!buf)
        return 0;
    size_t got = 0;
    CT_OK(utc_conduit_read(c, buf, BIG, 3, &got));
    CT_CHECK(got == BIG, "copy path: %zu bytes, expected %zu", got, BIG);
    size_t bad = first_wrong(buf, BIG, 1);
    CT_CHECK(bad == BIG / 8, "copy path: word %zu of %zu is wrong", bad, BIG / 8);
    free(buf);
    void *own = NULL;
    got = 0;
    CT_OK(utc_conduit_read_owned(c, 4, &own, &got));
    CT_CHECK(got == BIG, "owned path: %zu bytes, expected %zu", got, BIG);
    if (own) {
        bad = first_wrong(own, got, 2);
        CT_CHECK(bad == BIG / 8, "owned path: word %zu of %zu is wrong", bad, BIG / 8);
        utc_buf_free(own);
    }
    return 0;
}

static void test_over_2gib(void)
{
    ct_begin();
    int ra, rb;
    ct_pair_ranks(&ra, &rb);
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, NULL);
    ct_pair_run(&p, big_writer, big_reader);
    ct_pair_close(&p);
    CT_END();
}

static const utc_test_case_t cases[] = {
    {"2.5 GiB, copy and owned paths", test_over_2gib},
    UTC_TEST_END};

int main(int argc, char **argv) { return utc_test_main(argc, argv, "conduit large", cases); }
