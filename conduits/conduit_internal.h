/*
 * Internals of the conduits module: the conduit object, requests, and the transport
 * interface that the in-process (shm/) and MPI (mpi/) transports implement.
 *
 * A conduit holds up to two transports on a rank: `local` (in-process rings, when this
 * rank holds both ends) and `remote` (MPI, when some pair of ends is on different ranks).
 * Every operation, blocking or not, is a request handed to one of them: start, then
 * progress/wait, then (for timed-out reads) cancel.
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

typedef struct utc__transport utc__transport_t;

/* Direction of a message: 0 from the source task to the destination task, 1 back. */
enum { UTC__DIR_FWD = 0, UTC__DIR_BACK = 1 };

typedef enum { UTC__OP_SEND = 1, UTC__OP_RECV = 2 } utc__op_t;

/* Request states. Only PENDING -> MATCHED -> DONE or PENDING -> DONE. */
enum { UTC__REQ_PENDING = 0, UTC__REQ_MATCHED = 1, UTC__REQ_DONE = 2 };

#define UTC__REQ_MAGIC 0x43524551u /* "CREQ" */

/* What an in-process message is, as a ring slot or a queued message describes it. */
typedef enum {
    UTC__MSG_INLINE = 1, /* the bytes are in the slot (or in the queued message) */
    UTC__MSG_LARGE = 2,  /* `ptr` is the writer's buffer; the writer waits for the copy */
    UTC__MSG_OWNED = 3   /* `ptr` is a utc_buf_alloc buffer handed over with the message */
} utc__msg_kind_t;

typedef struct utc__msg_desc {
    utc__msg_kind_t kind;
    size_t size;
    const void *ptr;       /* LARGE, OWNED */
    utc_request_t *wreq;   /* LARGE: the writer's request, completed after the copy */
} utc__msg_desc_t;

/* One operation. Blocking calls keep it on their stack; iwrite/iread allocate it. */
struct utc_request {
    uint32_t magic;
    utc__op_t op;
    bool owned;            /* send: sbuf is handed over; recv: wants a buffer of its own */
    bool heap;             /* from iwrite/iread: freed when test/wait reports completion */
    int dir;               /* direction of the message (UTC__DIR_*) */
    int tag;
    int peer;              /* world rank of the other end */
    utc__transport_t *tp;
    utc_conduit_t *conduit;
    const void *sbuf;      /* send */
    void *rbuf;            /* recv */
    size_t size;           /* send: message size; recv: capacity */
    size_t received;       /* recv: the message's size (also set on UTC_ERR_TRUNCATE) */
    void *owned_buf;       /* owned recv: the buffer given to the reader */
    utc_status_t status;   /* valid once state is DONE */
    int mpi_err;           /* MPI error code behind a UTC_ERR_MPI status */
    /* release (DONE/MATCHED) pairs with the owner's acquire load: what the completer wrote
     * into the request and the receive buffer is visible once the owner sees the state */
    atomic_uint state;
    utc_request_t *next;   /* link in a transport's queue (owned by the transport) */
    utc__msg_desc_t m;     /* in-process: a message matched to this read, copied by its owner */
    bool posted;           /* in-process read: in its tag's queue (else it polls the ring) */
    MPI_Request mpi_req;   /* MPI: the send, or the matched receive */
    bool mpi_matched;      /* MPI receive: probed and MPI_Imrecv started */
};

/*
 * A transport: the in-process rings or MPI. Ops tables are static const and checked once
 * at conduit creation (utc__transport_check).
 */
typedef struct utc__transport_ops {
    const char *name;
    /* Start `req` (send or receive). Never blocks for long. UTC_OK: the request is in
     * flight or already complete (state DONE with its status); an error: not started. */
    utc_status_t (*start)(utc__transport_t *tp, utc_request_t *req);
    /* Make progress without blocking; true once the request is DONE. */
    bool (*progress)(utc__transport_t *tp, utc_request_t *req);
    /* Block (sleeping after a short spin) until the request is DONE or `timeout_s`
     * passes (< 0: no limit). True when DONE. */
    bool (*wait)(utc__transport_t *tp, utc_request_t *req, double timeout_s);
    /* Withdraw a receive that has no message yet. True if withdrawn; false if a message
     * was matched to it meanwhile (then it will complete: wait for it). */
    bool (*cancel)(utc__transport_t *tp, utc_request_t *req);
    /* Free the transport (at conduit destroy): drops queued messages. */
    void (*destroy)(utc__transport_t *tp);
} utc__transport_ops_t;

