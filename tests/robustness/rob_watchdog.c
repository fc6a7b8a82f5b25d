/*
 * rob_watchdog [DELAY [coll]]: blocking waits that last DELAY seconds (default 3), for
 * check_watchdog.sh to run under UTC_WATCHDOG=1 and read the watchdog's lines on stderr
 * ("coll": steps 7 and 8 only).
 *
 * 1. conduit: task 'wd_reader' (2 threads, last rank) reads tag 7 of conduit 0 from task
 *    'wd_writer' (rank 0), which writes only after DELAY seconds. Expected lines: the
 *    reader's threads on "conduit 0: a read of tag 7 from rank 0", the main thread on
 *    "utc_task_init/wait of task 'wd_reader'".
 * 2. task barrier: task 'wd_barrier' (2 threads per rank); global thread 0 sleeps DELAY
 *    seconds before utc_ctx_barrier, the others wait in it.
 * 3. global shared data: task 'wd_gdata'; global thread 0 sleeps before utc_gdata_barrier.
 * 4. a conduit read with a timeout returns UTC_ERR_TIMEOUT (checked here, exit 1 if not).
 * 5. a signal: task 'wd_signal' (a thread on rank 0, one on the last rank); the last
 *    rank's thread waits (utc_gdata_wait_until) until element 3 of its part is >= 5; rank
 *    0's thread stores 2 there at once and 5 after DELAY seconds. Expected line: the
 *    element, the comparison, the value and "last seen 2".
 * 6. a share-mode shared conduit: task 'wd_dispatch' (rank 0) writes 5 messages of tag 5
 *    after DELAY seconds to the two 'wd_worker' tasks (worker 0 on the last rank, worker
 *    1 on rank 0), which read one each, wait DELAY seconds, then read until the end of
 *    stream. Expected lines: a worker's "a read of tag 5 from rank 0: shared conduit ...
 *    (share mode, credit window 2): reader 0 waits for a message of tag 5 from its 1
 *    writer(s), on rank 0; ...", then the dispatcher's fifth write (the workers asked for
 *    4) on "... writer 0 waits for a reader to ask for a message of tag 5 (2 reader(s),
 *    on ranks ...)": real ranks, never -1. Every message is read once (checked here).
 * 7. a task collective: task 'wd_coll' (2 threads per rank, a window); after one
 *    utc_task_allreduce that all make at once, the last rank's thread 0 sleeps DELAY
 *    seconds before the second. Expected lines: on the other ranks "utc_task_allreduce #2:
 *    waiting for rank LAST (still at #1)"; on the last rank (its thread 1, or at one rank)
 *    "waiting for this rank's threads of the task (1 of 2 here)".
 * 8. the same with utc_task_alltoallv in task 'wd_coll0', created with no window (its
 *    board gets a window of its own at the first collective).
 * Prints "rob_watchdog: done" on rank 0 and exits 0 when every step behaved.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>
#include <utc/utc.h>

typedef struct {
    utc_task_t base;
    /* steps 7 and 8: the rank's buffers */
    int one, sum, send[16], recv[16];
    size_t counts[16];
} wd_task_t;

static double delay_s = 3.0;
static utc_conduit_t *conduit;
static int timeout_rc = UTC_OK;

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static int writer_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    sleep_s(delay_s);
    int v = 42;
    return utc_conduit_write(conduit, &v, sizeof v, 7);
}

static int reader_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)arg;
    static int v; /* every local thread passes the same buffer; thread 0 fills it */
    /* nothing is written on tag 8: a read with a timeout must give up */
    int rc = utc_conduit_read_timeout(conduit, &v, sizeof v, 8, NULL, 0.3);
    if (ctx->local_id == 0)
        timeout_rc = rc;
    rc = utc_conduit_read(conduit, &v, sizeof v, 7, NULL);
    if (rc == UTC_OK && v != 42)
        rc = UTC_ERR_INTERNAL;
    return rc;
}

static int barrier_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)arg;
    if (ctx->global_id == 0)
        sleep_s(delay_s);
    return utc_ctx_barrier(ctx);
}

static int gdata_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)arg;
    utc_gdata_t *gd;
    int rc = utc_gdata_create(ctx, sizeof(int64_t), 4, &gd);
    if (rc != UTC_OK)
        return rc;
    if (ctx->global_id == 0)
        sleep_s(delay_s);
    rc = utc_gdata_barrier(gd);
    int rc2 = utc_gdata_destroy(ctx, gd);
    return rc != UTC_OK ? rc : rc2;
}

static int signal_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)arg;
    utc_gdata_t *gd;
    int rc = utc_gdata_create(ctx, sizeof(int64_t), 8, &gd);
    if (rc != UTC_OK)
        return rc;
    int waiter = ctx->group_size - 1; /* the group rank of the last rank */
    if (ctx->global_id == 0) {
        rc = utc_gdata_rstore_signal(gd, waiter, 0, 0, NULL, 3, 2);
        sleep_s(delay_s);
        if (rc == UTC_OK)
            rc = utc_gdata_rstore_signal(gd, waiter, 0, 0, NULL, 3, 5);
    } else {
        int64_t seen = 0;
        rc = utc_gdata_wait_until(gd, 3, UTC_CMP_GE, 5, 60.0, &seen);
        if (rc == UTC_OK && seen != 5)
            rc = UTC_ERR_INTERNAL;
    }
    int rc2 = utc_gdata_barrier(gd);
    int rc3 = utc_gdata_destroy(ctx, gd);
    return rc != UTC_OK ? rc : rc2 != UTC_OK ? rc2 : rc3;
}

