/*
 * Lifetimes: a conduit destroyed under operations that are blocked or pending on it ends
 * each of them with UTC_ERR_CANCELED (no crash, no hang), on every rank; a request can be
 * canceled on its own; a task whose run fails releases the reader blocked on it with
 * UTC_ERR_PEER_FAILED, and the next run works; a destroy from a thread of one of the
 * conduit's tasks is refused.
 * Each case runs in-process and, with two or more ranks, between ranks.
 */
#include <time.h>
#include <unistd.h>

#include "conduit_test_util.h"

/* Set by a task thread once it is about to block; the main thread of the same rank waits
 * for it (other ranks just give it time). */
static atomic_int entered;
/* Set by the main thread once the conduit is destroyed. */
static atomic_int destroyed;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Run fa on the pair's source and fb on its destination, destroy the conduit while they
 * are blocked, then wait for both. */
static void destroy_under(ct_pair_t *p, ct_fn_t fa, ct_fn_t fb)
{
    static ct_job_t ja, jb;
    ja = (ct_job_t){fa, p->c};
    jb = (ct_job_t){fb, p->c};
    atomic_store(&entered, 0);
    atomic_store(&destroyed, 0);
    UTC_ASSERT_OK(utc_task_run(p->a, &ja));
    UTC_ASSERT_OK(utc_task_run(p->b, &jb));
    /* give the blocked side time to block (the check is the status, not the time) */
    for (int i = 0; i < 200 && !atomic_load(&entered); i++)
        usleep(1000);
    usleep(50000);
    UTC_ASSERT_OK(utc_conduit_destroy(p->c));
    atomic_store(&destroyed, 1);
    UTC_ASSERT_OK(utc_task_wait(p->a));
    UTC_ASSERT_OK(utc_task_wait(p->b));
    p->c = NULL;
}

/* One placement of a case: fns[0] on the source, fns[1] on the destination, the conduit
 * destroyed under them. */
static void destroy_under_at(int ra, int rb, void *arg)
{
    const ct_fn_t *fns = arg;
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, NULL);
    destroy_under(&p, fns[0], fns[1]);
    UTC_ASSERT_OK(utc_task_destroy(p.a));
    UTC_ASSERT_OK(utc_task_destroy(p.b));
}

static void destroy_case(ct_fn_t fa, ct_fn_t fb)
{
    ct_fn_t fns[2] = {fa, fb};
    ct_begin();
    ct_each_placement(false, destroy_under_at, fns);
    CT_END();
}

/* ---- a read blocked (with a timeout) when the conduit goes ---- */

static int blocked_read(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    char buf[64];
    size_t got = 0;
    double t0 = now();
    atomic_store(&entered, 1);
    CT_EXPECT(utc_conduit_read_timeout(d, buf, sizeof buf, 3, &got, 3.0), UTC_ERR_CANCELED);
    CT_CHECK(now() - t0 < 2.9, "the read waited for its timeout (%.2f s)", now() - t0);
    CT_CHECK(strstr(utc_last_error(), "destroyed") != NULL, "message: %s", utc_last_error());
    return 0;
}

static void test_destroy_blocked_read(void)
{
    destroy_case(ct_idle, blocked_read);
}

/* ---- a pending iread, waited for after the destroy ---- */

static int pending_iread(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    static char buf[64];
    utc_request_t *r = NULL;
    if (!CT_OK(utc_conduit_iread(d, buf, sizeof buf, 4, &r)))
        return -1;
    atomic_store(&entered, 1);
    while (!atomic_load(&destroyed))
        usleep(1000);
    size_t got = 0;
    CT_EXPECT(utc_request_wait(&r, &got), UTC_ERR_CANCELED);
    CT_CHECK(r == NULL, "the request was not freed");
    return 0;
}

static void test_destroy_pending_iread(void)
{
    destroy_case(ct_idle, pending_iread);
}

/* ---- a large write blocked on a reader that never comes ---- */

#define BIG (1 << 20)

static int blocked_write(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    static unsigned char big[BIG];
    atomic_store(&entered, 1);
    int rc = utc_conduit_write(d, big, sizeof big, 5);
    /* MPI may have taken the message whole before the destroy: then it is a success */
    CT_CHECK(rc == UTC_ERR_CANCELED || rc == UTC_OK, "write returned %d (%s): %s", rc,
             utc_status_string(rc), utc_last_error());
    return 0;
}

