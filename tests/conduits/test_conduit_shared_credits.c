/*
 * Share mode's credit window (issue 37): a reader asks each writer for up to `credits`
 * messages ahead of its reads, so its next message is on its way while it works.
 * - exactly once: 2 writers x 3 readers over the ranks, windows 1, 2 and 8; one reader
 *   reads with every thread, one keeps more reads in flight than its window (iread), one
 *   reads with short timeouts (each withdrawn read leaves its asks): every message reaches
 *   exactly one reader, and every reader ends with UTC_ERR_CLOSED;
 * - the window is granted up front: after one read, the writer writes `credits` messages
 *   and closes without waiting for another read; the reader then gets the rest, then
 *   UTC_ERR_CLOSED;
 * - close with credits outstanding: 3 slow readers with window 8 and fewer messages than
 *   asks: each message once, every reader UTC_ERR_CLOSED after the last one;
 * - a window deeper than an in-process ring (32 asks, 8 slots), over 3 tags, then reads
 *   of tags never written after the close: no read blocks on an ask;
 * - a reader that fails, or is destroyed, holding credits: the writer and the other
 *   readers end with UTC_ERR_PEER_FAILED / UTC_ERR_CANCELED naming it, no message is read
 *   twice, and at most `credits` per reader were written and never read;
 * - bad windows (the option, UTC_SHARE_CREDITS, credits on other conduits) are refused
 *   with UTC_ERR_INVALID_ARG and a message that names them.
 */
#include <time.h>

#include "conduit_test_util.h"

#define NW         2
#define NR         3
#define NITEMS     120
#define FAIL_ITEMS 100000 /* a writer that writes until an error stops */

typedef struct job {
    utc_conduit_t *c, *go; /* go: writer -> reader, a plain conduit (the up-front case) */
    int index, credits, nitems;
    int style;            /* reader: 0 every thread reads, 1 reads in flight, 2 timed */
    int stop_after;       /* failing reader: reads this many, then fails or returns */
    int got[NW * NITEMS]; /* reader: how often it got each (writer, seq) */
    int *seen;            /* failure cases: per message, how often read (FAIL_ITEMS) */
    int total, written;
    utc_status_t end; /* how its loop ended */
    char why[400];    /* the message of that status */
} job_t;

static void sleep_ms(int ms)
{
    nanosleep(&(struct timespec){ms / 1000, (long)(ms % 1000) * 1000000L}, NULL);
}

static void note_end(job_t *j, utc_status_t rc)
{
    j->end = rc;
    snprintf(j->why, sizeof j->why, "%s", utc_last_error());
}

/* ---- every message exactly once ---- */

static int writer(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    job_t *j = data;
    for (int seq = 0; seq < j->nitems; seq++) {
        uint64_t msg[2] = {(uint64_t)j->index << 32 | (uint64_t)seq, ct_mix((uint64_t)seq)};
        if (!CT_OK(utc_conduit_write(j->c, msg, sizeof msg, 0)))
            break;
    }
    CT_OK(utc_conduit_close(j->c));
    return 0;
}

/* One message read by reader j: its sender and number, checked. */
static void take(job_t *j, const uint64_t *msg, size_t n)
{
    int w = (int)(msg[0] >> 32), seq = (int)(msg[0] & 0xffffffff);
    bool sane = n == 2 * sizeof(uint64_t) && w >= 0 && w < NW && seq >= 0 && seq < NITEMS &&
                msg[1] == ct_mix((uint64_t)seq);
    CT_CHECK(sane, "reader %d: bad message %llx (%zu bytes)", j->index, (unsigned long long)msg[0],
             n);
    if (sane) {
        j->got[w * NITEMS + seq]++;
        j->total++;
    }
}

/* Style 0: all local threads call each read; thread 0 counts. Slow now and then. */
static int read_all_threads(utc_ctx_t *ctx, job_t *j)
{
    uint64_t msg[2];
    size_t n;
    utc_status_t rc;
    while ((rc = utc_conduit_read(j->c, msg, sizeof msg, 0, &n)) == UTC_OK) {
        if (ctx->local_id != 0)
            continue;
        take(j, msg, n);
        if (j->total % 16 == 0)
            sleep_ms(1);
    }
    return rc;
}

