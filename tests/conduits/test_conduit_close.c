/*
 * End of stream (issue 14 item 2, two-task conduits): a writer closes its side with
 * utc_conduit_close; once every message written before is read, reads (of a tag, of any
 * tag, blocking, asynchronous), probes and reads already waiting end with UTC_ERR_CLOSED
 * instead of waiting. Nothing written before the close is lost, in-process and between
 * ranks, with sizes across the inline and eager limits. Writing after the close and closing
 * twice are refused; the other direction keeps working. Free mode: every writing rank
 * closes its own stream to every reading rank.
 */
#include <stdlib.h>
#include <time.h>

#include "conduit_test_util.h"

#define NMSG 60
#define NTAGS 3
#define MAXSZ (20 << 10)

static size_t msg_size(int i)
{
    static const size_t sizes[] = {0, 8, 1100, 5000, MAXSZ};
    return sizes[(size_t)i % (sizeof sizes / sizeof sizes[0])];
}

/* Every write is started, then the close, then the waits: the reader takes the tags in its
 * own order, and a blocking write of a large message would wait for its read. */
static int stream_writer(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    unsigned char *buf = malloc((size_t)NMSG * MAXSZ);
    utc_request_t *w[NMSG] = {NULL};
    CT_CHECK(buf, "out of memory");
    for (int i = 0; buf && i < NMSG; i++) {
        unsigned char *m = buf + (size_t)i * MAXSZ;
        ct_fill(m, msg_size(i), 300 + (uint64_t)i);
        if (!CT_OK(utc_conduit_iwrite(c, m, msg_size(i), i % NTAGS, &w[i])))
            break;
    }
    CT_OK(utc_conduit_close(c));
    utc_status_t st[NMSG];
    CT_OK(utc_request_waitall(NMSG, w, st, NULL));
    free(buf);
    /* refused from now on, nothing sent; closing twice is an error too */
    int v = 1;
    CT_EXPECT(utc_conduit_write(c, &v, sizeof v, 0), UTC_ERR_CLOSED);
    utc_request_t *r = NULL;
    CT_EXPECT(utc_conduit_iwrite(c, &v, sizeof v, 0, &r), UTC_ERR_CLOSED);
    CT_EXPECT(utc_conduit_close(c), UTC_ERR_STATE);
    /* the other direction is open: the reader says how many it got */
    int got = -1;
    CT_OK(utc_conduit_read(c, &got, sizeof got, 9, NULL));
    CT_CHECK(got == NMSG, "the reader got %d of %d messages", got, NMSG);
    return 0;
}

/* Tag by tag, each until its end: tag 1 first (its messages are spread among the others),
 * then any tag, then what is left of each tag. */
static int stream_reader(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    unsigned char *buf = malloc(MAXSZ);
    int next[NTAGS] = {0}, total = 0;
    CT_CHECK(buf, "out of memory");
    utc_status_t rc;
    size_t n;
    for (;;) { /* all of tag 1 */
        if ((rc = utc_conduit_read(c, buf, MAXSZ, 1, &n)) != UTC_OK)
            break;
        int i = next[1]++ * NTAGS + 1;
        CT_CHECK(n == msg_size(i) && ct_verify(buf, n, 300 + (uint64_t)i), "tag 1: message %d", i);
        total++;
    }
    CT_CHECK(rc == UTC_ERR_CLOSED, "tag 1 ended with %s: %s", utc_status_string(rc),
             utc_last_error());
    CT_CHECK(strstr(utc_last_error(), "end of stream") != NULL, "message: %s", utc_last_error());
    for (int k = 0; k < 7; k++) { /* a few of any tag */
        utc_msg_info_t info;
        if (!CT_OK(utc_conduit_read_any(c, buf, MAXSZ, &info)))
            break;
        CT_CHECK(info.tag != 1, "tag 1 again after its end");
        int i = next[info.tag]++ * NTAGS + info.tag;
        CT_CHECK(info.size == msg_size(i) && ct_verify(buf, info.size, 300 + (uint64_t)i),
                 "any tag: tag %d, message %d", info.tag, i);
        total++;
    }
    for (int t = 0; t < NTAGS; t++) {
        utc_request_t *r = NULL;
        for (;;) {
            if (!CT_OK(utc_conduit_iread(c, buf, MAXSZ, t, &r)))
                break;
            if ((rc = utc_request_wait(&r, &n)) != UTC_OK)
                break;
            int i = next[t]++ * NTAGS + t;
            CT_CHECK(n == msg_size(i) && ct_verify(buf, n, 300 + (uint64_t)i), "tag %d: message "
                     "%d", t, i);
            total++;
        }
        CT_CHECK(rc == UTC_ERR_CLOSED, "tag %d (async) ended with %s", t, utc_status_string(rc));
    }
    utc_msg_info_t info;
    int found = 1;
    CT_EXPECT(utc_conduit_read_any(c, buf, MAXSZ, &info), UTC_ERR_CLOSED);
    CT_EXPECT(utc_conduit_probe(c, UTC_ANY_TAG, &info), UTC_ERR_CLOSED);
    CT_EXPECT(utc_conduit_probe(c, 2, &info), UTC_ERR_CLOSED);
    CT_EXPECT(utc_conduit_iprobe(c, 0, &found, &info), UTC_ERR_CLOSED);
    CT_EXPECT(utc_conduit_read_timeout(c, buf, MAXSZ, 5, &n, 10.0), UTC_ERR_CLOSED);
    free(buf);
    CT_OK(utc_conduit_write(c, &total, sizeof total, 9));
    return 0;
}

