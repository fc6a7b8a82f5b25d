/*
 * Free mode completed (issue 22 items 2 and 3): the exchange (utc_conduit_sendrecv) as a
 * symmetric swap at every size, the asynchronous _to/_from forms, the timed read_from, and
 * the request sets (waitall, waitany, testall, testany) with their bad inputs; waitany
 * does not starve a request over 10,000 rounds.
 */
#include <math.h>
#include <stdlib.h>

#include "conduit_test_util.h"

static const utc_conduit_options_t free_opts = {
    .mode = UTC_CONDUIT_FREE, .inline_max = UTC_CONDUIT_INLINE_DEFAULT,
    .ring_slots = UTC_CONDUIT_SLOTS_DEFAULT};

static int ra_g, rb_g; /* the placement's ranks: the peers of the _to/_from calls */

/* ---- the symmetric swap ---- */

static const size_t swap_sizes[] = {0, 1, 4096, 8192, 65536, 1 << 20};
#define NSIZES (sizeof swap_sizes / sizeof swap_sizes[0])

static int swap_side(utc_ctx_t *ctx, void *data, int me, int other, uint64_t my_seed,
                     uint64_t other_seed)
{
    (void)ctx;
    utc_conduit_t *c = data;
    (void)me;
    unsigned char *out = malloc(1 << 20), *in = malloc(1 << 20);
    CT_CHECK(out && in, "out of memory");
    for (size_t k = 0; out && in && k < NSIZES; k++) {
        size_t n = swap_sizes[k], got = 0;
        ct_fill(out, n, my_seed + k);
        /* both ends write before they read: a plain write of 8 KiB or more would wait for
         * the other's read for ever */
        if (!CT_OK(utc_conduit_sendrecv(c, other, out, n, 3, other, in, 1 << 20, 3, &got)))
            break;
        CT_CHECK(got == n && ct_verify(in, n, other_seed + k), "swap of %zu bytes: got %zu%s",
                 n, got, got == n ? ", wrong contents" : "");
    }
    free(out);
    free(in);
    return 0;
}

static int swap_a(utc_ctx_t *ctx, void *data) { return swap_side(ctx, data, ra_g, rb_g, 100, 200); }
static int swap_b(utc_ctx_t *ctx, void *data) { return swap_side(ctx, data, rb_g, ra_g, 200, 100); }

static void swap_placement(int ra, int rb, void *arg)
{
    (void)arg;
    ra_g = ra, rb_g = rb;
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, &free_opts);
    ct_pair_run(&p, swap_a, swap_b);
    ct_pair_close(&p);
}

static void test_swap(void)
{
    ct_begin();
    ct_each_placement(false, swap_placement, NULL);
    CT_END();
}

/* ---- async _to/_from and waitall / testall ---- */

#define NSET 8

static int set_writer(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    int v[NSET];
    utc_request_t *r[NSET];
    for (int i = 0; i < NSET; i++) {
        v[i] = 1000 + i;
        CT_OK(utc_conduit_iwrite_to(c, rb_g, &v[i], sizeof v[i], i, &r[i]));
    }
    utc_status_t st[NSET];
    int done = 0;
    /* testall until done, then nothing is left */
    while (CT_OK(utc_request_testall(NSET, r, &done, st, NULL)) && !done)
        ;
    for (int i = 0; i < NSET; i++)
        CT_CHECK(r[i] == NULL && st[i] == UTC_OK, "write %d: %p, status %d", i, (void *)r[i],
                 st[i]);
    return 0;
}

static int set_reader(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    int v[NSET];
    utc_request_t *r[NSET + 2] = {NULL};
    for (int i = NSET - 1; i >= 0; i--) /* started in reverse: tags keep them apart */
        CT_OK(utc_conduit_iread_from(c, ra_g, &v[i], sizeof v[i], i, &r[i]));
    utc_status_t st[NSET + 2];
    size_t got[NSET + 2];
    CT_OK(utc_request_waitall(NSET + 2, r, st, got)); /* two NULL entries: skipped */
    for (int i = 0; i < NSET; i++)
        CT_CHECK(r[i] == NULL && st[i] == UTC_OK && got[i] == sizeof(int) && v[i] == 1000 + i,
                 "read %d: status %d, %zu bytes, value %d", i, st[i], got[i], v[i]);
    return 0;
}

static void set_placement(int ra, int rb, void *arg)
{
    (void)arg;
    ra_g = ra, rb_g = rb;
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, &free_opts);
    ct_pair_run(&p, set_writer, set_reader);
    ct_pair_close(&p);
}

static void test_sets(void)
{
    ct_begin();
    ct_each_placement(false, set_placement, NULL);
    CT_END();
}

/* ---- waitany fairness ---- */

#define NANY   4
#define ROUNDS 10000

static int any_writer(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    for (int i = 0; i < ROUNDS; i++) {
        int v = i;
        if (!CT_OK(utc_conduit_write_to(c, rb_g, &v, sizeof v, i % NANY)))
            return 0;
    }
    return 0;
}

