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
#include "base/wait_hook.h"
#include "observe/trace.h"

/* A host conduit's buffers of this many bytes or more are checked for device memory once
 * the process uses CUDA (utc__dev_in_use): a smaller one costs no look. */
#define UTC__DEVCHECK_MIN 4096

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
    void *fence[2]; /* a device conduit's: thread 0's transfer, for the others to wait
                     * for (utc__device_fence_take); dropped at the slot's next use */
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


/* ---- what the conduit's files share (one file each: registry.c, create.c, route.c,
 * transfer.c, all_threads.c, async.c, failures.c, api.c) ----
 *
 * Hidden: calls between them stay direct calls inside the library. */
#define UTC__CONDUIT_API __attribute__((visibility("hidden")))

/* One operation as the public API asked for it. */
typedef struct xfer {
    const char *fn;
    const char *solo; /* an all-threads call's form for one named thread (NULL: none) */
    utc__op_t op;
    bool owned;
    bool all;        /* every local thread calls; thread 0 transfers */
    bool by;         /* *_by: only `thread` transfers */
    bool named_peer; /* _to/_from: `peer` named; else the other task's entry rank */
    bool timed;      /* read_timeout: `timeout` applies */
    bool any_tag;    /* read_any, probes: UTC_ANY_TAG is a tag */
    bool probe;      /* a probe: look, take nothing */
    bool nowait;     /* iprobe: none there is UTC_ERR_TIMEOUT, with no message */
    bool close;      /* utc_conduit_close: the end of stream, no message */
    int thread;
    int peer;
    int tag;
    const void *sbuf;
    void *rbuf;
    size_t size;     /* send: message size; recv: capacity */
    double timeout;  /* seconds */
    utc_msg_info_t *info; /* read_any, probes: what the message is (the caller's) */
} xfer_t;

/* Where an operation goes, once its arguments have been checked. */
typedef struct route {
    utc_ctx_t *ctx;
    int end;        /* the caller's role: 0 source task (a shared conduit's writer), 1
                     * destination task (a reader) */
    int member;     /* the caller's end in c->ends (= end, but in a shared conduit) */
    utc__conduit_end_t *e; /* that end */
    int peer;       /* world rank of the other end (a shared conduit: the first member on
                     * the other side; its waits name them all) */
    utc__transport_t *tp;
    bool skip;      /* *_by called by a thread other than the named one */
} route_t;

/*
 * A thread's last route of a plain operation (no _by, no named peer) on a two-task conduit,
 * one per kind (write, read): a fine-grained exchange makes the same call on the same
 * conduit over and over, and finding the caller's end and peer again each time was most of
 * a call's own cost. It holds while the handle is current (utc__conduit_epoch moves on
 * every destroy of a conduit) and the caller is the same thread context of the same task (a destroyed
 * task's address is never another task's before utc_finalize: task.c's tombs).
 */
typedef struct route_memo {
    const utc_conduit_t *h;
    unsigned epoch;
    const utc_ctx_t *ctx;
    const utc_task_t *task;
    route_t r;
} route_memo_t;

/* The name of end e's task, for messages (kept: the task may be gone). */
static inline const char *utc__conduit_label(const utc__conduit_end_t *e) { return e->name; }

/* End `i` of c (a failure's fail_end comes from another thread: kept in range). */
static inline const utc__conduit_end_t *utc__conduit_end_at(const utc_conduit_t *c, int i)
{
    return &c->ends[(unsigned)i % (unsigned)c->nends];
}

/* Whether world rank `rank` holds threads of end e's task. */
static inline bool utc__conduit_in_group(const utc__conduit_end_t *e, int rank)
{
    for (int i = 0; i < e->ngroup; i++)
        if (e->group_ranks[i] == rank)
            return true;
    return false;
}

/* What a wait on c says beyond its peer: a shared conduit's members on the other side and
 * a reader's asks, told only when the watchdog reports the wait. NULL for two tasks. */
static inline const utc__wait_detail_t *utc__conduit_wait_detail(const utc_conduit_t *c,
                                                                 int member, int tag,
                                                                 utc__shared_wait_t *w)
{
    if (!c->shared)
        return NULL;
    utc__shared_wait_init(w, c->tp[UTC__CONDUIT_SHARED_TP], member, tag);
    return &w->base;
}

