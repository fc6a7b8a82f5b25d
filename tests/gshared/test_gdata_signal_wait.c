/* Global shared data: waiting on signals once the waiter sleeps. On one node a thread in
 * utc_gdata_wait_until polls for a while (0.2 ms by default; not at all here unless --poll
 * says so), then sleeps on a futex in the window that every store path wakes
 * (rstore_signal, rstore + quiet, the atomics). Tests: every comparison after the waiter
 * has gone to sleep, with a store that does not satisfy it first; many waiters on one
 * element; thousands of hand-offs timed to race with the waiter going to sleep; timeouts;
 * a destroy by the sibling threads while one waits. A lost wake-up leaves a waiter asleep
 * until its timeout: the suite runs with UTC_GSHARED_SIGNAL_SLEEP_US at 60 s, so no
 * periodic look hides one.
 *
 * Each rank's threads write to the next rank (to itself with one rank). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "gs_test.h"

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static int next_rank(const utc_ctx_t *ctx)
{
    return (ctx->group_rank + 1) % ctx->group_size;
}

/* utc_gdata_wait_until for a value that is stored within a second: it must return UTC_OK
 * within 5 s. A lost wake-up leaves the waiter asleep until its 10 s timeout, after which
 * its last look finds the value: UTC_OK, but late. */
static void wait_woken(gs_task_t *t, utc_ctx_t *ctx, utc_gdata_t *gd, size_t e, utc_cmp_t cmp,
                       int64_t value, int64_t *seen)
{
    double t0 = utc_wtime();
    GS_OK(t, ctx, utc_gdata_wait_until(gd, e, cmp, value, 10.0, seen));
    double took = utc_wtime() - t0;
    if (took >= 5.0)
        fprintf(stderr,
                "[rank %d thread %d] a wait for element %zu took %.3f s: a lost "
                "wake-up\n",
                ctx->world_rank, ctx->local_id, e, took);
    GS_CHECK(t, ctx, took < 5.0);
}

/* ---- every comparison, woken from sleep by each way of storing the element ---- */

enum { BY_SIGNAL, BY_QUIET, BY_FETCH_ADD, BY_CAS, NBY };
static const char *const by_name[NBY] = {"rstore_signal", "rstore + quiet", "fetch_add",
                                         "compare_swap"};

/* A wait the element's first value (0) and the decoy do not satisfy, the final one does. */
static const struct {
    utc_cmp_t cmp;
    int64_t value, decoy, final;
} cmp_cases[] = {{UTC_CMP_EQ, 7, 3, 7}, {UTC_CMP_NE, 0, 0, 9},    {UTC_CMP_GT, 5, 5, 6},
                 {UTC_CMP_GE, 5, 4, 5}, {UTC_CMP_LT, -1, -1, -2}, {UTC_CMP_LE, -3, -2, -3}};
#define NCMP ((int)(sizeof cmp_cases / sizeof cmp_cases[0]))

/* Store v into element e of rank q, which holds `was`, by method `by`. */
static void store_by(gs_task_t *t, utc_ctx_t *ctx, utc_gdata_t *gd, int q, size_t e, int by,
                     int64_t was, int64_t v)
{
    int64_t old = 0;
    switch (by) {
    case BY_SIGNAL:
        GS_OK(t, ctx, utc_gdata_rstore_signal(gd, q, 0, 0, NULL, e, v));
        break;
    case BY_QUIET:
        GS_OK(t, ctx, utc_gdata_rstore(gd, q, e, &v));
        GS_OK(t, ctx, utc_gdata_quiet(gd));
        break;
    case BY_FETCH_ADD:
        GS_OK(t, ctx, utc_gdata_fetch_add(gd, q, e, v - was, &old));
        GS_CHECK(t, ctx, old == was);
        break;
    case BY_CAS:
        GS_OK(t, ctx, utc_gdata_compare_swap(gd, q, e, was, v, &old));
        GS_CHECK(t, ctx, old == was);
        break;
    }
}

/* Thread 0 of each rank waits on element (by * NCMP + case) of its part; thread 1 stores
 * into the next rank's: the decoy 3 ms after, the final value 3 ms later, then waits for
 * the ack, which the waiter stores the same way into element ACK of the writer's rank. So
 * each store path has to wake its sleeper both ways, or the case waits for its timeout. */
