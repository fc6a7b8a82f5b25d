/*
 * Task collectives that exchange among all ranks (issue 37): allgather, allgatherv,
 * alltoall, alltoallv, scan and exscan, checked element by element for several counts
 * (0 included), types and layouts (packed, displacements with gaps, in place), in the
 * all-threads form with several threads per rank and in the _by form; unsigned reductions
 * on values above INT64_MAX; and arguments the ranks disagree on (counts that do not match
 * between sender and receiver among them) caught on every rank, after which the task's
 * collectives work again.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>

#include "gs_test.h"

#define MAXR  3    /* ranks the suite runs at, at most */
#define BYTES 4096 /* per buffer: 3 x 3 blocks of 37 elements of 8 bytes, with gaps */

static const size_t counts[] = {0, 1, 5, 37};
static const utc_datatype_t move_types[] = {UTC_TYPE_BYTE, UTC_TYPE_INT16, UTC_TYPE_INT,
                                            UTC_TYPE_UINT64, UTC_TYPE_DOUBLE};

/* Rank-shared buffers and counts. */
typedef struct {
    unsigned char send[BYTES];
    unsigned char recv[BYTES];
    size_t scounts[MAXR], sdispls[MAXR], rcounts[MAXR], rdispls[MAXR];
} xbufs_t;

#define SENTINEL 0xee

/* The value rank `src` sends rank `dst` at element i (dst 0 where all get the same). */
static long xval(int src, int dst, size_t i)
{
    return (long)src * 10000 + (long)dst * 1000 + (long)i + 1;
}

/* Element i of buf as value v of type ty (truncated as C converts). */
static void put(utc_datatype_t ty, void *buf, size_t i, long v)
{
    switch (ty) {
    case UTC_TYPE_INT:
        ((int *)buf)[i] = (int)v;
        break;
    case UTC_TYPE_INT64:
        ((int64_t *)buf)[i] = v;
        break;
    case UTC_TYPE_DOUBLE:
        ((double *)buf)[i] = (double)v;
        break;
    case UTC_TYPE_FLOAT:
        ((float *)buf)[i] = (float)v;
        break;
    case UTC_TYPE_INT8:
        ((int8_t *)buf)[i] = (int8_t)v;
        break;
    case UTC_TYPE_UINT16:
        ((uint16_t *)buf)[i] = (uint16_t)v;
        break;
    case UTC_TYPE_UINT32:
        ((uint32_t *)buf)[i] = (uint32_t)v;
        break;
    case UTC_TYPE_UINT64:
        ((uint64_t *)buf)[i] = (uint64_t)v;
        break;
    case UTC_TYPE_BYTE:
        ((uint8_t *)buf)[i] = (uint8_t)v;
        break;
    case UTC_TYPE_INT16:
        ((int16_t *)buf)[i] = (int16_t)v;
        break;
    default:
        break;
    }
}

static bool has(utc_datatype_t ty, const void *buf, size_t i, long v)
{
    unsigned char want[8];
    put(ty, want, 0, v);
    size_t size = utc_datatype_size(ty);
    return memcmp((const unsigned char *)buf + i * size, want, size) == 0;
}

/* Whether bytes [from, to) of buf are untouched. */
static bool untouched(const unsigned char *buf, size_t from, size_t to)
{
    for (size_t k = from; k < to && k < BYTES; k++)
        if (buf[k] != SENTINEL)
            return false;
    return true;
}

/* Displacements for counts c[0 .. n): packed (NULL) or, with gaps, blocks in reverse rank
 * order with 2 elements between them; *span gets the elements they cover. */
static const size_t *layout(const size_t *c, int n, bool gaps, size_t *displs, size_t *span)
{
    size_t at = 0;
    if (!gaps) {
        for (int r = 0; r < n; r++)
            at += c[r];
        *span = at;
        return NULL;
    }
    for (int r = n - 1; r >= 0; r--) {
        displs[r] = at;
        at += c[r] + 2;
    }
    *span = at;
    return displs;
}

static size_t displ_of(const size_t *c, const size_t *displs, int r)
{
    size_t at = 0;
    for (int k = 0; k < r; k++)
        at += c[k];
    return displs ? displs[r] : at;
}

/* ---- allgather and allgatherv ---- */

static void do_allgather(gs_task_t *t, utc_ctx_t *ctx, int by, utc_datatype_t ty, size_t cnt,
                         bool in_place)
{
    xbufs_t *b = t->shared;
    int n = ctx->group_size, me = ctx->group_rank, bad = 0;
    bool filler = ctx->local_id == 0;
    size_t size = utc_datatype_size(ty);
    void *send = in_place ? b->recv + (size_t)me * cnt * size : (void *)b->send;
    GS_COLL_FILL(by, filler, {
        memset(b->recv, SENTINEL, sizeof b->recv);
        for (size_t i = 0; i < cnt; i++)
            put(ty, send, i, xval(me, 0, i));
    });
    GS_COLL_CALL(by, utc_task_allgather(ctx, send, b->recv, cnt, ty),
                 utc_task_allgather_by(ctx, by, send, b->recv, cnt, ty));
    if (filler) {
        for (int r = 0; r < n; r++)
            for (size_t i = 0; i < cnt; i++)
                bad += !has(ty, b->recv, (size_t)r * cnt + i, xval(r, 0, i));
        bad += !untouched(b->recv, (size_t)n * cnt * size, (size_t)n * cnt * size + 64);
    }
    if (bad)
        fprintf(stderr, "allgather %zu x type %d (by %d, in place %d): %d wrong\n", cnt, (int)ty,
                by, in_place, bad);
    GS_CHECK(t, ctx, bad == 0);
    GS_OK(t, ctx, utc_ctx_barrier_local(ctx)); /* read before the next fill */
}