/* Style 1: three reads in flight at once, more than a window of 1 or 2 covers. */
static int read_in_flight(job_t *j)
{
    enum { K = 3 };
    uint64_t msg[K][2];
    utc_request_t *req[K] = {NULL};
    utc_status_t end = UTC_OK;
    for (int k = 0; k < K; k++)
        if (!CT_OK(utc_conduit_iread(j->c, msg[k], sizeof msg[k], 0, &req[k])))
            return UTC_ERR_INTERNAL;
    for (int live = K, k = 0; live; k = (k + 1) % K) {
        if (!req[k])
            continue;
        size_t n = 0;
        utc_status_t rc = utc_request_wait(&req[k], &n);
        live--;
        if (rc == UTC_OK) {
            take(j, msg[k], n);
            if (end == UTC_OK && CT_OK(utc_conduit_iread(j->c, msg[k], sizeof msg[k], 0, &req[k])))
                live++;
        } else if (end == UTC_OK) {
            end = rc; /* the rest end too; no new reads */
        }
    }
    return end;
}

/* Style 2: reads with a short time limit; a withdrawn read leaves its asks, and a message
 * that answers one waits for the next read. */
static int read_timed(job_t *j)
{
    uint64_t msg[2];
    size_t n;
    for (;;) {
        utc_status_t rc = utc_conduit_read_timeout(j->c, msg, sizeof msg, 0, &n, 0.0005);
        if (rc == UTC_ERR_TIMEOUT)
            continue;
        if (rc != UTC_OK)
            return rc;
        take(j, msg, n);
    }
}

static int reader(utc_ctx_t *ctx, void *data)
{
    job_t *j = data;
    utc_status_t rc = j->style == 1   ? read_in_flight(j)
                      : j->style == 2 ? read_timed(j)
                                      : read_all_threads(ctx, j);
    CT_CHECK(rc == UTC_ERR_CLOSED, "reader %d (style %d): ended with %s: %s", j->index, j->style,
             utc_status_string(rc), utc_last_error());
    uint64_t msg[2];
    CT_EXPECT(utc_conduit_read(j->c, msg, sizeof msg, 0, NULL), UTC_ERR_CLOSED); /* stays */
    return 0;
}

/* The members: writer i on rank i % n, reader i on rank (i + 1) % n; reader 0 has two
 * threads. */
typedef struct group {
    utc_task_t *w[NW], *r[NR];
    utc_conduit_t *c;
    job_t wj[NW], rj[NR];
} group_t;

static void group_open(group_t *g, int nw, int nr, int credits, const utc_task_ops_t *rops1)
{
    int n = utc_test_nranks();
    memset(g, 0, sizeof *g);
    for (int i = 0; i < nw; i++)
        g->w[i] = ct_task(&ct_ops_a, i % n, 1);
    for (int i = 0; i < nr; i++)
        g->r[i] = ct_task(i == 1 && rops1 ? rops1 : &ct_ops_b, (i + 1) % n, i == 0 ? 2 : 1);
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.credits = credits;
    UTC_ASSERT_OK(utc_conduit_create_shared(g->w, nw, g->r, nr, UTC_SHARED_SHARE, &o, &g->c));
    for (int i = 0; i < nw; i++)
        g->wj[i] = (job_t){.c = g->c, .index = i, .credits = credits, .nitems = NITEMS};
    for (int i = 0; i < nr; i++)
        g->rj[i] = (job_t){.c = g->c, .index = i, .credits = credits, .style = i};
}

/* Run writer i's wfn and reader i's rfn; every run must succeed but those of the tasks
 * given with a status in want_w / want_r (NULL: all UTC_OK), checked where they run. */
static void group_run(group_t *g, int nw, ct_fn_t wfn, int nr, ct_fn_t rfn, const int *want_w,
                      const int *want_r)
{
    ct_job_t wjob[NW], rjob[NR];
    for (int i = 0; i < nw; i++) {
        wjob[i] = (ct_job_t){wfn, &g->wj[i]};
        UTC_ASSERT_OK(utc_task_run(g->w[i], &wjob[i]));
    }
    for (int i = 0; i < nr; i++) {
        rjob[i] = (ct_job_t){rfn, &g->rj[i]};
        UTC_ASSERT_OK(utc_task_run(g->r[i], &rjob[i]));
    }
    for (int i = 0; i < nw; i++) {
        int rc = utc_task_wait(g->w[i]);
        CU_ASSERT(rc == (want_w && utc_task_is_local(g->w[i]) ? want_w[i] : UTC_OK));
    }
    for (int i = 0; i < nr; i++) {
        int rc = utc_task_wait(g->r[i]);
        CU_ASSERT(rc == (want_r && utc_task_is_local(g->r[i]) ? want_r[i] : UTC_OK));
    }
    UTC_ASSERT_OK(utc_barrier());
}

