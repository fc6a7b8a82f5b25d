/*
 * The transports' spin lock (base/sync.h): it excludes (four threads adding under it lose
 * no update and never find another inside), and a thread that waits for it long backs
 * off to sleep (under 5% of a core while the lock is held for a second).
 */
#include <pthread.h>
#include <unistd.h>

#include "utc_test.h"
#include "base/sync.h"

#define THREADS 4
#define ROUNDS 100000

static utc__spinlock_t lock = UTC__SPINLOCK_INIT;
static long counter;          /* plain: guarded by lock */
static atomic_int inside, most_inside;

static void *adder(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        utc__spin_lock(&lock);
        int now = atomic_fetch_add(&inside, 1) + 1;
        if (now > atomic_load(&most_inside))
            atomic_store(&most_inside, now);
        counter++;
        atomic_fetch_sub(&inside, 1);
        utc__spin_unlock(&lock);
    }
    return NULL;
}

static void test_excludes(void)
{
    pthread_t th[THREADS];
    counter = 0;
    for (int i = 0; i < THREADS; i++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, adder, NULL), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    CU_ASSERT_EQUAL(counter, (long)THREADS * ROUNDS);
    CU_ASSERT_EQUAL(atomic_load(&most_inside), 1);
}

static atomic_int waiter_has_it;

static void *waiter(void *arg)
{
    (void)arg;
    utc__spin_lock(&lock);
    atomic_store(&waiter_has_it, 1);
    utc__spin_unlock(&lock);
    return NULL;
}

static void test_waiter_sleeps(void)
{
    pthread_t th;
    utc__spin_lock(&lock);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, waiter, NULL), 0);
    usleep(20000); /* past the waiter's spin and yield */
    double cpu0 = utc_test_cpu_seconds(), wall0 = utc_wtime();
    sleep(1);
    double cpu = utc_test_cpu_seconds() - cpu0, wall = utc_wtime() - wall0;
    CU_ASSERT_EQUAL(atomic_load(&waiter_has_it), 0);
    utc__spin_unlock(&lock);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(atomic_load(&waiter_has_it), 1);
    printf("\n  a thread waiting 1 s for the lock: %.4f s CPU over %.3f s (%.2f%% of a core)\n",
           cpu, wall, 100 * cpu / wall);
    CU_ASSERT(cpu < 0.05 * wall);
}

static const utc_test_case_t cases[] = {
    {"four threads under the lock lose no update and are never two inside", test_excludes},
    {"a thread waiting long for the lock sleeps", test_waiter_sleeps},
    UTC_TEST_END};

int main(int argc, char **argv) { return utc_test_main(argc, argv, "spin lock", cases); }
