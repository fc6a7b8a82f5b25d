/*
 * nbody, UTC: one task whose threads span all ranks (the GPU task runs the same code with
 * another backend).
 *
 * Every rank keeps all positions in global shared data, two buffers alternating by step.
 * Rank 0 broadcasts the first positions with a task collective and puts the other ranks'
 * velocities into their parts. Each step every thread moves its bodies into the next
 * buffer of its own rank and puts their new positions into the next buffer of every other
 * rank (one-sided stores), then one barrier of the whole task completes the stores. A
 * store for step s lands in a buffer nobody reads during step s, and nobody writes the
 * buffer of step s before everyone has passed the barrier that ends step s-1: one barrier
 * per step is enough. Rank 0 reads the other ranks' velocities back at the end.
 */
#include <stdlib.h>
#include <string.h>

#include "nbody.h"

typedef struct nb_run {
    const capp_cfg_t *cfg;
    nb_dims_t d;
    const nb_backend_t *backend;
    double *out;          /* rank 0: generated bodies in, final bodies out (4n + 3n) */
    double *vel;          /* this rank's velocities (rank 0: all of them, in out) */
    double seconds, comm; /* written by local thread 0 */
} nb_run_t;

typedef struct nb_task {
    utc_task_t base;
    utc_gdata_t *pos; /* 2 x 4n doubles: all positions, two buffers */
    utc_gdata_t *vel; /* this rank's velocities (ranks other than 0) */
} nb_task_t;

static int nb_task_init(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    nb_task_t *t = (nb_task_t *)self;
    const nb_run_t *x = arg;
    utc_gdata_t *pos, *vel;
    CAPP_TRY(utc_gdata_create(ctx, sizeof(double), (size_t)(8 * x->d.n), &pos));
    CAPP_TRY(utc_gdata_create(ctx, sizeof(double),
                              (size_t)(3 * capp_block_max(x->d.n, ctx->group_size)), &vel));
    if (ctx->local_id == 0) /* every thread got the same objects; utc_task_init publishes */
        t->pos = pos, t->vel = vel;
    return 0;
}

static int nb_task_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    nb_task_t *t = (nb_task_t *)self;
    nb_run_t *x = arg;
    nb_dims_t d = x->d;
    int np = ctx->group_size, me = ctx->group_rank, nt = ctx->local_count, lid = ctx->local_id;
    bool root = me == 0;
    int64_t first, n, s, k;
    capp_block(d.n, np, me, &first, &n);
    double *buf[2];
    buf[0] = utc_gdata_ptr(t->pos);
    buf[1] = buf[0] + 4 * d.n;
    double *vel = root ? x->out + 4 * d.n : utc_gdata_ptr(t->vel);

    CAPP_TRY(utc_ctx_barrier(ctx));
    double t0 = capp_now(), xfer = 0;
    if (root) {
        if (lid == 0)
            memcpy(buf[0], x->out, sizeof(double) * 4 * (size_t)d.n);
        for (int r = 1 + lid; r < np; r += nt) {
            capp_block(d.n, np, r, &s, &k);
            CAPP_TRY(utc_gdata_rstore_block(t->vel, r, 0, (size_t)(3 * k), vel + 3 * s));
        }
    }
    CAPP_TRY(utc_task_bcast(ctx, buf[0], (size_t)(4 * d.n), UTC_TYPE_DOUBLE, 0));
    CAPP_TRY(capp_task_sync(ctx, t->vel));
    capp_block(n, nt, lid, &s, &k); /* this thread: bodies first+s .. first+s+k-1 */
    int64_t i0 = first + s;
    double *myvel = vel + 3 * s;
    void *state = NULL;
    if (k > 0 && x->backend->begin)
        CAPP_TRY(x->backend->begin(&state, d.n, myvel, k, &xfer));
    double comm = capp_now() - t0;

    for (int64_t step = 0; step < d.steps; step++) {
        double *cur = buf[step & 1], *next = buf[(step + 1) & 1];
        size_t off = (size_t)(((step + 1) & 1) * 4 * d.n);
        if (k > 0)
            CAPP_TRY(x->backend->step(state, cur, next, myvel, d.n, i0, k, &xfer));
        double tc = capp_now();
        for (int r = 0; r < np && k > 0; r++)
            if (r != me)
                CAPP_TRY(utc_gdata_rstore_block(t->pos, r, off + (size_t)(4 * i0),
                                                (size_t)(4 * k), next + 4 * i0));
        CAPP_TRY(capp_task_sync(ctx, t->pos));
        comm += capp_now() - tc;
    }
    if (k > 0 && x->backend->end)
        CAPP_TRY(x->backend->end(state, myvel, k, &xfer));

    double tg = capp_now();
    if (root) {
        CAPP_TRY(capp_task_sync(ctx, t->vel)); /* after every rank's last velocities */
        for (int r = 1 + lid; r < np; r += nt) {
            capp_block(d.n, np, r, &s, &k);
            CAPP_TRY(utc_gdata_rload_block(t->vel, r, 0, (size_t)(3 * k), vel + 3 * s));
        }
        if (lid == 0)
            memcpy(x->out, buf[d.steps & 1], sizeof(double) * 4 * (size_t)d.n);
        CAPP_TRY(utc_ctx_barrier_local(ctx));
    } else {
        CAPP_TRY(capp_task_sync(ctx, t->vel));
    }
    double t1 = capp_now();
    if (lid == 0) {
        x->comm = comm + (t1 - tg) + xfer;
        if (root)
            x->seconds = t1 - t0;
    }
    return 0;
}

static const utc_task_ops_t nb_ops = {
    .name = "nbody", .size = sizeof(nb_task_t), .init = nb_task_init, .run = nb_task_run};

int nb_task(const capp_cfg_t *cfg, capp_result_t *res, utc_task_kind_t kind,
            const nb_backend_t *backend)
{
    nb_dims_t d = nb_dims(cfg);
    bool root = cfg->rank == 0;
    nb_run_t x = {.cfg = cfg, .d = d, .backend = backend};
    if (root) {
        x.out = capp_alloc(cfg, sizeof(double) * 7 * (size_t)d.n, "bodies");
        if (!x.out)
            return CAPP_EXIT_RUNTIME;
        nb_generate(cfg->seed, d.n, x.out, x.out + 4 * d.n);
    }
    size_t objects[2] = {sizeof(double) * 8 * (size_t)d.n,
                         sizeof(double) * 3 * (size_t)capp_block_max(d.n, cfg->nranks)};
    int rc = capp_utc_task(cfg, &nb_ops, kind, capp_window_bytes(objects, 2), &x, &x);
    if (rc) {
        free(x.out);
        return rc;
    }
    res->comm_seconds = x.comm;
    if (root) {
        res->seconds = x.seconds;
        res->out = x.out;
        res->check = nb_check(x.out, d.n);
    }
    return 0;
}

static int nb_cpu_step(void *state, const double *cur, double *next, double *vel, int64_t n,
                       int64_t i0, int64_t count, double *xfer)
{
    (void)state, (void)xfer;
    nb_bodies(cur, next, vel, n, i0, count);
    return 0;
}

static const nb_backend_t nb_cpu = {.step = nb_cpu_step};

int nb_utc(const capp_cfg_t *cfg, capp_result_t *res)
{
    return nb_task(cfg, res, UTC_TASK_CPU, &nb_cpu);
}
