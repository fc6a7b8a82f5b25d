/*
 * Probes and any-tag reads (issue 22 item 3): utc_conduit_probe / iprobe report the size and
 * tag of the message the next read would get, without taking it; utc_conduit_read_any takes
 * the next message of any tag and says which. Checked in-process and between ranks, with
 * sizes that cross the in-process inline limit and the MPI eager limit: nothing lost,
 * nothing taken twice, each tag in write order, every probe's answer equal to what the read
 * after it gets. Also: a too-small buffer (the message stays), every local thread probing
 * together, a free-mode conduit carrying both directions between the same ranks (an
 * any-tag read must not take the other direction's messages), and the bad inputs, probe on
 * a destroyed conduit included.
 */
#include <stdlib.h>

#include "conduit_test_util.h"

#define NMSG  96
#define NTAGS 4
#define MAXSZ (48 << 10)

static const utc_conduit_options_t free_opts = {
    .mode = UTC_CONDUIT_FREE, .inline_max = UTC_CONDUIT_INLINE_DEFAULT,
    .ring_slots = UTC_CONDUIT_SLOTS_DEFAULT};

static int ra_g, rb_g;

/* Message i: tag i % NTAGS; its size and contents depend on i. */
static size_t msg_size(int i)
{
    static const size_t sizes[] = {0, 8, 1000, 1100, 4096, 4097, 20000, MAXSZ};
    return sizes[ct_mix((uint64_t)i) % (sizeof sizes / sizeof sizes[0])];
}

static int writer(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    unsigned char *buf = malloc(MAXSZ);
    CT_CHECK(buf, "out of memory");
    for (int i = 0; buf && i < NMSG; i++) {
        ct_fill(buf, msg_size(i), 7000 + (uint64_t)i);
        if (!CT_OK(utc_conduit_write(data, buf, msg_size(i), i % NTAGS)))
            break;
    }
    free(buf);
    return 0;
}

/* The reader: each round picks a way to look (iprobe until found, probe of any tag, probe
 * of one tag) and a way to read (read of the probed tag, read_any). Per tag, the k-th
 * message read must be the k-th written with that tag. */
static int reader(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    unsigned char *buf = malloc(MAXSZ);
    int next[NTAGS] = {0}; /* per tag: how many read */
    CT_CHECK(buf, "out of memory");
    for (int round = 0; buf && round < NMSG; round++) {
        utc_msg_info_t info = {0, -1, -1};
        int how = (int)(ct_mix(500 + (uint64_t)round) % 4);
        int want = -1;
        if (how == 0) {
            int found = 0;
            while (CT_OK(utc_conduit_iprobe(c, UTC_ANY_TAG, &found, &info)) && !found)
                ;
            if (!found)
                break;
        } else if (how == 1) {
            if (!CT_OK(utc_conduit_probe(c, UTC_ANY_TAG, &info)))
                break;
        } else if (how == 2) {
            /* the tag of the oldest message not read yet: the writer has written it (a
             * blocking write of a large message waits for its read, so a probe of a tag
             * further on could wait for ever, as a read of it would) */
            int oldest = NMSG;
            for (int t = 0; t < NTAGS; t++)
                if (next[t] * NTAGS + t < oldest)
                    oldest = next[t] * NTAGS + t;
            want = oldest % NTAGS;
            if (!CT_OK(utc_conduit_probe(c, want, &info)))
                break;
            CT_CHECK(info.tag == want, "probe of tag %d said tag %d", want, info.tag);
        }
        utc_msg_info_t got = {0, -1, -1};
        if (how == 3 || round % 2) {
            if (!CT_OK(utc_conduit_read_any(c, buf, MAXSZ, &got)))
                break;
        } else {
            size_t n = 0;
            if (!CT_OK(utc_conduit_read(c, buf, info.size, info.tag, &n)))
                break;
            got = (utc_msg_info_t){n, info.tag, info.peer};
        }
        if (how != 3)
            CT_CHECK(got.tag == info.tag && got.size == info.size && got.peer == info.peer,
                     "round %d: probed tag %d, %zu B from rank %d; read tag %d, %zu B from "
                     "rank %d", round, info.tag, info.size, info.peer, got.tag, got.size,
                     got.peer);
        if (got.tag < 0 || got.tag >= NTAGS) {
            CT_CHECK(0, "round %d: tag %d", round, got.tag);
            break;
        }
        int i = next[got.tag]++ * NTAGS + got.tag;
        CT_CHECK(got.peer == ra_g, "round %d: from rank %d, expected %d", round, got.peer, ra_g);
        CT_CHECK(i < NMSG && got.size == msg_size(i) && ct_verify(buf, got.size, 7000 + (uint64_t)i),
                 "round %d: tag %d, %zu bytes is not message %d (%zu bytes)", round, got.tag,
                 got.size, i, msg_size(i));
    }
    int found = 1;
    utc_msg_info_t info;
    CT_OK(utc_conduit_iprobe(c, UTC_ANY_TAG, &found, &info));
    CT_CHECK(!found, "a message is left after all %d were read", NMSG);
    free(buf);
    return 0;
}

