/*
 * Shared conduits (issue 14): writer tasks joined to reader tasks, in publish mode (every
 * reader gets every message) and share mode (each message to exactly one reader, one that
 * asked). 3 writers x 3 readers spread over the ranks (in-process at 1 rank, mixed at 2,
 * across ranks at 3), sizes from 0 B to 1 MiB, every byte checked: nothing lost, nothing
 * twice, each writer's order kept. The end of stream (every reader ends with
 * UTC_ERR_CLOSED once every writer closed, after every message); share mode balances (a
 * reader 10 ms slow per message takes far fewer); async, _by, owned and timed calls; and
 * every misuse gets its status.
 */
#include <stdlib.h>
#include <time.h>

#include "conduit_test_util.h"

#define NW 3
#define NR 3
#define NMSG 24
#define MAXSZ ((1 << 20) + 8)

/* Only small messages (the balance test: the writer must not be the slow one). */
static bool small_msgs;

/* The size of writer w's message seq: mostly small, one in five up to 1 MiB. */
static size_t msg_size(int w, int seq)
{
    uint64_t h = ct_mix((uint64_t)w * 7919 + (uint64_t)seq + 1);
    if (small_msgs)
        return 8 + (size_t)(h >> 8) % 64;
    return h % 5 == 0 ? 8 + (size_t)(h >> 8) % (1 << 20) : 8 + (size_t)(h >> 8) % 2000;
}

static uint64_t msg_seed(int w, int seq) { return 1000 + (uint64_t)w * 100 + (uint64_t)seq; }

typedef struct member_job {
    utc_conduit_t *c;
    int index;       /* writer or reader number */
    int slow_ms;     /* reader: sleep per message */
    int nmsg;        /* writer: messages to write */
    int got[NW * NMSG]; /* reader: how often it got each (writer, seq) */
    int zero;        /* reader: empty messages of tag 1 */
    int total;
} member_job_t;

static void sleep_ms(int ms)
{
    nanosleep(&(struct timespec){ms / 1000, (long)(ms % 1000) * 1000000L}, NULL);
}

/* Every local thread calls the writes with the same arguments (its own copy of the data):
 * thread 0 transfers. First an empty message, then the others. (In share mode a write
 * waits for a reader that asks for its tag: all of them have tag 0 here, since the readers
 * read tag 0 until its end of stream.) */
static int writer(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    member_job_t *j = data;
    unsigned char *buf = malloc(MAXSZ);
    CT_CHECK(buf, "out of memory");
    if (!buf)
        return 1;
    CT_OK(utc_conduit_write(j->c, NULL, 0, 0));
    for (int seq = 0; seq < j->nmsg; seq++) {
        size_t n = msg_size(j->index, seq);
        uint64_t head = (uint64_t)j->index << 32 | (uint64_t)seq;
        memcpy(buf, &head, 8);
        ct_fill(buf + 8, n - 8, msg_seed(j->index, seq));
        if (!CT_OK(utc_conduit_write(j->c, buf, n, 0)))
            break;
    }
    CT_OK(utc_conduit_close(j->c));
    CT_EXPECT(utc_conduit_write(j->c, buf, 8, 0), UTC_ERR_CLOSED);
    free(buf);
    return 0;
}