static void group_close(group_t *g, int nw, int nr)
{
    UTC_ASSERT_OK(utc_conduit_destroy(g->c));
    for (int i = 0; i < nw; i++)
        UTC_ASSERT_OK(utc_task_destroy(g->w[i]));
    for (int i = 0; i < nr; i++)
        if (g->r[i])
            UTC_ASSERT_OK(utc_task_destroy(g->r[i]));
}

/* How often each (writer, seq) was read, summed over every reader on every rank. */
static void count_all(const group_t *g, int nr, int *all)
{
    int mine[NW * NITEMS] = {0};
    for (int i = 0; i < nr; i++)
        for (int k = 0; k < NW * NITEMS; k++)
            mine[k] += g->rj[i].got[k];
    MPI_Allreduce(mine, all, NW * NITEMS, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

static void test_exactly_once(void)
{
    static const int windows[] = {1, 2, 8};
    for (size_t k = 0; k < sizeof windows / sizeof *windows; k++) {
        ct_begin();
        group_t g;
        group_open(&g, NW, NR, windows[k], NULL);
        group_run(&g, NW, writer, NR, reader, NULL, NULL);
        int all[NW * NITEMS], once = 0;
        count_all(&g, NR, all);
        for (int m = 0; m < NW * NITEMS; m++)
            once += all[m] == 1;
        CU_ASSERT_EQUAL(once, NW * NITEMS);
        if (once != NW * NITEMS)
            printf("\n  credits %d: %d of %d messages read exactly once\n", windows[k], once,
                   NW * NITEMS);
        group_close(&g, NW, NR);
        CT_END();
    }
}

/* ---- the window is granted up front, and a close leaves nothing behind ---- */

static int upfront_writer(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    job_t *j = data;
    /* the reader has read once and waits on `go`: its first read asked for `credits`
     * messages, so these writes need no other read */
    for (int seq = 0; seq < j->credits; seq++)
        CT_OK(utc_conduit_write(j->c, &seq, sizeof seq, 0));
    CT_OK(utc_conduit_close(j->c));
    int go = 1;
    CT_OK(utc_conduit_write(j->go, &go, sizeof go, 0));
    return 0;
}

static int upfront_reader(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    job_t *j = data;
    int v = -1, go = 0, seen = 0;
    if (CT_OK(utc_conduit_read(j->c, &v, sizeof v, 0, NULL)))
        seen |= 1 << v;
    /* a writer that needed a second read would never send this */
    CT_OK(utc_conduit_read_timeout(j->go, &go, sizeof go, 0, NULL, 20.0));
    utc_status_t rc;
    while ((rc = utc_conduit_read(j->c, &v, sizeof v, 0, NULL)) == UTC_OK) {
        CT_CHECK(v >= 0 && v < j->credits && !(seen & (1 << v)), "message %d twice or bad", v);
        seen |= 1 << v;
    }
    CT_CHECK(rc == UTC_ERR_CLOSED, "after the close: %s", utc_status_string(rc));
    CT_CHECK(seen == (int)((1u << j->credits) - 1), "credits %d: got the set %x", j->credits,
             (unsigned)seen);
    return 0;
}

static void test_upfront(void)
{
    ct_begin();
    int n = utc_test_nranks();
    for (int credits = 2; credits <= 8; credits *= 4) {
        utc_task_t *w = ct_task(&ct_ops_a, 0, 1), *r = ct_task(&ct_ops_b, n - 1, 1);
        utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
        o.credits = credits;
        utc_conduit_t *c = NULL, *go = NULL;
        UTC_ASSERT_OK(utc_conduit_create_shared(&w, 1, &r, 1, UTC_SHARED_SHARE, &o, &c));
        UTC_ASSERT_OK(utc_conduit_create(w, r, NULL, &go));
        job_t wj = {.c = c, .go = go, .credits = credits}, rj = wj;
        ct_run2(w, upfront_writer, &wj, r, upfront_reader, &rj);
        UTC_ASSERT_OK(utc_conduit_destroy(go));
        UTC_ASSERT_OK(utc_conduit_destroy(c));
        UTC_ASSERT_OK(utc_task_destroy(w));
        UTC_ASSERT_OK(utc_task_destroy(r));
    }
    CT_END();
}

/* Fewer messages than asks: 13 for 3 readers of window 8, written at once, the close
 * right behind them while the readers still hold theirs. */
static int close_writer(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    job_t *j = data;
    j->nitems = 13;
    return writer(ctx, data);
}

static int slow_reader(utc_ctx_t *ctx, void *data)
{
    job_t *j = data;
    uint64_t msg[2];
    size_t n;
    utc_status_t rc;
    while ((rc = utc_conduit_read(j->c, msg, sizeof msg, 0, &n)) == UTC_OK) {
        if (ctx->local_id == 0) {
            take(j, msg, n);
            sleep_ms(2);
        }
    }
    CT_CHECK(rc == UTC_ERR_CLOSED, "reader %d: %s: %s", j->index, utc_status_string(rc),
             utc_last_error());
    CT_EXPECT(utc_conduit_read_timeout(j->c, msg, sizeof msg, 0, &n, 5.0), UTC_ERR_CLOSED);
    return 0;
}

static void test_close_outstanding(void)
{
    ct_begin();
    group_t g;
    group_open(&g, 1, NR, 8, NULL);
    group_run(&g, 1, close_writer, NR, slow_reader, NULL, NULL);
    int all[NW * NITEMS], ones = 0, other = 0;
    count_all(&g, NR, all);
    for (int m = 0; m < NW * NITEMS; m++) {
        ones += m < 13 && all[m] == 1;
        other += m >= 13 && all[m] != 0;
    }
    CU_ASSERT_EQUAL(ones, 13);
    CU_ASSERT_EQUAL(other, 0);
    group_close(&g, 1, NR);
    CT_END();
}

/* ---- more asks than an in-process ring holds ---- */

/* A window far deeper than the ring (ring_slots 2: its 8-slot small ring only): the asks
 * that do not fit wait in its backlog, and the reads go on. After the writer's close, reads
 * of tags it never wrote ask again (the writer takes no asks any more) and still end with
 * UTC_ERR_CLOSED, never blocked on an ask. */
#define DEEP_CREDITS 32
#define DEEP_ITEMS   100

static int deep_writer(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    job_t *j = data;
    for (int seq = 0; seq < DEEP_ITEMS; seq++)
        if (!CT_OK(utc_conduit_write(j->c, &seq, sizeof seq, seq % 3)))
            break;
    CT_OK(utc_conduit_close(j->c));
    return 0;
}

static int deep_reader(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    job_t *j = data;
    int v, next[3] = {0, 1, 2};
    /* tag by tag, in the writer's order: each read of a tag tops its asks up to 32 */
    for (int seq = 0; seq < DEEP_ITEMS; seq++) {
        if (!CT_OK(utc_conduit_read(j->c, &v, sizeof v, seq % 3, NULL)))
            return 0;
        CT_CHECK(v == next[seq % 3], "tag %d: message %d, expected %d", seq % 3, v, next[seq % 3]);
        next[seq % 3] += 3;
    }
    for (int tag = 0; tag < 40; tag++)
        CT_EXPECT(utc_conduit_read_timeout(j->c, &v, sizeof v, tag, NULL, 20.0), UTC_ERR_CLOSED);
    return 0;
}

static void deep_case(int ra, int rb, void *arg)
{
    (void)arg;
    utc_task_t *w = ct_task(&ct_ops_a, ra, 1), *r = ct_task(&ct_ops_b, rb, 1);
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.credits = DEEP_CREDITS;
    o.ring_slots = 2;
    utc_conduit_t *c = NULL;
    UTC_ASSERT_OK(utc_conduit_create_shared(&w, 1, &r, 1, UTC_SHARED_SHARE, &o, &c));
    job_t wj = {.c = c}, rj = {.c = c};
    ct_run2(w, deep_writer, &wj, r, deep_reader, &rj);
    UTC_ASSERT_OK(utc_conduit_destroy(c));
    UTC_ASSERT_OK(utc_task_destroy(w));
    UTC_ASSERT_OK(utc_task_destroy(r));
}

static void test_deep_window(void)
{
    ct_begin();
    ct_each_placement(true, deep_case, NULL);
    CT_END();
}

/* ---- a reader that fails, or is destroyed, holding credits ---- */

#define FAIL_CREDITS 4

static int seen_fail[FAIL_ITEMS]; /* this rank's readers' reads of each message */

/* Writes until an error ends it; returns it (a run that stops on an error returns it, and
 * so tells the other ranks) when `propagate`. */
static int endless_writer(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    job_t *j = data;
    utc_status_t rc = UTC_OK;
    for (int seq = 0; seq < FAIL_ITEMS && rc == UTC_OK; seq++)
        if ((rc = utc_conduit_write(j->c, &seq, sizeof seq, 0)) == UTC_OK)
            j->written++;
    note_end(j, rc);
    return j->style ? rc : 0;
}

/* Reads until an error; with stop_after, stops after that many: fails (style 1) or
 * returns holding its credits (style 0, to be destroyed). */
static int holding_reader(utc_ctx_t *ctx, void *data)
{
    job_t *j = data;
    int v;
    utc_status_t rc;
    while ((rc = utc_conduit_read(j->c, &v, sizeof v, 0, NULL)) == UTC_OK) {
        if (ctx->local_id != 0) /* reader 0's second thread: thread 0 counts */
            continue;
        CT_CHECK(v >= 0 && v < FAIL_ITEMS, "bad message %d", v);
        if (v >= 0 && v < FAIL_ITEMS)
            seen_fail[v]++;
        j->total++;
        if (j->stop_after && j->total == j->stop_after)
            return j->style ? UTC_ERR_IO : 0;
        if (!j->stop_after && j->total % 8 == 0)
            sleep_ms(1); /* the failing one keeps up */
    }
    if (ctx->local_id == 0)
        note_end(j, rc);
    return 0;
}

/* One case: reader 1 (task-c) stops after 5 messages holding its credits, and fails
 * (`destroy` false: its run returns UTC_ERR_IO) or returns and is destroyed while the
 * others run. */
static void holding_case(bool destroy)
{
    ct_begin();
    memset(seen_fail, 0, sizeof seen_fail);
    group_t g;
    group_open(&g, 1, NR, FAIL_CREDITS, &ct_ops_c);
    g.wj[0].style = !destroy; /* propagate its error as a run failure */
    g.rj[1].stop_after = 5;
    g.rj[1].style = !destroy;
    for (int i = 0; i < NR; i++)
        if (i != 1)
            g.rj[i].style = 0;
    ct_job_t wjob = {endless_writer, &g.wj[0]}, rjob[NR];
    UTC_ASSERT_OK(utc_task_run(g.w[0], &wjob));
    for (int i = 0; i < NR; i++) {
        rjob[i] = (ct_job_t){holding_reader, &g.rj[i]};
        UTC_ASSERT_OK(utc_task_run(g.r[i], &rjob[i]));
    }
    utc_status_t want = destroy ? UTC_ERR_CANCELED : UTC_ERR_PEER_FAILED;
    int rc = utc_task_wait(g.r[1]);
    CU_ASSERT(rc == (!destroy && utc_task_is_local(g.r[1]) ? UTC_ERR_IO : UTC_OK));
    if (destroy) {
        UTC_ASSERT_OK(utc_barrier()); /* every rank: reader 1 has returned */
        UTC_ASSERT_OK(utc_task_destroy(g.r[1]));
        g.r[1] = NULL;
    }
    rc = utc_task_wait(g.w[0]);
    CU_ASSERT(rc == (!destroy && utc_task_is_local(g.w[0]) ? want : UTC_OK));
    for (int i = 0; i < NR; i++)
        if (i != 1)
            UTC_ASSERT_OK(utc_task_wait(g.r[i]));
    UTC_ASSERT_OK(utc_barrier());

    /* how it ended, where it ran: the status, and a message naming task-c */
    if (utc_task_is_local(g.w[0])) {
        CU_ASSERT_EQUAL(g.wj[0].end, want);
        CU_ASSERT(strstr(g.wj[0].why, "task-c") != NULL);
        if (g.wj[0].end != want || !strstr(g.wj[0].why, "task-c"))
            printf("\n  writer: %s: %s\n", utc_status_string(g.wj[0].end), g.wj[0].why);
    }
    for (int i = 0; i < NR; i++) {
        if (i == 1 || !g.r[i] || !utc_task_is_local(g.r[i]))
            continue;
        CU_ASSERT_EQUAL(g.rj[i].end, want);
        if (g.rj[i].end != want)
            printf("\n  reader %d: %s: %s\n", i, utc_status_string(g.rj[i].end), g.rj[i].why);
    }
    /* nothing twice; what was written and never read is at most a window per reader */
    static int all[FAIL_ITEMS];
    MPI_Allreduce(seen_fail, all, FAIL_ITEMS, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int twice = 0, read = 0, written = 0, mine = utc_task_is_local(g.w[0]) ? g.wj[0].written : 0;
    for (int m = 0; m < FAIL_ITEMS; m++) {
        twice += all[m] > 1;
        read += all[m] > 0;
    }
    MPI_Allreduce(&mine, &written, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CU_ASSERT_EQUAL(twice, 0);
    CU_ASSERT(read <= written);
    CU_ASSERT(written - read <= NR * FAIL_CREDITS);
    CU_ASSERT(read >= 5);
    if (utc_test_rank() == 0)
        printf("\n  %s: %d written, %d read, %d never read (at most %d)\n",
               destroy ? "destroyed" : "failed", written, read, written - read, NR * FAIL_CREDITS);
    group_close(&g, 1, NR);
    CT_END();
}

static void test_reader_fails(void)
{
    holding_case(false);
}

static void test_reader_destroyed(void)
{
    holding_case(true);
}

/* ---- bad windows ---- */

static void test_bad_windows(void)
{
    ct_begin();
    int n = utc_test_nranks();
    utc_task_t *w = ct_task(&ct_ops_a, 0, 1), *r = ct_task(&ct_ops_b, n - 1, 1);
    utc_conduit_t *c = NULL;
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    static const int bad[] = {-1, UTC_CONDUIT_CREDITS_MAX + 1, -1000000};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        o.credits = bad[k];
        CU_ASSERT_EQUAL(utc_conduit_create_shared(&w, 1, &r, 1, UTC_SHARED_SHARE, &o, &c),
                        UTC_ERR_INVALID_ARG);
        CU_ASSERT(strstr(utc_last_error(), "credits") != NULL);
    }
    o.credits = 2; /* publish mode and two-task conduits have no window */
    CU_ASSERT_EQUAL(utc_conduit_create_shared(&w, 1, &r, 1, UTC_SHARED_PUBLISH, &o, &c),
                    UTC_ERR_INVALID_ARG);
    CU_ASSERT(strstr(utc_last_error(), "share mode") != NULL);
    CU_ASSERT_EQUAL(utc_conduit_create(w, r, &o, &c), UTC_ERR_INVALID_ARG);
    CU_ASSERT(strstr(utc_last_error(), "credit window") != NULL);
    static const char *const bad_env[] = {"0", "-3", "two", "2x", "100000"};
    o.credits = 0;
    for (size_t k = 0; k < sizeof bad_env / sizeof *bad_env; k++) {
        setenv("UTC_SHARE_CREDITS", bad_env[k], 1);
        CU_ASSERT_EQUAL(utc_conduit_create_shared(&w, 1, &r, 1, UTC_SHARED_SHARE, &o, &c),
                        UTC_ERR_INVALID_ARG);
        CU_ASSERT(strstr(utc_last_error(), "UTC_SHARE_CREDITS") != NULL);
    }
    CU_ASSERT_PTR_NULL(c); /* never set on failure */
    /* a good value is taken; the option, when set, wins over it */
    setenv("UTC_SHARE_CREDITS", "3", 1);
    UTC_ASSERT_OK(utc_conduit_create_shared(&w, 1, &r, 1, UTC_SHARED_SHARE, &o, &c));
    UTC_ASSERT_OK(utc_conduit_destroy(c));
    setenv("UTC_SHARE_CREDITS", "two", 1);
    o.credits = UTC_CONDUIT_CREDITS_MAX;
    UTC_ASSERT_OK(utc_conduit_create_shared(&w, 1, &r, 1, UTC_SHARED_SHARE, &o, &c));
    UTC_ASSERT_OK(utc_conduit_destroy(c));
    unsetenv("UTC_SHARE_CREDITS");
    UTC_ASSERT_OK(utc_task_destroy(w));
    UTC_ASSERT_OK(utc_task_destroy(r));
    CT_END();
}

static const utc_test_case_t cases[] = {
    {"credits 1, 2, 8: 2 writers x 3 readers, each message exactly once", test_exactly_once},
    {"the window is granted at the first read; the rest after the close", test_upfront},
    {"close with credits outstanding: every message once, then UTC_ERR_CLOSED",
     test_close_outstanding},
    {"a window deeper than the ring: asks wait in its backlog, reads never block on one",
     test_deep_window},
    {"a reader fails holding credits: UTC_ERR_PEER_FAILED, nothing twice", test_reader_fails},
    {"a reader destroyed holding credits: UTC_ERR_CANCELED, nothing twice", test_reader_destroyed},
    {"bad windows are refused", test_bad_windows},
    UTC_TEST_END};

int main(int argc, char **argv)
{
    return utc_test_main(argc, argv, "share mode credit windows", cases);
}
