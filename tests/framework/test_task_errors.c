/* Task API misuse: each error has its status and a message, and nothing crashes or hangs. */
#include <string.h>

#include "utc_test.h"

typedef struct {
    utc_task_t base;
    int fail_on_rank;
} err_task_t;

static int ok_init(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    return 0;
}

static int failing_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    err_task_t *t = (err_task_t *)self;
    if (ctx->world_rank == t->fail_on_rank && ctx->local_id == 1)
        return UTC_ERR_IO;
    if (ctx->world_rank == t->fail_on_rank && ctx->local_id == 0)
        return 42; /* a user code: becomes UTC_ERR_TASK_FAILED */
    return 0;
}

static const utc_task_ops_t ok_ops = {
    .name = "ok", .size = sizeof(err_task_t), .init = ok_init, .run = failing_run};
static const utc_task_ops_t no_run_ops = {.name = "norun", .size = sizeof(err_task_t)};
static const utc_task_ops_t small_ops = {.name = "small", .size = 1, .run = failing_run};

static void expect_error(int rc, int want, const char *needle)
{
    CU_ASSERT_EQUAL(rc, want);
    if (needle) {
        if (!strstr(utc_last_error(), needle))
            fprintf(stderr, "last error '%s' lacks '%s'\n", utc_last_error(), needle);
        CU_ASSERT_PTR_NOT_NULL(strstr(utc_last_error(), needle));
    }
}

static void test_proc_list_rank_out_of_range(void)
{
    utc_task_t *task = (utc_task_t *)0x1;
    int procs[3] = {0, utc_nranks(), 0};
    expect_error(utc_task_create(&ok_ops, procs, 3, NULL, &task), UTC_ERR_OUT_OF_RANGE,
                 "names rank");
    CU_ASSERT_PTR_EQUAL(task, (utc_task_t *)0x1); /* output untouched on failure */
    int neg[1] = {-1};
    expect_error(utc_task_create(&ok_ops, neg, 1, NULL, &task), UTC_ERR_OUT_OF_RANGE, "-1");
}

static void test_empty_proc_list(void)
{
    utc_task_t *task;
    int procs[1] = {0};
    expect_error(utc_task_create(&ok_ops, procs, 0, NULL, &task), UTC_ERR_INVALID_ARG, "empty");
    expect_error(utc_task_create(&ok_ops, NULL, 2, NULL, &task), UTC_ERR_INVALID_ARG, "empty");
    expect_error(utc_task_create(&ok_ops, procs, UTC_TASK_MAX_THREADS + 1, NULL, &task),
                 UTC_ERR_INVALID_ARG, "UTC_TASK_MAX_THREADS");
}

static void test_bad_ops(void)
{
    utc_task_t *task;
    int procs[1] = {0};
    expect_error(utc_task_create(NULL, procs, 1, NULL, &task), UTC_ERR_INVALID_ARG, "ops is NULL");
    expect_error(utc_task_create(&no_run_ops, procs, 1, NULL, &task), UTC_ERR_INVALID_ARG,
                 "no run function");
    expect_error(utc_task_create(&small_ops, procs, 1, NULL, &task), UTC_ERR_INVALID_ARG,
                 "smaller than utc_task_t");
    expect_error(utc_task_create(&ok_ops, procs, 1, NULL, NULL), UTC_ERR_INVALID_ARG, "out is NULL");
}

static void test_bad_options(void)
{
    utc_task_t *task;
    int procs[1] = {0};
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.bind = UTC_BIND_EXPLICIT;
    expect_error(utc_task_create(&ok_ops, procs, 1, &o, &task), UTC_ERR_INVALID_ARG, "cpu_list");
    int cpus[1] = {100000};
    o.cpu_list = cpus;
    o.cpu_list_len = 1;
    expect_error(utc_task_create(&ok_ops, procs, 1, &o, &task), UTC_ERR_INVALID_ARG,
                 "not a CPU of this machine");
    o = (utc_task_options_t)UTC_TASK_OPTIONS_INIT;
    o.bind = (utc_bind_mode_t)77;
    expect_error(utc_task_create(&ok_ops, procs, 1, &o, &task), UTC_ERR_INVALID_ARG,
                 "binding mode");
    o = (utc_task_options_t)UTC_TASK_OPTIONS_INIT;
    o.kind = (utc_task_kind_t)9;
    expect_error(utc_task_create(&ok_ops, procs, 1, &o, &task), UTC_ERR_INVALID_ARG, "task kind");
}