/* Rank r contributes (r + k) % 4 elements (variant k; 0 included). */
static void do_allgatherv(gs_task_t *t, utc_ctx_t *ctx, int by, utc_datatype_t ty, int k, bool gaps,
                          bool in_place)
{
    xbufs_t *b = t->shared;
    int n = ctx->group_size, me = ctx->group_rank, bad = 0;
    bool filler = ctx->local_id == 0;
    size_t size = utc_datatype_size(ty), span = 0;
    size_t c[MAXR] = {0}, d[MAXR] = {0};
    for (int r = 0; r < n; r++)
        c[r] = (size_t)((r + k) % 4);
    const size_t *displs = layout(c, n, gaps, d, &span);
    size_t mine = displ_of(c, displs, me);
    void *send = in_place ? b->recv + mine * size : (void *)b->send;
    GS_COLL_FILL(by, filler, {
        memcpy(b->rcounts, c, sizeof c);
        if (displs)
            memcpy(b->rdispls, d, sizeof d);
        memset(b->recv, SENTINEL, sizeof b->recv);
        for (size_t i = 0; i < c[me]; i++)
            put(ty, send, i, xval(me, 0, i));
    });
    const size_t *rd = displs ? b->rdispls : NULL;
    GS_COLL_CALL(by, utc_task_allgatherv(ctx, send, c[me], b->recv, b->rcounts, rd, ty),
                 utc_task_allgatherv_by(ctx, by, send, c[me], b->recv, b->rcounts, rd, ty));
    if (filler) {
        for (int r = 0; r < n; r++) {
            size_t at = displ_of(c, displs, r);
            for (size_t i = 0; i < c[r]; i++)
                bad += !has(ty, b->recv, at + i, xval(r, 0, i));
            if (gaps) /* the 2-element gap after each block */
                bad += !untouched(b->recv, (at + c[r]) * size, (at + c[r] + 2) * size);
        }
        bad += !untouched(b->recv, span * size, span * size + 64);
    }
    if (bad)
        fprintf(stderr, "allgatherv k %d type %d (by %d, gaps %d, in place %d): %d wrong\n", k,
                (int)ty, by, gaps, in_place, bad);
    GS_CHECK(t, ctx, bad == 0);
    GS_OK(t, ctx, utc_ctx_barrier_local(ctx));
}

/* ---- alltoall and alltoallv ---- */

static void do_alltoall(gs_task_t *t, utc_ctx_t *ctx, int by, utc_datatype_t ty, size_t cnt,
                        bool in_place)
{
    xbufs_t *b = t->shared;
    int n = ctx->group_size, me = ctx->group_rank, bad = 0;
    bool filler = ctx->local_id == 0;
    size_t size = utc_datatype_size(ty);
    unsigned char *send = in_place ? b->recv : b->send;
    GS_COLL_FILL(by, filler, {
        memset(b->recv, SENTINEL, sizeof b->recv);
        for (int j = 0; j < n; j++)
            for (size_t i = 0; i < cnt; i++)
                put(ty, send, (size_t)j * cnt + i, xval(me, j, i));
    });
    GS_COLL_CALL(by, utc_task_alltoall(ctx, send, b->recv, cnt, ty),
                 utc_task_alltoall_by(ctx, by, send, b->recv, cnt, ty));
    if (filler) {
        for (int r = 0; r < n; r++)
            for (size_t i = 0; i < cnt; i++)
                bad += !has(ty, b->recv, (size_t)r * cnt + i, xval(r, me, i));
        bad += !untouched(b->recv, (size_t)n * cnt * size, (size_t)n * cnt * size + 64);
    }
    if (bad)
        fprintf(stderr, "alltoall %zu x type %d (by %d, in place %d): %d wrong\n", cnt, (int)ty, by,
                in_place, bad);
    GS_CHECK(t, ctx, bad == 0);
    GS_OK(t, ctx, utc_ctx_barrier_local(ctx));
}

/* What rank i sends rank j in variant k (0 included; symmetric for in place). */
static size_t pair_count(int i, int j, int k, bool symmetric)
{
    return symmetric ? (size_t)((i + j + k) % 4) : (size_t)((2 * i + 3 * j + k) % 5);
}

static void do_alltoallv(gs_task_t *t, utc_ctx_t *ctx, int by, utc_datatype_t ty, int k, bool gaps,
                         bool in_place)
{
    xbufs_t *b = t->shared;
    int n = ctx->group_size, me = ctx->group_rank, bad = 0;
    bool filler = ctx->local_id == 0;
    size_t size = utc_datatype_size(ty), sspan = 0, rspan = 0;
    size_t sc[MAXR] = {0}, rc[MAXR] = {0}, sd[MAXR] = {0}, rd[MAXR] = {0};
    for (int r = 0; r < n; r++) {
        sc[r] = pair_count(me, r, k, in_place);
        rc[r] = pair_count(r, me, k, in_place);
    }
    const size_t *rdispls = layout(rc, n, gaps, rd, &rspan);
    /* the send blocks the other way round: packed where the receive has gaps */
    const size_t *sdispls = in_place ? rdispls : layout(sc, n, !gaps, sd, &sspan);
    unsigned char *send = in_place ? b->recv : b->send;
    GS_COLL_FILL(by, filler, {
        memcpy(b->scounts, sc, sizeof sc);
        memcpy(b->rcounts, rc, sizeof rc);
        memcpy(b->sdispls, sdispls ? sdispls : sd, sizeof sd);
        memcpy(b->rdispls, rdispls ? rdispls : rd, sizeof rd);
        memset(b->recv, SENTINEL, sizeof b->recv);
        for (int j = 0; j < n; j++)
            for (size_t i = 0; i < sc[j]; i++)
                put(ty, send, displ_of(sc, sdispls, j) + i, xval(me, j, i));
    });
    const size_t *scp = in_place ? NULL : b->scounts, *sdp = sdispls ? b->sdispls : NULL;
    const size_t *rdp = rdispls ? b->rdispls : NULL;
    GS_COLL_CALL(by, utc_task_alltoallv(ctx, send, scp, sdp, b->recv, b->rcounts, rdp, ty),
                 utc_task_alltoallv_by(ctx, by, send, scp, sdp, b->recv, b->rcounts, rdp, ty));
    if (filler) {
        for (int r = 0; r < n; r++) {
            size_t at = displ_of(rc, rdispls, r);
            for (size_t i = 0; i < rc[r]; i++)
                bad += !has(ty, b->recv, at + i, xval(r, me, i));
            if (gaps)
                bad += !untouched(b->recv, (at + rc[r]) * size, (at + rc[r] + 2) * size);
        }
        bad += !untouched(b->recv, rspan * size, rspan * size + 64);
    }
    if (bad)
        fprintf(stderr, "alltoallv k %d type %d (by %d, gaps %d, in place %d): %d wrong\n", k,
                (int)ty, by, gaps, in_place, bad);
    GS_CHECK(t, ctx, bad == 0);
    GS_OK(t, ctx, utc_ctx_barrier_local(ctx));
}

