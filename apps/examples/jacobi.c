/*
 * Example: a 2D Jacobi solver, the way the guide recommends for a stencil (doc/guide/
 * from-mpi.md). One task with one thread on every rank holds the grid's rows, split over
 * the ranks; a free-mode conduit from the task to itself carries the halo rows between
 * neighbouring ranks (started reads and writes, then one wait for all, as MPI_Irecv /
 * MPI_Isend / MPI_Waitall), and the task's allreduce gives the residual, in the same
 * iteration. The plate's top edge is held at 1, the other edges at 0; the solver stops
 * when no point moves more than --tol, or after --max-iters sweeps.
 *
 *   utcrun -np 2 example_jacobi --n 300 [--tol 1e-5] [--max-iters N] [--verify]
 *
 * --verify: every rank also solves the whole plate sequentially, with the same number of
 * sweeps, and its rows must be equal bit for bit. apps/microbench/jacobi_mpi.c is the same
 * solver in MPI (the benchmark's baseline: scripts/bench-jacobi.sh).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utc/utc.h>

#include "jacobi_sweep.h" /* jacobi_sweep, jacobi_plate: shared with the MPI baseline */

enum { TAG_DOWN = 1, TAG_UP = 2 };

typedef struct {
    utc_task_t base;
    int n;               /* interior points per side */
    double tol;
    int max_iters;
    int verify;
    utc_conduit_t *halo; /* the task's conduit to itself (free mode) */
    /* results, on every rank */
    int iters;
    double residual, seconds;
    int mismatches;
} jacobi_task_t;

/* Rows lo .. hi-1 (interior rows 0 .. n-1) of rank r out of `ranks`. */
static void my_rows(int n, int r, int ranks, int *lo, int *hi)
{
    *lo = (int)((long)n * r / ranks);
    *hi = (int)((long)n * (r + 1) / ranks);
}

/* The whole plate, sequentially, `iters` sweeps: the reference of --verify. */
static double *solve_whole(int n, int iters)
{
    int w = n + 2;
    double *u = jacobi_plate(n, w, 1), *v = jacobi_plate(n, w, 1);
    if (!u || !v) {
        free(u);
        free(v);
        return NULL;
    }
    for (int it = 0; it < iters; it++) {
        jacobi_sweep(u, v, n, w);
        double *t = u;
        u = v;
        v = t;
    }
    free(v);
    return u;
}

/* Exchange the halo rows with the neighbours: reads first, then writes, one wait. */
static utc_status_t halos(jacobi_task_t *t, utc_ctx_t *ctx, double *u, int rows, int w)
{
    int me = ctx->group_rank, ranks = ctx->group_size;
    utc_request_t *r[4] = {NULL, NULL, NULL, NULL};
    size_t row = (size_t)w * sizeof *u;
    utc_status_t rc = UTC_OK;
    if (me > 0) /* the rank above: its last row is my top ghost; my first row is its */
        rc = utc_conduit_iread_from(t->halo, me - 1, u, row, TAG_DOWN, &r[0]);
    if (rc == UTC_OK && me < ranks - 1)
        rc = utc_conduit_iread_from(t->halo, me + 1, u + (size_t)(rows + 1) * w, row, TAG_UP,
                                    &r[1]);
    if (rc == UTC_OK && me > 0)
        rc = utc_conduit_iwrite_to(t->halo, me - 1, u + w, row, TAG_UP, &r[2]);
    if (rc == UTC_OK && me < ranks - 1)
        rc = utc_conduit_iwrite_to(t->halo, me + 1, u + (size_t)rows * w, row, TAG_DOWN,
                                   &r[3]);
    utc_status_t wrc = utc_request_waitall(4, r, NULL, NULL); /* also after an error */
    return rc != UTC_OK ? rc : wrc;
}

static int jacobi_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    jacobi_task_t *t = (jacobi_task_t *)self;
    int n = t->n, w = n + 2, lo, hi;
    my_rows(n, ctx->group_rank, ctx->group_size, &lo, &hi);
    int rows = hi - lo;
    double *u = jacobi_plate(rows, w, ctx->group_rank == 0), *v = jacobi_plate(rows, w, ctx->group_rank == 0);
    if (!u || !v) {
        free(u);
        free(v);
        return UTC_ERR_NO_MEMORY;
    }
    utc_status_t rc = utc_ctx_barrier(ctx); /* every rank starts the clock together */
    double t0 = utc_wtime(), moved = INFINITY;
    int it = 0;
    while (rc == UTC_OK && it < t->max_iters && moved > t->tol) {
        if ((rc = halos(t, ctx, u, rows, w)) != UTC_OK)
            break;
        double mine = jacobi_sweep(u, v, rows, w); /* v's ghost rows: refreshed before its sweep */
        double *tmp = u;
        u = v;
        v = tmp;
        rc = utc_task_allreduce(ctx, &mine, &moved, 1, UTC_TYPE_DOUBLE, UTC_OP_MAX);
        it++;
    }
    t->seconds = utc_wtime() - t0;
    t->iters = it;
    t->residual = moved;
    if (rc == UTC_OK && t->verify) {
        double *whole = solve_whole(n, it);
        int bad = 0;
        if (!whole)
            rc = UTC_ERR_NO_MEMORY;
        for (int i = 0; whole && i < rows; i++)
            bad += memcmp(&u[(size_t)(i + 1) * w], &whole[(size_t)(lo + i + 1) * w],
                          (size_t)w * sizeof *u) != 0;
        free(whole);
        if (rc == UTC_OK)
            rc = utc_task_allreduce(ctx, &bad, &t->mismatches, 1, UTC_TYPE_INT, UTC_OP_SUM);
    }
    free(u);
    free(v);
    return rc;
}

