/*
 * heat, UTC: one task whose threads span all ranks (the GPU task runs the same code with
 * another backend).
 *
 * Each rank's rows live in one global shared data object holding two buffers, each
 * (rows of the rank + 2 halo rows) x cols. The rank's threads share the buffers (local
 * shared scope), so halo rows between threads of one rank cost nothing; between ranks,
 * at the start of every step the thread that owns a rank's first (last) row puts it into
 * the halo row of the rank above (below) with a one-sided store, and one barrier of the
 * whole task makes the stores visible. The buffers alternate by step parity, so a store
 * for step s never lands in a buffer a neighbour still reads for step s-1: one barrier per
 * step is enough. Rank 0 puts the initial rows and reads the result back one-sidedly.
 */
#include <stdlib.h>
#include <string.h>

#include "heat.h"

typedef struct heat_run {
    const capp_cfg_t *cfg;
    heat_dims_t d;
    const heat_backend_t *backend;
    float *grid;    /* rank 0: the whole grid (initial, then the result) */
    double seconds; /* rank 0: the run's wall time (local thread 0) */
    double comm;    /* this rank's communication time (local thread 0) */
} heat_run_t;

typedef struct heat_task {
    utc_task_t base;
    utc_gdata_t *buf; /* two buffers of (maxrows + 2) x cols */
} heat_task_t;

static int heat_task_init(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    heat_task_t *t = (heat_task_t *)self;
    const heat_run_t *x = arg;
    int64_t maxrows = capp_block_max(x->d.rows - 2, ctx->group_size);
    utc_gdata_t *gd;
    CAPP_TRY(utc_gdata_create(ctx, sizeof(float), (size_t)(2 * (maxrows + 2) * x->d.cols), &gd));
    if (ctx->local_id == 0) /* every thread got the same object; utc_task_init publishes */
        t->buf = gd;
    return 0;
}

