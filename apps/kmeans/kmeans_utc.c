/*
 * kmeans, UTC: one task whose threads span all ranks (the GPU task runs the same code
 * with another backend).
 *
 * Rank 0's threads put the other ranks' points into their global shared data, the first
 * centroids go everywhere with a task broadcast, and each step:
 *   1. every thread assigns its points and sums them into a private vector;
 *   2. it adds that vector into its rank's vector with atomic adds (no lock, no barrier);
 *   3. utc_task_allreduce sums the rank vectors over the ranks. The collective starts only
 *      when all the rank's threads have arrived, so every add is in, and returns the sums
 *      to all of them;
 *   4. every thread computes the new centroids itself (k x f divisions): nothing to share.
 * The rank vector is triple-buffered by step: at step s local thread 0 zeroes buffer s+1,
 * whose last readers (step s-2) are all past the collective of step s-1, and nobody adds
 * into it before thread 0 has arrived at the collective of step s.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kmeans.h"

typedef struct km_run {
    const capp_cfg_t *cfg;
    km_dims_t d;
    const km_backend_t *backend;
    const float *pts_in;  /* rank 0: all the points */
    float *ct0;           /* the first centroids (f x k), broadcast from rank 0 */
    int32_t *assign;      /* this rank's points' clusters */
    _Atomic int64_t *acc; /* 3 x KM_ACC: the rank's step vectors */
    km_out_t *out;        /* rank 0: the result (local thread 0) */
    double seconds, comm; /* written by local thread 0 */
} km_run_t;

typedef struct km_task {
    utc_task_t base;
    utc_gdata_t *pts; /* this rank's points */
} km_task_t;

static int km_task_init(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    km_task_t *t = (km_task_t *)self;
    const km_run_t *x = arg;
    size_t count = (size_t)(capp_block_max(x->d.n, ctx->group_size) * x->d.f);
    utc_gdata_t *gd;
    CAPP_TRY(utc_gdata_create(ctx, sizeof(float), count, &gd));
    if (ctx->local_id == 0) /* every thread got the same object; utc_task_init publishes */
        t->pts = gd;
    return 0;
}

static int km_steps(km_task_t *t, utc_ctx_t *ctx, km_run_t *x, float *ct, int64_t *mine)
{
    km_dims_t d = x->d;
    int np = ctx->group_size, me = ctx->group_rank, nt = ctx->local_count, lid = ctx->local_id;
    bool root = me == 0;
    int nacc = KM_ACC(d.k, d.f);
    int64_t first, n, s, k;
    capp_block(d.n, np, me, &first, &n);

    CAPP_TRY(utc_ctx_barrier(ctx));
    double t0 = capp_now(), xfer = 0;
    if (root)
        for (int r = 1 + lid; r < np; r += nt) {
            capp_block(d.n, np, r, &s, &k);
            CAPP_TRY(utc_gdata_rstore_block(t->pts, r, 0, (size_t)(k * d.f),
                                            x->pts_in + s * d.f));
        }
    CAPP_TRY(capp_task_sync(ctx, t->pts));
    CAPP_TRY(utc_task_bcast(ctx, x->ct0, (size_t)(d.k * d.f), UTC_TYPE_FLOAT, 0));
    memcpy(ct, x->ct0, sizeof(float) * (size_t)(d.k * d.f));
    const float *pts = root ? x->pts_in : utc_gdata_ptr(t->pts);
    capp_block(n, nt, lid, &s, &k); /* this thread: the rank's points s .. s+k-1 */
    void *state = NULL;
    if (k > 0 && x->backend->begin)
        CAPP_TRY(x->backend->begin(&state, d, pts + s * d.f, k, &xfer));
    double comm = capp_now() - t0;

    int64_t steps = 0;
    int rc = 0;
    for (;;) {
        _Atomic int64_t *acc = x->acc + (steps % 3) * nacc;
        if (lid == 0) {
            _Atomic int64_t *later = x->acc + ((steps + 1) % 3) * nacc;
            /* relaxed: published by the collective's barrier below (see the file comment) */
            for (int i = 0; i < nacc; i++)
                atomic_store_explicit(&later[i], 0, memory_order_relaxed);
        }
        memset(mine, 0, sizeof(int64_t) * (size_t)nacc);
        if (k > 0 && (rc = x->backend->assign(state, d, pts + s * d.f, k, first + s, ct,
                                              x->assign + s, mine, &xfer)) != 0)
            break;
        /* relaxed: the collective's entry barrier orders these before the MPI call */
        for (int i = 0; i < nacc; i++)
            if (mine[i])
                atomic_fetch_add_explicit(&acc[i], mine[i], memory_order_relaxed);
        double tc = capp_now();
        /* _Atomic int64_t has int64_t's representation here (lock-free, same size). */
        if ((rc = utc_task_allreduce(ctx, (void *)acc, (void *)acc, (size_t)nacc,
                                     UTC_TYPE_INT64, UTC_OP_SUM)) != UTC_OK)
            break;
        comm += capp_now() - tc;
        for (int i = 0; i < nacc; i++)
            mine[i] = atomic_load_explicit(&acc[i], memory_order_relaxed);
        km_update(d, mine, ct);
        steps++;
        if (mine[d.k * d.f + d.k] == 0 || steps >= d.iters)
            break;
    }
    if (k > 0 && x->backend->end)
        x->backend->end(state);
    if (rc)
        return rc;
    double t1 = capp_now();
    if (lid == 0) {
        x->comm = comm + xfer;
        if (root) {
            x->seconds = t1 - t0;
            x->out = km_result(d, steps, mine, ct);
            if (!x->out)
                return UTC_ERR_NO_MEMORY;
        }
    }
    return 0;
}