static const utc_task_ops_t jacobi_ops = {
    .name = "jacobi", .size = sizeof(jacobi_task_t), .run = jacobi_run};

static int usage(const char *prog, int rc)
{
    printf("usage: %s [--n POINTS] [--tol T] [--max-iters N] [--verify] [--help] [--version]\n"
           "A 2D Jacobi solver on a POINTS x POINTS plate (default 300), rows split over the\n"
           "ranks: halos on the task's conduit to itself, the residual by allreduce. Stops\n"
           "when no point moves more than T (default 1e-5) or after N sweeps (default\n"
           "100000). --verify: compare with a sequential solve, bit for bit.\n"
           "Launch with: utcrun -np RANKS %s\n", prog, prog);
    return rc;
}

int main(int argc, char **argv)
{
    long n = 300, max_iters = 100000;
    double tol = 1e-5;
    int verify = 0;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return usage(argv[0], 0);
        if (!strcmp(argv[i], "--version")) {
            printf("example_jacobi (UTC) %s\n", utc_version_string());
            return 0;
        }
        if (!strcmp(argv[i], "--verify")) {
            verify = 1;
        } else if (!strcmp(argv[i], "--n") && i + 1 < argc) {
            n = strtol(argv[++i], &end, 10);
            if (*end || n < 1 || n > 20000) {
                fprintf(stderr, "--n must be a whole number from 1 to 20000, got '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--max-iters") && i + 1 < argc) {
            max_iters = strtol(argv[++i], &end, 10);
            if (*end || max_iters < 1 || max_iters > 100000000) {
                fprintf(stderr, "--max-iters must be a whole number from 1 to 100000000, got "
                        "'%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--tol") && i + 1 < argc) {
            tol = strtod(argv[++i], &end);
            if (*end || !(tol >= 0)) {
                fprintf(stderr, "--tol must be a number >= 0, got '%s'\n", argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "unknown or incomplete argument '%s'\n", argv[i]);
            return usage(argv[0], 2);
        }
    }
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "utc_init: %s\n", utc_last_error());
        return 1;
    }
    int ranks = utc_nranks();
    if (ranks > n) {
        if (utc_rank() == 0)
            fprintf(stderr, "%d ranks for %ld rows: give each rank a row at least\n", ranks, n);
        utc_finalize();
        return 2;
    }
    int *procs = malloc(sizeof *procs * (size_t)ranks);
    for (int r = 0; procs && r < ranks; r++)
        procs[r] = r; /* one thread on every rank */
    utc_task_t *task = NULL;
    utc_conduit_options_t free_mode = UTC_CONDUIT_OPTIONS_INIT;
    free_mode.mode = UTC_CONDUIT_FREE;
    utc_status_t rc = procs ? utc_task_create(&jacobi_ops, procs, ranks, NULL, &task)
                            : UTC_ERR_NO_MEMORY;
    jacobi_task_t *t = (jacobi_task_t *)task;
    if (rc == UTC_OK) {
        t->n = (int)n, t->tol = tol, t->max_iters = (int)max_iters, t->verify = verify;
        rc = utc_conduit_create(task, task, &free_mode, &t->halo);
    }
    if (rc == UTC_OK && (rc = utc_task_run(task, NULL)) == UTC_OK)
        rc = utc_task_wait(task);
    if (rc == UTC_OK && utc_rank() == 0) {
        printf("jacobi: %ld x %ld, %d rank(s), %d sweeps, residual %.3g, %.3f s%s\n", n, n, ranks,
               t->iters, t->residual, t->seconds,
               !verify ? "" : t->mismatches ? ", DIFFERS from the sequential solve"
                                            : ", equal to the sequential solve");
    }
    if (rc == UTC_OK && verify && t->mismatches)
        rc = UTC_ERR_INTERNAL;
    if (rc != UTC_OK)
        fprintf(stderr, "rank %d: %s (%s)\n", utc_rank(), utc_status_string(rc), utc_last_error());
    if (t && t->halo)
        utc_conduit_destroy(t->halo);
    if (task)
        utc_task_destroy(task);
    free(procs);
    utc_status_t frc = utc_finalize(); /* fails when, say, the UTC_TRACE file was lost */
    if (frc != UTC_OK)
        fprintf(stderr, "utc_finalize: %s\n", utc_last_error());
    return rc == UTC_OK && frc == UTC_OK ? 0 : 1;
}