static void test_destroy_blocked_write(void)
{
    destroy_case(blocked_write, ct_idle);
}

/* ---- truncation, then a destroy while the writer is still in its write ---- */

static int trunc_then_write(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    static unsigned char msg[10000];
    atomic_store(&entered, 1);
    /* the reader's truncation does not leave the writer waiting: the message is kept aside
     * (in-process: copied out of this buffer; between ranks: received aside) */
    CT_OK(utc_conduit_write(d, msg, sizeof msg, 6));
    return 0;
}

static int trunc_reader(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    char small[100];
    size_t got = 0;
    CT_EXPECT(utc_conduit_read(d, small, sizeof small, 6, &got), UTC_ERR_TRUNCATE);
    CT_CHECK(got == 10000, "truncation reports %zu bytes", got);
    return 0;
}

static void test_destroy_after_truncation(void)
{
    destroy_case(trunc_then_write, trunc_reader);
}

/* ---- utc_request_cancel ---- */

static int cancel_w(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    /* wait until the reader has canceled its first read (it says so on the way back),
     * then send one message */
    int go = 0;
    if (!CT_OK(utc_conduit_read(d, &go, sizeof go, 8, NULL)))
        return -1;
    int v = 42;
    CT_OK(utc_conduit_write(d, &v, sizeof v, 7));
    return 0;
}

static int cancel_r(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    static int a = -1;
    int b = -1;
    utc_request_t *r = NULL;
    if (!CT_OK(utc_conduit_iread(d, &a, sizeof a, 7, &r)))
        return -1;
    CT_OK(utc_request_cancel(&r));
    CT_CHECK(r != NULL, "cancel freed the request");
    CT_EXPECT(utc_request_wait(&r, NULL), UTC_ERR_CANCELED);
    CT_CHECK(strstr(utc_last_error(), "canceled") != NULL, "message: %s", utc_last_error());
    /* the message written after goes to the next read */
    int go = 1;
    CT_OK(utc_conduit_write(d, &go, sizeof go, 8));
    size_t got = 0;
    CT_OK(utc_conduit_read(d, &b, sizeof b, 7, &got));
    CT_CHECK(b == 42 && got == sizeof b && a == -1, "after a cancel: a=%d b=%d", a, b);
    CT_EXPECT(utc_request_cancel(NULL), UTC_ERR_INVALID_ARG);
    return 0;
}

static void cancel_at(int ra, int rb, void *arg)
{
    (void)arg;
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, NULL);
    ct_pair_run(&p, cancel_w, cancel_r);
    ct_pair_close(&p);
}

static void test_request_cancel(void)
{
    ct_begin();
    ct_each_placement(false, cancel_at, NULL);
    CT_END();
}

/* ---- a failed writer releases its reader ---- */

static int failing_writer(utc_ctx_t *ctx, void *d)
{
    (void)ctx, (void)d;
    return UTC_ERR_IO; /* fails before it writes */
}

static int released_reader(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    int v = 0;
    CT_EXPECT(utc_conduit_read(d, &v, sizeof v, 9, NULL), UTC_ERR_PEER_FAILED);
    CT_CHECK(strstr(utc_last_error(), "task-a") && strstr(utc_last_error(), "failed on rank") &&
                 strstr(utc_last_error(), "input/output"),
             "message: %s", utc_last_error());
    return 0;
}

static int good_writer(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    int v = 5;
    CT_OK(utc_conduit_write(d, &v, sizeof v, 9));
    return 0;
}

static int good_reader(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    int v = 0;
    CT_OK(utc_conduit_read(d, &v, sizeof v, 9, NULL));
    CT_CHECK(v == 5, "after the failure, the next run read %d", v);
    return 0;
}

static void peer_failed_at(int ra, int rb, void *arg)
{
    (void)arg;
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, NULL);
    ct_pair_run_failing(&p, failing_writer, UTC_ERR_IO, released_reader);
    /* a new run of the tasks: the conduit works again */
    ct_pair_run(&p, good_writer, good_reader);
    ct_pair_close(&p);
}

static void test_peer_failed(void)
{
    ct_begin();
    ct_each_placement(false, peer_failed_at, NULL);
    CT_END();
}