/* Every exchanging collective, every count, type and layout, in one form. */
static void exchange_round(gs_task_t *t, utc_ctx_t *ctx, int by)
{
    for (size_t y = 0; y < sizeof move_types / sizeof *move_types; y++) {
        utc_datatype_t ty = move_types[y];
        for (size_t k = 0; k < sizeof counts / sizeof *counts; k++)
            for (int in_place = 0; in_place < 2; in_place++) {
                do_allgather(t, ctx, by, ty, counts[k], in_place);
                do_alltoall(t, ctx, by, ty, counts[k], in_place);
            }
        for (int k = 0; k < 4; k++)
            for (int gaps = 0; gaps < 2; gaps++)
                for (int in_place = 0; in_place < 2; in_place++) {
                    do_allgatherv(t, ctx, by, ty, k, gaps, in_place);
                    do_alltoallv(t, ctx, by, ty, k, gaps, in_place);
                }
    }
}

static void body_exchange_all(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    exchange_round(t, ctx, -1);
}

static void body_exchange_by(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    exchange_round(t, ctx, ctx->local_count - 1); /* not the filler with several threads */
}

static void run_with_bufs(gs_body_t body, int per_rank, size_t window)
{
    CU_ASSERT_FATAL(utc_test_nranks() <= MAXR);
    gs_run_shared(body, per_rank, window, sizeof(xbufs_t));
}

static void test_exchange_all_threads(void)
{
    run_with_bufs(body_exchange_all, 3, UTC_WINDOW_DEFAULT);
}

static void test_exchange_by(void)
{
    run_with_bufs(body_exchange_by, 2, 0); /* and no window */
}

/* ---- scan and exscan ---- */

static const utc_datatype_t scan_types[] = {UTC_TYPE_INT,    UTC_TYPE_INT64, UTC_TYPE_DOUBLE,
                                            UTC_TYPE_FLOAT,  UTC_TYPE_INT8,  UTC_TYPE_UINT16,
                                            UTC_TYPE_UINT32, UTC_TYPE_UINT64};

static bool is_signed(utc_datatype_t ty)
{
    return ty == UTC_TYPE_INT || ty == UTC_TYPE_INT64 || ty == UTC_TYPE_DOUBLE ||
           ty == UTC_TYPE_FLOAT || ty == UTC_TYPE_INT8;
}

/* Rank r's element i: small, negative at odd i for signed types. */
static long scan_in(utc_datatype_t ty, int r, size_t i)
{
    long v = (long)((r * 5 + (int)i * 3) % 7) + 1;
    return is_signed(ty) && i % 2 ? -v : v;
}

/* Whether element i of buf is the identity of op for ty (exscan at group rank 0). */
static bool is_identity(utc_datatype_t ty, utc_reduce_op_t op, const void *buf, size_t i)
{
    if (op == UTC_OP_SUM)
        return has(ty, buf, i, 0);
    bool low = op == UTC_OP_MAX;
    switch (ty) {
    case UTC_TYPE_INT:
        return ((const int *)buf)[i] == (low ? INT_MIN : INT_MAX);
    case UTC_TYPE_INT64:
        return ((const int64_t *)buf)[i] == (low ? INT64_MIN : INT64_MAX);
    case UTC_TYPE_DOUBLE:
        return ((const double *)buf)[i] == (low ? -(double)INFINITY : (double)INFINITY);
    case UTC_TYPE_FLOAT:
        return ((const float *)buf)[i] == (low ? -INFINITY : INFINITY);
    case UTC_TYPE_INT8:
        return ((const int8_t *)buf)[i] == (low ? INT8_MIN : INT8_MAX);
    case UTC_TYPE_UINT16:
        return ((const uint16_t *)buf)[i] == (low ? 0 : UINT16_MAX);
    case UTC_TYPE_UINT32:
        return ((const uint32_t *)buf)[i] == (low ? 0 : UINT32_MAX);
    case UTC_TYPE_UINT64:
        return ((const uint64_t *)buf)[i] == (low ? 0 : UINT64_MAX);
    default:
        return false;
    }
}

/* The reduction with op of scan_in over ranks [0, upto]. */
static long scan_want(utc_datatype_t ty, utc_reduce_op_t op, int upto, size_t i)
{
    long acc = scan_in(ty, 0, i);
    for (int r = 1; r <= upto; r++) {
        long v = scan_in(ty, r, i);
        acc = op == UTC_OP_SUM   ? acc + v
              : op == UTC_OP_MIN ? (v < acc ? v : acc)
                                 : (v > acc ? v : acc);
    }
    return acc;
}

static void do_scan(gs_task_t *t, utc_ctx_t *ctx, int by, utc_datatype_t ty, utc_reduce_op_t op,
                    size_t cnt, bool ex, bool in_place)
{
    xbufs_t *b = t->shared;
    int me = ctx->group_rank, bad = 0;
    bool filler = ctx->local_id == 0;
    size_t size = utc_datatype_size(ty);
    unsigned char *send = in_place ? b->recv : b->send;
    GS_COLL_FILL(by, filler, {
        memset(b->recv, SENTINEL, sizeof b->recv);
        for (size_t i = 0; i < cnt; i++)
            put(ty, send, i, scan_in(ty, me, i));
    });
    if (ex)
        GS_COLL_CALL(by, utc_task_exscan(ctx, send, b->recv, cnt, ty, op),
                     utc_task_exscan_by(ctx, by, send, b->recv, cnt, ty, op));
    else
        GS_COLL_CALL(by, utc_task_scan(ctx, send, b->recv, cnt, ty, op),
                     utc_task_scan_by(ctx, by, send, b->recv, cnt, ty, op));
    if (filler) {
        for (size_t i = 0; i < cnt; i++) {
            if (ex && me == 0)
                bad += !is_identity(ty, op, b->recv, i);
            else
                bad += !has(ty, b->recv, i, scan_want(ty, op, ex ? me - 1 : me, i));
        }
        bad += !untouched(b->recv, cnt * size, cnt * size + 64);
    }
    if (bad)
        fprintf(stderr, "%s %zu x type %d op %d (by %d, in place %d): %d wrong\n",
                ex ? "exscan" : "scan", cnt, (int)ty, (int)op, by, in_place, bad);
    GS_CHECK(t, ctx, bad == 0);
    GS_OK(t, ctx, utc_ctx_barrier_local(ctx));
}

