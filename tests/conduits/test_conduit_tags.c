/*
 * Tags: same tag in write order, different tags independent (a reader of tag B is never
 * held up by unread tag-A messages, even when they fill the ring or a large tag-A write
 * is blocked), tags from 0 to UTC_CONDUIT_TAG_MAX, reads of several tags at once.
 */
#include "conduit_test_util.h"

#define NA 300 /* more tag-A messages than the ring has slots */

typedef struct {
    utc_conduit_t *c;
    unsigned char *big;
} tg_t;

static int indep_w(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    tg_t *k = d;
    for (int i = 0; i < NA; i++)
        CT_OK(utc_conduit_write(k->c, &i, sizeof i, 1)); /* tag A = 1 */
    int b = 4242;
    CT_OK(utc_conduit_write(k->c, &b, sizeof b, 2)); /* tag B = 2 */
    return 0;
}

static int indep_r(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    tg_t *k = d;
    int v = 0;
    /* B first: it was written after 300 unread A messages */
    CT_OK(utc_conduit_read_timeout(k->c, &v, sizeof v, 2, NULL, 20.0));
    CT_CHECK(v == 4242, "tag B read %d", v);
    for (int i = 0; i < NA; i++) {
        CT_OK(utc_conduit_read(k->c, &v, sizeof v, 1, NULL));
        CT_CHECK(v == i, "tag A message %d read as %d", i, v);
        if (v != i)
            return -1;
    }
    return 0;
}

/* A large tag-A write is blocked until read; a tag-B message from another thread passes. */
#define BIG (4 << 20)
static int big_w(utc_ctx_t *ctx, void *d)
{
    tg_t *k = d;
    if (ctx->local_id == 0) {
        ct_fill(k->big, BIG, 11);
        CT_OK(utc_conduit_write_by(k->c, 0, k->big, BIG, 1));
    } else {
        int b = 77;
        CT_OK(utc_conduit_write_by(k->c, 1, &b, sizeof b, 2));
    }
    return 0;
}

static int big_r(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    tg_t *k = d;
    int v = 0;
    CT_OK(utc_conduit_read_timeout(k->c, &v, sizeof v, 2, NULL, 20.0));
    CT_CHECK(v == 77, "tag B read %d", v);
    size_t got = 0;
    CT_OK(utc_conduit_read(k->c, k->big, BIG, 1, &got));
    CT_CHECK(got == BIG && ct_verify(k->big, BIG, 11), "tag A large message (%zu bytes)", got);
    return 0;
}

static void run_pair(int ra, int rb, int na, int nb, ct_fn_t fw, ct_fn_t fr)
{
    ct_pair_t p = ct_pair_open(ra, na, rb, nb, NULL);
    tg_t ka = {p.c, malloc(BIG)}, kb = {p.c, malloc(BIG)};
    ct_run2(p.a, fw, &ka, p.b, fr, &kb);
    free(ka.big);
    free(kb.big);
    ct_pair_close(&p);
}

static void test_independent_inproc(void)
{
    ct_begin();
    run_pair(0, 0, 1, 1, indep_w, indep_r);
    run_pair(0, 0, 2, 1, big_w, big_r);
    CT_END();
}

static void test_independent_remote(void)
{
    ct_begin();
    int ra, rb;
    ct_pair_ranks(&ra, &rb);
    run_pair(ra, rb, 1, 1, indep_w, indep_r);
    run_pair(ra, rb, 2, 1, big_w, big_r);
    CT_END();
}

/* ---- many tags, written round robin, read tag by tag in reverse ---- */

#define NTAGS 200
#define PER_TAG 5

static int tag_of(int i)
{
    if (i == 0)
        return 0;
    if (i == 1)
        return 1 << 20;
    if (i == 2)
        return UTC_CONDUIT_TAG_MAX;
    return (int)(ct_mix((uint64_t)i) % (1u << 20));
}

static int many_w(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    for (int j = 0; j < PER_TAG; j++)
        for (int i = 0; i < NTAGS; i++) {
            int msg[2] = {i, j};
            CT_OK(utc_conduit_write(c, msg, sizeof msg, tag_of(i)));
        }
    return 0;
}

static int many_r(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    bool seen[NTAGS] = {0};
    for (int i = NTAGS - 1; i >= 0; i--) {
        if (seen[i])
            continue;
        /* the random tags may repeat: a repeated tag carries both streams interleaved */
        int dup = 0;
        for (int m = 0; m < NTAGS; m++)
            dup += tag_of(m) == tag_of(i);
        int next[NTAGS] = {0};
        for (int j = 0; j < PER_TAG * dup; j++) {
            int msg[2] = {-1, -1};
            if (!CT_OK(utc_conduit_read(c, msg, sizeof msg, tag_of(i), NULL)))
                return -1;
            CT_CHECK(msg[0] >= 0 && msg[0] < NTAGS && tag_of(msg[0]) == tag_of(i) &&
                         msg[1] == next[msg[0]],
                     "tag %d: got message (%d,%d)", tag_of(i), msg[0], msg[1]);
            if (msg[0] >= 0 && msg[0] < NTAGS)
                next[msg[0]]++;
        }
        for (int m = 0; m < NTAGS; m++)
            if (tag_of(m) == tag_of(i))
                seen[m] = true;
    }
    return 0;
}

static void test_many_tags(void)
{
    ct_begin();
    ct_each_placement_run(1, many_w, 1, many_r);
    CT_END();
}

/* ---- several threads read several tags at once; messages interleaved ---- */

#define NR 4
#define PER 2000

static int conc_w(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_conduit_t *c = d;
    for (int j = 0; j < PER; j++)
        for (int t = 0; t < NR; t++) {
            int msg[2] = {t, j};
            /* a few large ones take the reader-copies path */
            if (j % 500 == 7) {
                static _Thread_local int big[5000];
                big[0] = t;
                big[1] = j;
                CT_OK(utc_conduit_write(c, big, sizeof big, 50 + t));
            } else {
                CT_OK(utc_conduit_write(c, msg, sizeof msg, 50 + t));
            }
        }
    return 0;
}

static int conc_r(utc_ctx_t *ctx, void *d)
{
    utc_conduit_t *c = d;
    int t = ctx->local_id;
    static _Thread_local int buf[5000];
    for (int j = 0; j < PER; j++) {
        size_t got = 0;
        if (!CT_OK(utc_conduit_read_by(c, t, buf, sizeof buf, 50 + t, &got)))
            return -1;
        CT_CHECK(buf[0] == t && buf[1] == j, "thread %d: message (%d,%d), want (%d,%d)", t,
                 buf[0], buf[1], t, j);
        if (buf[1] != j)
            return -1;
    }
    return 0;
}

static void test_concurrent_readers(void)
{
    ct_begin();
    ct_each_placement_run(1, conc_w, NR, conc_r);
    CT_END();
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"tag B not held up by unread tag A, in-process", test_independent_inproc},
        {"tag B not held up by unread tag A, between ranks", test_independent_remote},
        {"200 tags up to UTC_CONDUIT_TAG_MAX, read in another order", test_many_tags},
        {"4 threads read 4 tags at once", test_concurrent_readers},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "conduit tags", cases);
}
