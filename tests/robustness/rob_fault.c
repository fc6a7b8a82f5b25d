/*
 * rob_fault MODE [ARG]: faults the runtime must survive or report.
 *
 * kill FILE (3 ranks): rank 1 writes the time (CLOCK_REALTIME, seconds) into FILE and kills
 *   itself with SIGKILL while rank 0's reader task is blocked in a conduit read from rank 1
 *   and rank 2's task thread is blocked in a task barrier with rank 1. The job must end
 *   (mpirun aborts it) with a non-zero status within 10 s: check_kill.sh checks that.
 *   If the job is still alive after 30 s, rank 0 and 2 say so and exit 3.
 *
 * nodekill FILE (2 ranks, one host): as kill, on a node-local conduit (conduits/node/):
 *   rank 1 writes the time into FILE and kills itself while rank 0's reader is blocked in
 *   a read from it. Either the job ends (mpirun aborts it), or (mpirun --enable-recovery)
 *   the survivor's read returns: rank 0 then prints "rob_fault: nodekill: the read
 *   returned STATUS" and ends at once (_exit 0; utc_finalize would wait for the dead rank).
 *   check_node_kill.sh wants one or the other within 10 s.
 *
 * taskfail (1-3 ranks): task 'fault_writer' (last rank) fails its run (UTC_ERR_IO) before
 *   writing; task 'fault_reader' (rank 0) reads (with a 20 s timeout, never reached) and
 *   is released with UTC_ERR_PEER_FAILED naming the writer, its rank and its error. Each
 *   error surfaces at utc_task_wait on its own rank, the tasks keep working for the next
 *   run, and utc_finalize succeeds. Exit 0 when all that held.
 *
 * abort (2-3 ranks): a task thread on the last rank calls utc_abort(5, ...) while rank 0's
 *   reader is blocked in a conduit read from it: the job ends (every rank) with a non-zero
 *   status within 10 s and the message is printed once (check_abort.sh checks that). If
 *   the job is still alive after 30 s, rank 0 says so and exits 3.
 *
 * finalize (1-3 ranks): a writer (last rank) and a reader (rank 0) stream messages in
 *   endless loops; main calls utc_finalize in the middle of it, without waiting for them.
 *   Their blocked calls end with UTC_ERR_CANCELED (or, for a call made after the conduit
 *   was closed, UTC_ERR_INVALID_HANDLE), the runs return, utc_finalize succeeds on every
 *   rank. Exit 0 when all that held.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <stdatomic.h>
#include <stdbool.h>

#include <utc/utc.h>

typedef struct {
    utc_task_t base;
} fault_task_t;

static utc_conduit_t *conduit;
static int fail_writer = 1;
static int reader_value;

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* ---- kill ---- */

static int kill_writer_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    sleep_s(60); /* never writes: rank 1 dies first */
    return UTC_OK;
}

static int kill_reader_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    int v;
    return utc_conduit_read(conduit, &v, sizeof v, 1, NULL);
}

static int kill_barrier_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)arg;
    if (ctx->world_rank == 1)
        sleep_s(60); /* rank 1 never arrives */
    return utc_ctx_barrier(ctx);
}

static const utc_task_ops_t kill_writer_ops = {.name = "kill_writer",
                                               .size = sizeof(fault_task_t),
                                               .run = kill_writer_run};
static const utc_task_ops_t kill_reader_ops = {.name = "kill_reader",
                                               .size = sizeof(fault_task_t),
                                               .run = kill_reader_run};
static const utc_task_ops_t kill_barrier_ops = {.name = "kill_barrier",
                                                .size = sizeof(fault_task_t),
                                                .run = kill_barrier_run};

static int mode_kill(const char *file)
{
    if (utc_nranks() != 3) {
        fprintf(stderr, "rob_fault kill: needs 3 ranks\n");
        return 2;
    }
    int me = utc_rank(), wp[1] = {1}, rp[1] = {0}, bp[2] = {1, 2};
    utc_task_t *w, *r, *b;
    if (utc_task_create(&kill_writer_ops, wp, 1, NULL, &w) != UTC_OK ||
        utc_task_create(&kill_reader_ops, rp, 1, NULL, &r) != UTC_OK ||
        utc_task_create(&kill_barrier_ops, bp, 2, NULL, &b) != UTC_OK ||
        utc_conduit_create(w, r, NULL, &conduit) != UTC_OK) {
        fprintf(stderr, "rob_fault: setup: %s\n", utc_last_error());
        return 1;
    }
    utc_barrier();
    if (utc_task_run(w, NULL) != UTC_OK || utc_task_run(r, NULL) != UTC_OK ||
        utc_task_run(b, NULL) != UTC_OK)
        return 1;
    if (me == 1) {
        sleep_s(0.5); /* the others are asleep in their waits by now */
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        FILE *f = fopen(file, "w");
        if (f) {
            fprintf(f, "%ld.%09ld\n", (long)now.tv_sec, now.tv_nsec);
            fclose(f);
        }
        fprintf(stderr, "rob_fault: rank 1 raises SIGKILL\n");
        raise(SIGKILL);
    }
    /* ranks 0 and 2: the task waits never end on their own */
    sleep_s(30);
    fprintf(stderr, "rob_fault: rank %d still alive 30 s after rank 1 was killed: the job "
            "was not aborted\n", me);
    _exit(3);
}