/* Step 6: the dispatcher and the workers of a share-mode shared conduit. */
static utc_conduit_t *jobs;
static atomic_int jobs_read; /* messages read by this rank's workers */

static int dispatch_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    sleep_s(delay_s);
    int rc = UTC_OK;
    for (int j = 0; j < 5 && rc == UTC_OK; j++)
        rc = utc_conduit_write(jobs, &j, sizeof j, 5);
    return rc == UTC_OK ? utc_conduit_close(jobs) : rc;
}

static int worker_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    int v, rc = utc_conduit_read(jobs, &v, sizeof v, 5, NULL);
    if (rc != UTC_OK)
        return rc;
    atomic_fetch_add(&jobs_read, 1);
    sleep_s(delay_s);
    while ((rc = utc_conduit_read(jobs, &v, sizeof v, 5, NULL)) == UTC_OK)
        atomic_fetch_add(&jobs_read, 1);
    return rc == UTC_ERR_CLOSED ? UTC_OK : rc;
}

static const utc_task_ops_t dispatch_ops = {.name = "wd_dispatch", .size = sizeof(wd_task_t),
                                            .run = dispatch_run};
static const utc_task_ops_t worker_ops = {.name = "wd_worker", .size = sizeof(wd_task_t),
                                          .run = worker_run};

/* Steps 7 and 8: the last rank's thread 0 comes DELAY seconds late to the second
 * collective (the task's name says which); the results are checked. */
static int coll_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    wd_task_t *t = (wd_task_t *)self;
    int n = ctx->group_size, me = ctx->group_rank;
    if (n > 16)
        return UTC_ERR_INTERNAL;
    if (ctx->local_id == 0) { /* the buffers are the rank's: one thread fills them */
        t->one = 1;
        for (int r = 0; r < n; r++)
            t->counts[r] = 1, t->send[r] = me * 100 + r;
    }
    int rc = utc_task_allreduce(ctx, &t->one, &t->sum, 1, UTC_TYPE_INT, UTC_OP_SUM);
    if (rc != UTC_OK || t->sum != n)
        return rc != UTC_OK ? rc : UTC_ERR_INTERNAL;
    if (me == n - 1 && ctx->local_id == 0)
        sleep_s(delay_s);
    if (strcmp(utc_task_name(self), "wd_coll0") != 0) {
        rc = utc_task_allreduce(ctx, &t->one, &t->sum, 1, UTC_TYPE_INT, UTC_OP_SUM);
        return rc == UTC_OK && t->sum != n ? UTC_ERR_INTERNAL : rc;
    }
    rc = utc_task_alltoallv(ctx, t->send, t->counts, NULL, t->recv, t->counts, NULL, UTC_TYPE_INT);
    for (int r = 0; rc == UTC_OK && r < n; r++)
        if (t->recv[r] != r * 100 + me)
            rc = UTC_ERR_INTERNAL;
    return rc;
}

static const utc_task_ops_t writer_ops = {.name = "wd_writer", .size = sizeof(wd_task_t),
                                          .run = writer_run};
static const utc_task_ops_t reader_ops = {.name = "wd_reader", .size = sizeof(wd_task_t),
                                          .run = reader_run};
static const utc_task_ops_t barrier_ops = {.name = "wd_barrier", .size = sizeof(wd_task_t),
                                           .run = barrier_run};
static const utc_task_ops_t gdata_ops = {.name = "wd_gdata", .size = sizeof(wd_task_t),
                                         .run = gdata_run};
static const utc_task_ops_t signal_ops = {.name = "wd_signal", .size = sizeof(wd_task_t),
                                          .run = signal_run};
static const utc_task_ops_t coll_ops = {
    .name = "wd_coll", .size = sizeof(wd_task_t), .run = coll_run};
static const utc_task_ops_t coll0_ops = {
    .name = "wd_coll0", .size = sizeof(wd_task_t), .run = coll_run};

static int failed(const char *what, int rc)
{
    fprintf(stderr, "rob_watchdog: rank %d: %s: %s (%s)\n", utc_rank(), what,
            utc_status_string(rc), utc_last_error());
    return 1;
}

static int run_task(const utc_task_ops_t *ops, const int *procs, int n,
                    const utc_task_options_t *opts)
{
    utc_task_t *t;
    int rc = utc_task_create(ops, procs, n, opts, &t);
    if (rc != UTC_OK)
        return failed("utc_task_create", rc);
    int bad = 0;
    if ((rc = utc_task_run(t, NULL)) != UTC_OK || (rc = utc_task_wait(t)) != UTC_OK)
        bad = failed(ops->name, rc);
    if ((rc = utc_task_destroy(t)) != UTC_OK)
        bad = failed("utc_task_destroy", rc);
    return bad;
}

