/*
 * Conduit service: the asynchronous operations a multi-threaded task has in flight on one
 * end of a conduit, keyed by what makes a message: direction (write or read), peer rank,
 * tag, buffer and size. Blocking calls are made by every local thread and one transfers;
 * an asynchronous call is one message per call. So when a sibling thread starts the very
 * operation another thread of the task has in flight (same key), it is the same logical
 * message started twice (code written for the blocking rule), and it is refused instead
 * of being sent twice (issue 22, item 4). Only ends with more than one local thread keep
 * a set; one thread's own repeated operations are its business.
 */
#ifndef UTC_CONDUITS_INFLIGHT_H
#define UTC_CONDUITS_INFLIGHT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct utc__inflight_entry utc__inflight_entry_t;

typedef struct utc__inflight {
    pthread_mutex_t lock;
    utc__inflight_entry_t *map;
} utc__inflight_t;

/* What an operation is. Hashed and compared as bytes: no implicit padding (`zero` fills
 * the last word and must be 0). */
typedef struct utc__inflight_key {
    const void *buf;
    size_t size;
    int op;   /* send or receive */
    int peer; /* world rank */
    int tag;
    int zero;
} utc__inflight_key_t;

void utc__inflight_init(utc__inflight_t *s);

/* Free the set and what is still in it. */
void utc__inflight_fini(utc__inflight_t *s);

/* Record operation `k` started by local thread `thread`: its entry (for
 * utc__inflight_remove), or NULL when a sibling thread has the same operation in flight
 * (*owner: that thread) or out of memory (*owner = -1; the operation goes unchecked). */
utc__inflight_entry_t *utc__inflight_add(utc__inflight_t *s, const utc__inflight_key_t *k,
                                         int thread, int *owner);

/* The operation recorded as `e` completed (NULL: it was not recorded; nothing to do). */
void utc__inflight_remove(utc__inflight_t *s, utc__inflight_entry_t *e);

#endif /* UTC_CONDUITS_INFLIGHT_H */
