/*
 * Device conduits: the bounded cache behind the CUDA IPC handles (ipc_cache.c), as plain C
 * so that it builds and is tested without a device (tests/conduits/test_ipc_cache.c).
 *
 * A cache maps a key (a peer and up to 64 bytes: an allocation id and a memory handle, or
 * an event handle) to a value that an `open` function made (a mapped pointer, an opened
 * event) and that a `close` function undoes. It holds at most `capacity` values, and, when
 * a byte bound is set (utc__ipc_lru_set_max_bytes) and the ops weigh values, at most that
 * many bytes of them besides the newest: a miss closes the least recently used values
 * first until the new one fits both bounds (a value larger than the byte bound is held
 * alone). Opening costs (cudaIpcOpenMemHandle: about 260 us on the H100), so a hit never
 * opens again.
 *
 * A value is used only inside utc__ipc_lru_use's callback, under the cache's lock: an
 * eviction by another thread (also under the lock) cannot close it in between. What the
 * callback queues on a stream and what close must wait for before it unmaps is the owner's
 * business (ipc_cache.c records an event after each use and close waits for it).
 *
 * Thread-safe: one mutex per cache. open and close run under it and must not call back
 * into the same cache.
 */
#ifndef UTC_CONDUITS_DEVICE_IPC_LRU_H
#define UTC_CONDUITS_DEVICE_IPC_LRU_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <utc/status.h>

/* The key bytes' room: a CUDA IPC handle (CUDA_IPC_HANDLE_SIZE). */
#define UTC__IPC_KEY_BYTES 64

/* A key: compared byte for byte (no padding: fill every field; unused bytes zero). */
typedef struct utc__ipc_key {
    int64_t peer; /* the exporting process (a world rank); -1 for this process's own */
    uint64_t id;  /* the allocation's id (memory), 0 (events) */
    unsigned char bytes[UTC__IPC_KEY_BYTES]; /* the handle */
} utc__ipc_key_t;

/* What a cache does on a miss and on an eviction. */
typedef struct utc__ipc_lru_ops {
    /* Make the value of `key` (ctx: utc__ipc_lru_use's, for what the key does not hold).
     * On error sets the last-error message; nothing is cached. */
    utc_status_t (*open)(void *arg, const utc__ipc_key_t *key, const void *ctx, void **value);
    /* Undo open (eviction, utc__ipc_lru_drop_peer, utc__ipc_lru_clear). Never fails. */
    void (*close)(void *arg, const utc__ipc_key_t *key, void *value);
    /* Optional: the bytes the value of `key` holds (ctx as for open), known before it is
     * opened, for the byte bound. NULL: values weigh nothing. */
    size_t (*weigh)(void *arg, const utc__ipc_key_t *key, const void *ctx);
} utc__ipc_lru_ops_t;

/* Counts since init, for tests and the benchmark's summary. */
typedef struct utc__ipc_lru_stats {
    uint64_t hits;
    uint64_t opens;  /* misses that opened (including failed opens) */
    uint64_t closes; /* evictions, drops and clears */
    size_t count;    /* values held now */
    size_t bytes;    /* their weight (ops->weigh) */
} utc__ipc_lru_stats_t;

struct utc__ipc_lru_entry;

/* A cache: embed it and init it before any other call. */
typedef struct utc__ipc_lru {
    pthread_mutex_t lock;
    const utc__ipc_lru_ops_t *ops;
    void *arg;
    size_t capacity;
    size_t max_bytes;                 /* the byte bound; 0: none */
    struct utc__ipc_lru_entry *table; /* uthash, by key */
    struct utc__ipc_lru_entry *mru;   /* most recently used; list to the least */
    struct utc__ipc_lru_entry *lru;   /* least recently used: the next to evict */
    utc__ipc_lru_stats_t stats;
} utc__ipc_lru_t;

/* A cache of `capacity` (>= 1) values with these ops (static: the caller keeps them). */
void utc__ipc_lru_init(utc__ipc_lru_t *c, size_t capacity, const utc__ipc_lru_ops_t *ops,
                       void *arg);
/* Close every value and free the cache's memory; init it again to reuse it. */
void utc__ipc_lru_fini(utc__ipc_lru_t *c);

/* Change the bound; closes the least recently used values beyond it. capacity >= 1. */
void utc__ipc_lru_set_capacity(utc__ipc_lru_t *c, size_t capacity);
/* Set the byte bound (0: none, the default); closes the least recently used values beyond
 * it, but for the most recently used one. */
void utc__ipc_lru_set_max_bytes(utc__ipc_lru_t *c, size_t max_bytes);

/*
 * Find key's value, or open it (closing the least recently used values first until it
 * fits the bounds), make it the most recently used, and call fn(fn_arg, value) under the
 * cache's lock; fn's status is returned. fn may be NULL (only open). May block (open).
 * @return UTC_OK; open's error (nothing cached); fn's error (the value stays cached);
 *         UTC_ERR_NO_MEMORY.
 */
utc_status_t utc__ipc_lru_use(utc__ipc_lru_t *c, const utc__ipc_key_t *key, const void *ctx,
                              utc_status_t (*fn)(void *fn_arg, void *value), void *fn_arg)
    __attribute__((warn_unused_result));

/* Close and forget key's value, if cached (the owner freed what it names). */
void utc__ipc_lru_drop(utc__ipc_lru_t *c, const utc__ipc_key_t *key);
/* Close and forget every value of `peer` (its end closed or failed). */
void utc__ipc_lru_drop_peer(utc__ipc_lru_t *c, int64_t peer);
/* Close and forget every value (the cache stays usable). */
void utc__ipc_lru_clear(utc__ipc_lru_t *c);

/* The counts now. */
utc__ipc_lru_stats_t utc__ipc_lru_stats(utc__ipc_lru_t *c);

#endif /* UTC_CONDUITS_DEVICE_IPC_LRU_H */
