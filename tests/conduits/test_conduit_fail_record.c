/*
 * The mark-failed record of a transport (service/transport.h): claimed, written, then
 * published. Two threads report two different failures at the same moment, many times
 * over, while a third reads the record as soon as it is published: exactly one report
 * wins, and every reader, during the race and after it, sees that report's whole record,
 * never fields of both. Then the record's life: a second report changes nothing, a clear
 * lets a new one in, a claim in progress is not cleared.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "utc_test.h"
#include "service/transport.h"

#define ROUNDS 20000

/* Two reports that differ in every field. */
static const utc__fail_info_t report[2] = {
    {.end = 0, .rank = 11, .rc = -3, .why = UTC_ERR_PEER_FAILED},
    {.end = 1, .rank = 22, .rc = -7, .why = UTC_ERR_CANCELED},
};

static bool same(const utc__fail_info_t *a, const utc__fail_info_t *b)
{
    return a->end == b->end && a->rank == b->rank && a->rc == b->rc && a->why == b->why;
}

/* One round's shared state. */
static struct {
    pthread_barrier_t start, end;
    utc__transport_t tp;      /* a transport's root: its `fail` record is raced for */
    atomic_int won[2];        /* what each reporter's mark returned */
    atomic_int done;          /* reporters that have returned */
    atomic_int arrived;       /* reporters at the line, over all rounds */
} race;

static void *reporter(void *arg)
{
    int me = (int)(intptr_t)arg;
    const utc__fail_info_t *r = &report[me];
    for (int round = 0; round < ROUNDS; round++) {
        pthread_barrier_wait(&race.start);
        /* the barrier wakes them microseconds apart: meet again, spinning, so that the two
         * reports overlap. After 2,000 turns the other is not running (three threads here,
         * often two cores): yield it the core rather than spin out a time slice, which made
         * a run take 1 to 30 s by the load, and most rounds no race at all */
        atomic_fetch_add(&race.arrived, 1);
        for (int spins = 0; atomic_load(&race.arrived) < 2 * (round + 1); spins++)
            if (spins >= 2000)
                sched_yield();
        bool won = utc__transport_mark_failed(&race.tp, r->end, r->rank, r->rc, r->why);
        atomic_store(&race.won[me], won);
        atomic_fetch_add(&race.done, 1);
        pthread_barrier_wait(&race.end);
    }
    return NULL;
}

static void test_race(void)
{
    pthread_t th[2];
    CU_ASSERT_EQUAL_FATAL(pthread_barrier_init(&race.start, NULL, 3), 0);
    CU_ASSERT_EQUAL_FATAL(pthread_barrier_init(&race.end, NULL, 3), 0);
    for (int i = 0; i < 2; i++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, reporter, (void *)(intptr_t)i), 0);
    int wins[2] = {0, 0}, mixed = 0, lost = 0, seen_during = 0;
    for (int round = 0; round < ROUNDS; round++) {
        /* a fresh record, as a new transport has it */
        atomic_store(&race.tp.fail.state, UTC__FAIL_NONE);
        atomic_store(&race.tp.fail.end, -100);
        atomic_store(&race.tp.fail.rank, -100);
        atomic_store(&race.tp.fail.rc, -100);
        atomic_store(&race.tp.fail.why, -100);
        atomic_store(&race.done, 0);
        pthread_barrier_wait(&race.start);
        /* read while they write (yielding the core to them): whatever is published is
         * one report, whole */
        utc__fail_info_t f = {0};
        while (atomic_load(&race.done) < 2) {
            if (utc__fail_record_get(&race.tp.fail, &f)) {
                seen_during++;
                mixed += !same(&f, &report[0]) && !same(&f, &report[1]);
            }
            sched_yield();
        }
        int w0 = atomic_load(&race.won[0]), w1 = atomic_load(&race.won[1]);
        if (w0 + w1 != 1) {
            lost++;
        } else {
            wins[w1]++;
            /* after the race: published, the winner's record, and its status */
            CU_ASSERT_TRUE(utc__transport_marked(&race.tp));
            CU_ASSERT_TRUE(utc__transport_fail_info(&race.tp, &f));
            mixed += !same(&f, &report[w1]);
            CU_ASSERT_EQUAL(utc__transport_fail_status(&race.tp), report[w1].why);
        }
        pthread_barrier_wait(&race.end);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&race.start);
    pthread_barrier_destroy(&race.end);
    printf("\n    %d rounds: report A won %d, B won %d; read during the race %d times\n", ROUNDS,
           wins[0], wins[1], seen_during);
    CU_ASSERT_EQUAL(lost, 0);   /* exactly one report wins each round */
    CU_ASSERT_EQUAL(mixed, 0);  /* no record mixed from both */
    CU_ASSERT_EQUAL(wins[0] + wins[1], ROUNDS);
}

static void test_life(void)
{
    utc__transport_t tp = {0};
    utc__fail_info_t f = {0};
    CU_ASSERT_FALSE(utc__transport_marked(&tp));
    CU_ASSERT_EQUAL(utc__transport_fail_status(&tp), UTC_OK);
    CU_ASSERT_FALSE(utc__transport_fail_info(&tp, &f));
    const utc__fail_info_t *a = &report[0], *b = &report[1];
    CU_ASSERT_TRUE(utc__transport_mark_failed(&tp, a->end, a->rank, a->rc, a->why));
    /* a second report changes nothing */
    CU_ASSERT_FALSE(utc__transport_mark_failed(&tp, b->end, b->rank, b->rc, b->why));
    CU_ASSERT_TRUE(utc__transport_fail_info(&tp, &f) && same(&f, a));
    /* cleared (the failed task runs again): a new report is taken */
    utc__fail_record_clear(&tp.fail);
    CU_ASSERT_FALSE(utc__transport_marked(&tp));
    CU_ASSERT_TRUE(utc__transport_mark_failed(&tp, b->end, b->rank, b->rc, b->why));
    CU_ASSERT_TRUE(utc__transport_fail_info(&tp, &f) && same(&f, b));
    /* a claim in progress is neither read nor cleared */
    utc__transport_t tq = {0};
    atomic_store(&tq.fail.state, UTC__FAIL_CLAIMING);
    CU_ASSERT_FALSE(utc__transport_marked(&tq));
    CU_ASSERT_EQUAL(utc__transport_fail_status(&tq), UTC_OK);
    utc__fail_record_clear(&tq.fail);
    CU_ASSERT_EQUAL(atomic_load(&tq.fail.state), UTC__FAIL_CLAIMING);
    CU_ASSERT_FALSE(utc__transport_mark_failed(&tq, a->end, a->rank, a->rc, a->why));
    /* a failure seen (the shared transport's adoption) ends operations, but is no mark */
    utc__transport_t ts = {0};
    CU_ASSERT_TRUE(utc__fail_record_set(&ts.seen, a->end, a->rank, a->rc, a->why));
    CU_ASSERT_FALSE(utc__transport_marked(&ts));
    CU_ASSERT_EQUAL(utc__transport_fail_status(&ts), a->why);
    CU_ASSERT_TRUE(utc__transport_mark_failed(&ts, b->end, b->rank, b->rc, b->why));
    CU_ASSERT_TRUE(utc__transport_fail_info(&ts, &f) && same(&f, b)); /* the mark first */
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"two racing failure reports: one wins, its whole record", test_race},
        {"the record's life: second report, clear, claim in progress, seen", test_life},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "conduit fail record", cases);
}
