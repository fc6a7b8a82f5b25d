/*
 * Internals of the conduits module: the conduit object, requests, and the transport
 * interface that the transports implement (service/transport.h).
 *
 * A conduit holds, on a rank, at most one transport of each component of the component
 * table (conduits/components.c): the ones that the pairs of ranks this rank talks to pick
 * (utc__transport_pick), by the component's index. A shared conduit holds its shared
 * transport instead. Every operation, blocking or not, is a request handed to one of them:
 * start, then progress/wait, then (for timed-out reads) cancel.
 */
#ifndef UTC_CONDUIT_INTERNAL_H
#define UTC_CONDUIT_INTERNAL_H

#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <utc/conduit.h>

#include "utc_internal.h"

#include "service/buffer.h"
#include "service/inflight.h"
#include "service/request.h"
#include "service/transport.h"
#include "service/wait.h"

/* The slot of a shared conduit's transport in utc_conduit_t.tp. */
#define UTC__CONDUIT_SHARED_TP UTC__TRANSPORT_MAX

/* A counter on a cache line of its own. */
typedef struct utc__conduit_count {
    alignas(64) atomic_uint n;
} utc__conduit_count_t;

/* One end of the conduit (a task) as this rank sees it. */
typedef struct utc__conduit_end {
    utc_task_t *task;
    char name[64];         /* the task's name, kept for messages: a task destroyed before
                            * the conduit is gone while operations still report it */
    int nlocal;            /* threads of the task on this rank */
    int entry_rank;
    int ngroup;            /* ranks holding threads of the task */
    int *group_ranks;      /* copied from the task */
    /* "every local thread calls, thread 0 transfers" (only when nlocal > 1): results are
     * double-buffered by the parity of each thread's operation count, so one barrier per
     * operation suffices (thread 0 cannot overwrite slot k before everyone has passed the
     * next barrier, i.e. has read slot k). */
    utc__barrier_t barrier;
    unsigned *op_count;    /* per local thread; touched only by that thread */
    utc_status_t rc[2];
    size_t received[2];
    void *obuf[2];
    utc_msg_info_t info[2];
    char errmsg[2][256];
    /* asynchronous operations in flight (only when nlocal > 1): a sibling thread's second
     * start of the same one is refused */
    utc__inflight_t inflight;
    /* its threads on this rank closed their writing (utc_conduit_close) */
    atomic_bool wclosed;
} utc__conduit_end_t;

struct utc_conduit {
    int id;
    utc_conduit_options_t opts;
    utc__conduit_end_t end[2];           /* 0: source task, 1: destination task */
    /* Its ends: `end` (2) for a conduit between two tasks; for a shared conduit its
     * members, the `nwriters` writers first, then the readers. A request's and a failure's
     * end is an index here; a writer sends in direction 0, a reader reads it. */
    utc__conduit_end_t *ends;
    int nends, nwriters;
    bool shared;                         /* made by utc_conduit_create_shared */
    utc_shared_mode_t shared_mode;
    /* its transports on this rank: tp[i] of component i, or NULL; a shared conduit's
     * shared transport in tp[UTC__CONDUIT_SHARED_TP] (the others NULL) */
    utc__transport_t *tp[UTC__TRANSPORT_MAX + 1];
    utc_conduit_transport_t entry_transport;
    const char *entry_name;              /* its component's name ("inproc", "mpi", ...) */
    utc_conduit_t *self;                 /* registry key: the handle itself */
    UT_hash_handle hh;                   /* registry of live conduits */
    /*
     * Lifetime (doc/guide/lifetimes.md). A blocking call marks its thread (utc__call_enter)
     * and a request counts in its end's `nreq` until it is waited for; neither writes a
     * line the other end uses. utc_conduit_destroy sets `dead` (new calls are refused),
     * shuts the transports down (pending operations end with UTC_ERR_CANCELED), waits for
     * the marked threads to leave, sets `closed`; the conduit is freed by the destroy or by
     * the last request, whichever comes last. The object goes back to a pool, so a late look
     * through a stale handle touches memory that is still a conduit.
     */
    utc__conduit_count_t nreq[2];        /* requests in flight, per end */
    alignas(64) atomic_bool dead;        /* destroyed: new operations are refused */
    atomic_bool closed;                  /* destroy is done with it */
    atomic_bool pooled;                  /* in the pool (freed once per life) */
    utc_conduit_t *pool_next;
    utc_conduit_t *closed_prev, *closed_next; /* destroyed, requests still out */
    bool in_closed;
    uint16_t gen;  /* its handle's generation (base/handle.h): new at each reuse */
};

#endif /* UTC_CONDUIT_INTERNAL_H */