#define ACK ((size_t)(NBY * NCMP))
static void body_compare(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    utc_gdata_t *gd = NULL;
    GS_OK(t, ctx, utc_gdata_create(ctx, sizeof(int64_t), ACK + 1, &gd));
    if (!gd)
        return;
    int prev = (ctx->group_rank + ctx->group_size - 1) % ctx->group_size;
    for (int by = 0; by < NBY; by++) {
        for (int c = 0; c < NCMP; c++) {
            size_t e = (size_t)(by * NCMP + c);
            int64_t seen = 0;
            if (ctx->local_id == 0) {
                wait_woken(t, ctx, gd, e, cmp_cases[c].cmp, cmp_cases[c].value, &seen);
                if (seen != cmp_cases[c].final)
                    fprintf(stderr, "%s, comparison %d: woke with %lld\n", by_name[by],
                            (int)cmp_cases[c].cmp, (long long)seen);
                GS_CHECK(t, ctx, seen == cmp_cases[c].final);
                sleep_us(1000);
                store_by(t, ctx, gd, prev, ACK, by, (int64_t)e, (int64_t)e + 1);
            } else {
                sleep_us(3000);
                store_by(t, ctx, gd, next_rank(ctx), e, by, 0, cmp_cases[c].decoy);
                sleep_us(3000);
                store_by(t, ctx, gd, next_rank(ctx), e, by, cmp_cases[c].decoy, cmp_cases[c].final);
                wait_woken(t, ctx, gd, ACK, UTC_CMP_EQ, (int64_t)e + 1, &seen);
            }
            if (atomic_load(&t->failures))
                goto done; /* the next cases would wait for acks that do not come */
        }
    }
done:
    GS_OK(t, ctx, utc_gdata_barrier(gd));
    GS_OK(t, ctx, utc_gdata_destroy(ctx, gd));
}

static void test_compare_asleep(void)
{
    gs_run(body_compare, 2, UTC_WINDOW_DEFAULT, NULL);
}

/* ---- many waiters on one element ---- */

#define WAITERS 4
static int rounds = 200; /* --rounds */

/* Thread 0 of each rank signals round r into element 0 of the next rank, once the WAITERS
 * threads there have acked round r - 1 (fetch_add on element 1 of its own part); they all
 * wait on that one element. The writer's random pause lets them fall asleep, or not. */
static void body_many(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    utc_gdata_t *gd = NULL;
    GS_OK(t, ctx, utc_gdata_create(ctx, sizeof(int64_t), 2, &gd));
    if (!gd)
        return;
    int n = ctx->group_size, prev = (ctx->group_rank + n - 1) % n;
    uint64_t seed = 0x9E3779B97F4A7C15ull ^ (uint64_t)(ctx->global_id + 1);
    for (int64_t r = 1; r <= rounds; r++) {
        if (ctx->local_id == 0) {
            int64_t acks = 0;
            wait_woken(t, ctx, gd, 1, UTC_CMP_GE, (r - 1) * WAITERS, &acks);
            GS_CHECK(t, ctx, acks == (r - 1) * WAITERS);
            sleep_us((long)(gs_rand(&seed) % 400));
            GS_OK(t, ctx, utc_gdata_rstore_signal(gd, next_rank(ctx), 0, 0, NULL, 0, r));
        } else {
            int64_t seen = 0;
            wait_woken(t, ctx, gd, 0, UTC_CMP_GE, r, &seen);
            GS_CHECK(t, ctx, seen == r);
            GS_OK(t, ctx, utc_gdata_fetch_add(gd, prev, 1, 1, NULL));
        }
        if (atomic_load(&t->failures))
            break; /* one failed wait would make every later one time out */
    }
    GS_OK(t, ctx, utc_gdata_barrier(gd));
    GS_OK(t, ctx, utc_gdata_destroy(ctx, gd));
}

static void test_many_waiters(void)
{
    gs_run(body_many, 1 + WAITERS, UTC_WINDOW_DEFAULT, NULL);
}

/* ---- a waiter and a store racing: no lost wake-up ---- */

#define HOPS 3000

/* Busy for `us` microseconds: a pause that nanosleep's timer slack would blur. */
static void spin_us(double us)
{
    double end = utc_wtime() + us * 1e-6;
    while (utc_wtime() < end)
        ;
}