static int heat_task_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    heat_task_t *t = (heat_task_t *)self;
    heat_run_t *x = arg;
    heat_dims_t d = x->d;
    int np = ctx->group_size, me = ctx->group_rank, nt = ctx->local_count, lid = ctx->local_id;
    bool root = me == 0;
    int64_t cols = d.cols, stride = (capp_block_max(d.rows - 2, np) + 2) * cols;
    int64_t first, n, s, k, mine, count;
    capp_block(d.rows - 2, np, me, &first, &n);  /* grid rows first+1 .. first+n */
    capp_block(n, nt, lid, &mine, &count);       /* this thread: rows mine+1 .. mine+count */
    mine += 1;
    float *base = utc_gdata_ptr(t->buf);
    float *b[2] = {base, base + stride};
    /* Where a neighbour's halo rows are in its part of the object (buffer 0). */
    int64_t up_halo = 0, down_halo = 0;
    if (me > 0) {
        capp_block(d.rows - 2, np, me - 1, &s, &k);
        up_halo = (k + 1) * cols; /* the rank above: its row k+1 */
    }

    CAPP_TRY(utc_ctx_barrier(ctx));
    double t0 = capp_now(), xfer = 0;
    /* Rank 0's threads put every rank's rows (and the fixed edge rows next to the first
     * and last blocks) into buffer 0 of its part. */
    if (root)
        for (int r = lid; r < np; r += nt) {
            capp_block(d.rows - 2, np, r, &s, &k);
            int64_t lo = r == 0 ? s : s + 1, hi = r == np - 1 ? s + k + 1 : s + k;
            float *src = x->grid + lo * cols;
            size_t cells = (size_t)((hi - lo + 1) * cols);
            if (r == 0)
                memcpy(b[0], src, sizeof(float) * cells);
            else
                CAPP_TRY(utc_gdata_rstore_block(t->buf, r, (size_t)cols, cells, src));
        }
    CAPP_TRY(capp_task_sync(ctx, t->buf));
    if (lid == 0) { /* the fixed edges are halo rows of both buffers */
        if (me == 0)
            memcpy(b[1], b[0], sizeof(float) * (size_t)cols);
        if (me == np - 1)
            memcpy(b[1] + (n + 1) * cols, b[0] + (n + 1) * cols, sizeof(float) * (size_t)cols);
    }
    void *state = NULL;
    if (count > 0 && x->backend->begin)
        CAPP_TRY(x->backend->begin(&state, b[0], mine, count, cols, &xfer));
    double comm = capp_now() - t0;

    for (int64_t step = 0; step < d.steps; step++) {
        float *cur = b[step & 1], *next = b[(step + 1) & 1];
        size_t off = (size_t)((step & 1) * stride);
        double tc = capp_now();
        if (count > 0 && mine == 1 && me > 0) /* my first row is the rank's first */
            CAPP_TRY(utc_gdata_rstore_block(t->buf, me - 1, off + (size_t)up_halo,
                                            (size_t)cols, cur + cols));
        if (count > 0 && mine + count - 1 == n && me < np - 1)
            CAPP_TRY(utc_gdata_rstore_block(t->buf, me + 1, off + (size_t)down_halo,
                                            (size_t)cols, cur + n * cols));
        CAPP_TRY(capp_task_sync(ctx, t->buf));
        comm += capp_now() - tc;
        if (count > 0)
            CAPP_TRY(x->backend->step(state, cur, next, mine, count, cols, &xfer));
    }

    float *fin = b[d.steps & 1];
    if (count > 0 && x->backend->end)
        CAPP_TRY(x->backend->end(state, fin, mine, count, cols, &xfer));
    double tg = capp_now();
    CAPP_TRY(capp_task_sync(ctx, t->buf)); /* every rank's last step is done */
    if (root) {
        size_t off = (size_t)((d.steps & 1) * stride);
        for (int r = lid; r < np; r += nt) {
            capp_block(d.rows - 2, np, r, &s, &k);
            float *dst = x->grid + (s + 1) * cols;
            if (r == 0)
                memcpy(dst, fin + cols, sizeof(float) * (size_t)(k * cols));
            else
                CAPP_TRY(utc_gdata_rload_block(t->buf, r, off + (size_t)cols,
                                               (size_t)(k * cols), dst));
        }
        CAPP_TRY(utc_ctx_barrier_local(ctx));
    }
    double t1 = capp_now();
    if (lid == 0) {
        x->comm = comm + (t1 - tg) + xfer;
        if (root)
            x->seconds = t1 - t0;
    }
    return 0;
}

static const utc_task_ops_t heat_ops = {
    .name = "heat", .size = sizeof(heat_task_t), .init = heat_task_init, .run = heat_task_run};

int heat_task(const capp_cfg_t *cfg, capp_result_t *res, utc_task_kind_t kind,
              const heat_backend_t *backend)
{
    heat_dims_t d = heat_dims(cfg);
    bool root = cfg->rank == 0;
    heat_run_t x = {.cfg = cfg, .d = d, .backend = backend};
    if (root) {
        x.grid = capp_alloc(cfg, sizeof(float) * (size_t)(d.rows * d.cols), "grid");
        if (!x.grid)
            return CAPP_EXIT_RUNTIME;
        heat_generate(cfg->seed, d, x.grid);
    }
    int64_t maxrows = capp_block_max(d.rows - 2, cfg->nranks);
    size_t object = sizeof(float) * (size_t)(2 * (maxrows + 2) * d.cols);
    int rc = capp_utc_task(cfg, &heat_ops, kind, capp_window_bytes(&object, 1), &x, &x);
    if (rc) {
        free(x.grid);
        return rc;
    }
    res->comm_seconds = x.comm;
    if (root) {
        res->seconds = x.seconds;
        res->check = heat_checksum(x.grid, d.rows * d.cols);
        res->out = x.grid;
    }
    return 0;
}

static int heat_cpu_step(void *state, const float *cur, float *next, int64_t first,
                         int64_t count, int64_t cols, double *xfer)
{
    (void)state, (void)xfer;
    heat_rows(cur, next, first, count, cols);
    return 0;
}

static const heat_backend_t heat_cpu = {.step = heat_cpu_step};

int heat_utc(const capp_cfg_t *cfg, capp_result_t *res)
{
    return heat_task(cfg, res, UTC_TASK_CPU, &heat_cpu);
}