/* Tag 0 until its end of stream. Thread 0 gets the data and checks it. */
static int reader(utc_ctx_t *ctx, void *data)
{
    member_job_t *j = data;
    unsigned char *buf = malloc(MAXSZ);
    int last[NW] = {-1, -1, -1};
    CT_CHECK(buf, "out of memory");
    if (!buf)
        return 1;
    utc_status_t rc;
    size_t n;
    while ((rc = utc_conduit_read(j->c, buf, MAXSZ, 0, &n)) == UTC_OK) {
        if (ctx->local_id != 0)
            continue;
        if (n == 0) { /* each writer's first, empty */
            j->zero++;
            continue;
        }
        uint64_t head;
        memcpy(&head, buf, 8);
        int w = (int)(head >> 32), seq = (int)(head & 0xffffffff);
        bool sane = n >= 8 && w >= 0 && w < NW && seq >= 0 && seq < NMSG;
        CT_CHECK(sane, "reader %d: bad message head %llx (%zu bytes)", j->index,
                 (unsigned long long)head, n);
        if (!sane)
            continue;
        CT_CHECK(n == msg_size(w, seq) && ct_verify(buf + 8, n - 8, msg_seed(w, seq)),
                 "reader %d: writer %d message %d: %zu bytes, bad contents", j->index, w, seq, n);
        CT_CHECK(seq > last[w], "reader %d: writer %d's message %d after its %d", j->index, w,
                 seq, last[w]);
        last[w] = seq;
        j->got[w * NMSG + seq]++;
        j->total++;
        if (j->slow_ms)
            sleep_ms(j->slow_ms);
    }
    CT_CHECK(rc == UTC_ERR_CLOSED, "reader %d: tag 0 ended with %s: %s", j->index,
             utc_status_string(rc), utc_last_error());
    CT_CHECK(strstr(utc_last_error(), "every writer of shared conduit") != NULL, "message: %s",
             utc_last_error());
    CT_EXPECT(utc_conduit_read(j->c, buf, MAXSZ, 1, &n), UTC_ERR_CLOSED); /* no tag 1 */
    /* and it stays ended */
    CT_EXPECT(utc_conduit_read_timeout(j->c, buf, MAXSZ, 0, &n, 5.0), UTC_ERR_CLOSED);
    free(buf);
    return 0;
}

/* The members: writer i on rank i % n, reader i on rank (i + 1) % n, so every placement
 * is there at 3 ranks; writer 0 and reader 0 have two threads. */
typedef struct group {
    utc_task_t *w[NW], *r[NR];
    utc_conduit_t *c;
    member_job_t wj[NW], rj[NR];
} group_t;

static int w0_threads = 2; /* writer 0's threads */

static void group_open(group_t *g, int nw, int nr, utc_shared_mode_t mode)
{
    int n = utc_test_nranks();
    memset(g, 0, sizeof *g);
    for (int i = 0; i < nw; i++)
        g->w[i] = ct_task(&ct_ops_a, i % n, i == 0 ? w0_threads : 1);
    for (int i = 0; i < nr; i++)
        g->r[i] = ct_task(&ct_ops_b, (i + 1) % n, i == 0 ? 2 : 1);
    UTC_ASSERT_OK(utc_conduit_create_shared(g->w, nw, g->r, nr, mode, NULL, &g->c));
    for (int i = 0; i < nw; i++)
        g->wj[i] = (member_job_t){.c = g->c, .index = i, .nmsg = NMSG};
    for (int i = 0; i < nr; i++)
        g->rj[i] = (member_job_t){.c = g->c, .index = i};
}

/* Run the members: writer i runs wfn[i] (NULL: `writer`) on its job, reader i rfn[i]
 * (NULL: `reader`); every run must succeed but writer `failing`'s (-1: none), whose run
 * returns UTC_ERR_IO where it runs. */
static void group_run_fns(group_t *g, int nw, const ct_fn_t *wfn, int nr, const ct_fn_t *rfn,
                          int failing)
{
    ct_job_t wjob[NW], rjob[NR];
    for (int i = 0; i < nw; i++) {
        wjob[i] = (ct_job_t){wfn && wfn[i] ? wfn[i] : writer, &g->wj[i]};
        UTC_ASSERT_OK(utc_task_run(g->w[i], &wjob[i]));
    }
    for (int i = 0; i < nr; i++) {
        rjob[i] = (ct_job_t){rfn && rfn[i] ? rfn[i] : reader, &g->rj[i]};
        UTC_ASSERT_OK(utc_task_run(g->r[i], &rjob[i]));
    }
    for (int i = 0; i < nw; i++) {
        int rc = utc_task_wait(g->w[i]);
        CU_ASSERT(rc == (i == failing && utc_task_is_local(g->w[i]) ? UTC_ERR_IO : UTC_OK));
    }
    for (int i = 0; i < nr; i++)
        UTC_ASSERT_OK(utc_task_wait(g->r[i]));
    UTC_ASSERT_OK(utc_barrier());
}

