/*
 * The bounded cache behind the device conduits' CUDA IPC handles (conduits/device/
 * ipc_lru.h), without CUDA: its real code with open and close functions that count and
 * keep each value's state (no device calls). A hit never opens again; a full cache closes
 * the least recently used value (checked against a shadow list over random sequences);
 * a failed open caches nothing; drops by key and by peer, clear and a lower bound close
 * what they should; a byte bound (utc__ipc_lru_set_max_bytes) closes the least recently
 * used values until a new one fits, keeps a value larger than it alone, and holds with
 * the count bound (24 allocations of 16 MiB, each freed by its writer after its message,
 * hold at most the bound's bytes); and threads that share a cache never see a closed value, never
 * open a key twice at once, and never hold more than the bound.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device/ipc_lru.h"
#include "utc_test.h"

#define NKEYS 64

/* A value: which key it was opened for, and whether it is still open. */
typedef struct value {
    int key;
    int open;
    uint64_t uses;
} value_t;

typedef struct counter {
    pthread_mutex_t lock; /* the threads test: open/close run under the cache's lock, but
                           * the test reads these outside it */
    uint64_t opens, closes;
    int open_now[NKEYS]; /* values open per key */
    int max_open;        /* the most values open at once */
    int fail_next;       /* the next open fails */
    int last_closed;     /* the key of the last value closed */
    value_t **made;      /* every value made, freed at the end */
    size_t nmade, cap_made;
    int bad; /* a key opened twice at once, or a close of a closed value */
} counter_t;

static int key_index(const utc__ipc_key_t *k)
{
    return (int)(k->id % NKEYS);
}

static utc__ipc_key_t make_key(int peer, int i)
{
    utc__ipc_key_t k;
    memset(&k, 0, sizeof k);
    k.peer = peer;
    k.id = (uint64_t)i;
    k.bytes[0] = (unsigned char)(0xA0 + i); /* a "handle" */
    k.bytes[UTC__IPC_KEY_BYTES - 1] = (unsigned char)i;
    return k;
}

static utc_status_t t_open(void *arg, const utc__ipc_key_t *key, const void *ctx, void **out)
{
    counter_t *c = arg;
    (void)ctx;
    pthread_mutex_lock(&c->lock);
    c->opens++;
    utc_status_t st = UTC_OK;
    if (c->fail_next) {
        c->fail_next = 0;
        st = UTC_ERR_GPU;
    } else {
        value_t *v = calloc(1, sizeof *v);
        v->key = key_index(key);
        v->open = 1;
        if (c->open_now[v->key]++ != 0)
            c->bad++;
        int n = 0;
        for (int i = 0; i < NKEYS; i++)
            n += c->open_now[i];
        if (n > c->max_open)
            c->max_open = n;
        if (c->nmade == c->cap_made) {
            c->cap_made = c->cap_made ? 2 * c->cap_made : 256;
            c->made = realloc(c->made, c->cap_made * sizeof *c->made);
        }
        c->made[c->nmade++] = v;
        *out = v;
    }
    pthread_mutex_unlock(&c->lock);
    return st;
}

static void t_close(void *arg, const utc__ipc_key_t *key, void *value)
{
    counter_t *c = arg;
    value_t *v = value;
    pthread_mutex_lock(&c->lock);
    c->closes++;
    if (!v->open || v->key != key_index(key))
        c->bad++;
    v->open = 0;
    c->open_now[v->key]--;
    c->last_closed = v->key;
    pthread_mutex_unlock(&c->lock);
}

static const utc__ipc_lru_ops_t t_ops = {.open = t_open, .close = t_close};

