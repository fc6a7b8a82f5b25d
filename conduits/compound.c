/*
 * Calls built from the conduit API alone: the exchange (utc_conduit_sendrecv) and the
 * request sets (utc_request_waitall, waitany, testall, testany). They use only the public
 * calls of api.c, so every check and every lifetime rule of those applies here too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utc/conduit.h>

#include "utc_internal.h"
#include "conduit_internal.h" /* (only for sendrecv's refusal on a device conduit) */
#include "service/wait.h"

/* The first failure in a set: its status, its entry and its message. */
typedef struct set_error {
    utc_status_t rc;
    int at;
    char why[256];
} set_error_t;

static void wait_set(int count, utc_request_t **reqs, utc_status_t *statuses,
                     size_t *received, set_error_t *first);

/* ---- the exchange ---- */

static bool overlap(const void *a, size_t na, const void *b, size_t nb)
{
    const char *pa = a, *pb = b;
    return na > 0 && nb > 0 && pa < pb + nb && pb < pa + na;
}

utc_status_t utc_conduit_sendrecv(utc_conduit_t *conduit, int dest, const void *sbuf,
                                  size_t ssize, int stag, int source, void *rbuf,
                                  size_t rcapacity, int rtag, size_t *received)
{
    static const char fn[] = "utc_conduit_sendrecv";
    utc_conduit_t *c;
    utc_status_t grc = utc__conduit_get(conduit, fn, &c);
    if (grc != UTC_OK)
        return grc;
    if (c->opts.memory != UTC_CONDUIT_MEM_HOST)
        return utc__error(UTC_ERR_UNSUPPORTED, "%s: conduit %d is a device conduit, which does "
                          "not take sendrecv: start utc_conduit_iread_from, then "
                          "utc_conduit_iwrite_to, and wait for both", fn, c->id);
    if (overlap(sbuf, ssize, rbuf, rcapacity))
        return utc__error(UTC_ERR_INVALID_ARG, "%s: the send and receive buffers overlap "
                          "(the message read may land on the one being written)", fn);
    /* the read first: a message from `source` can land as soon as it comes, whatever the
     * write waits for, so two ranks exchanging at once never wait for each other */
    utc_request_t *rr = NULL, *wr = NULL;
    utc_status_t rc = utc_conduit_iread_from(conduit, source, rbuf, rcapacity, rtag, &rr);
    if (rc != UTC_OK)
        return rc;
    rc = utc_conduit_iwrite_to(conduit, dest, sbuf, ssize, stag, &wr);
    if (rc != UTC_OK) {
        char why[256];
        utc__text_copy(why, sizeof why, utc_last_error());
        (void)utc_request_cancel(&rr);
        (void)utc_request_wait(&rr, NULL); /* canceled, or its message had come */
        return utc__error(rc, "%s", why);
    }
    /* both progress while they wait: in-process, the read is what copies the other
     * side's large message and so releases its write, which is all the other side may be
     * waiting for */
    utc_request_t *both[2] = {wr, rr};
    utc_status_t st[2] = {UTC_OK, UTC_OK};
    size_t got[2] = {0, 0};
    set_error_t first = {UTC_OK, -1, ""};
    wait_set(2, both, st, got, &first);
    if (received)
        *received = got[1];
    if (first.rc == UTC_OK)
        return UTC_OK;
    /* the write's error first (a set reports its first entry's): the read's is then its
     * consequence, if any */
    return utc__error(first.rc, "%s: the %s: %s", fn, first.at == 0 ? "write" : "read",
                      first.why);
}

/* ---- request sets ---- */

/* Check a set: count >= 0, an array when count > 0, no handle twice (NULL entries are
 * skipped, as MPI_REQUEST_NULL). */
static utc_status_t check_set(int count, utc_request_t **reqs, const char *fn)
{
    utc_status_t rc = utc__check_init(fn);
    if (rc != UTC_OK)
        return rc;
    if (count < 0)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: count is %d (negative)", fn, count);
    if (count > 0 && !reqs)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: reqs is NULL with count %d", fn, count);
    for (int i = 0; i < count; i++)
        for (int j = i + 1; reqs[i] && j < count; j++)
            if (reqs[i] == reqs[j])
                return utc__error(UTC_ERR_INVALID_ARG,
                                  "%s: reqs[%d] and reqs[%d] are the same request (each "
                                  "request may be in a set once)", fn, i, j);
    return UTC_OK;
}

/* Test reqs[i] once; true when it completed (its status in *st, its handle now NULL). A
 * test that fails before completing (not a request, another thread on it) counts as
 * completed with that error, and its handle is set to NULL, so no set waits for ever. */