static void scan_round(gs_task_t *t, utc_ctx_t *ctx, int by)
{
    static const size_t scan_counts[] = {0, 1, 5};
    for (size_t y = 0; y < sizeof scan_types / sizeof *scan_types; y++)
        for (utc_reduce_op_t op = UTC_OP_SUM; op <= UTC_OP_MAX; op++)
            for (size_t k = 0; k < sizeof scan_counts / sizeof *scan_counts; k++)
                for (int ex = 0; ex < 2; ex++)
                    for (int in_place = 0; in_place < 2; in_place++)
                        do_scan(t, ctx, by, scan_types[y], op, scan_counts[k], ex, in_place);
}

static void body_scan_all(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    scan_round(t, ctx, -1);
}

static void body_scan_by(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    scan_round(t, ctx, ctx->local_count - 1);
}

static void test_scan_all_threads(void)
{
    run_with_bufs(body_scan_all, 2, UTC_WINDOW_DEFAULT);
}

static void test_scan_by(void)
{
    run_with_bufs(body_scan_by, 3, 0);
}

/* ---- unsigned reductions above the signed range ---- */

/* Rank r's four 64-bit values: all but the third above INT64_MAX when read as unsigned
 * (so negative as signed: a signed MIN or MAX would pick the wrong ones). */
static void u64_in(int r, uint64_t v[4])
{
    v[0] = UINT64_MAX - (uint64_t)r;
    v[1] = 0x8000000000000000ull + (uint64_t)r;
    v[2] = (uint64_t)r;
    v[3] = (uint64_t)INT64_MAX + (uint64_t)r; /* INT64_MAX at rank 0, above it after */
}

static uint64_t u64_fold(utc_reduce_op_t op, int upto, int i)
{
    uint64_t v[4], acc;
    u64_in(0, v);
    acc = v[i];
    for (int r = 1; r <= upto; r++) {
        u64_in(r, v);
        acc = op == UTC_OP_SUM   ? acc + v[i]
              : op == UTC_OP_MIN ? (v[i] < acc ? v[i] : acc)
                                 : (v[i] > acc ? v[i] : acc);
    }
    return acc;
}

static void body_unsigned(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    xbufs_t *b = t->shared;
    uint64_t *in = (uint64_t *)b->send, *out = (uint64_t *)b->recv;
    uint32_t *in32 = (uint32_t *)b->send, *out32 = (uint32_t *)b->recv;
    int n = ctx->group_size, me = ctx->group_rank;
    bool filler = ctx->local_id == 0;
    for (utc_reduce_op_t op = UTC_OP_SUM; op <= UTC_OP_MAX; op++) {
        if (filler)
            u64_in(me, in);
        GS_OK(t, ctx, utc_task_allreduce(ctx, in, out, 4, UTC_TYPE_UINT64, op));
        for (int i = 0; filler && i < 4; i++)
            GS_CHECK(t, ctx, out[i] == u64_fold(op, n - 1, i));
        GS_OK(t, ctx, utc_task_scan(ctx, in, out, 4, UTC_TYPE_UINT64, op));
        for (int i = 0; filler && i < 4; i++)
            GS_CHECK(t, ctx, out[i] == u64_fold(op, me, i));
        GS_OK(t, ctx, utc_task_reduce(ctx, in, out, 4, UTC_TYPE_UINT64, op, n - 1));
        for (int i = 0; filler && me == n - 1 && i < 4; i++)
            GS_CHECK(t, ctx, out[i] == u64_fold(op, n - 1, i));
        GS_OK(t, ctx, utc_ctx_barrier_local(ctx));

        /* 32 bits: above INT32_MAX */
        if (filler)
            in32[0] = UINT32_MAX - (uint32_t)me, in32[1] = 0x80000000u + (uint32_t)me;
        GS_OK(t, ctx, utc_task_allreduce(ctx, in32, out32, 2, UTC_TYPE_UINT32, op));
        uint32_t want0 = op == UTC_OP_MIN ? UINT32_MAX - (uint32_t)(n - 1) : UINT32_MAX;
        uint32_t want1 = op == UTC_OP_MIN ? 0x80000000u : 0x80000000u + (uint32_t)(n - 1);
        if (op == UTC_OP_SUM) {
            want0 = want1 = 0;
            for (int r = 0; r < n; r++)
                want0 += UINT32_MAX - (uint32_t)r, want1 += 0x80000000u + (uint32_t)r;
        }
        GS_CHECK(t, ctx, !filler || (out32[0] == want0 && out32[1] == want1));
        GS_OK(t, ctx, utc_ctx_barrier_local(ctx));
    }
    /* the rest of the fixed-width types: sign where it matters */
    if (filler) {
        ((int8_t *)b->send)[0] = (int8_t)(me == 0 ? -100 : 100);
        ((uint8_t *)b->send)[8] = (uint8_t)(me == 0 ? 200 : 100);
        ((int16_t *)b->send)[8] = (int16_t)(me == 0 ? -30000 : 30000);
        ((uint16_t *)b->send)[12] = (uint16_t)(me == 0 ? 60000 : 100);
        ((int32_t *)b->send)[8] = me == 0 ? INT32_MIN : INT32_MAX;
    }
    GS_OK(t, ctx, utc_task_allreduce(ctx, b->send, b->recv, 1, UTC_TYPE_INT8, UTC_OP_MIN));
    GS_OK(t, ctx, utc_task_allreduce(ctx, b->send + 8, b->recv + 8, 1, UTC_TYPE_UINT8, UTC_OP_MAX));
    GS_OK(t, ctx,
          utc_task_allreduce(ctx, b->send + 16, b->recv + 16, 1, UTC_TYPE_INT16, UTC_OP_MIN));
    GS_OK(t, ctx,
          utc_task_allreduce(ctx, b->send + 24, b->recv + 24, 1, UTC_TYPE_UINT16, UTC_OP_MAX));
    GS_OK(t, ctx,
          utc_task_allreduce(ctx, b->send + 32, b->recv + 32, 1, UTC_TYPE_INT32, UTC_OP_MIN));
    if (filler) {
        GS_CHECK(t, ctx, ((int8_t *)b->recv)[0] == -100);
        GS_CHECK(t, ctx, ((uint8_t *)b->recv)[8] == 200);
        GS_CHECK(t, ctx, ((int16_t *)b->recv)[8] == -30000);
        GS_CHECK(t, ctx, ((uint16_t *)b->recv)[12] == 60000);
        GS_CHECK(t, ctx, ((int32_t *)b->recv)[8] == INT32_MIN);
    }
}