static void stream_placement(int ra, int rb, void *arg)
{
    (void)arg;
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, NULL);
    ct_pair_run(&p, stream_writer, stream_reader);
    ct_pair_close(&p);
}

static void test_stream(void)
{
    ct_begin();
    ct_each_placement(false, stream_placement, NULL);
    CT_END();
}

/* ---- reads already waiting when the close comes ---- */

static int late_closer(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    int v = 5;
    CT_OK(utc_conduit_write(c, &v, sizeof v, 3));
    nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL); /* the reads wait meanwhile */
    CT_OK(utc_conduit_close(c)); /* every thread calls it; thread 0 sends the end */
    return 0;
}

/* Two threads: a blocking read by both (thread 0 transfers), and an asynchronous read of
 * another tag started before, all waiting when the close comes. */
static int waiting_reader(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    static int got3, got4;
    utc_request_t *r = NULL;
    if (ctx->local_id == 1)
        CT_OK(utc_conduit_iread(c, &got4, sizeof got4, 4, &r));
    CT_OK(utc_conduit_read(c, &got3, sizeof got3, 3, NULL));
    CT_CHECK(got3 == 5, "tag 3: %d", got3);
    CT_EXPECT(utc_conduit_read(c, &got3, sizeof got3, 3, NULL), UTC_ERR_CLOSED);
    if (ctx->local_id == 1)
        CT_EXPECT(utc_request_wait(&r, NULL), UTC_ERR_CLOSED);
    return 0;
}

static void waiting_placement(int ra, int rb, void *arg)
{
    (void)arg;
    ct_pair_t p = ct_pair_open(ra, 2, rb, 2, NULL); /* both threads write, and close */
    ct_pair_run(&p, late_closer, waiting_reader);
    ct_pair_close(&p);
}

static void test_waiting_reads(void)
{
    ct_begin();
    ct_each_placement(false, waiting_placement, NULL);
    CT_END();
}

/* ---- free mode: each writing rank closes its own stream ---- */

#define NFREE 20

static int free_writer(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    int n = utc_nranks(), me = ctx->world_rank;
    for (int p = 0; p < n; p++)
        for (int i = 0; i < NFREE; i++) {
            int v = me * 1000 + p * 100 + i;
            CT_OK(utc_conduit_write_to(c, p, &v, sizeof v, i % 2));
        }
    CT_OK(utc_conduit_close(c));
    return 0;
}

static int free_reader(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    int n = utc_nranks(), me = ctx->world_rank;
    for (int p = 0; p < n; p++) {
        int next[2] = {0, 0}, v;
        utc_msg_info_t info;
        utc_status_t rc;
        while ((rc = utc_conduit_read_any_from(c, p, &v, sizeof v, &info)) == UTC_OK) {
            int i = next[info.tag]++ * 2 + info.tag;
            CT_CHECK(v == p * 1000 + me * 100 + i && info.peer == p,
                     "from rank %d tag %d: %d, expected %d", p, info.tag, v,
                     p * 1000 + me * 100 + i);
        }
        CT_CHECK(rc == UTC_ERR_CLOSED && next[0] + next[1] == NFREE,
                 "from rank %d: %d messages, then %s", p, next[0] + next[1],
                 utc_status_string(rc));
    }
    return 0;
}

static void test_free_mode(void)
{
    ct_begin();
    int n = utc_nranks(), procs[3] = {0, 1, 2};
    utc_task_t *a = ct_task_procs(&ct_ops_a, procs, n);
    utc_task_t *b = ct_task_procs(&ct_ops_b, procs, n);
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.mode = UTC_CONDUIT_FREE;
    utc_conduit_t *c = NULL;
    UTC_ASSERT_OK(utc_conduit_create(a, b, &o, &c));
    ct_run2(a, free_writer, c, b, free_reader, c);
    UTC_ASSERT_OK(utc_conduit_destroy(c));
    UTC_ASSERT_OK(utc_task_destroy(a));
    UTC_ASSERT_OK(utc_task_destroy(b));
    CT_END();
}

static const utc_test_case_t cases[] = {
    {"close: every message, then UTC_ERR_CLOSED for every kind of read", test_stream},
    {"reads waiting when the close comes end with UTC_ERR_CLOSED", test_waiting_reads},
    {"free mode: each rank's stream to each rank", test_free_mode},
    UTC_TEST_END};

int main(int argc, char **argv) { return utc_test_main(argc, argv, "end of stream", cases); }
