/*
 * Conduit service: asynchronous operations in flight per conduit end (inflight.h). A hash
 * of keys under one mutex; an entry counts the operations with its key, all from one
 * thread.
 */
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "service/inflight.h"

_Static_assert(sizeof(utc__inflight_key_t) == 2 * sizeof(void *) + 4 * sizeof(int) &&
                   sizeof(size_t) == sizeof(void *),
               "the in-flight key has no padding: it is hashed as bytes");

struct utc__inflight_entry {
    utc__inflight_key_t key;
    int thread;
    unsigned count;
    UT_hash_handle hh;
};

void utc__inflight_init(utc__inflight_t *s)
{
    pthread_mutex_init(&s->lock, NULL);
    s->map = NULL;
}

void utc__inflight_fini(utc__inflight_t *s)
{
    utc__inflight_entry_t *e, *tmp;
    HASH_ITER(hh, s->map, e, tmp) {
        HASH_DEL(s->map, e);
        free(e);
    }
    pthread_mutex_destroy(&s->lock);
}

utc__inflight_entry_t *utc__inflight_add(utc__inflight_t *s, const utc__inflight_key_t *k,
                                         int thread, int *owner)
{
    utc__inflight_key_t key = *k;
    key.zero = 0;
    utc__inflight_entry_t *e;
    pthread_mutex_lock(&s->lock);
    HASH_FIND(hh, s->map, &key, sizeof key, e);
    if (e && e->thread != thread) {
        *owner = e->thread;
        pthread_mutex_unlock(&s->lock);
        return NULL;
    }
    if (!e && (e = malloc(sizeof *e))) {
        e->key = key;
        e->thread = thread;
        e->count = 0;
        HASH_ADD(hh, s->map, key, sizeof key, e);
    }
    if (e)
        e->count++;
    pthread_mutex_unlock(&s->lock);
    *owner = -1;
    return e;
}

void utc__inflight_remove(utc__inflight_t *s, utc__inflight_entry_t *e)
{
    if (!e)
        return;
    pthread_mutex_lock(&s->lock);
    if (--e->count == 0) {
        HASH_DEL(s->map, e);
        free(e);
    }
    pthread_mutex_unlock(&s->lock);
}