static void probe_placement(int ra, int rb, void *arg)
{
    (void)arg;
    ra_g = ra, rb_g = rb;
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, NULL);
    ct_pair_run(&p, writer, reader);
    ct_pair_close(&p);
}

static void test_probe_and_read_any(void)
{
    ct_begin();
    ct_each_placement(false, probe_placement, NULL);
    CT_END();
}

/* ---- a buffer too small, and every local thread probing ---- */

static int small_writer(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    unsigned char big[3000];
    ct_fill(big, sizeof big, 41);
    CT_OK(utc_conduit_write(data, big, sizeof big, 5));
    CT_OK(utc_conduit_write(data, big, 16, 6));
    return 0;
}

/* Two threads: both call read_any (thread 0 transfers) and get the same answers; each
 * probes for itself. */
static int small_reader(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    unsigned char buf[3000];
    utc_msg_info_t info = {0, -1, -1};
    CT_OK(utc_conduit_probe(c, UTC_ANY_TAG, &info));
    CT_CHECK(info.tag == 5 && info.size == sizeof buf && info.peer == ra_g,
             "thread %d: probe said tag %d, %zu B, rank %d", ctx->local_id, info.tag, info.size,
             info.peer);
    info = (utc_msg_info_t){0, -1, -1};
    CT_EXPECT(utc_conduit_read_any(c, buf, 100, &info), UTC_ERR_TRUNCATE);
    CT_CHECK(info.tag == 5 && info.size == sizeof buf,
             "thread %d: a truncated read_any said tag %d, %zu B", ctx->local_id, info.tag,
             info.size);
    /* the message stayed: first in line for its tag, and still what an any-tag probe sees
     * for that tag */
    CT_OK(utc_conduit_probe(c, 5, &info));
    CT_CHECK(info.size == sizeof buf, "the truncated message is now %zu B", info.size);
    CT_OK(utc_ctx_barrier_local(ctx)); /* both have looked before thread 0 takes it */
    CT_OK(utc_conduit_read_any(c, buf, sizeof buf, &info));
    /* thread 0 transfers, into its buffer */
    CT_CHECK(info.tag == 5 && (ctx->local_id != 0 || ct_verify(buf, sizeof buf, 41)),
             "thread %d: tag %d, %zu B after the truncation", ctx->local_id, info.tag,
             info.size);
    CT_OK(utc_conduit_read_any(c, buf, sizeof buf, &info));
    CT_CHECK(info.tag == 6 && info.size == 16, "then tag %d, %zu B", info.tag, info.size);
    return 0;
}

static void small_placement(int ra, int rb, void *arg)
{
    (void)arg;
    ra_g = ra, rb_g = rb;
    ct_pair_t p = ct_pair_open(ra, 1, rb, 2, NULL);
    ct_pair_run(&p, small_writer, small_reader);
    ct_pair_close(&p);
}

static void test_truncate_and_threads(void)
{
    ct_begin();
    ct_each_placement(false, small_placement, NULL);
    CT_END();
}

/* ---- free mode, both directions between the same ranks ---- */

#define NBOTH 40

/* Each task has a thread on every rank; each thread writes to the other task's thread on
 * the next rank, and reads any tag from the previous rank: the messages of both
 * directions travel between the same ranks at once. */
typedef struct {
    utc_conduit_t *c;
    utc_task_t *src;
} both_t;

static int both_ways(utc_ctx_t *ctx, void *data)
{
    both_t *j = data;
    utc_conduit_t *c = j->c;
    int n = utc_nranks(), me = ctx->world_rank;
    int to = (me + 1) % n, from = (me + n - 1) % n;
    bool src = ctx->task == j->src;
    uint64_t base = src ? 100000 : 200000, other = src ? 200000 : 100000;
    unsigned char out[2000], in[2000];
    utc_request_t *w[NBOTH];
    int nw = 0;
    for (int i = 0; i < NBOTH; i++) {
        size_t sz = (size_t)(i * 37) % sizeof out;
        ct_fill(out, sz, base + (uint64_t)me * 1000 + (uint64_t)i);
        /* one at a time: the in-process ring may hold them all, MPI sends them eagerly */
        if (!CT_OK(utc_conduit_iwrite_to(c, to, out, sz, i % 3, &w[nw])))
            break;
        if (!CT_OK(utc_request_wait(&w[nw], NULL)))
            break;
    }
    int next[3] = {0, 0, 0};
    for (int k = 0; k < NBOTH; k++) {
        utc_msg_info_t info = {0, -1, -1};
        if (k % 2) {
            int found = 0;
            CT_OK(utc_conduit_iprobe_from(c, from, UTC_ANY_TAG, &found, &info));
            if (!found)
                CT_OK(utc_conduit_probe_from(c, from, UTC_ANY_TAG, &info));
        }
        if (!CT_OK(utc_conduit_read_any_from(c, from, in, sizeof in, &info)))
            break;
        if (info.tag < 0 || info.tag > 2) {
            CT_CHECK(0, "tag %d", info.tag);
            break;
        }
        int i = next[info.tag]++ * 3 + info.tag;
        size_t sz = (size_t)(i * 37) % sizeof in;
        CT_CHECK(info.size == sz && ct_verify(in, sz, other + (uint64_t)from * 1000 + (uint64_t)i),
                 "%s thread on rank %d: tag %d, %zu B is not message %d of rank %d's other "
                 "task", src ? "source" : "destination", me, info.tag, info.size, i, from);
    }
    return 0;
}