/* How long waiters poll before they sleep (UTC_GSHARED_SIGNAL_POLL_US, set by main). */
static long poll_us;

/* Until element e of this rank's part reaches v, looking at it directly (spinning 20 us,
 * then yielding between looks): an answer within a fraction of a microsecond. False after
 * 10 s. */
static bool spin_until(utc_gdata_t *gd, size_t e, int64_t v)
{
    const _Atomic int64_t *p = (const _Atomic int64_t *)utc_gdata_ptr(gd) + e;
    double t0 = utc_wtime(), now = t0;
    /* acquire: as utc_gdata_wait_until's look */
    for (unsigned i = 0; atomic_load_explicit(p, memory_order_acquire) < v; i++) {
        if ((i & 63) == 0 && (now = utc_wtime()) - t0 > 10.0)
            return false;
        if (now - t0 > 20e-6)
            sched_yield();
    }
    return true;
}

/* A ping-pong between thread 0 of each rank and thread 1 of the next: thread 0 signals
 * odd values into element 1 of the next rank and waits (utc_gdata_wait_until) for the even
 * ones in its element 0; thread 1 looks at its element directly, so it sees each value at
 * once, and answers after a pause of 0 .. 2 x poll_us + 1.5 us: about when thread 0 stops
 * polling and goes to sleep, where a wake-up could be lost (wait_woken). */
static void body_race(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    utc_gdata_t *gd = NULL;
    GS_OK(t, ctx, utc_gdata_create(ctx, sizeof(int64_t), 2, &gd));
    if (!gd)
        return;
    int n = ctx->group_size;
    uint64_t seed = 0xD1B54A32D192ED03ull ^ (uint64_t)(ctx->global_id + 1);
    for (int64_t v = 1; v < HOPS; v += 2) {
        if (ctx->local_id == 0) {
            GS_OK(t, ctx, utc_gdata_rstore_signal(gd, next_rank(ctx), 0, 0, NULL, 1, v));
            int64_t seen = 0;
            int before = atomic_load(&t->failures);
            wait_woken(t, ctx, gd, 0, UTC_CMP_GE, v + 1, &seen);
            GS_CHECK(t, ctx, seen == v + 1);
            if (atomic_load(&t->failures) != before)
                break;
        } else {
            bool came = spin_until(gd, 1, v);
            GS_CHECK(t, ctx, came);
            if (!came)
                break;
            spin_us((double)(gs_rand(&seed) % (uint64_t)(2000 * poll_us + 1500)) * 1e-3);
            GS_OK(t, ctx,
                  utc_gdata_rstore_signal(gd, (ctx->group_rank + n - 1) % n, 0, 0, NULL, 0, v + 1));
        }
    }
    GS_OK(t, ctx, utc_gdata_barrier(gd));
    GS_OK(t, ctx, utc_gdata_destroy(ctx, gd));
}

static void test_race(void)
{
    gs_run(body_race, 2, UTC_WINDOW_DEFAULT, NULL);
}

/* ---- timeouts ---- */

/* Thread 0 waits for a value that never comes while thread 1 of the previous rank keeps
 * storing others (each store wakes it, and it sleeps again): it times out after 0.3 s with the last
 * value. A wait nobody stores to times out at its deadline, not at the 60 s sleep limit; timeout 0
 * looks once. */