static void group_run(group_t *g, int nw, int nr) { group_run_fns(g, nw, NULL, nr, NULL, -1); }

static void group_close(group_t *g, int nw, int nr)
{
    UTC_ASSERT_OK(utc_conduit_destroy(g->c));
    for (int i = 0; i < nw; i++)
        UTC_ASSERT_OK(utc_task_destroy(g->w[i]));
    for (int i = 0; i < nr; i++)
        UTC_ASSERT_OK(utc_task_destroy(g->r[i]));
}

/* How often each (writer, seq) was read, over every reader on every rank. */
static void count_all(const group_t *g, int nr, int *all)
{
    int mine[NW * NMSG] = {0};
    for (int i = 0; i < nr; i++)
        for (int k = 0; k < NW * NMSG; k++)
            mine[k] += g->rj[i].got[k];
    MPI_Allreduce(mine, all, NW * NMSG, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

static void test_publish(void)
{
    ct_begin();
    group_t g;
    group_open(&g, NW, NR, UTC_SHARED_PUBLISH);
    group_run(&g, NW, NR);
    int all[NW * NMSG];
    count_all(&g, NR, all);
    for (int k = 0; k < NW * NMSG; k++)
        CU_ASSERT_EQUAL(all[k], NR); /* every reader, once */
    for (int i = 0; i < NR; i++)
        if (g.rj[i].total || g.rj[i].zero) { /* its rank's readers */
            CU_ASSERT_EQUAL(g.rj[i].total, NW * NMSG);
            CU_ASSERT_EQUAL(g.rj[i].zero, NW);
        }
    group_close(&g, NW, NR);
    CT_END();
}

static void test_share(void)
{
    ct_begin();
    group_t g;
    group_open(&g, NW, NR, UTC_SHARED_SHARE);
    group_run(&g, NW, NR);
    int all[NW * NMSG];
    count_all(&g, NR, all);
    for (int k = 0; k < NW * NMSG; k++)
        CU_ASSERT_EQUAL(all[k], 1); /* exactly one reader */
    int zero = 0, zall = 0;
    for (int i = 0; i < NR; i++)
        zero += g.rj[i].zero;
    MPI_Allreduce(&zero, &zall, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CU_ASSERT_EQUAL(zall, NW);
    group_close(&g, NW, NR);
    CT_END();
}

/* One writer, two readers, one of them 10 ms slow per message: the fast one takes most.
 * (Demand decides only while the readers are slower than the writer: small messages,
 * so the writer, filling 1 MiB messages under a sanitizer, never is the slow one.) */
static void test_share_balance(void)
{
    ct_begin();
    small_msgs = true;
    group_t g;
    group_open(&g, 1, 2, UTC_SHARED_SHARE);
    g.wj[0].nmsg = NMSG;
    g.rj[1].slow_ms = 10;
    group_run(&g, 1, 2);
    int t[2] = {g.rj[0].total, g.rj[1].total}, all[2];
    MPI_Allreduce(t, all, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CU_ASSERT_EQUAL(all[0] + all[1], NMSG);
    CU_ASSERT(all[1] * 3 <= all[0]); /* the slow one: a quarter or less */
    if (utc_test_rank() == 0)
        printf("\n  share mode, %d messages: fast reader %d, slow reader %d\n", NMSG, all[0],
               all[1]);
    group_close(&g, 1, 2);
    small_msgs = false;
    CT_END();
}

/* ---- the other calls: async, _by, owned, timed, any-tag, probes ---- */

static int calls_writer(utc_ctx_t *ctx, void *data)
{
    member_job_t *j = data;
    int v = 7;
    /* _by: thread 0 writes, the other returns at once */
    CT_OK(utc_conduit_write_by(j->c, 0, &v, sizeof v, 2));
    if (ctx->local_id == 0) {
        utc_request_t *r = NULL;
        v = 8;
        CT_OK(utc_conduit_iwrite(j->c, &v, sizeof v, 3, &r));
        CT_OK(utc_request_wait(&r, NULL));
    }
    /* owned: the readers each get a buffer of their own (publish: copies) */
    void *b = utc_buf_alloc(64);
    CT_CHECK(b, "out of memory");
    memset(b, 0x5a, 64);
    CT_OK(utc_conduit_write_by(j->c, 0, &v, 0, 4)); /* before: the owned one's tag is 5 */
    CT_OK(utc_conduit_write_owned(j->c, b, 64, 5));
    CT_OK(utc_conduit_close(j->c));
    return 0;
}

static int calls_reader(utc_ctx_t *ctx, void *data)
{
    member_job_t *j = data;
    int v = 0;
    size_t n = 0;
    utc_msg_info_t info;
    /* a probe is no transfer: each thread looks for itself (thread 1's look could come
     * after thread 0 has read the message) */
    if (ctx->local_id == 0) {
        CT_OK(utc_conduit_probe(j->c, 2, &info));
        CT_CHECK(info.size == sizeof v && info.tag == 2, "probe: %zu bytes, tag %d",
                 info.size, info.tag);
    }
    CT_OK(utc_conduit_read(j->c, &v, sizeof v, 2, &n));
    CT_CHECK(ctx->local_id != 0 || v == 7, "tag 2: %d", v);
    if (ctx->local_id == 0) {
        utc_request_t *r = NULL;
        CT_OK(utc_conduit_iread(j->c, &v, sizeof v, 3, &r));
        CT_OK(utc_request_wait(&r, &n));
        CT_CHECK(v == 8 && n == sizeof v, "iread: %d", v);
    }
    CT_OK(utc_conduit_read_any(j->c, &v, sizeof v, &info));
    CT_CHECK(info.tag == 4 && info.size == 0, "read_any: tag %d, %zu bytes", info.tag,
             info.size);
    void *b = NULL;
    size_t sz = 0;
    CT_OK(utc_conduit_read_owned(j->c, 5, &b, &sz));
    if (ctx->local_id == 0) {
        CT_CHECK(b && sz == 64 && ((unsigned char *)b)[63] == 0x5a, "owned: %zu bytes", sz);
        utc_buf_free(b);
    }
    CT_EXPECT(utc_conduit_read_timeout(j->c, &v, sizeof v, 9, &n, 10.0), UTC_ERR_CLOSED);
    return 0;
}

static void test_calls(void)
{
    ct_begin();
    group_t g;
    w0_threads = 1; /* its owned write is made by one thread */
    group_open(&g, 1, NR, UTC_SHARED_PUBLISH);
    w0_threads = 2;
    const ct_fn_t wfn[1] = {calls_writer}, rfn[NR] = {calls_reader, calls_reader, calls_reader};
    group_run_fns(&g, 1, wfn, NR, rfn, -1);
    group_close(&g, 1, NR);
    CT_END();
}

/* A read with a time limit and nothing coming: UTC_ERR_TIMEOUT, and the conduit works on. */
static int timeout_writer(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    member_job_t *j = data;
    int v = 11;
    sleep_ms(300);
    CT_OK(utc_conduit_write(j->c, &v, sizeof v, 0));
    return 0;
}

static int timeout_reader(utc_ctx_t *ctx, void *data)
{
    member_job_t *j = data;
    int v = 0;
    CT_EXPECT(utc_conduit_read_timeout(j->c, &v, sizeof v, 0, NULL, 0.05), UTC_ERR_TIMEOUT);
    CT_OK(utc_conduit_read(j->c, &v, sizeof v, 0, NULL));
    CT_CHECK(ctx->local_id != 0 || v == 11, "after the timeout: %d", v); /* thread 0 reads */
    return 0;
}

static void test_timeout(void)
{
    ct_begin();
    for (int mode = UTC_SHARED_PUBLISH; mode <= UTC_SHARED_SHARE; mode++) {
        group_t g;
        group_open(&g, 2, 1, (utc_shared_mode_t)mode);
        const ct_fn_t wfn[2] = {timeout_writer, ct_idle}, rfn[1] = {timeout_reader};
        group_run_fns(&g, 2, wfn, 1, rfn, -1);
        group_close(&g, 2, 1);
    }
    CT_END();
}

/* ---- a failed writer releases the readers ---- */

static int failing_writer(utc_ctx_t *ctx, void *data)
{
    (void)ctx, (void)data;
    return UTC_ERR_IO; /* fails before it writes */
}

static int released_reader(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    member_job_t *j = data;
    int v = 0;
    CT_EXPECT(utc_conduit_read(j->c, &v, sizeof v, 0, NULL), UTC_ERR_PEER_FAILED);
    return 0;
}

static void test_failed_writer(void)
{
    ct_begin();
    for (int mode = UTC_SHARED_PUBLISH; mode <= UTC_SHARED_SHARE; mode++) {
        group_t g;
        group_open(&g, 2, 2, (utc_shared_mode_t)mode);
        const ct_fn_t wfn[2] = {failing_writer, ct_idle};
        const ct_fn_t rfn[2] = {released_reader, released_reader};
        group_run_fns(&g, 2, wfn, 2, rfn, 0);
        group_close(&g, 2, 2);
    }
    CT_END();
}

/* ---- misuse ---- */

static int wrong_side_writer(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    member_job_t *j = data;
    int v = 0;
    utc_msg_info_t info;
    CT_EXPECT(utc_conduit_read(j->c, &v, sizeof v, 0, NULL), UTC_ERR_STATE);
    CT_EXPECT(utc_conduit_write_to(j->c, 0, &v, sizeof v, 0), UTC_ERR_STATE);
    CT_EXPECT(utc_conduit_probe(j->c, 0, &info), UTC_ERR_STATE);
    CT_OK(utc_conduit_close(j->c));
    CT_EXPECT(utc_conduit_write(j->c, &v, sizeof v, 0), UTC_ERR_CLOSED);
    CT_EXPECT(utc_conduit_close(j->c), UTC_ERR_STATE);
    return 0;
}

static int wrong_side_reader(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    member_job_t *j = data;
    int v = 0, found = 0;
    utc_msg_info_t info;
    CT_EXPECT(utc_conduit_write(j->c, &v, sizeof v, 0), UTC_ERR_STATE);
    CT_EXPECT(utc_conduit_close(j->c), UTC_ERR_STATE);
    /* share mode: a read asks for a tag; probes and any-tag reads have none */
    CT_EXPECT(utc_conduit_iprobe(j->c, 0, &found, &info), UTC_ERR_STATE);
    CT_EXPECT(utc_conduit_read_any(j->c, &v, sizeof v, &info), UTC_ERR_STATE);
    CT_EXPECT(utc_conduit_read(j->c, &v, sizeof v, 0, NULL), UTC_ERR_CLOSED);
    return 0;
}

static int outsider(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    int v = 0;
    CT_EXPECT(utc_conduit_write(c, &v, sizeof v, 0), UTC_ERR_NOT_MEMBER);
    CT_EXPECT(utc_conduit_read(c, &v, sizeof v, 0, NULL), UTC_ERR_NOT_MEMBER);
    return 0;
}

static void test_errors(void)
{
    ct_begin();
    int n = utc_test_nranks();
    utc_task_t *w = ct_task(&ct_ops_a, 0, 1), *r = ct_task(&ct_ops_b, n - 1, 1);
    utc_task_t *o = ct_task(&ct_ops_c, 0, 1);
    utc_task_t *ws[2] = {w, w}, *rs[2] = {r, w};
    utc_conduit_t *c = NULL;
    utc_conduit_options_t fo = UTC_CONDUIT_OPTIONS_INIT;
    fo.mode = UTC_CONDUIT_FREE;
    CU_ASSERT_EQUAL(utc_conduit_create_shared(ws, 0, &r, 1, UTC_SHARED_PUBLISH, NULL, &c),
                    UTC_ERR_INVALID_ARG);
    CU_ASSERT_EQUAL(utc_conduit_create_shared(&w, 1, &r, 0, UTC_SHARED_SHARE, NULL, &c),
                    UTC_ERR_INVALID_ARG);
    CU_ASSERT_EQUAL(utc_conduit_create_shared(NULL, 1, &r, 1, UTC_SHARED_SHARE, NULL, &c),
                    UTC_ERR_INVALID_ARG);
    CU_ASSERT_EQUAL(utc_conduit_create_shared(&w, 1, &r, 1, UTC_SHARED_SHARE, NULL, NULL),
                    UTC_ERR_INVALID_ARG);
    CU_ASSERT_EQUAL(utc_conduit_create_shared(ws, 2, &r, 1, UTC_SHARED_SHARE, NULL, &c),
                    UTC_ERR_INVALID_ARG); /* a writer twice */
    CU_ASSERT(strstr(utc_last_error(), "listed twice") != NULL);
    CU_ASSERT_EQUAL(utc_conduit_create_shared(&w, 1, rs, 2, UTC_SHARED_SHARE, NULL, &c),
                    UTC_ERR_INVALID_ARG); /* writer and reader */
    CU_ASSERT_EQUAL(utc_conduit_create_shared(&w, 1, &r, 1, (utc_shared_mode_t)7, NULL, &c),
                    UTC_ERR_INVALID_ARG);
    CU_ASSERT_EQUAL(utc_conduit_create_shared(&w, 1, &r, 1, UTC_SHARED_SHARE, &fo, &c),
                    UTC_ERR_INVALID_ARG);
    CU_ASSERT_PTR_NULL(c); /* never set on failure */

    UTC_ASSERT_OK(utc_conduit_create_shared(&w, 1, &r, 1, UTC_SHARED_SHARE, NULL, &c));
    member_job_t wj = {.c = c}, rj = {.c = c};
    ct_run2(w, wrong_side_writer, &wj, r, wrong_side_reader, &rj);
    ct_run1(o, outsider, c);
    UTC_ASSERT_OK(utc_conduit_destroy(c));
    int v = 0;
    CU_ASSERT_EQUAL(utc_conduit_write(c, &v, sizeof v, 0), UTC_ERR_INVALID_HANDLE);
    UTC_ASSERT_OK(utc_task_destroy(w));
    UTC_ASSERT_OK(utc_task_destroy(r));
    UTC_ASSERT_OK(utc_task_destroy(o));
    CT_END();
}

static const utc_test_case_t cases[] = {
    {"publish: 3 writers x 3 readers, every reader every message, in order", test_publish},
    {"share: 3 writers x 3 readers, each message to exactly one reader", test_share},
    {"share: a slow reader takes fewer", test_share_balance},
    {"async, _by, owned, probes and any-tag reads on a shared conduit", test_calls},
    {"a timed read runs out, and the conduit works on", test_timeout},
    {"a failed writer ends the readers' reads with UTC_ERR_PEER_FAILED", test_failed_writer},
    {"misuse: bad sets, the wrong side, outsiders, after close", test_errors},
    UTC_TEST_END};

int main(int argc, char **argv) { return utc_test_main(argc, argv, "shared conduits", cases); }