/* ---- nodekill ---- */

static int nodekill_reader_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    int v;
    utc_status_t rc = utc_conduit_read(conduit, &v, sizeof v, 1, NULL);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    printf("rob_fault: nodekill: the read returned %s at %ld.%09ld: %s\n", utc_status_string(rc),
           (long)now.tv_sec, now.tv_nsec, utc_last_error());
    fflush(stdout);
    _exit(rc == UTC_ERR_PEER_FAILED ? 0 : 4);
}

static int mode_nodekill(const char *file)
{
    if (utc_nranks() != 2) {
        fprintf(stderr, "rob_fault nodekill: needs 2 ranks\n");
        return 2;
    }
    int me = utc_rank(), wp[1] = {1}, rp[1] = {0};
    utc_task_t *w, *r;
    if (utc_task_create(&kill_writer_ops, wp, 1, NULL, &w) != UTC_OK ||
        utc_task_create(&kill_reader_ops, rp, 1, NULL, &r) != UTC_OK ||
        utc_conduit_create(w, r, NULL, &conduit) != UTC_OK) {
        fprintf(stderr, "rob_fault: setup: %s\n", utc_last_error());
        return 1;
    }
    if (utc_conduit_transport(conduit) != UTC_CONDUIT_NODE) {
        fprintf(stderr, "rob_fault nodekill: the conduit is not node-local here (other "
                "hosts, or UTC_TRANSPORT=mpi)\n");
        return 77;
    }
    static const utc_task_ops_t reader_ops = {.name = "nodekill_reader",
                                              .size = sizeof(fault_task_t),
                                              .run = nodekill_reader_run};
    utc_task_t *r2;
    if (utc_task_destroy(r) != UTC_OK || utc_conduit_destroy(conduit) != UTC_OK ||
        utc_task_create(&reader_ops, rp, 1, NULL, &r2) != UTC_OK ||
        utc_conduit_create(w, r2, NULL, &conduit) != UTC_OK) {
        fprintf(stderr, "rob_fault: setup: %s\n", utc_last_error());
        return 1;
    }
    utc_barrier();
    if (utc_task_run(w, NULL) != UTC_OK || utc_task_run(r2, NULL) != UTC_OK)
        return 1;
    if (me == 1) {
        sleep_s(0.5); /* the reader is asleep in its wait by now */
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        FILE *f = fopen(file, "w");
        if (f) {
            fprintf(f, "%ld.%09ld\n", (long)now.tv_sec, now.tv_nsec);
            fclose(f);
        }
        fprintf(stderr, "rob_fault: rank 1 raises SIGKILL\n");
        raise(SIGKILL);
    }
    sleep_s(30);
    fprintf(stderr, "rob_fault: rank %d still alive 30 s after rank 1 was killed: the job "
            "was not aborted and the read did not return\n", me);
    _exit(3);
}

/* ---- taskfail ---- */

static int tf_writer_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    if (fail_writer)
        return UTC_ERR_IO; /* e.g. its input file could not be read */
    int v = 7;
    return utc_conduit_write(conduit, &v, sizeof v, 1);
}

static int tf_reader_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    return utc_conduit_read_timeout(conduit, &reader_value, sizeof reader_value, 1, NULL, 20.0);
}

static const utc_task_ops_t tf_writer_ops = {.name = "fault_writer",
                                             .size = sizeof(fault_task_t),
                                             .run = tf_writer_run};
static const utc_task_ops_t tf_reader_ops = {.name = "fault_reader",
                                             .size = sizeof(fault_task_t),
                                             .run = tf_reader_run};

static int check(int cond, const char *what)
{
    if (!cond)
        fprintf(stderr, "rob_fault taskfail: rank %d: FAILED: %s (last error: %s)\n", utc_rank(),
                what, utc_last_error());
    return !cond;
}

