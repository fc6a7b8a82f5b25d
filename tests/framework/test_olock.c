/*
 * Owner locks (base/sync.h): the lock excludes whoever takes it, the owner by its plain
 * take or any other thread by the spin lock and a heavy fence, with and without `claim`;
 * a claim by a second thread ends the bias for good, a take without one keeps it; a
 * trylock fails while another holds it; and a thread known by a context (utc__olock_id)
 * keeps the lock of an earlier thread that ran as that context.
 */
#include <pthread.h>

#include "utc_test.h"
#include "base/sync.h"

#define ROUNDS 20000
#define OTHERS 3

static utc__olock_t lock = UTC__OLOCK_INIT;
static long counter; /* plain: guarded by lock */
static atomic_int inside, most_inside;

static void in_lock(void)
{
    int now = atomic_fetch_add(&inside, 1) + 1;
    if (now > atomic_load(&most_inside))
        atomic_store(&most_inside, now);
    counter++;
    atomic_fetch_sub(&inside, 1);
}

typedef struct {
    bool claim;
    int rounds;
    const void *id; /* utc__olock_id of the thread (NULL: itself) */
} adder_t;

static void *adder(void *arg)
{
    const adder_t *a = arg;
    utc__olock_id = a->id;
    for (int i = 0; i < a->rounds; i++) {
        utc__olock_lock(&lock, a->claim);
        in_lock();
        utc__olock_unlock(&lock);
    }
    return NULL;
}

static void reset(void)
{
    lock = (utc__olock_t)UTC__OLOCK_INIT;
    counter = 0;
    atomic_store(&most_inside, 0);
}

/* The owner's thread takes it first (and owns it), then others take it with `claim`. */
static const void *race(bool claim)
{
    static char owner_id;
    reset();
    adder_t first = {true, 1, &owner_id}, owner = {true, ROUNDS, &owner_id},
            other = {claim, ROUNDS / 10, NULL};
    pthread_t th[OTHERS + 1];
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th[0], NULL, adder, &first), 0);
    pthread_join(th[0], NULL);
    CU_ASSERT_PTR_EQUAL(atomic_load(&lock.owner), &owner_id);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th[0], NULL, adder, &owner), 0);
    for (int i = 1; i <= OTHERS; i++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, adder, &other), 0);
    for (int i = 0; i <= OTHERS; i++)
        pthread_join(th[i], NULL);
    CU_ASSERT_EQUAL(counter, 1 + ROUNDS + (long)OTHERS * (ROUNDS / 10));
    CU_ASSERT_EQUAL(atomic_load(&most_inside), 1);
    return atomic_load(&lock.owner);
}

static void test_claims_end_bias(void)
{
    CU_ASSERT_PTR_EQUAL(race(true), UTC__OLOCK_SHARED);
}

static void test_rare_takes_keep_bias(void)
{
    CU_ASSERT_PTR_NOT_EQUAL(race(false), UTC__OLOCK_SHARED);
    CU_ASSERT_PTR_NOT_NULL(atomic_load(&lock.owner));
}

static void *try_other(void *arg)
{
    (void)arg;
    utc__olock_id = NULL;
    bool got = utc__olock_trylock(&lock, true);
    if (got)
        utc__olock_unlock(&lock);
    return (void *)(intptr_t)got;
}

static void test_trylock(void)
{
    static char me;
    reset();
    utc__olock_id = &me;
    CU_ASSERT_TRUE(utc__olock_trylock(&lock, true)); /* claims it */
    CU_ASSERT_PTR_EQUAL(atomic_load(&lock.owner), &me);
    pthread_t th;
    void *got = NULL;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, try_other, NULL), 0);
    pthread_join(th, &got);
    CU_ASSERT_PTR_NULL(got); /* held by the owner: refused */
    utc__olock_unlock(&lock);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, try_other, NULL), 0);
    pthread_join(th, &got);
    CU_ASSERT_PTR_NOT_NULL(got); /* free: taken (and the bias ended by its claim) */
    CU_ASSERT_PTR_EQUAL(atomic_load(&lock.owner), UTC__OLOCK_SHARED);
    CU_ASSERT_TRUE(utc__olock_trylock(&lock, true));
    utc__olock_unlock(&lock);
    utc__olock_id = NULL;
}

static void test_context_identity(void)
{
    static char ctx;
    reset();
    adder_t a = {true, ROUNDS, &ctx};
    for (int k = 0; k < 3; k++) { /* three threads in turn, each running as `ctx` */
        pthread_t th;
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, adder, &a), 0);
        pthread_join(th, NULL);
        CU_ASSERT_PTR_EQUAL(atomic_load(&lock.owner), &ctx); /* still biased to it */
    }
    CU_ASSERT_EQUAL(counter, 3L * ROUNDS);
}

static const utc_test_case_t cases[] = {
    {"an owner and three claiming threads: exclusion, then the bias ends", test_claims_end_bias},
    {"an owner and three threads taking it without a claim: exclusion, the bias stays",
     test_rare_takes_keep_bias},
    {"trylock fails while another holds it", test_trylock},
    {"threads running as one context in turn keep its bias", test_context_identity},
    UTC_TEST_END};

int main(int argc, char **argv)
{
    return utc_test_main(argc, argv, "owner lock", cases);
}
