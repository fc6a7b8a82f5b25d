/*
 * A known run for the profiling tests (tests/trace): check_trace.py and check_stats.py
 * know what it does.
 *
 * - task "ping": 2 threads on rank 0; task "pong": 1 thread on the last rank; a conduit
 *   between them. ping writes MSGS messages of MSG_BYTES bytes with tag TAG; pong reads
 *   them and answers with one 8-byte message on tag TAG + 1. Each task ends with a barrier
 *   of its threads.
 * - task "gs": 1 thread per rank; a global shared array of 4 int64 per rank; each thread
 *   stores into the next rank's part, quiets, joins a gdata barrier, loads it back from
 *   there, then an allreduce, an allgather, an alltoall and a scan.
 * - main: a world barrier before and after.
 *
 * `--limit-file-size BYTES`: rank 0 may write no more than BYTES to a file from just
 * before utc_finalize (RLIMIT_FSIZE, with SIGXFSZ ignored, so a write past it fails with
 * EFBIG as on a full disk: the trace cannot be written).
 * Exit 0 when all went well, 1 when the run failed, 3 when utc_finalize failed.
 * `--finalize-fails`: utc_finalize must fail with UTC_ERR_IO: exit 0 when it does (after
 * saying so), 4 when it does not. (Every rank then exits 0, so mpirun does not kill a
 * rank before it has printed its line.)
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <utc/utc.h>

enum { MSGS = 5, MSG_BYTES = 1000, TAG = 3 };

typedef struct {
    utc_task_t base;
    utc_conduit_t *c;
    int64_t answer;
} pp_task_t;

typedef struct {
    utc_task_t base;
    utc_gdata_t *gd;
    int64_t one, sum;
    int64_t ranks[8], mine[8], theirs[8], prefix; /* 8: more than the tests' ranks */
} gs_task_t;

static int ping_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    pp_task_t *t = (pp_task_t *)self;
    char buf[MSG_BYTES];
    memset(buf, 7, sizeof buf);
    for (int i = 0; i < MSGS; i++) {
        utc_status_t rc = utc_conduit_write(t->c, buf, sizeof buf, TAG);
        if (rc != UTC_OK)
            return rc;
    }
    utc_status_t rc = utc_conduit_read(t->c, &t->answer, sizeof t->answer, TAG + 1, NULL);
    if (rc != UTC_OK)
        return rc;
    return utc_ctx_barrier(ctx);
}

static int pong_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    pp_task_t *t = (pp_task_t *)self;
    char buf[MSG_BYTES];
    int64_t total = 0;
    for (int i = 0; i < MSGS; i++) {
        size_t got;
        utc_status_t rc = utc_conduit_read(t->c, buf, sizeof buf, TAG, &got);
        if (rc != UTC_OK)
            return rc;
        total += (int64_t)got;
    }
    utc_status_t rc = utc_conduit_write(t->c, &total, sizeof total, TAG + 1);
    if (rc != UTC_OK)
        return rc;
    return utc_ctx_barrier(ctx);
}

static int gs_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    gs_task_t *t = (gs_task_t *)self;
    int me = ctx->group_rank, n = ctx->group_size;
    utc_status_t rc = utc_gdata_create(ctx, sizeof(int64_t), 4, &t->gd);
    if (rc != UTC_OK)
        return rc;
    int64_t v = 100 + me, got = -1;
    if ((rc = utc_gdata_rstore(t->gd, (me + 1) % n, 0, &v)) != UTC_OK ||
        (rc = utc_gdata_quiet(t->gd)) != UTC_OK || (rc = utc_gdata_barrier(t->gd)) != UTC_OK ||
        (rc = utc_gdata_rload(t->gd, (me + 1) % n, 0, &got)) != UTC_OK)
        return rc;
    if (got != v) /* what this rank stored there */
        return UTC_ERR_INTERNAL;
    t->one = 1;
    if ((rc = utc_task_allreduce(ctx, &t->one, &t->sum, 1, UTC_TYPE_INT64, UTC_OP_SUM)) !=
        UTC_OK)
        return rc;
    if (t->sum != n)
        return UTC_ERR_INTERNAL;
    /* one of each newer kind, so each shows under its own name */
    if (n > 8)
        return UTC_ERR_INVALID_ARG;
    t->one = me;
    for (int j = 0; j < n; j++)
        t->mine[j] = me * 100 + j;
    if ((rc = utc_task_allgather(ctx, &t->one, t->ranks, 1, UTC_TYPE_INT64)) != UTC_OK ||
        (rc = utc_task_alltoall(ctx, t->mine, t->theirs, 1, UTC_TYPE_INT64)) != UTC_OK ||
        (rc = utc_task_scan(ctx, &t->one, &t->prefix, 1, UTC_TYPE_INT64, UTC_OP_SUM)) != UTC_OK)
        return rc;
    for (int j = 0; j < n; j++)
        if (t->ranks[j] != j || t->theirs[j] != j * 100 + me)
            return UTC_ERR_INTERNAL;
    if (t->prefix != (int64_t)me * (me + 1) / 2)
        return UTC_ERR_INTERNAL;
    return utc_gdata_destroy(ctx, t->gd);
}