static int mode_taskfail(void)
{
    int nr = utc_nranks(), me = utc_rank(), bad = 0, rc;
    int wp[2] = {nr - 1, nr - 1}, rp[1] = {0};
    utc_task_t *w, *r;
    if (utc_task_create(&tf_writer_ops, wp, 2, NULL, &w) != UTC_OK ||
        utc_task_create(&tf_reader_ops, rp, 1, NULL, &r) != UTC_OK ||
        utc_conduit_create(w, r, NULL, &conduit) != UTC_OK) {
        fprintf(stderr, "rob_fault: setup: %s\n", utc_last_error());
        return 1;
    }
    /* 1. the writer fails: its error at wait on its rank; the reader is released with
     * UTC_ERR_PEER_FAILED (well before its 20 s timeout) */
    double t0 = utc_wtime();
    bad |= check(utc_task_run(w, NULL) == UTC_OK && utc_task_run(r, NULL) == UTC_OK, "run");
    rc = utc_task_wait(r);
    if (me == 0)
        bad |= check(rc == UTC_ERR_PEER_FAILED && strstr(utc_last_error(), "fault_reader") &&
                         utc_wtime() - t0 < 10,
                     "the reader's wait returns UTC_ERR_PEER_FAILED naming the task, at once");
    if (me == 0 && rc == UTC_ERR_PEER_FAILED)
        printf("rob_fault taskfail: the reader's wait: %s\n", utc_last_error());
    else
        bad |= check(rc == UTC_OK, "a rank without reader threads: wait returns UTC_OK");
    rc = utc_task_wait(w);
    if (me == nr - 1)
        bad |= check(rc == UTC_ERR_IO && strstr(utc_last_error(), "fault_writer"),
                     "the writer's wait returns its UTC_ERR_IO naming the task");
    else
        bad |= check(rc == UTC_OK, "a rank without writer threads: wait returns UTC_OK");
    /* the error was reported once: a second wait is clean */
    bad |= check(utc_task_wait(w) == UTC_OK, "a second wait after the error");

    /* 2. the same tasks work again */
    fail_writer = 0;
    utc_barrier();
    bad |= check(utc_task_run(w, NULL) == UTC_OK && utc_task_run(r, NULL) == UTC_OK, "rerun");
    bad |= check(utc_task_wait(r) == UTC_OK && utc_task_wait(w) == UTC_OK, "rerun waits");
    if (me == 0)
        bad |= check(reader_value == 7, "the rerun's message arrived");

    /* 3. clean shut-down: conduit and tasks destroyed, finalize (in main) succeeds */
    bad |= check(utc_conduit_destroy(conduit) == UTC_OK, "utc_conduit_destroy");
    bad |= check(utc_task_destroy(r) == UTC_OK && utc_task_destroy(w) == UTC_OK,
                 "utc_task_destroy");
    return bad;
}

/* ---- abort ---- */

static int abort_writer_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    sleep_s(0.2);
    utc_abort(5, "rob_fault: the input of task %s is missing", "abort_writer");
}

static int abort_reader_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    int v;
    return utc_conduit_read_timeout(conduit, &v, sizeof v, 1, NULL, 30.0);
}

static const utc_task_ops_t abort_writer_ops = {
    .name = "abort_writer", .size = sizeof(fault_task_t), .run = abort_writer_run};
static const utc_task_ops_t abort_reader_ops = {
    .name = "abort_reader", .size = sizeof(fault_task_t), .run = abort_reader_run};

static int mode_abort(void)
{
    int last = utc_nranks() - 1, zero = 0;
    utc_task_t *w, *r;
    if (utc_task_create(&abort_writer_ops, &last, 1, NULL, &w) != UTC_OK ||
        utc_task_create(&abort_reader_ops, &zero, 1, NULL, &r) != UTC_OK ||
        utc_conduit_create(w, r, NULL, &conduit) != UTC_OK || utc_task_run(w, NULL) != UTC_OK ||
        utc_task_run(r, NULL) != UTC_OK) {
        fprintf(stderr, "rob_fault abort: set-up failed: %s\n", utc_last_error());
        return 1;
    }
    sleep_s(30); /* the abort ends every rank long before */
    fprintf(stderr, "rob_fault abort: rank %d still alive 30 s after the abort\n", utc_rank());
    return 3;
}

/* ---- finalize with live runs ---- */

static atomic_int stream_end[2] = {1, 1}; /* the status each loop ended with */
static atomic_int streamed;

static int stream_writer_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    int rc;
    for (int i = 0;; i++)
        if ((rc = utc_conduit_write(conduit, &i, sizeof i, 1)) != UTC_OK)
            break;
    atomic_store(&stream_end[0], rc);
    return UTC_OK;
}