static void test_unsigned(void)
{
    run_with_bufs(body_unsigned, 2, 0);
}

/* ---- arguments the ranks disagree on ---- */

/* The last rank is the odd one out (at 2 and 3 ranks). */
static bool odd_one(utc_ctx_t *ctx)
{
    return ctx->group_size > 1 && ctx->group_rank == ctx->group_size - 1;
}

/* rc must be UTC_ERR_MISMATCH on every rank with a message holding each of the needles
 * (NULL ends the list); at 1 rank, where nothing can differ, `alone`. */
static void expect_mismatch(gs_task_t *t, utc_ctx_t *ctx, int line, int rc, int alone, ...)
{
    int want = ctx->group_size > 1 ? UTC_ERR_MISMATCH : alone;
    if (rc != want) {
        fprintf(stderr, "[rank %d] line %d: got %d (%s), want %d: %s\n", ctx->world_rank, line, rc,
                utc_status_string(rc), want, utc_last_error());
        atomic_fetch_add(&t->failures, 1);
        return;
    }
    if (want != UTC_ERR_MISMATCH)
        return;
    const char *msg = utc_last_error();
    va_list ap;
    va_start(ap, alone);
    for (const char *needle; (needle = va_arg(ap, const char *));)
        if (!strstr(msg, needle)) {
            fprintf(stderr, "[rank %d] line %d: message lacks '%s': %s\n", ctx->world_rank, line,
                    needle, msg);
            atomic_fetch_add(&t->failures, 1);
        }
    va_end(ap);
    if (ctx->world_rank == 0 && ctx->local_id == 0)
        printf("  line %d: %s\n", line, msg);
}

/* The task's collectives work: an alltoall of one int, checked. */
static void still_works(gs_task_t *t, utc_ctx_t *ctx)
{
    xbufs_t *b = t->shared;
    int n = ctx->group_size, me = ctx->group_rank;
    int *s = (int *)b->send, *r = (int *)b->recv;
    if (ctx->local_id == 0)
        for (int j = 0; j < n; j++)
            s[j] = me * 10 + j;
    GS_OK(t, ctx, utc_task_alltoall(ctx, s, r, 1, UTC_TYPE_INT));
    for (int i = 0; ctx->local_id == 0 && i < n; i++)
        GS_CHECK(t, ctx, r[i] == i * 10 + me);
    GS_OK(t, ctx, utc_ctx_barrier_local(ctx));
}

