/*
 * Requests shared by threads (issue 23 item 2): in every round one thread of a 4-thread
 * task starts an iwrite and all four then wait on or test the same request handle at once.
 * Nothing crashes; exactly one of them completes the request (UTC_OK), every other one gets
 * UTC_ERR_STATE (another thread is on it: try again) or UTC_ERR_INVALID_HANDLE (completed
 * already); the reader gets every message once, in order. 10,000 rounds, in-process and
 * between ranks; also run under scripts/check.sh tsan.
 */
#include <sched.h>

#include "conduit_test_util.h"

#define ROUNDS  10000
#define THREADS 4
#define BIG     (64 << 10)

static struct {
    _Atomic(utc_request_t *) req; /* this round's request, started by thread 0 */
    atomic_int completed;         /* completions this round */
    atomic_long stale, busy;      /* the other answers, over all rounds */
    uint64_t msg[BIG / 8];        /* thread 0's buffer for the iwrite */
} shared;

/* Every fourth message is large, so its request stays pending until the reader takes it
 * (the threads then meet on a live request); the others complete at once. */
static size_t msg_size(uint64_t i) { return i % 4 == 0 ? BIG : sizeof(uint64_t); }

static int racing_writer(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    for (uint64_t i = 0; i < ROUNDS; i++) {
        if (ctx->local_id == 0) {
            utc_request_t *r = NULL;
            shared.msg[0] = i;
            atomic_store(&shared.completed, 0);
            CT_OK(utc_conduit_iwrite(c, shared.msg, msg_size(i), 5, &r));
            atomic_store(&shared.req, r);
        }
        CT_OK(utc_ctx_barrier_local(ctx));
        utc_request_t *mine = atomic_load(&shared.req); /* each thread's own copy */
        for (int tries = 0;; tries++) {
            int done = 0, rc;
            bool waiting = (ctx->local_id + tries) & 1;
            rc = waiting ? utc_request_wait(&mine, NULL) : utc_request_test(&mine, &done, NULL);
            if (rc == UTC_OK && (waiting || done)) {
                atomic_fetch_add(&shared.completed, 1);
                CT_CHECK(mine == NULL, "a completed request's handle is not cleared");
                break;
            }
            if (rc == UTC_ERR_INVALID_HANDLE) {
                atomic_fetch_add(&shared.stale, 1);
                break;
            }
            if (rc == UTC_ERR_STATE) {
                atomic_fetch_add(&shared.busy, 1);
                sched_yield(); /* another thread is on it: let it run */
            }
            else
                CT_CHECK(rc == UTC_OK, "round %llu: %d (%s): %s", (unsigned long long)i, rc,
                         utc_status_string(rc), utc_last_error());
            if (rc != UTC_OK && rc != UTC_ERR_STATE)
                break;
        }
        CT_OK(utc_ctx_barrier_local(ctx));
        if (ctx->local_id == 0)
            CT_CHECK(atomic_load(&shared.completed) == 1, "round %llu: %d completions",
                     (unsigned long long)i, atomic_load(&shared.completed));
    }
    return 0;
}

static int ordered_reader(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    static uint64_t buf[BIG / 8];
    for (uint64_t i = 0; i < ROUNDS; i++) {
        size_t got = 0;
        buf[0] = UINT64_MAX;
        if (!CT_OK(utc_conduit_read(c, buf, sizeof buf, 5, &got)))
            return 0;
        if (got != msg_size(i) || buf[0] != i) {
            CT_CHECK(false, "message %llu: got %llu (%zu bytes)", (unsigned long long)i,
                     (unsigned long long)buf[0], got);
            return 0;
        }
    }
    return 0;
}

static void race(int ra, int rb, void *arg)
{
    (void)arg;
    ct_begin();
    atomic_store(&shared.stale, 0);
    atomic_store(&shared.busy, 0);
    ct_pair_t p = ct_pair_open(ra, THREADS, rb, 1, NULL);
    ct_pair_run(&p, racing_writer, ordered_reader);
    ct_pair_close(&p);
    if (utc_rank() == ra)
        printf("\n  %s: %d rounds, %ld stale and %ld busy answers to the other threads\n",
               ra == rb ? "in-process" : "between ranks", ROUNDS, atomic_load(&shared.stale),
               atomic_load(&shared.busy));
    CT_END();
}

static void test_shared_requests(void) { ct_each_placement(true, race, NULL); }

static const utc_test_case_t cases[] = {
    {"4 threads wait on and test one request", test_shared_requests},
    UTC_TEST_END};

int main(int argc, char **argv) { return utc_test_main(argc, argv, "shared requests", cases); }
