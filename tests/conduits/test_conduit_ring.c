/*
 * The in-process ring as traffic changes: a direction starts on a small ring, moves to the
 * full ring of its options when a message is longer than the small ring's slots or the
 * small ring is full, and moves back after a quiet stretch. Moves happen while other
 * writers are claiming slots, so these cases mix message sizes and make the reader fall
 * behind now and then, with two writer threads on one direction, and check that every
 * message arrives whole and in order per tag. The same with asynchronous writes, and with
 * options whose rings are small already (nothing to move) or odd.
 */
#include <unistd.h>

#include "conduit_test_util.h"

#define NPER   12000 /* messages per writer thread */
#define MAXLEN 1500

/* Length of message k: mostly 1..16 B, a stretch of longer ones every 3000 (the full ring),
 * and a long quiet stretch after them (back to the small ring). */
static size_t msg_len(int k, size_t cap)
{
    int ph = k % 3000;
    size_t n = ph >= 1200 && ph < 1300 ? 17 + (size_t)(ct_mix((uint64_t)k) % (MAXLEN - 16))
                                       : 1 + (size_t)(k % 16);
    return n > cap ? cap : n;
}

static uint64_t msg_seed(int tag, int k)
{
    return ((uint64_t)tag << 32) ^ (uint64_t)k;
}

typedef struct {
    utc_conduit_t *c;
    size_t cap; /* longest message */
    bool async; /* writers use iwrite, a window of requests at a time */
} ring_t;

static int write_stream(utc_ctx_t *ctx, ring_t *r, int tag)
{
    unsigned char *buf = malloc(MAXLEN * 64);
    utc_request_t *req[64] = {0};
    if (!buf)
        return -1;
    for (int k = 0; k < NPER; k++) {
        int w = r->async ? k % 64 : 0;
        if (r->async && req[w] && !CT_OK(utc_request_wait(&req[w], NULL)))
            break;
        unsigned char *b = buf + (size_t)w * MAXLEN;
        size_t n = msg_len(k, r->cap);
        ct_fill(b, n, msg_seed(tag, k));
        if (r->async ? !CT_OK(utc_conduit_iwrite(r->c, b, n, tag, &req[w]))
                     : !CT_OK(utc_conduit_write_by(r->c, ctx->local_id, b, n, tag)))
            break;
    }
    for (int w = 0; w < 64; w++)
        if (req[w])
            CT_OK(utc_request_wait(&req[w], NULL));
    free(buf);
    return 0;
}

static int read_stream(utc_ctx_t *ctx, ring_t *r, int tag)
{
    unsigned char *buf = malloc(MAXLEN);
    if (!buf)
        return -1;
    for (int k = 0; k < NPER; k++) {
        if (k % 1000 == 999)
            usleep(2000); /* fall behind: the writers fill the ring */
        size_t got = 0, n = msg_len(k, r->cap);
        if (!CT_OK(utc_conduit_read_by(r->c, ctx->local_id, buf, MAXLEN, tag, &got)))
            break;
        CT_CHECK(got == n && ct_verify(buf, got, msg_seed(tag, k)),
                 "tag %d message %d: %zu bytes (want %zu) or contents wrong", tag, k, got, n);
    }
    free(buf);
    return 0;
}

/* A: threads 0 and 1 write tags 0 and 1, thread 2 reads tag 10. B: the mirror. */
static int side_a(utc_ctx_t *ctx, void *d)
{
    ring_t *r = d;
    return ctx->local_id < 2 ? write_stream(ctx, r, ctx->local_id) : read_stream(ctx, r, 10);
}

static int side_b(utc_ctx_t *ctx, void *d)
{
    ring_t *r = d;
    return ctx->local_id < 2 ? read_stream(ctx, r, ctx->local_id) : write_stream(ctx, r, 10);
}

static void streams(const utc_conduit_options_t *o, bool async)
{
    ct_begin();
    ct_pair_t p = ct_pair_open(0, 3, 0, 3, o);
    ring_t r = {p.c, MAXLEN, async}; /* above inline_max, messages go by copy */
    ct_run2(p.a, side_a, &r, p.b, side_b, &r);
    ct_pair_close(&p);
    CT_END();
}

static void test_moves(void)
{
    streams(NULL, false);
}

static void test_moves_async(void)
{
    streams(NULL, true);
}

static void test_options(void)
{
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.ring_slots = 4; /* the full ring is no deeper, only its slots longer */
    o.inline_max = 256;
    streams(&o, false);
    o.ring_slots = 2; /* small ring only: nothing inline but empty messages */
    o.inline_max = 0;
    streams(&o, false);
    o.ring_slots = 1024; /* deeper than the small ring, slots no longer */
    o.inline_max = 8;
    streams(&o, true);
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"small and full ring: moves under two writers, order kept", test_moves},
        {"small and full ring: moves under iwrite windows", test_moves_async},
        {"ring options: shallow, inline 0, deep with short slots", test_options},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "conduit ring", cases);
}