static void body_mismatch(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    xbufs_t *b = t->shared;
    int n = ctx->group_size, me = ctx->group_rank, last = n - 1;
    int wlast = utc_nranks() - 1; /* the task holds every rank, in order */
    bool odd = odd_one(ctx);
    char s1[128], s2[128];

    /* alltoallv: the last rank sends rank 0 one element more than rank 0 expects */
    if (ctx->local_id == 0)
        for (int j = 0; j < n; j++) {
            b->scounts[j] = 2 + (odd && j == 0);
            b->rcounts[j] = 2;
        }
    snprintf(s1, sizeof s1, "rank %d sends 3 elements to rank 0 (its sendcounts[0] = 3)", wlast);
    snprintf(s2, sizeof s2, "which expects 2 (its recvcounts[%d] = 2)", last);
    GS_OK(t, ctx, utc_ctx_barrier_local(ctx));
    int rc =
        utc_task_alltoallv(ctx, b->send, b->scounts, NULL, b->recv, b->rcounts, NULL, UTC_TYPE_INT);
    expect_mismatch(t, ctx, __LINE__, rc, UTC_OK, "utc_task_alltoallv", "task 'gs_test'", s1, s2,
                    NULL);
    still_works(t, ctx);

    /* alltoallv: every rank sends itself one element more than it expects from itself (at
     * one rank a local error, with more a pair the check names) */
    if (ctx->local_id == 0)
        for (int j = 0; j < n; j++)
            b->scounts[j] = b->rcounts[j] = 2 + (j == me);
    if (ctx->local_id == 0)
        b->rcounts[me] = 2;
    GS_OK(t, ctx, utc_ctx_barrier_local(ctx));
    rc =
        utc_task_alltoallv(ctx, b->send, b->scounts, NULL, b->recv, b->rcounts, NULL, UTC_TYPE_INT);
    expect_mismatch(t, ctx, __LINE__, rc, UTC_ERR_INVALID_ARG,
                    "rank 0 sends 3 elements to rank 0 (its sendcounts[0] = 3), which expects 2 "
                    "(its recvcounts[0] = 2)",
                    NULL);
    if (n == 1 && !strstr(utc_last_error(), "sendcounts[0] = 3 is not recvcounts[0] = 2")) {
        fprintf(stderr, "one rank: %s\n", utc_last_error());
        atomic_fetch_add(&t->failures, 1);
    }
    still_works(t, ctx);

    /* alltoallv: rank 0 expects one element less from the last rank (the receiver's side) */
    if (ctx->local_id == 0)
        for (int j = 0; j < n; j++) {
            b->scounts[j] = 2;
            b->rcounts[j] = 2 - (me == 0 && j == last && n > 1);
        }
    snprintf(s1, sizeof s1, "rank %d sends 2 elements to rank 0", wlast);
    snprintf(s2, sizeof s2, "which expects 1 (its recvcounts[%d] = 1)", last);
    GS_OK(t, ctx, utc_ctx_barrier_local(ctx));
    rc = utc_task_alltoallv_by(ctx, 0, b->send, b->scounts, NULL, b->recv, b->rcounts, NULL,
                               UTC_TYPE_INT);
    if (ctx->local_id == 0)
        expect_mismatch(t, ctx, __LINE__, rc, UTC_OK, "utc_task_alltoallv_by", s1, s2, NULL);
    GS_OK(t, ctx, utc_ctx_barrier_local(ctx));
    still_works(t, ctx);

    /* allgatherv: the last rank contributes 3 elements where every rank's recvcounts say 2 */
    if (ctx->local_id == 0)
        for (int j = 0; j < n; j++)
            b->rcounts[j] = 2;
    GS_OK(t, ctx, utc_ctx_barrier_local(ctx));
    rc = utc_task_allgatherv(ctx, b->send, odd ? 3 : 2, b->recv, b->rcounts, NULL, UTC_TYPE_INT);
    snprintf(s1, sizeof s1, "rank %d sends 3 elements to rank 0 (its sendcount 3)", wlast);
    expect_mismatch(t, ctx, __LINE__, rc, UTC_OK, "utc_task_allgatherv", s1, "recvcounts[",
                    "group ranks index the arrays", NULL);
    still_works(t, ctx);

    /* allgather: the count differs */
    rc = utc_task_allgather(ctx, b->send, b->recv, odd ? 4 : 8, UTC_TYPE_INT);
    expect_mismatch(t, ctx, __LINE__, rc, UTC_OK, "utc_task_allgather", "in the count",
                    "(rank 0: 8", NULL);
    still_works(t, ctx);

    /* alltoall: the datatype differs */
    rc = utc_task_alltoall(ctx, b->send, b->recv, 2, odd ? UTC_TYPE_UINT32 : UTC_TYPE_INT);
    expect_mismatch(t, ctx, __LINE__, rc, UTC_OK, "utc_task_alltoall", "UTC_TYPE_UINT32",
                    "in the datatype", NULL);
    still_works(t, ctx);

    /* scan: the op differs */
    rc = utc_task_scan(ctx, b->send, b->recv, 2, UTC_TYPE_INT, odd ? UTC_OP_MAX : UTC_OP_SUM);
    expect_mismatch(t, ctx, __LINE__, rc, UTC_OK, "utc_task_scan", "reduce op (rank 0: UTC_OP_SUM",
                    NULL);
    still_works(t, ctx);

    /* two different collectives at the same point */
    rc = odd ? utc_task_exscan(ctx, b->send, b->recv, 2, UTC_TYPE_INT, UTC_OP_SUM)
             : utc_task_allgather(ctx, b->send, b->recv, 2, UTC_TYPE_INT);
    expect_mismatch(t, ctx, __LINE__, rc, UTC_OK, "made another collective call", "utc_task_exscan",
                    NULL);
    still_works(t, ctx);

    /* a bad argument on one rank only: NULL recvcounts there */
    if (ctx->local_id == 0)
        for (int j = 0; j < n; j++)
            b->scounts[j] = b->rcounts[j] = 1;
    GS_OK(t, ctx, utc_ctx_barrier_local(ctx));
    rc = utc_task_alltoallv(ctx, b->send, b->scounts, NULL, b->recv, odd ? NULL : b->rcounts, NULL,
                            UTC_TYPE_INT);
    expect_mismatch(t, ctx, __LINE__, rc, UTC_OK, "own checks", NULL);
    if (odd && !strstr(utc_last_error(), "(here: utc_task_alltoallv: recvcounts is NULL")) {
        fprintf(stderr, "the odd rank's message lacks its own error: %s\n", utc_last_error());
        atomic_fetch_add(&t->failures, 1);
    }
    still_works(t, ctx);
}

static void test_mismatch(void)
{
    run_with_bufs(body_mismatch, 2, 0);
}

/*
 * Disagreements while all-to-all's data is on its way (it leaves with the check's record):
 * large messages (not sent eagerly) to a rank in another collective, a receive far too
 * small for what arrives, and in place on one rank only. Each ends in UTC_ERR_MISMATCH on
 * every rank with nothing left on the communicator: the next collective works.
 */
enum { BIG = 64 * 1024 }; /* ints per pair: 256 KiB */

/* Room for BIG ints to each rank, on the rank's first thread (the one that calls): whether
 * this thread has it. */
static bool big_bufs(gs_task_t *t, utc_ctx_t *ctx, int **send, int **recv)
{
    *send = *recv = NULL;
    if (ctx->local_id != 0)
        return false;
    *send = calloc((size_t)BIG * MAXR, sizeof **send);
    *recv = calloc((size_t)BIG * MAXR, sizeof **recv);
    GS_CHECK(t, ctx, *send && *recv);
    return *send && *recv;
}

