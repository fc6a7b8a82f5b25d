/*
 * The watchdog's use of a wait's detail (base/wait_hook.h): utc__wait_end does not return
 * while the monitor is inside the detail's describe, so a waiter may drop its detail (a
 * record on its stack) as soon as the wait ends. With a threshold of a microsecond the
 * monitor (one scan per 10 ms) describes most waits of 5-25 ms; each describe sleeps 2 ms,
 * so many waits end while it runs. A wait end that did not wait for it lets the describe
 * see its detail dropped (tried: 13-15 of ~45 describes per run here).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "utc_test.h"
#include "base/wait_hook.h"

enum { WAITS = 100 };

typedef struct {
    utc__wait_detail_t base; /* first: the monitor is given &base */
    atomic_bool alive;       /* false once the waiter has dropped it */
    atomic_int drops;        /* how many times it was dropped (it is reused for each wait) */
} test_detail_t;

static atomic_int described, seen_dropped;

static void sleep_ms(double ms)
{
    struct timespec ts = {0, (long)(ms * 1e6)};
    nanosleep(&ts, NULL);
}

/* The monitor's thread: the detail must stay alive from entry to return. */
static void describe(const utc__wait_detail_t *self, char *buf, size_t n)
{
    const test_detail_t *d = (const test_detail_t *)self;
    /* relaxed: the waiter's drop and these loads are ordered by the watchdog itself */
    int drops = atomic_load_explicit(&d->drops, memory_order_relaxed);
    if (!atomic_load_explicit(&d->alive, memory_order_relaxed))
        atomic_fetch_add(&seen_dropped, 1);
    sleep_ms(2);
    if (atomic_load_explicit(&d->drops, memory_order_relaxed) != drops)
        atomic_fetch_add(&seen_dropped, 1);
    atomic_fetch_add(&described, 1);
    snprintf(buf, n, "a test wait");
}

static void test_end_waits_for_describe(void)
{
    unsigned seed = 12345u + (unsigned)utc_rank();
    test_detail_t d = {.base.describe = describe};
    for (int i = 0; i < WAITS; i++) {
        atomic_store_explicit(&d.alive, true, memory_order_relaxed);
        utc__wait_begin_detail(UTC__WAIT_COLLECTIVE, 0, -1, -1, "watchdog_detail", &d.base);
        sleep_ms(5 + rand_r(&seed) % 21);
        utc__wait_end();
        /* dropped: the monitor may not look at it any more */
        atomic_store_explicit(&d.alive, false, memory_order_relaxed);
        atomic_fetch_add_explicit(&d.drops, 1, memory_order_relaxed);
    }
    printf("\n  %d of %d waits described, %d describes saw their detail dropped\n",
           atomic_load(&described), WAITS, atomic_load(&seen_dropped));
    CU_ASSERT_TRUE(atomic_load(&described) >= WAITS / 10); /* the race was exercised */
    CU_ASSERT_EQUAL(atomic_load(&seen_dropped), 0);
}

static const utc_test_case_t cases[] = {
    {"a wait's end waits for the watchdog's describe of it", test_end_waits_for_describe},
    UTC_TEST_END};

int main(int argc, char **argv)
{
    setenv("UTC_WATCHDOG", "0.000001", 1); /* report every wait the monitor sees twice */
    return utc_test_main(argc, argv, "watchdog_detail", cases);
}