/* UTC__WAIT_CALL with utc__conduit_wait_detail's account of a wait by `member` of conduit c. */
#define CONDUIT_WAIT_CALL(kind, c, member, tag, peer, name, call)                           \
    __extension__({                                                                        \
        utc__shared_wait_t cw_detail_;                                                     \
        UTC__WAIT_CALL_DETAIL(kind, (c)->id, tag, peer, name,                              \
                              utc__conduit_wait_detail(c, member, tag, &cw_detail_), call); \
    })

/* The profiling event of a finished operation: a transfer when it moved a message. */
static inline utc__ev_t utc__conduit_prof_event(const utc_request_t *req, utc_status_t rc)
{
    if (rc != UTC_OK)
        return UTC__EV_CONDUIT_WAIT;
    return req->op == UTC__OP_SEND ? UTC__EV_CONDUIT_WRITE : UTC__EV_CONDUIT_READ;
}

static inline int64_t utc__conduit_prof_bytes(const utc_request_t *req, utc_status_t rc)
{
    if (rc != UTC_OK)
        return 0;
    return (int64_t)(req->op == UTC__OP_SEND ? req->size : req->received);
}

/* An operation as a value: XFER(.fn = ..., .op = ...). */
#define XFER(...) ((xfer_t){__VA_ARGS__})


/* registry.c: live conduits, handles, the objects' pool and lifetime */

/* Bumped by every destroy: a thread's caches of live conduits (the handle cache, the
 * route memo) hold while it has not moved. */
UTC__CONDUIT_API extern atomic_uint utc__conduit_epoch;
/* The conduit behind handle h, or the error (not live, stale) in `fn`'s name. */
UTC__CONDUIT_API utc_status_t utc__conduit_get(const utc_conduit_t *h, const char *fn,
                                               utc_conduit_t **out);
/* A conduit object, zeroed but for its lifetime counts (from the pool or new), or NULL. */
UTC__CONDUIT_API utc_conduit_t *utc__conduit_alloc(void);
/* The next conduit id: every rank creates conduits in the same order, so ids agree. */
UTC__CONDUIT_API int utc__conduit_new_id(void);
/* c is made: it becomes live (found by its handle, destroyed by utc_finalize). */
UTC__CONDUIT_API void utc__conduit_register(utc_conduit_t *c);
/* Free what c holds (its transports, its ends) and put it back in the pool. */
UTC__CONDUIT_API void utc__conduit_free(utc_conduit_t *c);
/* Call fn(c, arg) for every live conduit, under the registry's lock (fn takes no other
 * conduit lock and does not block for long). */
UTC__CONDUIT_API void utc__conduits_each(void (*fn)(utc_conduit_t *c, void *arg), void *arg);
/* The end whose request count a request is in: its caller's. */
UTC__CONDUIT_API int utc__conduit_req_end(const utc_request_t *req);
/* A request of end e is made (refused, with the error, once the conduit is destroyed) /
 * leaves (the last one after the destroy frees the conduit). */
UTC__CONDUIT_API utc_status_t utc__conduit_req_ref(utc_conduit_t *c, int e, const char *fn);
UTC__CONDUIT_API void utc__conduit_req_unref(utc_conduit_t *c, int e);
/* utc__conduit_req_ref without the message: false when refused. */
UTC__CONDUIT_API bool utc__conduit_req_ref_quiet(utc_conduit_t *c, int e);
/* The index in c->ends of `task`'s end (the first), or -1. */
UTC__CONDUIT_API int utc__conduit_end_of_task(const utc_conduit_t *c, const utc_task_t *task);

/* route.c: where an operation goes */

/* The thread's last route of a plain write ([1]) and read ([0]) (see route_memo_t). */
UTC__CONDUIT_API extern _Thread_local route_memo_t utc__conduit_route_memo[2];
/* c's transport between this rank `me` and world rank `peer` (the pick's), or NULL; a
 * shared conduit's shared transport. */
UTC__CONDUIT_API utc__transport_t *utc__conduit_tp(const utc_conduit_t *c, int me, int peer);
/* Check operation x on handle h (the conduit, the caller's end, the arguments) and find
 * its route: end, peer, transport (r->skip: a _by call for another thread). */
UTC__CONDUIT_API utc_status_t utc__conduit_route(const utc_conduit_t *h, const xfer_t *x,
                                                 route_t *r);
/* Operation x's buffer on device conduit c, checked against the calling thread's device
 * (UTC_OK for a host conduit). utc__conduit_route leaves it to the transferring thread of
 * an all-threads call (all_threads.c). */
UTC__CONDUIT_API utc_status_t utc__conduit_check_device_buffer(const utc_conduit_t *c,
                                                               const xfer_t *x);