static void body_timeout(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    utc_gdata_t *gd = NULL;
    GS_OK(t, ctx, utc_gdata_create(ctx, sizeof(int64_t), 3, &gd));
    if (!gd)
        return;
    if (ctx->local_id == 0) {
        int64_t seen = -1;
        double t0 = utc_wtime();
        GS_ERROR(t, ctx, utc_gdata_wait_until(gd, 0, UTC_CMP_LT, 0, 0.3, &seen), UTC_ERR_TIMEOUT,
                 "which did not become < 0 within 0.300 s");
        double took = utc_wtime() - t0;
        GS_CHECK(t, ctx, took >= 0.29 && took < 5.0);
        GS_CHECK(t, ctx, seen > 0);
        /* tell the thread that stores to us to stop: element 1 of its rank's part */
        int prev = (ctx->group_rank + ctx->group_size - 1) % ctx->group_size;
        GS_OK(t, ctx, utc_gdata_rstore_signal(gd, prev, 0, 0, NULL, 1, 1));
        t0 = utc_wtime();
        GS_ERROR(t, ctx, utc_gdata_wait_until(gd, 2, UTC_CMP_EQ, 1, 0.05, &seen), UTC_ERR_TIMEOUT,
                 "is 0, which did not become == 1 within 0.050 s");
        took = utc_wtime() - t0;
        GS_CHECK(t, ctx, took >= 0.045 && took < 2.0);
        GS_EXPECT(t, ctx, utc_gdata_wait_until(gd, 2, UTC_CMP_NE, 0, 0, NULL), UTC_ERR_TIMEOUT);
        GS_OK(t, ctx, utc_gdata_wait_until(gd, 2, UTC_CMP_EQ, 0, 0, NULL));
    } else {
        /* store 1, 2, 3, ... into the next rank's element 0 every 0.5 ms until its
         * thread 0 is done */
        for (int64_t v = 1;; v++) {
            GS_OK(t, ctx, utc_gdata_rstore_signal(gd, next_rank(ctx), 0, 0, NULL, 0, v));
            if (utc_gdata_wait_until(gd, 1, UTC_CMP_EQ, 1, 0.0005, NULL) == UTC_OK)
                break;
        }
    }
    GS_OK(t, ctx, utc_gdata_barrier(gd));
    GS_OK(t, ctx, utc_gdata_destroy(ctx, gd));
}

static void test_timeouts(void)
{
    gs_run(body_timeout, 2, UTC_WINDOW_DEFAULT, NULL);
}

/* ---- destroy while a sibling waits ---- */

/* Thread 1 destroys the object while thread 0 waits on it, asleep, for a signal nobody
 * sends. The destroy is collective: it waits for thread 0, whose wait ends as documented
 * (UTC_ERR_TIMEOUT at its timeout, the object still alive); thread 0 then joins the
 * destroy, which returns UTC_OK on both, and the handle is refused after. */
static void body_destroy(gs_task_t *t, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    atomic_llong *wait_over = &t->count[0];
    utc_gdata_t *gd = NULL;
    GS_OK(t, ctx, utc_gdata_create(ctx, sizeof(int64_t), 1, &gd));
    if (!gd)
        return;
    if (ctx->local_id == 0) {
        int64_t seen = -1;
        GS_ERROR(t, ctx, utc_gdata_wait_until(gd, 0, UTC_CMP_EQ, 1, 0.3, &seen), UTC_ERR_TIMEOUT,
                 "did not become == 1 within 0.300 s");
        GS_CHECK(t, ctx, seen == 0);
        atomic_store(wait_over, 1);
        GS_OK(t, ctx, utc_gdata_destroy(ctx, gd));
    } else {
        GS_OK(t, ctx, utc_gdata_destroy(ctx, gd));
        GS_CHECK(t, ctx, atomic_load(wait_over) == 1);
    }
    GS_EXPECT(t, ctx, utc_gdata_wait_until(gd, 0, UTC_CMP_EQ, 1, 0.1, NULL),
              UTC_ERR_INVALID_HANDLE);
}

static void test_destroy_while_waiting(void)
{
    gs_run(body_destroy, 2, UTC_WINDOW_DEFAULT, NULL);
}

/* [--poll US] [--rounds N]: how long waiters poll before they sleep (default 0: at once,
 * so every wait goes through the sleep and every hand-off races with it); rounds of the
 * many-waiters test (default 200; MPI's path, with no shared memory, takes ~0.1 s each). */
int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--poll") == 0)
            poll_us = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--rounds") == 0)
            rounds = atoi(argv[i + 1]);
    }
    char env[32];
    snprintf(env, sizeof env, "%ld", poll_us);
    setenv("UTC_GSHARED_SIGNAL_POLL_US", env, 1);
    /* no periodic look while asleep: only a wake-up ends a sleep before the deadline */
    setenv("UTC_GSHARED_SIGNAL_SLEEP_US", "60000000", 1);
    static const utc_test_case_t cases[] = {
        {"every comparison, woken from sleep by every way of storing", test_compare_asleep},
        {"many waiters on one element", test_many_waiters},
        {"a waiter and a store racing: no lost wake-up", test_race},
        {"timeouts are honoured while asleep", test_timeouts},
        {"destroy while a sibling waits: the wait times out, the destroy completes",
         test_destroy_while_waiting},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "gshared: waiting on signals", cases);
}