static int any_reader(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    int v[NANY], next[NANY], last[NANY], gap = 0;
    utc_request_t *r[NANY];
    for (int t = 0; t < NANY; t++) {
        next[t] = t;
        last[t] = 0;
        CT_OK(utc_conduit_iread_from(c, ra_g, &v[t], sizeof v[t], t, &r[t]));
    }
    for (int round = 0; round < ROUNDS; round++) {
        int i = -1;
        if (!CT_OK(utc_request_waitany(NANY, r, &i, NULL)) || i < 0 || i >= NANY)
            return 0;
        CT_CHECK(v[i] == next[i], "tag %d: got %d, expected %d", i, v[i], next[i]);
        next[i] += NANY;
        if (round - last[i] > gap)
            gap = round - last[i];
        last[i] = round;
        if (next[i] < ROUNDS)
            CT_OK(utc_conduit_iread_from(c, ra_g, &v[i], sizeof v[i], i, &r[i]));
    }
    for (int t = 0; t < NANY; t++)
        CT_CHECK(r[t] == NULL && next[t] >= ROUNDS, "tag %d: %d messages left", t,
                 (ROUNDS - next[t]) / NANY);
    /* a waitany that always looked at entry 0 first would take all of tag 0's messages
     * while they are queued, leaving the others for thousands of rounds */
    CT_CHECK(gap <= 1000, "a request waited %d rounds while others completed", gap);
    int idx = 7;
    CT_OK(utc_request_waitany(NANY, r, &idx, NULL)); /* all NULL: nothing to wait for */
    CT_CHECK(idx == -1, "waitany of NULLs gave index %d", idx);
    return 0;
}

static void any_placement(int ra, int rb, void *arg)
{
    (void)arg;
    ra_g = ra, rb_g = rb;
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, &free_opts);
    ct_pair_run(&p, any_writer, any_reader);
    ct_pair_close(&p);
}

static void test_waitany_fair(void)
{
    ct_begin();
    ct_each_placement(false, any_placement, NULL);
    CT_END();
}

/* ---- bad inputs ---- */

static int bad_a(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    int v = 5, w[4];
    utc_request_t *r = NULL, *set[3] = {NULL, NULL, NULL};
    utc_status_t st[3];
    CT_EXPECT(utc_request_waitall(-1, set, st, NULL), UTC_ERR_INVALID_ARG);
    CT_EXPECT(utc_request_waitall(2, NULL, st, NULL), UTC_ERR_INVALID_ARG);
    CT_OK(utc_request_waitall(3, set, st, NULL)); /* only NULLs: nothing to do */
    CT_OK(utc_conduit_iwrite_to(c, rb_g, &v, sizeof v, 1, &r));
    set[0] = set[2] = r;
    CT_EXPECT(utc_request_waitall(3, set, st, NULL), UTC_ERR_INVALID_ARG);
    CT_CHECK(strstr(utc_last_error(), "same request") != NULL, "%s", utc_last_error());
    int idx, done;
    CT_EXPECT(utc_request_waitany(3, set, NULL, NULL), UTC_ERR_INVALID_ARG);
    CT_EXPECT(utc_request_testany(3, set, &idx, &done, NULL), UTC_ERR_INVALID_ARG);
    CT_OK(utc_request_wait(&r, NULL));
    /* overlapping buffers of an exchange */
    CT_EXPECT(utc_conduit_sendrecv(c, rb_g, w, 8, 1, rb_g, w + 1, 8, 1, NULL),
              UTC_ERR_INVALID_ARG);
    /* a timed read with nothing coming, a NaN timeout */
    size_t got;
    CT_EXPECT(utc_conduit_read_from_timeout(c, rb_g, w, sizeof w, 9, &got, 0.05), UTC_ERR_TIMEOUT);
    CT_EXPECT(utc_conduit_read_from_timeout(c, rb_g, w, sizeof w, 9, &got, NAN),
              UTC_ERR_INVALID_ARG);
    /* a peer that holds no thread of the other task */
    if (utc_nranks() > 2)
        CT_EXPECT(utc_conduit_iwrite_to(c, 0, &v, sizeof v, 1, &r),
                  ra_g == 0 || rb_g == 0 ? UTC_OK : UTC_ERR_OUT_OF_RANGE);
    if (r)
        CT_OK(utc_request_wait(&r, NULL));
    return 0;
}

static int bad_b(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    int v = 0;
    CT_OK(utc_conduit_read_from(c, ra_g, &v, sizeof v, 1, NULL));
    CT_CHECK(v == 5, "got %d", v);
    if (utc_nranks() > 2 && (ra_g == 0 || rb_g == 0)) /* the extra write above, if any */
        CT_OK(utc_conduit_read_from(c, ra_g, &v, sizeof v, 1, NULL));
    return 0;
}

static void bad_placement(int ra, int rb, void *arg)
{
    (void)arg;
    ra_g = ra, rb_g = rb;
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, &free_opts);
    ct_pair_run(&p, bad_a, bad_b);
    ct_pair_close(&p);
}

static int single_entry_job(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_request_t *r = NULL;
    int v = 0;
    CT_EXPECT(utc_conduit_iwrite_to(data, rb_g, &v, sizeof v, 1, &r), UTC_ERR_STATE);
    CT_EXPECT(utc_conduit_iread_from(data, rb_g, &v, sizeof v, 1, &r), UTC_ERR_STATE);
    CT_EXPECT(utc_conduit_sendrecv(data, rb_g, &v, sizeof v, 1, rb_g, &ctx, sizeof ctx, 1,
                                   NULL), UTC_ERR_STATE);
    return 0;
}

static void test_bad_inputs(void)
{
    ct_begin();
    ct_each_placement(false, bad_placement, NULL);
    int ra, rb;
    ct_pair_ranks(&ra, &rb);
    ra_g = ra, rb_g = rb;
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, NULL); /* single-entry */
    ct_pair_run(&p, single_entry_job, ct_idle);
    ct_pair_close(&p);
    CT_END();
}

static const utc_test_case_t cases[] = {
    {"symmetric swap with sendrecv, 0 B to 1 MiB", test_swap},
    {"iwrite_to / iread_from with waitall and testall", test_sets},
    {"waitany: 10,000 rounds, no request starved", test_waitany_fair},
    {"bad inputs: sets, exchange, timeouts, modes", test_bad_inputs},
    UTC_TEST_END};

int main(int argc, char **argv) { return utc_test_main(argc, argv, "free mode async", cases); }