static void body_mismatch_data(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    xbufs_t *b = t->shared;
    int n = ctx->group_size, me = ctx->group_rank;
    int wlast = utc_nranks() - 1;
    bool odd = odd_one(ctx);
    char s1[128];
    int *send = NULL, *recv = NULL;
    if (big_bufs(t, ctx, &send, &recv)) {
        /* the last rank's alltoall (256 KiB to each rank) meets the others' allreduce */
        int rc = odd ? utc_task_alltoall_by(ctx, 0, send, recv, BIG, UTC_TYPE_INT)
                     : utc_task_allreduce_by(ctx, 0, send, recv, 4, UTC_TYPE_INT, UTC_OP_SUM);
        snprintf(s1, sizeof s1, "rank %d: utc_task_alltoall", wlast);
        expect_mismatch(t, ctx, __LINE__, rc, UTC_OK, "made another collective call", s1,
                        "while rank 0 called utc_task_allreduce", NULL);
        /* and the other way round: the others' alltoall meets the last rank's allreduce */
        rc = odd ? utc_task_allreduce_by(ctx, 0, send, recv, 4, UTC_TYPE_INT, UTC_OP_SUM)
                 : utc_task_alltoall_by(ctx, 0, send, recv, BIG, UTC_TYPE_INT);
        expect_mismatch(t, ctx, __LINE__, rc, UTC_OK, "made another collective call",
                        "while rank 0 called utc_task_alltoall", NULL);
        /* alltoallv: the last rank sends rank 0 BIG elements where rank 0 expects 2 */
        for (int j = 0; j < n; j++) {
            b->scounts[j] = odd && j == 0 ? BIG : 2;
            b->rcounts[j] = 2;
        }
        rc = utc_task_alltoallv_by(ctx, 0, send, b->scounts, NULL, recv, b->rcounts, NULL,
                                   UTC_TYPE_INT);
        snprintf(s1, sizeof s1, "rank %d sends %d elements to rank 0", wlast, BIG);
        expect_mismatch(t, ctx, __LINE__, rc, UTC_OK, "utc_task_alltoallv_by", s1,
                        "which expects 2", NULL);
        /* alltoall in place on the last rank only */
        rc = utc_task_alltoall_by(ctx, 0, odd ? recv : send, recv, 2, UTC_TYPE_INT);
        snprintf(s1, sizeof s1, "rank %d differs from rank 0 in passing recvbuf as sendbuf "
                 "(in place): rank 0 does not", wlast);
        expect_mismatch(t, ctx, __LINE__, rc, UTC_OK, s1, NULL);
        /* and the data of an exchange that agrees arrives whole */
        for (int j = 0; j < n; j++)
            for (int i = 0; i < BIG; i++)
                send[(size_t)j * BIG + i] = me * 1000000 + j * 100000 + i % 1000;
        GS_OK(t, ctx, utc_task_alltoall_by(ctx, 0, send, recv, BIG, UTC_TYPE_INT));
        int bad = 0;
        for (int r = 0; r < n; r++)
            for (int i = 0; i < BIG; i++)
                bad += recv[(size_t)r * BIG + i] != r * 1000000 + me * 100000 + i % 1000;
        GS_CHECK(t, ctx, bad == 0);
    }
    free(send), free(recv);
    GS_OK(t, ctx, utc_ctx_barrier_local(ctx));
    still_works(t, ctx);
}

static void test_mismatch_data(void)
{
    run_with_bufs(body_mismatch_data, 2, 0);
}

/*
 * Small blocks (at most 1 KiB to a peer) travel in the check's own message, behind its
 * record: disagreements there (another collective, counts that differ with both blocks
 * small, and a small block where a large one is expected and the other way round) end in
 * UTC_ERR_MISMATCH on every rank with nothing left behind; exchanges that agree deliver
 * small, boundary (1 KiB and one int more) and mixed small and large blocks whole.
 */
enum { SMALL = 256 }; /* ints per pair: 1 KiB, the largest block carried with the check */

/* Fill send with what rank `me` sends (counts[j] ints to rank j, packed); check that recv
 * holds what every rank r sent this rank (its counts: rcount(r) ints, packed). */
static void small_fill(int *send, const size_t *counts, int n, int me)
{
    size_t at = 0;
    for (int j = 0; j < n; j++)
        for (size_t i = 0; i < counts[j]; i++)
            send[at++] = me * 1000000 + j * 100000 + (int)(i % 1000);
}

static int small_bad(const int *recv, const size_t *counts, int n, int me)
{
    int bad = 0;
    size_t at = 0;
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < counts[r]; i++)
            bad += recv[at++] != r * 1000000 + me * 100000 + (int)(i % 1000);
    return bad;
}

static void body_mismatch_small(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    xbufs_t *b = t->shared;
    int n = ctx->group_size, me = ctx->group_rank;
    int wlast = utc_nranks() - 1;
    bool odd = odd_one(ctx);
    size_t sc[MAXR], rc_[MAXR];
    char s1[128];
    int *send, *recv;
    if (big_bufs(t, ctx, &send, &recv)) {
        /* a small alltoall (1 KiB to each rank) meets the last rank's allreduce */
        int rc = odd ? utc_task_allreduce_by(ctx, 0, send, recv, 4, UTC_TYPE_INT, UTC_OP_SUM)
                     : utc_task_alltoall_by(ctx, 0, send, recv, SMALL, UTC_TYPE_INT);
        expect_mismatch(t, ctx, __LINE__, rc, UTC_OK, "made another collective call",
                        "while rank 0 called utc_task_alltoall", NULL);
        /* and the last rank's small alltoall meets the others' allreduce */
        rc = odd ? utc_task_alltoall_by(ctx, 0, send, recv, 100, UTC_TYPE_INT)
                 : utc_task_allreduce_by(ctx, 0, send, recv, 4, UTC_TYPE_INT, UTC_OP_SUM);
        snprintf(s1, sizeof s1, "rank %d: utc_task_alltoall", wlast);
        expect_mismatch(t, ctx, __LINE__, rc, UTC_OK, "made another collective call", s1, NULL);
        /* alltoall counts that differ, both small */
        rc = utc_task_alltoall_by(ctx, 0, send, recv, odd ? 3 : 2, UTC_TYPE_INT);
        expect_mismatch(t, ctx, __LINE__, rc, UTC_OK, "count", NULL);
        /* alltoallv: the last rank sends rank 0 3 elements where rank 0 expects 2 */
        for (int j = 0; j < n; j++) {
            b->scounts[j] = odd && j == 0 ? 3 : 2;
            b->rcounts[j] = 2;
        }
        rc = utc_task_alltoallv_by(ctx, 0, send, b->scounts, NULL, recv, b->rcounts, NULL,
                                   UTC_TYPE_INT);
        snprintf(s1, sizeof s1, "rank %d sends 3 elements to rank 0", wlast);
        expect_mismatch(t, ctx, __LINE__, rc, UTC_OK, s1, "which expects 2", NULL);
        /* a small block (with the check) where rank 0 expects a large one (its own message) */
        for (int j = 0; j < n; j++) {
            b->scounts[j] = 2;
            b->rcounts[j] = me == 0 && j == n - 1 && n > 1 ? BIG : 2;
        }
        rc = utc_task_alltoallv_by(ctx, 0, send, b->scounts, NULL, recv, b->rcounts, NULL,
                                   UTC_TYPE_INT);
        snprintf(s1, sizeof s1, "rank %d sends 2 elements to rank 0", wlast);
        expect_mismatch(t, ctx, __LINE__, rc, UTC_OK, s1, "which expects 65536", NULL);
        /* exchanges that agree: small, the boundary on either side, then mixed sizes */
        for (int cnt = SMALL - 1; cnt <= SMALL + 1; cnt++) {
            for (int j = 0; j < n; j++)
                sc[j] = (size_t)cnt;
            small_fill(send, sc, n, me);
            GS_OK(t, ctx, utc_task_alltoall_by(ctx, 0, send, recv, (size_t)cnt, UTC_TYPE_INT));
            GS_CHECK(t, ctx, small_bad(recv, sc, n, me) == 0);
        }
        /* pair (i, j) moves a large block when i + j is odd, else a small (or empty) one */
        for (int j = 0; j < n; j++) {
            sc[j] = (me + j) % 2 ? 4 * SMALL : (size_t)(me + j);
            rc_[j] = (j + me) % 2 ? 4 * SMALL : (size_t)(j + me);
            b->scounts[j] = sc[j];
            b->rcounts[j] = rc_[j];
        }
        small_fill(send, sc, n, me);
        memset(recv, 0xff, sizeof *recv * 4 * SMALL * (size_t)n);
        GS_OK(t, ctx, utc_task_alltoallv_by(ctx, 0, send, b->scounts, NULL, recv, b->rcounts, NULL,
                                            UTC_TYPE_INT));
        GS_CHECK(t, ctx, small_bad(recv, rc_, n, me) == 0);
    }
    free(send), free(recv);
    GS_OK(t, ctx, utc_ctx_barrier_local(ctx));
    still_works(t, ctx);
}