/* Make req the request of operation x on route r of c. */
UTC__CONDUIT_API void utc__conduit_req_init(utc_request_t *req, utc_conduit_t *c,
                                            const xfer_t *x, const route_t *r);

/* transfer.c: one operation on the calling thread, start to result */

/* The status of a completed request, with the caller's error message. */
UTC__CONDUIT_API utc_status_t utc__conduit_req_result(const char *fn, const utc_request_t *req,
                                                      size_t *received, void **obuf);
/* Hand req to its transport, the thread marked as starting (see transfer.c). */
UTC__CONDUIT_API utc_status_t utc__conduit_start(utc_conduit_t *c, const route_t *r,
                                                 utc_request_t *req);
/* A write after this rank's writers at the caller's end closed their side: true, *rc the
 * error. */
UTC__CONDUIT_API bool utc__conduit_closed_for_writes(utc_conduit_t *c, const xfer_t *x,
                                                     const route_t *r, utc_status_t *rc);
/* Run one operation to completion on the calling thread. Blocks. */
UTC__CONDUIT_API utc_status_t utc__conduit_perform(utc_conduit_t *c, const xfer_t *x,
                                                   const route_t *r, size_t *received,
                                                   void **obuf);
/* The express path of a plain blocking write or read: false, with nothing done, when the
 * call is not one it takes; else true with *rcp its status. */
UTC__CONDUIT_API bool utc__conduit_express(utc_conduit_t *h, utc__op_t op, const void *sbuf,
                                           void *rbuf, size_t size, int tag, size_t *received,
                                           utc_status_t *rcp);
/* What the express paths share (transfer.c): the memo's route for a plain call of `op` by
 * a task's only thread, its arguments' checks, and the looks at the conduit and the
 * transport that a start needs; the calling thread is then in the call and starting
 * (utc__call_starting), *ctxp its context. NULL, with nothing done, when the call is not
 * of that kind. */
UTC__CONDUIT_API const route_t *utc__conduit_express_enter(utc_conduit_t *h, utc__op_t op,
                                                           const void *sbuf, const void *rbuf,
                                                           size_t size, int tag, utc_ctx_t **ctxp);

/* The request of an express call on route r (utc__conduit_req_init's, written out: keep
 * the twins in step). */
static inline void utc__conduit_express_req(utc_request_t *req, utc_conduit_t *c, const route_t *r,
                                            utc__op_t op, const void *sbuf, void *rbuf, size_t size,
                                            int tag)
{
    utc__req_prepare(req, op, op == UTC__OP_SEND ? r->end : 1 - r->end, tag, r->peer, r->tp);
    req->conduit = c;
    req->member = r->member;
    req->sbuf = sbuf;
    req->rbuf = rbuf;
    req->size = size;
}

/* The express path of a plain asynchronous write its transport sends at once: false, with
 * nothing done, when it is not one; else true with *out a completed request's handle. */
UTC__CONDUIT_API bool utc__conduit_express_iwrite(utc_conduit_t *h, const void *sbuf,
                                                  size_t size, int tag, utc_request_t **out);

/* The express path of a plain asynchronous read (async.c): false, with nothing done, when
 * it is not one; else true with *rcp the status and, when UTC_OK, *out the handle of a
 * solo request. */
UTC__CONDUIT_API bool utc__conduit_express_iread(utc_conduit_t *h, void *rbuf, size_t size, int tag,
                                                 utc_request_t **out, utc_status_t *rcp);

/* all_threads.c: a blocking operation, every local thread calling and thread 0 moving it,
 * or one named thread (the caller's thread marked as in a call on the conduit) */
UTC__CONDUIT_API utc_status_t utc__conduit_run_op(utc_conduit_t *h, const xfer_t *x,
                                                  size_t *received, void **obuf);

/* async.c: requests (iwrite, iread, test, wait, cancel) */
UTC__CONDUIT_API utc_status_t utc__conduit_start_async(utc_conduit_t *c, const xfer_t *x,
                                                       utc_request_t **out);

/* failures.c: failed and destroyed tasks */

/* UTC_ERR_PEER_FAILED, naming the task that failed, its rank and its error; or
 * UTC_ERR_CANCELED, naming the task being destroyed (tp's failure record). */
UTC__CONDUIT_API utc_status_t utc__conduit_peer_failed(const utc_conduit_t *c,
                                                       utc__transport_t *tp, const char *fn);

#endif /* UTC_CONDUIT_INTERNAL_H */
