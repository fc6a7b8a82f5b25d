/*
 * Tasks on several ranks (dissertation, figure 3.10). Single-entry mode: only the entry
 * ranks transfer, over MPI or in-process depending on where the entries are. Free mode:
 * every rank of one task exchanges with chosen ranks of the other, several pairs at
 * once, in-process when the peer is the same rank; plain calls go to the other task's
 * entry; peers outside the other task are refused.
 */
#include "conduit_test_util.h"

typedef struct {
    utc_conduit_t *c;
    int n;
    int val;  /* shared by a rank's threads of the task */
    bool src; /* run on the source task */
} md_t;

/* ---- single entry ---- */

static int se_a(utc_ctx_t *ctx, void *d)
{
    md_t *k = d;
    if (ctx->world_rank != utc_task_entry_rank(ctx->task))
        return 0; /* single-entry: other ranks gather to the entry in real code */
    for (int i = 0; i < 100; i++) {
        if (ctx->local_id == 0)
            k->val = i;
        utc_ctx_barrier_local(ctx);
        CT_OK(utc_conduit_write(k->c, &k->val, sizeof k->val, 1));
        CT_OK(utc_conduit_read(k->c, &k->val, sizeof k->val, 2, NULL));
        CT_CHECK(k->val == -i, "echo %d", k->val);
        utc_ctx_barrier_local(ctx);
    }
    return 0;
}

static int se_b(utc_ctx_t *ctx, void *d)
{
    md_t *k = d;
    if (ctx->world_rank != utc_task_entry_rank(ctx->task))
        return 0;
    for (int i = 0; i < 100; i++) {
        CT_OK(utc_conduit_read(k->c, &k->val, sizeof k->val, 1, NULL));
        CT_CHECK(k->val == i, "message %d", k->val);
        utc_ctx_barrier_local(ctx);
        if (ctx->local_id == 0)
            k->val = -i;
        CT_OK(utc_conduit_write(k->c, &k->val, sizeof k->val, 2));
    }
    return 0;
}

static void single_entry(const int *pa, int na, const int *pb, int nb,
                         utc_conduit_transport_t want)
{
    ct_pair_t p = ct_pair_open_procs(pa, na, pb, nb, NULL);
    CU_ASSERT_EQUAL(utc_conduit_transport(p.c), want);
    md_t ka = {p.c, 0, 0, true}, kb = {p.c, 0, 0, false};
    ct_run2(p.a, se_a, &ka, p.b, se_b, &kb);
    ct_pair_close(&p);
}

static void test_single_entry(void)
{
    ct_begin();
    int n = utc_test_nranks(), last = n - 1;
    /* entries on different ranks (when there are several): node-local or MPI between them */
    int pa[4] = {0, 0, last, last}, pb[4] = {last, last, 0, 0};
    single_entry(pa, 4, pb, 4, utc_test_transport(0, last));
    /* both entries on rank 0, tasks spanning all ranks: in-process on rank 0 */
    int qa[3] = {0, last, n > 2 ? 1 : 0}, qb[3] = {0, n > 2 ? 1 : 0, last};
    single_entry(qa, 3, qb, 3, UTC_CONDUIT_INPROC);
    CT_END();
}

/* ---- free mode ---- */

/* A's threads on rank r: one to B on rank r+1, one to B on rank r (in-process), one plain
 * (to B's entry); then the replies. B mirrors it. */
static int fr_a(utc_ctx_t *ctx, void *d)
{
    md_t *k = d;
    int r = ctx->world_rank, n = k->n;
    int next = (r + 1) % n;
    int v = 1000 + r;
    CT_OK(utc_conduit_write_to(k->c, next, &v, sizeof v, 1));
    v = 2000 + r;
    CT_OK(utc_conduit_write_to(k->c, r, &v, sizeof v, 2));
    v = 3000 + r;
    CT_OK(utc_conduit_write(k->c, &v, sizeof v, 3));
    CT_OK(utc_conduit_read_from(k->c, next, &v, sizeof v, 4, NULL));
    CT_CHECK(v == 4000 + next, "reply from rank %d: %d", next, v);
    /* peers that hold no thread of B are refused */
    CT_EXPECT(utc_conduit_write_to(k->c, n, &v, sizeof v, 1), UTC_ERR_OUT_OF_RANGE);
    CT_CHECK(strstr(utc_last_error(), "holds no thread") != NULL, "%s", utc_last_error());
    CT_EXPECT(utc_conduit_read_from(k->c, -1, &v, sizeof v, 1, NULL), UTC_ERR_OUT_OF_RANGE);
    return 0;
}