static counter_t *counter_new(void)
{
    counter_t *c = calloc(1, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
    c->last_closed = -1;
    return c;
}

static void counter_free(counter_t *c)
{
    for (size_t i = 0; i < c->nmade; i++)
        free(c->made[i]);
    free(c->made);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* fn of utc__ipc_lru_use: the value must be open; give its key back. */
static utc_status_t t_use(void *arg, void *value)
{
    value_t *v = value;
    if (!v->open)
        return UTC_ERR_INTERNAL;
    v->uses++;
    if (arg)
        *(int *)arg = v->key;
    return UTC_OK;
}

static utc_status_t t_fail(void *arg, void *value)
{
    (void)arg;
    (void)value;
    return UTC_ERR_CANCELED;
}

/* ops->weigh of the byte-bound cases: ctx points to the value's bytes */
static size_t t_weigh(void *arg, const utc__ipc_key_t *key, const void *ctx)
{
    (void)arg;
    (void)key;
    return ctx ? *(const size_t *)ctx : 0;
}

static const utc__ipc_lru_ops_t t_ops_weighed = {
    .open = t_open, .close = t_close, .weigh = t_weigh};

/* A use of key i of peer 1 weighing `bytes`. */
static utc_status_t use_weighed(utc__ipc_lru_t *lru, int i, size_t bytes)
{
    utc__ipc_key_t k = make_key(1, i);
    int got = -1;
    utc_status_t st = utc__ipc_lru_use(lru, &k, &bytes, t_use, &got);
    if (st == UTC_OK)
        CU_ASSERT_EQUAL(got, i);
    return st;
}

static utc_status_t use(utc__ipc_lru_t *lru, int peer, int i)
{
    utc__ipc_key_t k = make_key(peer, i);
    int got = -1;
    utc_status_t st = utc__ipc_lru_use(lru, &k, NULL, t_use, &got);
    if (st == UTC_OK)
        CU_ASSERT_EQUAL(got, i); /* the value of that key, not another's */
    return st;
}

static void test_hits_and_eviction(void)
{
    counter_t *c = counter_new();
    utc__ipc_lru_t lru;
    utc__ipc_lru_init(&lru, 3, &t_ops, c);
    UTC_ASSERT_OK(use(&lru, 0, 1));
    UTC_ASSERT_OK(use(&lru, 0, 1));
    UTC_ASSERT_OK(use(&lru, 0, 1));
    CU_ASSERT_EQUAL(c->opens, 1); /* opened once, hit twice */
    utc__ipc_lru_stats_t s = utc__ipc_lru_stats(&lru);
    CU_ASSERT(s.hits == 2 && s.opens == 1 && s.count == 1 && s.closes == 0);

    UTC_ASSERT_OK(use(&lru, 0, 2));
    UTC_ASSERT_OK(use(&lru, 0, 3));
    UTC_ASSERT_OK(use(&lru, 0, 1)); /* 1 is the most recent again: 2 is the oldest */
    UTC_ASSERT_OK(use(&lru, 0, 4));
    CU_ASSERT_EQUAL(c->closes, 1);
    CU_ASSERT_EQUAL(c->last_closed, 2);
    UTC_ASSERT_OK(use(&lru, 0, 5)); /* then 3 */
    CU_ASSERT_EQUAL(c->last_closed, 3);
    CU_ASSERT_EQUAL(utc__ipc_lru_stats(&lru).count, 3);
    CU_ASSERT_EQUAL(c->max_open, 3); /* never beyond the bound, even while opening */
    UTC_ASSERT_OK(use(&lru, 0, 2));  /* evicted: opened again */
    CU_ASSERT_EQUAL(c->opens, 6);

    utc__ipc_lru_fini(&lru);
    CU_ASSERT_EQUAL(c->closes, c->opens); /* fini closed the rest */
    CU_ASSERT_EQUAL(c->bad, 0);
    counter_free(c);
}

static void test_keys_are_whole(void)
{
    counter_t *c = counter_new();
    utc__ipc_lru_t lru;
    utc__ipc_lru_init(&lru, 16, &t_ops, c);
    utc__ipc_key_t a = make_key(1, 7), b = a, d = a, e = a;
    b.peer = 2;                           /* another peer */
    d.bytes[UTC__IPC_KEY_BYTES - 2] ^= 1; /* another handle, same id */
    e.id += NKEYS;                        /* another allocation, same handle */
    UTC_ASSERT_OK(utc__ipc_lru_use(&lru, &a, NULL, NULL, NULL));
    UTC_ASSERT_OK(utc__ipc_lru_use(&lru, &b, NULL, NULL, NULL));
    UTC_ASSERT_OK(utc__ipc_lru_use(&lru, &d, NULL, NULL, NULL));
    UTC_ASSERT_OK(utc__ipc_lru_use(&lru, &e, NULL, NULL, NULL));
    CU_ASSERT_EQUAL(c->opens, 4);
    UTC_ASSERT_OK(utc__ipc_lru_use(&lru, &d, NULL, NULL, NULL));
    CU_ASSERT_EQUAL(c->opens, 4);
    utc__ipc_lru_fini(&lru);
    counter_free(c);
}

static void test_failures(void)
{
    counter_t *c = counter_new();
    utc__ipc_lru_t lru;
    utc__ipc_lru_init(&lru, 4, &t_ops, c);
    c->fail_next = 1;
    CU_ASSERT_EQUAL(use(&lru, 0, 1), UTC_ERR_GPU);      /* open's error */
    CU_ASSERT_EQUAL(utc__ipc_lru_stats(&lru).count, 0); /* nothing cached */
    UTC_ASSERT_OK(use(&lru, 0, 1));                     /* opens again */
    CU_ASSERT_EQUAL(c->opens, 2);

    utc__ipc_key_t k = make_key(0, 1);
    CU_ASSERT_EQUAL(utc__ipc_lru_use(&lru, &k, NULL, t_fail, NULL), UTC_ERR_CANCELED);
    CU_ASSERT_EQUAL(utc__ipc_lru_stats(&lru).count, 1); /* fn's error: still cached */
    UTC_ASSERT_OK(use(&lru, 0, 1));
    CU_ASSERT_EQUAL(c->opens, 2);
    utc__ipc_lru_fini(&lru);
    CU_ASSERT_EQUAL(c->bad, 0);
    counter_free(c);
}

static void test_drops(void)
{
    counter_t *c = counter_new();
    utc__ipc_lru_t lru;
    utc__ipc_lru_init(&lru, 32, &t_ops, c);
    for (int i = 0; i < 10; i++)
        UTC_ASSERT_OK(use(&lru, i % 2 ? 5 : 6, i));
    utc__ipc_key_t k = make_key(6, 4);
    utc__ipc_lru_drop(&lru, &k);
    CU_ASSERT_EQUAL(c->closes, 1);
    CU_ASSERT_EQUAL(c->last_closed, 4);
    utc__ipc_lru_drop(&lru, &k); /* not cached any more: nothing */
    k = make_key(5, 4);          /* no such key: nothing */
    utc__ipc_lru_drop(&lru, &k);
    CU_ASSERT_EQUAL(c->closes, 1);

    utc__ipc_lru_drop_peer(&lru, 5); /* keys 1 3 5 7 9 */
    CU_ASSERT_EQUAL(c->closes, 6);
    for (int i = 1; i < 10; i += 2)
        CU_ASSERT_EQUAL(c->open_now[i], 0);
    for (int i = 0; i < 10; i += 2)
        CU_ASSERT_EQUAL(c->open_now[i], i == 4 ? 0 : 1);
    UTC_ASSERT_OK(use(&lru, 6, 0)); /* peer 6's still cached */
    CU_ASSERT_EQUAL(c->opens, 10);

    utc__ipc_lru_set_capacity(&lru, 2); /* 4 values held: the 2 oldest go (2, 6) */
    CU_ASSERT_EQUAL(utc__ipc_lru_stats(&lru).count, 2);
    CU_ASSERT(c->open_now[0] == 1 && c->open_now[8] == 1);
    UTC_ASSERT_OK(use(&lru, 6, 2));
    CU_ASSERT_EQUAL(c->last_closed, 8); /* the bound holds from now on */

    utc__ipc_lru_clear(&lru);
    CU_ASSERT_EQUAL(utc__ipc_lru_stats(&lru).count, 0);
    CU_ASSERT_EQUAL(c->closes, c->opens);
    UTC_ASSERT_OK(use(&lru, 6, 0)); /* usable after a clear */
    utc__ipc_lru_fini(&lru);
    CU_ASSERT_EQUAL(c->closes, c->opens);
    CU_ASSERT_EQUAL(c->bad, 0);
    counter_free(c);
}

static void test_byte_bound(void)
{
    counter_t *c = counter_new();
    utc__ipc_lru_t lru;
    utc__ipc_lru_init(&lru, 256, &t_ops_weighed, c);
    utc__ipc_lru_set_max_bytes(&lru, 100);
    for (int i = 0; i < 3; i++)
        UTC_ASSERT_OK(use_weighed(&lru, i, 30));
    CU_ASSERT_EQUAL(utc__ipc_lru_stats(&lru).bytes, 90);
    CU_ASSERT_EQUAL(c->closes, 0);
    UTC_ASSERT_OK(use_weighed(&lru, 3, 30)); /* 120 > 100: the oldest goes first */
    CU_ASSERT_EQUAL(c->closes, 1);
    CU_ASSERT_EQUAL(c->last_closed, 0);
    CU_ASSERT_EQUAL(utc__ipc_lru_stats(&lru).count, 3);
    CU_ASSERT_EQUAL(utc__ipc_lru_stats(&lru).bytes, 90);
    UTC_ASSERT_OK(use_weighed(&lru, 1, 30)); /* a hit: 1 is the newest now */
    CU_ASSERT_EQUAL(c->opens, 4);
    UTC_ASSERT_OK(use_weighed(&lru, 4, 30)); /* the least recently used is 2, not 1 */
    CU_ASSERT_EQUAL(c->last_closed, 2);
    CU_ASSERT(c->open_now[1] == 1 && c->open_now[2] == 0);

    /* larger than the bound: every other value goes, it is held alone, and goes next */
    UTC_ASSERT_OK(use_weighed(&lru, 5, 500));
    CU_ASSERT_EQUAL(utc__ipc_lru_stats(&lru).count, 1);
    CU_ASSERT_EQUAL(utc__ipc_lru_stats(&lru).bytes, 500);
    CU_ASSERT_EQUAL(c->open_now[5], 1);
    UTC_ASSERT_OK(use_weighed(&lru, 6, 10));
    CU_ASSERT_EQUAL(c->last_closed, 5);
    CU_ASSERT_EQUAL(utc__ipc_lru_stats(&lru).count, 1);
    CU_ASSERT_EQUAL(utc__ipc_lru_stats(&lru).bytes, 10);

    /* a lower bound closes the oldest, but for the newest */
    UTC_ASSERT_OK(use_weighed(&lru, 7, 40));
    UTC_ASSERT_OK(use_weighed(&lru, 8, 40));
    CU_ASSERT_EQUAL(utc__ipc_lru_stats(&lru).bytes, 90);
    utc__ipc_lru_set_max_bytes(&lru, 5);
    CU_ASSERT_EQUAL(utc__ipc_lru_stats(&lru).count, 1);
    CU_ASSERT_EQUAL(c->open_now[8], 1);
    utc__ipc_lru_set_max_bytes(&lru, 0); /* no byte bound: the count bound alone */
    for (int i = 10; i < 20; i++)
        UTC_ASSERT_OK(use_weighed(&lru, i, 1000));
    CU_ASSERT_EQUAL(utc__ipc_lru_stats(&lru).count, 11);
    utc__ipc_lru_set_capacity(&lru, 2); /* and the count bound holds with weights */
    CU_ASSERT_EQUAL(utc__ipc_lru_stats(&lru).count, 2);
    CU_ASSERT_EQUAL(utc__ipc_lru_stats(&lru).bytes, 2000);
    utc__ipc_lru_clear(&lru);
    CU_ASSERT_EQUAL(utc__ipc_lru_stats(&lru).bytes, 0);

    /* a writer that allocates a 16 MiB buffer per message and frees it after: 24 of them
     * held at most 64 MiB (4) at any time, not 24 */
    const size_t mib = (size_t)1 << 20;
    utc__ipc_lru_set_capacity(&lru, 256);
    utc__ipc_lru_set_max_bytes(&lru, 64 * mib);
    for (int i = 20; i < 44; i++) {
        UTC_ASSERT_OK(use_weighed(&lru, i, 16 * mib));
        CU_ASSERT(utc__ipc_lru_stats(&lru).bytes <= 64 * mib);
        CU_ASSERT(utc__ipc_lru_stats(&lru).count <= 4);
    }
    CU_ASSERT_EQUAL(utc__ipc_lru_stats(&lru).count, 4);
    utc__ipc_lru_fini(&lru);
    CU_ASSERT_EQUAL(c->closes, c->opens);
    CU_ASSERT_EQUAL(c->bad, 0);
    counter_free(c);
}

/* Random uses against a shadow list, most recent first: the same opens and closes. */
static void test_random_against_shadow(void)
{
    srand(77u + (unsigned)utc_test_rank());
    for (int round = 0; round < 40; round++) {
        size_t cap = 1 + (size_t)(rand() % 12);
        int nkeys = 1 + rand() % 24;
        counter_t *c = counter_new();
        utc__ipc_lru_t lru;
        utc__ipc_lru_init(&lru, cap, &t_ops, c);
        int shadow[NKEYS], n = 0; /* keys, most recent first */
        uint64_t opens = 0;
        int mismatches = 0;
        for (int step = 0; step < 2000; step++) {
            int i = rand() % nkeys;
            int at = -1;
            for (int j = 0; j < n; j++)
                if (shadow[j] == i)
                    at = j;
            int evicted = -1;
            if (at < 0) {
                opens++;
                if ((size_t)n == cap)
                    evicted = shadow[--n];
                at = n++;
            }
            memmove(shadow + 1, shadow, (size_t)at * sizeof shadow[0]);
            shadow[0] = i;
            int before = c->last_closed;
            c->last_closed = -1;
            UTC_ASSERT_OK(use(&lru, 3, i));
            if (c->last_closed != evicted || c->opens != opens)
                mismatches++;
            if (c->last_closed == -1)
                c->last_closed = before;
        }
        CU_ASSERT_EQUAL(mismatches, 0);
        CU_ASSERT(c->max_open <= (int)cap);
        CU_ASSERT_EQUAL(utc__ipc_lru_stats(&lru).count, (size_t)n);
        utc__ipc_lru_fini(&lru);
        CU_ASSERT_EQUAL(c->bad, 0);
        counter_free(c);
    }
}

/* ---- threads ---- */

#define NTHREADS 6
#define CAP      8

typedef struct worker {
    utc__ipc_lru_t *lru;
    unsigned seed;
    int errors;
} worker_t;

static void *worker(void *arg)
{
    worker_t *w = arg;
    for (int n = 0; n < 20000; n++) {
        int i = (int)(rand_r(&w->seed) % (2 * CAP));
        int peer = (int)(rand_r(&w->seed) % 2);
        utc__ipc_key_t k = make_key(peer, i + peer * 2 * CAP);
        int r = (int)(rand_r(&w->seed) % 100);
        if (r == 0)
            utc__ipc_lru_drop_peer(w->lru, peer);
        else if (r == 1)
            utc__ipc_lru_drop(w->lru, &k);
        else {
            int got = -1;
            /* t_use refuses a closed value: an eviction in between would show here */
            if (utc__ipc_lru_use(w->lru, &k, NULL, t_use, &got) != UTC_OK || got != key_index(&k))
                w->errors++;
        }
    }
    return NULL;
}

static void test_threads(void)
{
    counter_t *c = counter_new();
    utc__ipc_lru_t lru;
    utc__ipc_lru_init(&lru, CAP, &t_ops, c);
    pthread_t t[NTHREADS];
    worker_t w[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        w[i] = (worker_t){.lru = &lru, .seed = 1000u * (unsigned)utc_test_rank() + (unsigned)i};
        CU_ASSERT_FATAL(pthread_create(&t[i], NULL, worker, &w[i]) == 0);
    }
    int errors = 0;
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(t[i], NULL);
        errors += w[i].errors;
    }
    CU_ASSERT_EQUAL(errors, 0);
    CU_ASSERT_EQUAL(c->bad, 0);    /* no key open twice, no double close */
    CU_ASSERT(c->max_open <= CAP); /* the bound held throughout */
    utc__ipc_lru_stats_t s = utc__ipc_lru_stats(&lru);
    CU_ASSERT_EQUAL(s.opens - s.closes, s.count);
    CU_ASSERT_EQUAL(c->opens - c->closes, s.count);
    CU_ASSERT(s.hits > 0);
    utc__ipc_lru_fini(&lru);
    CU_ASSERT_EQUAL(c->opens, c->closes);
    counter_free(c);
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"hits and least-recently-used eviction", test_hits_and_eviction},
        {"keys compare whole", test_keys_are_whole},
        {"failed open, failed use", test_failures},
        {"drop, drop peer, capacity, clear", test_drops},
        {"a bound by bytes, with the count's", test_byte_bound},
        {"random uses against a shadow", test_random_against_shadow},
        {"threads share a cache", test_threads},
        UTC_TEST_END,
    };
    return utc_test_main(argc, argv, "ipc_cache", cases);
}