/* 1. a conduit read that waits delay_s (and 4. one with a timeout) */
static int conduit_step(int nr)
{
    int bad = 0, rc;
    int wprocs[1] = {0}, rprocs[2] = {nr - 1, nr - 1};
    utc_task_t *w, *r;
    if ((rc = utc_task_create(&writer_ops, wprocs, 1, NULL, &w)) != UTC_OK ||
        (rc = utc_task_create(&reader_ops, rprocs, 2, NULL, &r)) != UTC_OK ||
        (rc = utc_conduit_create(w, r, NULL, &conduit)) != UTC_OK)
        return failed("setup", rc);
    if ((rc = utc_task_run(w, NULL)) != UTC_OK || (rc = utc_task_run(r, NULL)) != UTC_OK)
        return failed("utc_task_run", rc);
    if ((rc = utc_task_wait(r)) != UTC_OK)
        bad |= failed("reader", rc);
    if ((rc = utc_task_wait(w)) != UTC_OK)
        bad |= failed("writer", rc);
    if (utc_rank() == nr - 1 && timeout_rc != UTC_ERR_TIMEOUT) {
        fprintf(stderr, "rob_watchdog: read with a 0.3 s timeout returned %d (%s), not "
                "UTC_ERR_TIMEOUT\n", timeout_rc, utc_status_string(timeout_rc));
        bad = 1;
    }
    if ((rc = utc_conduit_destroy(conduit)) != UTC_OK || (rc = utc_task_destroy(r)) != UTC_OK ||
        (rc = utc_task_destroy(w)) != UTC_OK)
        bad |= failed("teardown", rc);

    return bad;
}

/* 6. a share-mode shared conduit: a worker's read, then the dispatcher's write */
static int shared_step(int nr)
{
    int bad = 0, rc;
    int zero = 0, wranks[2] = {nr - 1, 0};
    utc_task_t *d, *workers[2];
    if ((rc = utc_task_create(&dispatch_ops, &zero, 1, NULL, &d)) != UTC_OK ||
        (rc = utc_task_create(&worker_ops, &wranks[0], 1, NULL, &workers[0])) != UTC_OK ||
        (rc = utc_task_create(&worker_ops, &wranks[1], 1, NULL, &workers[1])) != UTC_OK ||
        (rc = utc_conduit_create_shared(&d, 1, workers, 2, UTC_SHARED_SHARE, NULL, &jobs)) !=
            UTC_OK)
        return failed("shared setup", rc);
    if ((rc = utc_task_run(d, NULL)) != UTC_OK || (rc = utc_task_run(workers[0], NULL)) ||
        (rc = utc_task_run(workers[1], NULL)))
        return failed("utc_task_run", rc);
    for (int i = 0; i < 3; i++)
        if ((rc = utc_task_wait(i == 0 ? d : workers[i - 1])) != UTC_OK)
            bad |= failed(i == 0 ? "dispatcher" : "worker", rc);
    int all_read = 0, mine = atomic_load(&jobs_read);
    MPI_Allreduce(&mine, &all_read, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (all_read != 5) {
        fprintf(stderr, "rob_watchdog: the workers read %d messages, not 5\n", all_read);
        bad = 1;
    }
    if ((rc = utc_conduit_destroy(jobs)) != UTC_OK || (rc = utc_task_destroy(workers[1])) ||
        (rc = utc_task_destroy(workers[0])) || (rc = utc_task_destroy(d)))
        bad |= failed("shared teardown", rc);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        delay_s = atof(argv[1]);
    bool coll_only = argc > 2 && strcmp(argv[2], "coll") == 0;
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "rob_watchdog: utc_init: %s\n", utc_last_error());
        return 1;
    }
    int nr = utc_nranks(), bad = 0, rc;

    int procs[2 * 16];
    int n = utc_procs_spread(procs, 2 * 16, 0, nr, 2);
    if (!coll_only) {
        bad |= conduit_step(nr);
        /* 2. a task barrier, 3. a global shared data barrier: 2 threads per rank */
        bad |= run_task(&barrier_ops, procs, n, NULL);
        bad |= run_task(&gdata_ops, procs, n, NULL);
        /* 5. a signal waited for delay_s */
        int sprocs[2] = {0, nr - 1};
        bad |= run_task(&signal_ops, sprocs, 2, NULL);
        /* 6. a share-mode shared conduit: a worker's read, then the dispatcher's write */
        bad |= shared_step(nr);
    }
    /* 7. a task collective, 8. a v-form in a task with no window */
    bad |= run_task(&coll_ops, procs, n, NULL);
    utc_task_options_t no_window = UTC_TASK_OPTIONS_INIT;
    no_window.window_size = 0;
    bad |= run_task(&coll0_ops, procs, n, &no_window);

    if (utc_rank() == 0 && !bad)
        printf("rob_watchdog: done\n");
    if ((rc = utc_finalize()) != UTC_OK)
        return failed("utc_finalize", rc), 1;
    return bad;
}