static int km_task_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    km_run_t *x = arg;
    /* per thread: its centroids and its step vector */
    float *ct = malloc(sizeof(float) * (size_t)(x->d.k * x->d.f));
    int64_t *mine = malloc(sizeof(int64_t) * (size_t)KM_ACC(x->d.k, x->d.f));
    int rc = ct && mine ? km_steps((km_task_t *)self, ctx, x, ct, mine) : UTC_ERR_NO_MEMORY;
    free(ct);
    free(mine);
    return rc;
}

static const utc_task_ops_t km_ops = {
    .name = "kmeans", .size = sizeof(km_task_t), .init = km_task_init, .run = km_task_run};

int km_task(const capp_cfg_t *cfg, capp_result_t *res, utc_task_kind_t kind,
            const km_backend_t *backend)
{
    km_dims_t d = km_dims(cfg);
    bool root = cfg->rank == 0;
    int rc = CAPP_EXIT_RUNTIME;
    int64_t first, n;
    capp_block(d.n, cfg->nranks, cfg->rank, &first, &n);
    km_run_t x = {.cfg = cfg, .d = d, .backend = backend};
    float *pts = NULL;
    x.ct0 = capp_alloc(cfg, sizeof(float) * (size_t)(d.k * d.f), "centroids");
    x.assign = capp_alloc(cfg, sizeof(int32_t) * (size_t)n, "assignment");
    x.acc = calloc(3 * (size_t)KM_ACC(d.k, d.f), sizeof *x.acc);
    if (root)
        pts = capp_alloc(cfg, sizeof(float) * (size_t)(d.n * d.f), "points");
    if (!x.ct0 || !x.assign || !x.acc || (root && !pts)) {
        capp_error(cfg, "out of memory");
        goto out;
    }
    if (root) {
        km_generate(cfg->seed, d, pts);
        km_initial(d, pts, x.ct0);
    }
    x.pts_in = pts;
    for (int64_t i = 0; i < n; i++)
        x.assign[i] = -1;

    size_t object = sizeof(float) * (size_t)(capp_block_max(d.n, cfg->nranks) * d.f);
    rc = capp_utc_task(cfg, &km_ops, kind, capp_window_bytes(&object, 1), &x, &x);
    if (rc)
        goto out;
    res->comm_seconds = x.comm;
    if (root) {
        res->seconds = x.seconds;
        res->out = x.out;
        res->check = (double)x.out->checksum;
    }
out:
    free(pts);
    free(x.ct0);
    free(x.assign);
    free(x.acc);
    return rc;
}

static int km_cpu_assign(void *state, km_dims_t d, const float *pts, int64_t count,
                         int64_t index0, const float *ct, int32_t *assign, int64_t *acc,
                         double *xfer)
{
    (void)state, (void)xfer;
    km_assign(d, pts, count, index0, ct, assign, acc);
    return 0;
}

static const km_backend_t km_cpu = {.assign = km_cpu_assign};

int km_utc(const capp_cfg_t *cfg, capp_result_t *res)
{
    return km_task(cfg, res, UTC_TASK_CPU, &km_cpu);
}