static int fr_b(utc_ctx_t *ctx, void *d)
{
    md_t *k = d;
    int s = ctx->world_rank, n = k->n;
    int prev = (s - 1 + n) % n;
    int v = 0;
    CT_OK(utc_conduit_read_from(k->c, prev, &v, sizeof v, 1, NULL));
    CT_CHECK(v == 1000 + prev, "from rank %d: %d", prev, v);
    CT_OK(utc_conduit_read_from(k->c, s, &v, sizeof v, 2, NULL));
    CT_CHECK(v == 2000 + s, "in-process from rank %d: %d", s, v);
    if (s == utc_task_entry_rank(ctx->task)) {
        /* every A rank wrote a plain message to our entry */
        for (int r = 0; r < n; r++) {
            CT_OK(utc_conduit_read_from(k->c, r, &v, sizeof v, 3, NULL));
            CT_CHECK(v == 3000 + r, "plain write from rank %d: %d", r, v);
        }
    }
    v = 4000 + s;
    CT_OK(utc_conduit_write_to(k->c, prev, &v, sizeof v, 4));
    return 0;
}

/* A free-mode conduit between tasks with the given procs; fn runs on both ends. */
static void free_mode(const int *pa, const int *pb, int n, ct_fn_t fa, ct_fn_t fb)
{
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.mode = UTC_CONDUIT_FREE;
    ct_pair_t p = ct_pair_open_procs(pa, n, pb, n, &o);
    int nranks = utc_test_nranks();
    md_t ka = {p.c, nranks, 0, true}, kb = {p.c, nranks, 0, false};
    ct_run2(p.a, fa, &ka, p.b, fb, &kb);
    ct_pair_close(&p);
}

static void test_free_mode(void)
{
    ct_begin();
    int n = utc_test_nranks();
    int pa[6], pb[6];
    for (int r = 0; r < n; r++) {
        pa[r] = r;          /* entry rank 0 */
        pb[r] = n - 1 - r;  /* entry rank n-1 */
    }
    free_mode(pa, pb, n, fr_a, fr_b);
    CT_END();
}

/* free mode, 2 threads per rank, all threads call (thread 0 transfers), a stream each way */
static int fs_run(utc_ctx_t *ctx, void *d)
{
    md_t *k = d;
    int r = ctx->world_rank, n = k->n;
    bool src = k->src;
    int peer = src ? (r + 1) % n : (r - 1 + n) % n;
    for (int i = 0; i < 300; i++) {
        if (src) {
            int v = r * 100000 + i; /* each thread's own: all threads call, one sends */
            CT_OK(utc_conduit_write_to(k->c, peer, &v, sizeof v, 5));
        } else {
            CT_OK(utc_conduit_read_from(k->c, peer, &k->val, sizeof k->val, 5, NULL));
            CT_CHECK(k->val == peer * 100000 + i, "stream from %d: %d", peer, k->val);
        }
        utc_ctx_barrier_local(ctx);
    }
    return 0;
}

static void test_free_mode_threads(void)
{
    ct_begin();
    int n = utc_test_nranks();
    int pa[12], pb[12];
    for (int r = 0; r < n; r++) {
        pa[2 * r] = pa[2 * r + 1] = r;                  /* entry 0 */
        pb[2 * r] = pb[2 * r + 1] = (r + 1) % n;        /* entry 1 % n */
    }
    if (n == 1)
        pb[0] = pb[1] = 0;
    free_mode(pa, pb, 2 * n, fs_run, fs_run);
    CT_END();
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"single-entry: entries on two ranks, or on one", test_single_entry},
        {"free mode: ring of rank pairs, in-process pairs, plain to entry", test_free_mode},
        {"free mode: 2 threads per rank, streams between rank pairs", test_free_mode_threads},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "conduit modes", cases);
}
