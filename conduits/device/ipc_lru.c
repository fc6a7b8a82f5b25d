/* Device conduits: the bounded cache of opened IPC handles (see ipc_lru.h). */
#include "ipc_lru.h"

#include <assert.h>
#include <stdlib.h>

#include <uthash.h>

#include "base/errors.h"

typedef struct utc__ipc_lru_entry {
    utc__ipc_key_t key;
    void *value;
    size_t bytes;                             /* ops->weigh's */
    struct utc__ipc_lru_entry *newer, *older; /* the recency list */
    UT_hash_handle hh;
} entry_t;

void utc__ipc_lru_init(utc__ipc_lru_t *c, size_t capacity, const utc__ipc_lru_ops_t *ops, void *arg)
{
    assert(capacity >= 1 && ops && ops->open && ops->close);
    *c = (utc__ipc_lru_t){.ops = ops, .arg = arg, .capacity = capacity};
    pthread_mutex_init(&c->lock, NULL);
}

static void unlink_entry(utc__ipc_lru_t *c, entry_t *e)
{
    if (e->newer)
        e->newer->older = e->older;
    else
        c->mru = e->older;
    if (e->older)
        e->older->newer = e->newer;
    else
        c->lru = e->newer;
    e->newer = e->older = NULL;
}

static void push_mru(utc__ipc_lru_t *c, entry_t *e)
{
    e->newer = NULL;
    e->older = c->mru;
    if (c->mru)
        c->mru->newer = e;
    c->mru = e;
    if (!c->lru)
        c->lru = e;
}

/* Close e's value and free it. Under the lock. */
static void evict(utc__ipc_lru_t *c, entry_t *e)
{
    HASH_DEL(c->table, e);
    unlink_entry(c, e);
    c->ops->close(c->arg, &e->key, e->value);
    c->stats.closes++;
    c->stats.count--;
    c->stats.bytes -= e->bytes;
    free(e);
}

/* Close the least recently used values until at most `keep` are held and, with a byte
 * bound, `room` more bytes fit (or none is left). Under the lock. */
static void shrink_to(utc__ipc_lru_t *c, size_t keep, size_t room)
{
    while (c->stats.count > keep || (c->max_bytes && c->stats.count &&
                                     (room > c->max_bytes || c->stats.bytes > c->max_bytes - room)))
        evict(c, c->lru);
}

void utc__ipc_lru_fini(utc__ipc_lru_t *c)
{
    utc__ipc_lru_clear(c);
    pthread_mutex_destroy(&c->lock);
}

void utc__ipc_lru_set_capacity(utc__ipc_lru_t *c, size_t capacity)
{
    assert(capacity >= 1);
    pthread_mutex_lock(&c->lock);
    c->capacity = capacity;
    shrink_to(c, capacity, 0);
    pthread_mutex_unlock(&c->lock);
}

void utc__ipc_lru_set_max_bytes(utc__ipc_lru_t *c, size_t max_bytes)
{
    pthread_mutex_lock(&c->lock);
    c->max_bytes = max_bytes;
    /* the most recently used one stays, as after a miss */
    while (max_bytes && c->stats.count > 1 && c->stats.bytes > max_bytes)
        evict(c, c->lru);
    pthread_mutex_unlock(&c->lock);
}

utc_status_t utc__ipc_lru_use(utc__ipc_lru_t *c, const utc__ipc_key_t *key, const void *ctx,
                              utc_status_t (*fn)(void *fn_arg, void *value), void *fn_arg)
{
    utc_status_t st = UTC_OK;
    pthread_mutex_lock(&c->lock);
    entry_t *e;
    HASH_FIND(hh, c->table, key, sizeof *key, e);
    if (e) {
        c->stats.hits++;
        unlink_entry(c, e);
    } else {
        e = calloc(1, sizeof *e);
        if (!e) {
            st = utc__error(UTC_ERR_NO_MEMORY, "device conduit: no memory for an IPC cache entry");
            goto out;
        }
        /* make room first: the value closed may be the one that holds the resource the
         * open needs (a mapping's address range, device memory) */
        e->bytes = c->ops->weigh ? c->ops->weigh(c->arg, key, ctx) : 0;
        shrink_to(c, c->capacity - 1, e->bytes);
        c->stats.opens++;
        e->key = *key;
        st = c->ops->open(c->arg, key, ctx, &e->value);
        if (st != UTC_OK) {
            free(e);
            goto out;
        }
        HASH_ADD(hh, c->table, key, sizeof e->key, e);
        c->stats.count++;
        c->stats.bytes += e->bytes;
    }
    push_mru(c, e);
    if (fn)
        st = fn(fn_arg, e->value);
out:
    pthread_mutex_unlock(&c->lock);
    return st;
}

void utc__ipc_lru_drop(utc__ipc_lru_t *c, const utc__ipc_key_t *key)
{
    pthread_mutex_lock(&c->lock);
    entry_t *e;
    HASH_FIND(hh, c->table, key, sizeof *key, e);
    if (e)
        evict(c, e);
    pthread_mutex_unlock(&c->lock);
}

void utc__ipc_lru_drop_peer(utc__ipc_lru_t *c, int64_t peer)
{
    pthread_mutex_lock(&c->lock);
    entry_t *e, *tmp;
    HASH_ITER(hh, c->table, e, tmp)
    {
        if (e->key.peer == peer)
            evict(c, e);
    }
    pthread_mutex_unlock(&c->lock);
}

void utc__ipc_lru_clear(utc__ipc_lru_t *c)
{
    pthread_mutex_lock(&c->lock);
    shrink_to(c, 0, 0);
    pthread_mutex_unlock(&c->lock);
}

utc__ipc_lru_stats_t utc__ipc_lru_stats(utc__ipc_lru_t *c)
{
    pthread_mutex_lock(&c->lock);
    utc__ipc_lru_stats_t s = c->stats;
    pthread_mutex_unlock(&c->lock);
    return s;
}
