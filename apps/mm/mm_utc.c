/*
 * mm, UTC: one task whose threads span all ranks (the same code runs the GPU task, with
 * another compute function).
 *
 * Data: rank 0 holds A, B and C. Each rank has two global shared data objects, its rows of
 * A and of C. Rank 0's threads put the other ranks' rows of A into their parts (one-sided),
 * B goes everywhere with a task broadcast, each thread multiplies its share of its rank's
 * rows, and rank 0's threads read the other ranks' rows of C back with one-sided loads.
 * Rank 0 works on A and C in place: its rows never move.
 */
#include <stdlib.h>

#include "mm.h"

typedef struct mm_run {
    const capp_cfg_t *cfg;
    mm_dims_t d;
    mm_compute_fn compute;
    const float *a_in; /* rank 0: all of A */
    float *b;          /* B (generated on rank 0, broadcast to the others) */
    float *c_out;      /* rank 0: all of C */
    double seconds;    /* rank 0: the run's wall time (written by local thread 0) */
    double comm;       /* this rank's communication time (local thread 0) */
} mm_run_t;

typedef struct mm_task {
    utc_task_t base;
    utc_gdata_t *a_part; /* this rank's rows of A */
    utc_gdata_t *c_part; /* this rank's rows of C */
} mm_task_t;

static int64_t part_count(int64_t maxrows, int64_t width)
{
    return maxrows * width > 0 ? maxrows * width : 1; /* objects cannot be empty */
}

static int mm_task_init(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    mm_task_t *t = (mm_task_t *)self;
    const mm_run_t *x = arg;
    int64_t maxrows = capp_block_max(x->d.m, ctx->group_size);
    utc_gdata_t *a, *c;
    CAPP_TRY(utc_gdata_create(ctx, sizeof(float), (size_t)part_count(maxrows, x->d.k), &a));
    CAPP_TRY(utc_gdata_create(ctx, sizeof(float), (size_t)part_count(maxrows, x->d.n), &c));
    if (ctx->local_id == 0) /* every thread got the same objects; utc_task_init publishes */
        t->a_part = a, t->c_part = c;
    return 0;
}

static int mm_task_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    mm_task_t *t = (mm_task_t *)self;
    mm_run_t *x = arg;
    mm_dims_t d = x->d;
    int np = ctx->group_size, me = ctx->group_rank, nt = ctx->local_count, lid = ctx->local_id;
    bool root = me == 0;
    int64_t row0, rows, s, n;
    capp_block(d.m, np, me, &row0, &rows);

    CAPP_TRY(utc_ctx_barrier(ctx));
    double t0 = capp_now();
    if (root)
        for (int r = 1 + lid; r < np; r += nt) {
            capp_block(d.m, np, r, &s, &n);
            CAPP_TRY(utc_gdata_rstore_block(t->a_part, r, 0, (size_t)(n * d.k),
                                            x->a_in + s * d.k));
        }
    CAPP_TRY(capp_task_sync(ctx, t->a_part));
    CAPP_TRY(utc_task_bcast(ctx, x->b, (size_t)(d.k * d.n), UTC_TYPE_FLOAT, 0));
    double t1 = capp_now();

    const float *a = root ? x->a_in : utc_gdata_ptr(t->a_part);
    float *c = root ? x->c_out : utc_gdata_ptr(t->c_part);
    double xfer = 0;
    capp_block(rows, nt, lid, &s, &n);
    if (n > 0)
        CAPP_TRY(x->compute(a + s * d.k, x->b, c + s * d.n, n, d.k, d.n, &xfer));

    double t2 = capp_now();
    CAPP_TRY(capp_task_sync(ctx, t->c_part)); /* every rank's rows of C are done */
    if (root) {
        for (int r = 1 + lid; r < np; r += nt) {
            capp_block(d.m, np, r, &s, &n);
            CAPP_TRY(utc_gdata_rload_block(t->c_part, r, 0, (size_t)(n * d.n),
                                           x->c_out + s * d.n));
        }
        CAPP_TRY(utc_ctx_barrier_local(ctx));
    }
    double t3 = capp_now();
    if (lid == 0) {
        x->comm = (t1 - t0) + (t3 - t2) + xfer;
        if (root)
            x->seconds = t3 - t0;
    }
    return 0;
}

static const utc_task_ops_t mm_ops = {
    .name = "mm", .size = sizeof(mm_task_t), .init = mm_task_init, .run = mm_task_run};

int mm_task(const capp_cfg_t *cfg, capp_result_t *res, utc_task_kind_t kind,
            mm_compute_fn compute)
{
    mm_dims_t d = mm_dims(cfg);
    bool root = cfg->rank == 0;
    int rc = CAPP_EXIT_RUNTIME;
    mm_run_t x = {.cfg = cfg, .d = d, .compute = compute};
    float *a = NULL;
    x.b = capp_alloc(cfg, sizeof(float) * (size_t)(d.k * d.n), "B");
    if (root) {
        a = capp_alloc(cfg, sizeof(float) * (size_t)(d.m * d.k), "A");
        x.c_out = capp_alloc(cfg, sizeof(float) * (size_t)(d.m * d.n), "C");
    }
    if (!x.b || (root && (!a || !x.c_out)))
        goto out;
    if (root)
        mm_generate(cfg->seed, d, a, x.b);
    x.a_in = a;

    int64_t maxrows = capp_block_max(d.m, cfg->nranks);
    size_t objects[2] = {sizeof(float) * (size_t)part_count(maxrows, d.k),
                         sizeof(float) * (size_t)part_count(maxrows, d.n)};
    rc = capp_utc_task(cfg, &mm_ops, kind, capp_window_bytes(objects, 2), &x, &x);
    if (rc)
        goto out;
    res->comm_seconds = x.comm;
    if (root) {
        res->seconds = x.seconds;
        res->check = mm_checksum(x.c_out, d.m * d.n);
        res->out = x.c_out;
        x.c_out = NULL;
    }
out:
    free(a);
    free(x.b);
    free(x.c_out);
    return rc;
}

static int mm_cpu_rows(const float *a, const float *b, float *c, int64_t rows, int64_t k,
                       int64_t n, double *xfer)
{
    (void)xfer;
    mm_rows(a, b, c, rows, k, n);
    return 0;
}

int mm_utc(const capp_cfg_t *cfg, capp_result_t *res)
{
    return mm_task(cfg, res, UTC_TASK_CPU, mm_cpu_rows);
}