static void test_run_before_init(void)
{
    utc_task_t *task;
    int procs[2] = {0, utc_nranks() - 1};
    UTC_ASSERT_OK(utc_task_create(&ok_ops, procs, 2, NULL, &task));
    if (utc_task_is_local(task))
        expect_error(utc_task_run(task, NULL), UTC_ERR_STATE, "utc_task_init first");
    if (utc_task_is_local(task))
        expect_error(utc_task_run_wait(task, NULL), UTC_ERR_STATE,
                     "utc_task_run_wait: task 'ok' has an init function");
    UTC_ASSERT_OK(utc_task_init(task, NULL));
    if (utc_task_is_local(task))
        expect_error(utc_task_init(task, NULL), UTC_ERR_STATE, "already initialized");
    UTC_ASSERT_OK(utc_task_destroy(task));
}

/* A run that waits for, inits or destroys its own task: refused at once, never a hang. */
static int self_calls_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    int *rcs = arg; /* one thread: four statuses and whether the message says why */
    rcs[0] = utc_task_wait(self);
    rcs[1] = utc_task_init(self, NULL);
    rcs[2] = utc_task_destroy(self);
    rcs[3] = strstr(utc_last_error(), "main thread") != NULL;
    rcs[4] = utc_task_run_wait(self, NULL);
    return 0;
}

static const utc_task_ops_t self_ops = {
    .name = "selfish", .size = sizeof(err_task_t), .run = self_calls_run};

static void test_calls_on_own_task(void)
{
    utc_task_t *task;
    int procs[1] = {0};
    int rcs[5] = {0, 0, 0, 0, 0};
    UTC_ASSERT_OK(utc_task_create(&self_ops, procs, 1, NULL, &task));
    UTC_ASSERT_OK(utc_task_run(task, rcs));
    UTC_ASSERT_OK(utc_task_wait(task));
    if (utc_task_is_local(task)) {
        CU_ASSERT_EQUAL(rcs[0], UTC_ERR_DEADLOCK);
        CU_ASSERT_EQUAL(rcs[1], UTC_ERR_DEADLOCK);
        CU_ASSERT_EQUAL(rcs[2], UTC_ERR_DEADLOCK);
        CU_ASSERT_EQUAL(rcs[3], 1);
        CU_ASSERT_EQUAL(rcs[4], UTC_ERR_DEADLOCK);
    }
    UTC_ASSERT_OK(utc_task_destroy(task));
}

static void test_destroy_twice(void)
{
    utc_task_t *task;
    int procs[1] = {0};
    UTC_ASSERT_OK(utc_task_create(&ok_ops, procs, 1, NULL, &task));
    UTC_ASSERT_OK(utc_task_destroy(task));
    expect_error(utc_task_destroy(task), UTC_ERR_INVALID_HANDLE, "not a live task");
    expect_error(utc_task_run(task, NULL), UTC_ERR_INVALID_HANDLE, "not a live task");
    expect_error(utc_task_wait(task), UTC_ERR_INVALID_HANDLE, "not a live task");
    expect_error(utc_task_run_wait(task, NULL), UTC_ERR_INVALID_HANDLE, "not a live task");
    expect_error(utc_task_run_wait(NULL, NULL), UTC_ERR_INVALID_ARG, "NULL");
    CU_ASSERT(utc_task_id(task) < 0);
    expect_error(utc_task_destroy(NULL), UTC_ERR_INVALID_ARG, "NULL");
}

static void test_run_returning_error(void)
{
    utc_task_t *task;
    int nr = utc_nranks(), procs[9];
    int n = utc_procs_spread(procs, 9, 0, nr, 3);
    UTC_ASSERT_OK(utc_task_create(&ok_ops, procs, n, NULL, &task));
    ((err_task_t *)task)->fail_on_rank = nr - 1;
    UTC_ASSERT_OK(utc_task_init(task, NULL));
    UTC_ASSERT_OK(utc_task_run(task, NULL));
    int rc = utc_task_wait(task);
    if (utc_rank() == nr - 1) {
        /* the first error of the two failing threads, whichever came first */
        CU_ASSERT(rc == UTC_ERR_IO || rc == UTC_ERR_TASK_FAILED);
        CU_ASSERT_PTR_NOT_NULL(strstr(utc_last_error(), "'ok'"));
    } else {
        CU_ASSERT_EQUAL(rc, UTC_OK);
    }
    /* the error was reported once: the task keeps working */
    ((err_task_t *)task)->fail_on_rank = -1;
    UTC_ASSERT_OK(utc_task_run(task, NULL));
    UTC_ASSERT_OK(utc_task_wait(task));
    UTC_ASSERT_OK(utc_task_destroy(task));
}