static const utc_task_ops_t ping_ops = {.name = "ping", .size = sizeof(pp_task_t), .run = ping_run};
static const utc_task_ops_t pong_ops = {.name = "pong", .size = sizeof(pp_task_t), .run = pong_run};
static const utc_task_ops_t gs_ops = {.name = "gs", .size = sizeof(gs_task_t), .run = gs_run};

int main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "--version"))) {
        printf("trace_run (UTC) %s: the known run of the profiling tests\n",
               utc_version_string());
        return 0;
    }
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "utc_init: %s\n", utc_last_error());
        return 1;
    }
    long fsize_limit = -1;
    int finalize_fails = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--limit-file-size") && i + 1 < argc)
            fsize_limit = atol(argv[++i]);
        else if (!strcmp(argv[i], "--finalize-fails"))
            finalize_fails = 1;
    }
    int n = utc_nranks(), last = n - 1;
    int ping_procs[2] = {0, 0}, pong_procs[1] = {last}, gs_procs[64];
    int ngs = utc_procs_spread(gs_procs, 64, 0, n < 64 ? n : 64, 1);
    utc_task_t *ping = NULL, *pong = NULL, *gs = NULL;
    utc_conduit_t *c = NULL;
    utc_status_t rc = utc_barrier();
    if (rc == UTC_OK)
        rc = utc_task_create(&ping_ops, ping_procs, 2, NULL, &ping);
    if (rc == UTC_OK)
        rc = utc_task_create(&pong_ops, pong_procs, 1, NULL, &pong);
    if (rc == UTC_OK)
        rc = utc_task_create(&gs_ops, gs_procs, ngs, NULL, &gs);
    if (rc == UTC_OK)
        rc = utc_conduit_create(ping, pong, NULL, &c);
    if (rc == UTC_OK) {
        ((pp_task_t *)ping)->c = ((pp_task_t *)pong)->c = c;
        rc = utc_task_run(ping, NULL);
        if (rc == UTC_OK)
            rc = utc_task_run(pong, NULL);
        if (rc == UTC_OK)
            rc = utc_task_run(gs, NULL);
        utc_status_t w1 = utc_task_wait(ping), w2 = utc_task_wait(pong), w3 = utc_task_wait(gs);
        if (rc == UTC_OK)
            rc = w1 != UTC_OK ? w1 : w2 != UTC_OK ? w2 : w3;
    }
    if (rc == UTC_OK && utc_rank() == 0 && ((pp_task_t *)ping)->answer != MSGS * MSG_BYTES)
        rc = UTC_ERR_INTERNAL;
    if (rc == UTC_OK)
        rc = utc_barrier();
    if (rc != UTC_OK)
        fprintf(stderr, "rank %d: %s (%s)\n", utc_rank(), utc_status_string(rc),
                utc_last_error());
    if (c)
        utc_conduit_destroy(c);
    if (gs)
        utc_task_destroy(gs);
    if (pong)
        utc_task_destroy(pong);
    if (ping)
        utc_task_destroy(ping);
    if (fsize_limit >= 0 && utc_rank() == 0) {
        struct rlimit rl;
        getrlimit(RLIMIT_FSIZE, &rl);
        rl.rlim_cur = (rlim_t)fsize_limit;
        signal(SIGXFSZ, SIG_IGN);
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            perror("setrlimit");
    }
    int me = utc_rank();
    utc_status_t frc = utc_finalize();
    if (frc != UTC_OK)
        printf("trace_run: rank %d: utc_finalize: %s (%s)\n", me, utc_status_string(frc),
               utc_last_error());
    if (finalize_fails)
        return rc == UTC_OK && frc == UTC_ERR_IO ? 0 : 4;
    return rc != UTC_OK ? 1 : frc != UTC_OK ? 3 : 0;
}