/* ---- a task destroyed while its run is blocked on a conduit ---- */

static int blocked_until_destroyed(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    int v = 0;
    atomic_store(&entered, 1);
    CT_EXPECT(utc_conduit_read(d, &v, sizeof v, 11, NULL), UTC_ERR_CANCELED);
    CT_CHECK(strstr(utc_last_error(), "task-b") && strstr(utc_last_error(), "is destroyed"),
             "message: %s", utc_last_error());
    return 0;
}

static void task_destroyed_at(int ra, int rb, void *arg)
{
    (void)arg;
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, NULL);
    static ct_job_t jb;
    jb = (ct_job_t){blocked_until_destroyed, p.c};
    atomic_store(&entered, 0);
    UTC_ASSERT_OK(utc_task_run(p.b, &jb));
    for (int i = 0; i < 200 && !atomic_load(&entered); i++)
        usleep(1000);
    usleep(50000);
    /* the destroy ends the blocked read, waits for the run, and returns */
    UTC_ASSERT_OK(utc_task_destroy(p.b));
    UTC_ASSERT_OK(utc_conduit_destroy(p.c));
    UTC_ASSERT_OK(utc_task_destroy(p.a));
}

static void test_task_destroyed(void)
{
    ct_begin();
    ct_each_placement(false, task_destroyed_at, NULL);
    CT_END();
}

/* ---- an all-threads call that a sibling cannot join ---- */

static atomic_int sibling_left;

static int master_only_write(utc_ctx_t *ctx, void *d)
{
    if (ctx->local_id != 0) { /* "the master thread communicates": this one just returns */
        atomic_store(&sibling_left, 1);
        return 0;
    }
    while (!atomic_load(&sibling_left))
        usleep(1000);
    usleep(20000); /* let it get back to the task's mailbox */
    int v = 1;
    CT_EXPECT(utc_conduit_write(d, &v, sizeof v, 10), UTC_ERR_DEADLOCK);
    CT_CHECK(strstr(utc_last_error(), "thread 1 of task 'task-a'") &&
                 strstr(utc_last_error(), "utc_conduit_write_by"),
             "message: %s", utc_last_error());
    return 0;
}

static int no_message(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    int v;
    CT_EXPECT(utc_conduit_read_timeout(d, &v, sizeof v, 10, NULL, 0.3), UTC_ERR_TIMEOUT);
    return 0;
}

static void sibling_at(int ra, int rb, void *arg)
{
    (void)arg;
    atomic_store(&sibling_left, 0);
    ct_pair_t p = ct_pair_open(ra, 2, rb, 1, NULL);
    ct_pair_run(&p, master_only_write, no_message);
    ct_pair_close(&p);
}

static void test_sibling_gone(void)
{
    ct_begin();
    ct_each_placement(false, sibling_at, NULL);
    CT_END();
}

/* ---- destroy from a thread of one of its tasks ---- */

static int self_destroy(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    CT_EXPECT(utc_conduit_destroy(d), UTC_ERR_DEADLOCK);
    CT_CHECK(strstr(utc_last_error(), "main thread") != NULL, "message: %s", utc_last_error());
    return 0;
}

static void test_destroy_from_own_task(void)
{
    ct_begin();
    ct_pair_t p = ct_pair_open(0, 1, 0, 1, NULL);
    ct_pair_run(&p, self_destroy, ct_idle);
    ct_pair_close(&p);
    CT_END();
}

int main(int argc, char **argv)
{
    return utc_test_main(argc, argv, "conduit lifetime",
                         (utc_test_case_t[]){
                             {"destroy ends a blocked read", test_destroy_blocked_read},
                             {"destroy ends a pending iread", test_destroy_pending_iread},
                             {"destroy ends a blocked large write", test_destroy_blocked_write},
                             {"destroy after a truncation", test_destroy_after_truncation},
                             {"utc_request_cancel", test_request_cancel},
                             {"a failed writer releases its reader", test_peer_failed},
                             {"an all-threads call a sibling cannot join", test_sibling_gone},
                             {"a task destroyed under a blocked read", test_task_destroyed},
                             {"destroy from an end's thread", test_destroy_from_own_task},
                             {NULL, NULL}});
}