/* Root object of a transport: derived ones put it first, named base. */
struct utc__transport {
    const utc__transport_ops_t *ops;
    utc_conduit_t *conduit;
    utc_conduit_transport_t kind;
};

/* One end of the conduit (a task) as this rank sees it. */
typedef struct utc__conduit_end {
    utc_task_t *task;
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
    char errmsg[2][256];
} utc__conduit_end_t;

struct utc_conduit {
    int id;
    utc_conduit_options_t opts;
    utc__conduit_end_t end[2];           /* 0: source task, 1: destination task */
    utc__transport_t *local;             /* in-process rings, or NULL */
    utc__transport_t *remote;            /* MPI, or NULL */
    utc_conduit_transport_t entry_transport;
    utc_conduit_t *self;                 /* registry key: the handle itself */
    UT_hash_handle hh;                   /* registry of live conduits */
};

/* ---- shared helpers (conduit.c) ---- */

/* Mark `req` DONE with `status`; release: publishes the request's results to its owner. */
static inline void utc__req_finish(utc_request_t *req, utc_status_t status)
{
    req->status = status;
    atomic_store_explicit(&req->state, UTC__REQ_DONE, memory_order_release);
}

static inline unsigned utc__req_state(utc_request_t *req)
{
    /* acquire: pairs with the release in utc__req_finish / the MATCHED store */
    return atomic_load_explicit(&req->state, memory_order_acquire);
}

/* Change an event word (seq_cst) and wake its sleepers, if any: the waker's half of the
 * Dekker pair in utc__event_wait. */
void utc__event_signal(atomic_uint *event, atomic_uint *sleepers);

/* Spin briefly, then sleep, while *event == old; at most until `deadline` (utc_wtime
 * seconds, < 0: none). Returns false on timeout. */
bool utc__event_wait(atomic_uint *event, unsigned old, atomic_uint *sleepers, double deadline);

/*
 * Back-off for polling loops (MPI requests and probes): spin ~50 us, then yield until
 * 1 ms, then sleep in steps of 1/16 of the time waited so far, at most 1 ms, so a late
 * wake-up costs at most ~6% of the wait while an idle waiter polls ~1000 times a second.
 * While a transfer is known to be in flight (busy_until), it yields instead of sleeping:
 * the MPI progress engine needs the calls, and the end is near.
 */
typedef struct utc__poll {
    double start;      /* utc_wtime of the first step */
    double waited;     /* seconds waited at the last clock read */
    double busy_until; /* yield rather than sleep until then (0: not set) */
    unsigned iter;
} utc__poll_t;

#define UTC__POLL_INIT {0, 0, 0, 0}
void utc__poll_step(utc__poll_t *p);

/* Deadline from a timeout: < 0 stays -1 (none). */
static inline double utc__deadline(double timeout_s)
{
    return timeout_s < 0 ? -1.0 : utc_wtime() + timeout_s;
}

/* Header-checked buffers of utc_buf_alloc: the usable size, or false if not one. */
bool utc__buf_size(const void *buf, size_t *size);

/* ---- transports ---- */

/* In-process rings (conduits/shm/). On the rank that holds both ends. */
utc_status_t utc__shm_transport_create(utc_conduit_t *c, utc__transport_t **out);

/* MPI (conduits/mpi/). Collective over all ranks: `members` lists the world ranks that
 * take part (ascending); *out is NULL on the others. */
utc_status_t utc__mpi_transport_create(utc_conduit_t *c, const int *members, int nmembers,
                                       utc__transport_t **out);

#endif /* UTC_CONDUIT_INTERNAL_H */