static int stream_reader_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    int rc, v;
    while ((rc = utc_conduit_read(conduit, &v, sizeof v, 1, NULL)) == UTC_OK)
        atomic_fetch_add(&streamed, 1);
    atomic_store(&stream_end[1], rc);
    return UTC_OK;
}

static const utc_task_ops_t stream_writer_ops = {
    .name = "stream_writer", .size = sizeof(fault_task_t), .run = stream_writer_run};
static const utc_task_ops_t stream_reader_ops = {
    .name = "stream_reader", .size = sizeof(fault_task_t), .run = stream_reader_run};

static bool ended_ok(int rc)
{
    return rc == UTC_ERR_CANCELED || rc == UTC_ERR_INVALID_HANDLE;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Calls utc_finalize itself. */
static int mode_finalize(void)
{
    int last = utc_nranks() - 1, zero = 0, me = utc_rank();
    utc_task_t *w, *r;
    if (utc_task_create(&stream_writer_ops, &last, 1, NULL, &w) != UTC_OK ||
        utc_task_create(&stream_reader_ops, &zero, 1, NULL, &r) != UTC_OK ||
        utc_conduit_create(w, r, NULL, &conduit) != UTC_OK) {
        fprintf(stderr, "rob_fault finalize: set-up failed: %s\n", utc_last_error());
        return 1;
    }
    if (utc_task_run(w, NULL) != UTC_OK || utc_task_run(r, NULL) != UTC_OK) {
        fprintf(stderr, "rob_fault finalize: run failed: %s\n", utc_last_error());
        return 1;
    }
    sleep_s(0.3);
    double t0 = mono_s();
    if (utc_finalize() != UTC_OK) {
        fprintf(stderr, "rob_fault finalize: utc_finalize failed: %s\n", utc_last_error());
        return 1;
    }
    double took = mono_s() - t0;
    int bad = 0;
    if (me == last && !ended_ok(atomic_load(&stream_end[0])))
        bad = fprintf(stderr, "rob_fault finalize: the writer ended with %d\n",
                      atomic_load(&stream_end[0]));
    if (me == 0 && !ended_ok(atomic_load(&stream_end[1])))
        bad = fprintf(stderr, "rob_fault finalize: the reader ended with %d\n",
                      atomic_load(&stream_end[1]));
    if (me == 0 && atomic_load(&streamed) == 0)
        bad = fprintf(stderr, "rob_fault finalize: nothing was streamed before utc_finalize\n");
    if (took > 10)
        bad = fprintf(stderr, "rob_fault finalize: utc_finalize took %.1f s\n", took);
    if (!bad)
        printf("rob_fault: finalize: passed (rank %d: %d messages read, finalize %.3f s)\n", me,
               atomic_load(&streamed), took);
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 ||
        (strcmp(argv[1], "kill") && strcmp(argv[1], "nodekill") && strcmp(argv[1], "taskfail") &&
         strcmp(argv[1], "finalize") && strcmp(argv[1], "abort")) ||
        ((!strcmp(argv[1], "kill") || !strcmp(argv[1], "nodekill")) && argc < 3)) {
        fprintf(stderr, "usage: rob_fault kill FILE | nodekill FILE | taskfail | finalize | "
                "abort\n");
        return 2;
    }
    if (!strcmp(argv[1], "finalize")) {
        if (utc_init(&argc, &argv) != UTC_OK) {
            fprintf(stderr, "rob_fault: utc_init: %s\n", utc_last_error());
            return 1;
        }
        return mode_finalize();
    }
    if (!strcmp(argv[1], "abort")) {
        if (utc_init(&argc, &argv) != UTC_OK) {
            fprintf(stderr, "rob_fault: utc_init: %s\n", utc_last_error());
            return 1;
        }
        return mode_abort();
    }
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "rob_fault: utc_init: %s\n", utc_last_error());
        return 1;
    }
    if (!strcmp(argv[1], "nodekill")) {
        int rc = mode_nodekill(argv[2]);
        if (rc == 77)
            utc_finalize();
        return rc;
    }
    int rc = !strcmp(argv[1], "kill") ? mode_kill(argv[2]) : mode_taskfail();
    int frc = utc_finalize();
    if (frc != UTC_OK) {
        fprintf(stderr, "rob_fault: utc_finalize failed after the fault: %s\n", utc_last_error());
        return 1;
    }
    if (rc == 0)
        printf("rob_fault: %s: passed, clean shut-down\n", argv[1]);
    return rc;
}
