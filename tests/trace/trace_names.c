/*
 * Task names of every kind through the trace, the statistics and the log (tests/trace,
 * checked by check_names.py, which holds the same list of names):
 *
 * - one task per name, one thread, on rank i % nranks; its run returns 7, so the runtime
 *   logs the name (UTC_LOG=info) and utc_task_wait's last-error message quotes it, which
 *   main logs;
 * - the task named with a newline has a second thread on the same rank that waits at the
 *   task barrier while the first sleeps WAIT_MS, so the watchdog (UTC_WATCHDOG, short)
 *   reports a wait naming it.
 *
 * Exit 0 when everything went as planned, 1 otherwise, 3 when utc_finalize failed.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <utc/utc.h>

enum { RUN_RC = 7, WAIT_MS = 400, EVIL = 6 };

/* Keep in step with NAMES in check_names.py. */
static const char *const names[] = {
    "plain",
    "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", /* valid 2, 3 and 4-byte characters */
    /* 47 bytes are kept: each cut falls inside the last character */
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9",
    "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\xe2\x82\xac",
    "cccccccccccccccccccccccccccccccccccccccccccc\xf0\x9f\x98\x80",
    /* not UTF-8: a lone byte, an overlong '/', a surrogate, a cut-short character */
    "bad\xff|\xc0\xaf|\xed\xa0\x80|\xe2\x82(",
    "evil\nutc[0] error: forged line", /* [EVIL] */
    "esc\x1b[31mred\x1b[0m\ttab\rcr\x7f"
    "del\xc2\x85nel",
    "quote\"back\\slash",
    /* 21 two-byte characters: the statistics' column shows 20 of them */
    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
    "",
    NULL,
};
#define NNAMES ((int)(sizeof names / sizeof names[0]))

static int named_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self;
    (void)arg;
    if (ctx->local_count > 1) { /* the watched task: one thread makes the other wait */
        if (ctx->local_id == 0)
            nanosleep(&(struct timespec){0, WAIT_MS * 1000000L}, NULL);
        utc_status_t rc = utc_ctx_barrier(ctx);
        if (rc != UTC_OK)
            return rc;
    }
    return RUN_RC;
}

int main(int argc, char **argv)
{
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "utc_init: %s\n", utc_last_error());
        return 1;
    }
    utc_task_ops_t ops[NNAMES];
    utc_task_t *tasks[NNAMES] = {0};
    int bad = 0, n = utc_nranks();
    for (int i = 0; i < NNAMES; i++) {
        ops[i] = (utc_task_ops_t){.name = names[i], .size = sizeof(utc_task_t), .run = named_run};
        int procs[2] = {i % n, i % n};
        utc_status_t rc = utc_task_create(&ops[i], procs, i == EVIL ? 2 : 1, NULL, &tasks[i]);
        if (rc != UTC_OK) {
            utc_log(UTC_LOG_ERROR, "creating task %d: %s", i, utc_last_error());
            bad = 1;
            break;
        }
    }
    for (int i = 0; i < NNAMES && tasks[i]; i++)
        if (utc_task_run(tasks[i], NULL) != UTC_OK)
            bad = 1;
    for (int i = 0; i < NNAMES && tasks[i]; i++) {
        utc_status_t rc = utc_task_wait(tasks[i]);
        if (utc_task_is_local(tasks[i]) == 1) {
            if (rc != UTC_ERR_TASK_FAILED) {
                utc_log(UTC_LOG_ERROR, "task %d: wait returned %d, not UTC_ERR_TASK_FAILED", i,
                        (int)rc);
                bad = 1;
            } else { /* the message names the task: logged, it must stay one line */
                utc_log(UTC_LOG_INFO, "expected failure of task %d: %s", i, utc_last_error());
            }
        }
    }
    for (int i = NNAMES - 1; i >= 0; i--)
        if (tasks[i])
            utc_task_destroy(tasks[i]);
    if (utc_finalize() != UTC_OK) {
        fprintf(stdout, "utc_finalize: %s\n", utc_last_error());
        return 3;
    }
    return bad;
}
