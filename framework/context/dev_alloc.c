/*
 * Device allocations that belong to UTC's users (dev_alloc.h): a hash of addresses under
 * one lock.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include <uthash.h>

#include "base/errors.h"
#include "context/dev_alloc.h"

typedef struct dev_alloc {
    uintptr_t ptr;
    size_t size;
    int device;
    UT_hash_handle hh;
} dev_alloc_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static dev_alloc_t *table;
static size_t count;
/* set once at start-up, before threads free: relaxed */
static _Atomic(void (*)(const void *)) on_free;

utc_status_t utc__dev_alloc_add(void *ptr, size_t size, int device)
{
    dev_alloc_t *a = malloc(sizeof *a);
    if (!a)
        return utc__error(UTC_ERR_NO_MEMORY, "out of memory recording a device allocation");
    a->ptr = (uintptr_t)ptr;
    a->size = size;
    a->device = device;
    pthread_mutex_lock(&lock);
    dev_alloc_t *old = NULL;
    HASH_FIND(hh, table, &a->ptr, sizeof a->ptr, old);
    if (old) { /* the address came back from CUDA: the old record is stale */
        HASH_DEL(table, old);
        free(old);
        count--;
    }
    HASH_ADD(hh, table, ptr, sizeof a->ptr, a);
    count++;
    pthread_mutex_unlock(&lock);
    return UTC_OK;
}

static bool lookup(const void *ptr, size_t *size, int *device, bool take)
{
    uintptr_t key = (uintptr_t)ptr;
    pthread_mutex_lock(&lock);
    dev_alloc_t *a = NULL;
    HASH_FIND(hh, table, &key, sizeof key, a);
    if (a) {
        if (size)
            *size = a->size;
        if (device)
            *device = a->device;
        if (take) {
            HASH_DEL(table, a);
            free(a);
            count--;
        }
    }
    pthread_mutex_unlock(&lock);
    return a != NULL;
}

bool utc__dev_alloc_find(const void *ptr, size_t *size, int *device)
{
    return lookup(ptr, size, device, false);
}

bool utc__dev_alloc_take(const void *ptr, size_t *size, int *device)
{
    return lookup(ptr, size, device, true);
}

size_t utc__dev_alloc_count(void)
{
    pthread_mutex_lock(&lock);
    size_t n = count;
    pthread_mutex_unlock(&lock);
    return n;
}

void utc__dev_alloc_on_free(void (*fn)(const void *ptr))
{
    atomic_store_explicit(&on_free, fn, memory_order_relaxed); /* see on_free */
}

void utc__dev_alloc_freeing(const void *ptr)
{
    void (*fn)(const void *) = atomic_load_explicit(&on_free, memory_order_relaxed);
    if (fn)
        fn(ptr);
}

/* set once, read by any thread; it orders nothing else: relaxed */
static atomic_bool in_use;

void utc__dev_mark_in_use(void)
{
    if (!atomic_load_explicit(&in_use, memory_order_relaxed))
        atomic_store_explicit(&in_use, true, memory_order_relaxed); /* see in_use */
}

bool utc__dev_in_use(void)
{
    return atomic_load_explicit(&in_use, memory_order_relaxed); /* see in_use */
}