static bool test_one(utc_request_t **reqs, int i, utc_status_t *st, size_t *received)
{
    int done = 0;
    size_t got = 0;
    utc_status_t rc = utc_request_test(&reqs[i], &done, &got);
    if (rc == UTC_OK && !done)
        return false;
    if (!done) /* refused: reqs[i] was no live request of this thread's */
        reqs[i] = NULL;
    *st = rc;
    if (received)
        *received = got;
    return true;
}

/* One pass over a set: every pending request is tested once; those that complete are
 * recorded (statuses, received, the first failure). True while some are still pending;
 * *moved: some completed. */
static bool set_pass(int count, utc_request_t **reqs, utc_status_t *statuses,
                     size_t *received, set_error_t *first, bool *moved)
{
    bool pending = false;
    *moved = false;
    for (int i = 0; i < count; i++) {
        if (!reqs[i])
            continue;
        utc_status_t st;
        if (!test_one(reqs, i, &st, received ? &received[i] : NULL)) {
            pending = true;
            continue;
        }
        *moved = true;
        if (statuses)
            statuses[i] = st;
        if (st != UTC_OK && first->rc == UTC_OK) {
            first->rc = st;
            first->at = i;
            utc__text_copy(first->why, sizeof first->why, utc_last_error());
        }
    }
    return pending;
}

utc_status_t utc_request_testall(int count, utc_request_t **reqs, int *done,
                                 utc_status_t *statuses, size_t *received)
{
    static const char fn[] = "utc_request_testall";
    utc_status_t rc = check_set(count, reqs, fn);
    if (rc != UTC_OK)
        return rc;
    if (!done)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: done (the output) is NULL", fn);
    set_error_t first = {UTC_OK, -1, ""};
    bool moved;
    *done = !set_pass(count, reqs, statuses, received, &first, &moved);
    if (first.rc != UTC_OK)
        return utc__error(first.rc, "%s: request %d: %s", fn, first.at, first.why);
    return UTC_OK;
}

/* Wait for every request of a checked set: passes over it, so all of them progress while
 * the set waits, sleeping (with back-off) after a pass where none completed. */
static void wait_set(int count, utc_request_t **reqs, utc_status_t *statuses,
                     size_t *received, set_error_t *first)
{
    utc__poll_t p = UTC__POLL_INIT;
    bool moved;
    while (set_pass(count, reqs, statuses, received, first, &moved)) {
        if (moved)
            p = (utc__poll_t)UTC__POLL_INIT;
        else
            utc__poll_step(&p);
    }
}

utc_status_t utc_request_waitall(int count, utc_request_t **reqs, utc_status_t *statuses,
                                 size_t *received)
{
    static const char fn[] = "utc_request_waitall";
    utc_status_t rc = check_set(count, reqs, fn);
    if (rc != UTC_OK)
        return rc;
    set_error_t first = {UTC_OK, -1, ""};
    wait_set(count, reqs, statuses, received, &first);
    if (first.rc != UTC_OK)
        return utc__error(first.rc, "%s: request %d: %s", fn, first.at, first.why);
    return UTC_OK;
}

/* Where a thread's next waitany/testany starts looking: one further each call, so a
 * request that is always ready cannot starve the others. */
static _Thread_local unsigned any_start;

/* One pass over the set from a rotating start: true when a request completed (*index). */
static bool any_pass(int count, utc_request_t **reqs, int *index, utc_status_t *st,
                     size_t *received, bool *any_live)
{
    unsigned start = any_start++;
    *any_live = false;
    for (int k = 0; k < count; k++) {
        int i = (int)((start + (unsigned)k) % (unsigned)count);
        if (!reqs[i])
            continue;
        *any_live = true;
        if (test_one(reqs, i, st, received)) {
            *index = i;
            return true;
        }
    }
    return false;
}

utc_status_t utc_request_testany(int count, utc_request_t **reqs, int *index, int *done,
                                 size_t *received)
{
    static const char fn[] = "utc_request_testany";
    utc_status_t rc = check_set(count, reqs, fn);
    if (rc != UTC_OK)
        return rc;
    if (!index || !done)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: index or done (outputs) is NULL", fn);
    bool live;
    utc_status_t st = UTC_OK;
    *index = -1;
    *done = any_pass(count, reqs, index, &st, received, &live) || !live;
    return st;
}

utc_status_t utc_request_waitany(int count, utc_request_t **reqs, int *index, size_t *received)
{
    static const char fn[] = "utc_request_waitany";
    utc_status_t rc = check_set(count, reqs, fn);
    if (rc != UTC_OK)
        return rc;
    if (!index)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: index (the output) is NULL", fn);
    *index = -1;
    utc__poll_t p = UTC__POLL_INIT;
    for (;;) {
        bool live;
        utc_status_t st = UTC_OK;
        if (any_pass(count, reqs, index, &st, received, &live))
            return st;
        if (!live) /* nothing to wait for: *index stays -1 */
            return UTC_OK;
        utc__poll_step(&p);
    }
}