static void test_mismatch_small(void)
{
    run_with_bufs(body_mismatch_small, 2, 0);
}

/* Bad arguments every rank passes alike: each rank gets the argument's own error. */
static void body_bad_alike(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    xbufs_t *b = t->shared;
    int n = ctx->group_size;
    if (ctx->local_id == 0)
        for (int j = 0; j < n; j++) {
            b->scounts[j] = b->rcounts[j] = 4;
            b->sdispls[j] = (size_t)INT_MAX + 1;
        }
    GS_OK(t, ctx, utc_ctx_barrier_local(ctx));
    GS_ERROR(t, ctx,
             utc_task_alltoallv(ctx, b->send, b->scounts, NULL, b->recv, NULL, NULL, UTC_TYPE_INT),
             UTC_ERR_INVALID_ARG, "recvcounts is NULL");
    GS_ERROR(t, ctx,
             utc_task_alltoallv(ctx, b->send, b->scounts, b->sdispls, b->recv, b->rcounts, NULL,
                                UTC_TYPE_INT),
             UTC_ERR_INVALID_ARG, "sdispls[0] = 2147483648 is larger than INT_MAX");
    GS_ERROR(t, ctx, utc_task_allgatherv(ctx, b->send, 4, b->recv, NULL, NULL, UTC_TYPE_INT),
             UTC_ERR_INVALID_ARG, "recvcounts is NULL");
    /* overlapping buffers that are not the in-place form */
    GS_ERROR(t, ctx, utc_task_alltoall(ctx, b->recv + 4, b->recv, 2, UTC_TYPE_INT),
             UTC_ERR_INVALID_ARG, "overlap");
    GS_ERROR(t, ctx, utc_task_scan(ctx, b->recv + 4, b->recv, 2, UTC_TYPE_INT, UTC_OP_SUM),
             UTC_ERR_INVALID_ARG, "overlap");
    GS_ERROR(t, ctx, utc_task_allgather(ctx, b->recv + 1, b->recv, 2, UTC_TYPE_INT),
             UTC_ERR_INVALID_ARG, "this rank's block of recvbuf");
    GS_ERROR(t, ctx, utc_task_allgather(ctx, b->send, NULL, 2, UTC_TYPE_INT), UTC_ERR_INVALID_ARG,
             "recvbuf is NULL");
    GS_ERROR(t, ctx, utc_task_exscan(ctx, b->send, b->recv, 2, UTC_TYPE_INT, (utc_reduce_op_t)9),
             UTC_ERR_INVALID_ARG, "unknown reduce op 9");
    GS_ERROR(t, ctx, utc_task_alltoall(ctx, b->send, b->recv, 2, (utc_datatype_t)99),
             UTC_ERR_INVALID_ARG, "unknown datatype 99");
    GS_ERROR(t, ctx, utc_task_scan_by(ctx, 7, b->send, b->recv, 2, UTC_TYPE_INT, UTC_OP_SUM),
             UTC_ERR_OUT_OF_RANGE, "thread 7 is not a local thread");
    /* nothing to move: NULL buffers are fine */
    if (ctx->local_id == 0)
        for (int j = 0; j < n; j++)
            b->scounts[j] = b->rcounts[j] = 0;
    GS_OK(t, ctx, utc_ctx_barrier_local(ctx));
    GS_OK(t, ctx,
          utc_task_alltoallv(ctx, NULL, b->scounts, NULL, NULL, b->rcounts, NULL, UTC_TYPE_INT));
    GS_OK(t, ctx, utc_task_allgather(ctx, NULL, NULL, 0, UTC_TYPE_DOUBLE));
    still_works(t, ctx);
}

static void test_bad_alike(void)
{
    run_with_bufs(body_bad_alike, 2, UTC_WINDOW_DEFAULT);
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"allgather(v), alltoall(v): counts, types, layouts (all threads call)",
         test_exchange_all_threads},
        {"allgather(v), alltoall(v): counts, types, layouts (*_by form)", test_exchange_by},
        {"scan and exscan: types, ops, in place (all threads call)", test_scan_all_threads},
        {"scan and exscan (*_by form)", test_scan_by},
        {"unsigned MIN, MAX and SUM above the signed range", test_unsigned},
        {"ranks that disagree: UTC_ERR_MISMATCH on every rank, then usable", test_mismatch},
        {"ranks that disagree while all-to-all's data is on its way", test_mismatch_data},
        {"ranks that disagree while small blocks travel with the check", test_mismatch_small},
        {"bad arguments alike on every rank", test_bad_alike},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "gshared: exchanging collectives", cases);
}