/* A run whose UTC call failed returns its status: utc_task_wait's message carries the
 * thread's own message. A run that fails with no message of its own carries none, not
 * one left on that thread by an earlier run. */
static int relaying_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx;
    if (arg == NULL)
        return UTC_ERR_IO; /* no UTC call failed: no message */
    if (!strcmp(arg, "handled")) { /* a UTC call fails, the run handles it, fails otherwise */
        (void)utc_task_destroy(NULL);
        return 7;
    }
    return utc_task_destroy(NULL); /* fails with its own message */
}

static const utc_task_ops_t relay_ops = {
    .name = "relay", .size = sizeof(utc_task_t), .run = relaying_run};

static void test_run_error_message_reaches_wait(void)
{
    utc_task_t *task;
    int procs[1] = {0};
    UTC_ASSERT_OK(utc_task_create(&relay_ops, procs, 1, NULL, &task));
    UTC_ASSERT_OK(utc_task_run(task, "relay"));
    int rc = utc_task_wait(task);
    if (utc_rank() == 0) {
        expect_error(rc, UTC_ERR_INVALID_ARG, "a run of task 'relay' returned");
        expect_error(rc, UTC_ERR_INVALID_ARG, "on thread 0: utc_task_destroy: ");
    }
    UTC_ASSERT_OK(utc_task_run(task, NULL));
    rc = utc_task_wait(task);
    if (utc_rank() == 0) {
        expect_error(rc, UTC_ERR_IO, "on thread 0");
        CU_ASSERT_PTR_NULL(strstr(utc_last_error(), "utc_task_destroy"));
    }
    /* the same through utc_task_run_wait (its share may run on the caller) */
    rc = utc_task_run_wait(task, "relay");
    if (utc_rank() == 0) {
        expect_error(rc, UTC_ERR_INVALID_ARG, "utc_task_run_wait: a run of task 'relay' returned");
        expect_error(rc, UTC_ERR_INVALID_ARG, "on thread 0: utc_task_destroy: ");
    }
    rc = utc_task_run_wait(task, NULL);
    if (utc_rank() == 0) {
        expect_error(rc, UTC_ERR_IO, "on thread 0");
        CU_ASSERT_PTR_NULL(strstr(utc_last_error(), "utc_task_destroy"));
    }
    /* a handled error is not the failure's message: the run returned another value */
    rc = utc_task_run_wait(task, "handled");
    if (utc_rank() == 0) {
        expect_error(rc, UTC_ERR_TASK_FAILED, "returned 7 on thread 0");
        CU_ASSERT_PTR_NULL(strstr(utc_last_error(), "utc_task_destroy"));
    }
    UTC_ASSERT_OK(utc_task_destroy(task));
}

static void test_ctx_misuse(void)
{
    CU_ASSERT_PTR_NULL(utc_ctx_self());
    expect_error(utc_ctx_barrier(NULL), UTC_ERR_INVALID_ARG, "NULL");
    utc_ctx_t fake = {0};
    expect_error(utc_ctx_barrier_local(&fake), UTC_ERR_NOT_MEMBER, "not the calling thread");
    CU_ASSERT_EQUAL(utc_procs_spread(NULL, 4, 0, 1, 1), UTC_ERR_INVALID_ARG);
    int p[2];
    CU_ASSERT_EQUAL(utc_procs_spread(p, 2, 0, 3, 1), UTC_ERR_INVALID_ARG);
}

static void test_status_strings(void)
{
    CU_ASSERT_STRING_EQUAL(utc_status_string(UTC_OK), "success");
    CU_ASSERT_STRING_EQUAL(utc_status_string(UTC_ERR_TRUNCATE),
                           "message larger than the receive buffer");
    CU_ASSERT_STRING_EQUAL(utc_status_string(12345), "unknown status");
}

static const utc_test_case_t cases[] = {
    {"proc list naming a rank that does not exist", test_proc_list_rank_out_of_range},
    {"empty proc list", test_empty_proc_list},
    {"NULL ops, missing run, size too small", test_bad_ops},
    {"bad options", test_bad_options},
    {"run before init", test_run_before_init},
    {"destroy twice and use after destroy", test_destroy_twice},
    {"wait, init and destroy of its own task from a run", test_calls_on_own_task},
    {"a run that returns an error surfaces at wait", test_run_returning_error},
    {"a run's own error message reaches wait", test_run_error_message_reaches_wait},
    {"ctx misuse outside a task", test_ctx_misuse},
    {"status strings", test_status_strings},
    UTC_TEST_END};

int main(int argc, char **argv) { return utc_test_main(argc, argv, "task errors", cases); }