static void test_both_directions(void)
{
    ct_begin();
    int n = utc_nranks(), procs[3] = {0, 1, 2};
    utc_task_t *a = ct_task_procs(&ct_ops_a, procs, n);
    utc_task_t *b = ct_task_procs(&ct_ops_b, procs, n);
    both_t j = {NULL, a};
    UTC_ASSERT_OK(utc_conduit_create(a, b, &free_opts, &j.c));
    ct_run2(a, both_ways, &j, b, both_ways, &j);
    UTC_ASSERT_OK(utc_conduit_destroy(j.c));
    UTC_ASSERT_OK(utc_task_destroy(a));
    UTC_ASSERT_OK(utc_task_destroy(b));
    CT_END();
}

/* ---- bad inputs ---- */

static int bad_reader(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    utc_msg_info_t info;
    int found = 0, v = 0;
    CT_EXPECT(utc_conduit_probe(c, 1, NULL), UTC_ERR_INVALID_ARG);
    CT_EXPECT(utc_conduit_iprobe(c, 1, NULL, &info), UTC_ERR_INVALID_ARG);
    CT_EXPECT(utc_conduit_iprobe(c, 1, &found, NULL), UTC_ERR_INVALID_ARG);
    CT_EXPECT(utc_conduit_iprobe(c, -2, &found, &info), UTC_ERR_INVALID_ARG);
    CT_EXPECT(utc_conduit_iprobe(c, UTC_CONDUIT_TAG_MAX + 1, &found, &info),
              UTC_ERR_INVALID_ARG);
    CT_EXPECT(utc_conduit_read_any(c, &v, sizeof v, NULL), UTC_ERR_INVALID_ARG);
    CT_EXPECT(utc_conduit_read_any(c, NULL, 4, &info), UTC_ERR_INVALID_ARG);
    /* UTC_ANY_TAG is for read_any and the probes */
    CT_EXPECT(utc_conduit_read(c, &v, sizeof v, UTC_ANY_TAG, NULL), UTC_ERR_INVALID_ARG);
    CT_EXPECT(utc_conduit_write(c, &v, sizeof v, UTC_ANY_TAG), UTC_ERR_INVALID_ARG);
    /* single-entry mode names no rank */
    CT_EXPECT(utc_conduit_probe_from(c, ra_g, 1, &info), UTC_ERR_STATE);
    CT_EXPECT(utc_conduit_iprobe_from(c, ra_g, 1, &found, &info), UTC_ERR_STATE);
    CT_EXPECT(utc_conduit_read_any_from(c, ra_g, &v, sizeof v, &info), UTC_ERR_STATE);
    /* nothing was written: an iprobe finds nothing, and says so without an error */
    found = 1;
    CT_OK(utc_conduit_iprobe(c, UTC_ANY_TAG, &found, &info));
    CT_CHECK(!found, "iprobe found a message on an empty conduit");
    return 0;
}

static void test_bad_inputs(void)
{
    ct_begin();
    int ra, rb;
    ct_pair_ranks(&ra, &rb);
    ra_g = ra, rb_g = rb;
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, NULL);
    ct_pair_run(&p, ct_idle, bad_reader);
    /* the main thread is no thread of either task */
    utc_msg_info_t info;
    CU_ASSERT_EQUAL(utc_conduit_probe(p.c, 1, &info), UTC_ERR_NOT_MEMBER);
    utc_conduit_t *dead = p.c;
    ct_pair_close(&p);
    /* probe on a destroyed conduit: a clear error, no crash, no wait */
    CU_ASSERT_EQUAL(utc_conduit_probe(dead, 1, &info), UTC_ERR_INVALID_HANDLE);
    int found = 0;
    CU_ASSERT_EQUAL(utc_conduit_iprobe(dead, UTC_ANY_TAG, &found, &info),
                    UTC_ERR_INVALID_HANDLE);
    CU_ASSERT_EQUAL(utc_conduit_read_any(dead, &found, sizeof found, &info),
                    UTC_ERR_INVALID_HANDLE);
    CT_END();
}

static const utc_test_case_t cases[] = {
    {"probe, iprobe and read_any: every message once, in order per tag", test_probe_and_read_any},
    {"read_any into a small buffer; two threads probe together", test_truncate_and_threads},
    {"free mode: any-tag reads with both directions between the same ranks",
     test_both_directions},
    {"bad inputs, probe on a destroyed conduit", test_bad_inputs},
    UTC_TEST_END};

int main(int argc, char **argv) { return utc_test_main(argc, argv, "probe and any-tag", cases); }
