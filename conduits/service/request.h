/*
 * Conduit service: requests. One request is one operation (a send or a receive) of a
 * conduit; the conduit (transfer.c, async.c) makes and finishes them, the transports move
 * them from PENDING to DONE. Knows no conduit and no transport internals (a transport's
 * state of a request is in its private part, UTC__REQ_PRIV).
 */
#ifndef UTC_CONDUITS_REQUEST_H
#define UTC_CONDUITS_REQUEST_H

#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <utc/conduit.h>

typedef struct utc__transport utc__transport_t;

/* Direction of a message: 0 from the source task to the destination task, 1 back. */
enum { UTC__DIR_FWD = 0, UTC__DIR_BACK = 1 };

typedef enum { UTC__OP_SEND = 1, UTC__OP_RECV = 2 } utc__op_t;

/* Bytes of a request's private part, the state of the transport it runs on. */
#define UTC__REQ_PRIV_BYTES 1088

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

/* The tag of the end-of-stream message a closing writer sends after its last one (never a
 * user's tag: those are >= 0, and UTC_ANY_TAG is -1). */
#define UTC__TAG_EOS (-2)

/* tp_err of a read whose large message's writer could not send its rest (any transport
 * that sends a message in parts) */
#define UTC__TP_ERR_REST_MISSING (-1)

/* One operation. Blocking calls keep it on their stack; iwrite/iread allocate it. */
struct utc_request {
    uint32_t magic;
    utc__op_t op;
    bool owned;            /* send: sbuf is handed over; recv: wants a buffer of its own */
    bool heap;             /* from iwrite/iread: freed when test/wait reports completion (the
                            * in-process transport posts such reads at once, in start order) */
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
    int tp_err;            /* the transport's code behind its status: with UTC_ERR_MPI an
                            * MPI error code (the conduit reports it with utc__mpi_error),
                            * or UTC__TP_ERR_REST_MISSING; else 0 */
    /* release (DONE/MATCHED) pairs with the owner's acquire load: what the completer wrote
     * into the request and the receive buffer is visible once the owner sees the state */
    atomic_uint state;
    utc_request_t *next;   /* link in a transport's queue (owned by the transport) */
    utc__msg_desc_t m;     /* in-process: a message matched to this read, copied by its owner */
    bool posted;           /* in-process read: in its tag's queue (else it polls the ring) */
    bool canceled_by_user; /* UTC_ERR_CANCELED came from utc_request_cancel */
    void *inflight;        /* iwrite/iread of a multi-threaded end: its service/inflight.h
                            * entry, or NULL */
    int member;            /* the caller's end: 0 or 1, or its member index in a shared
                            * conduit */
    void *sub;             /* the shared transport's state of the request, or NULL */
    /* a solo request (the express path of an iread by a task's only thread on its rank):
     * it holds no count against its conduit (conduits/async.c says how it lives without);
     * the context that started it and its conduit's generation then */
    bool solo;
    uint16_t cgen;
    const void *sctx;
    /* (A field added above must be set in utc__req_prepare.) The private part of the transport the request is started on (UTC__REQ_PRIV): only
     * that transport reads or writes it, and sets it when it starts the request. */
    alignas(16) unsigned char priv[UTC__REQ_PRIV_BYTES];
};

/* The transport's private state of `req`, as its own type (at most UTC__REQ_PRIV_BYTES,
 * aligned to 16: a transport checks its type with UTC__REQ_PRIV_FITS). */
#define UTC__REQ_PRIV(req, type) ((type *)(void *)(req)->priv)
#define UTC__REQ_PRIV_FITS(type)                                                             \
    static_assert(sizeof(type) <= UTC__REQ_PRIV_BYTES && _Alignof(type) <= 16,               \
                  #type " fits a request's private part")

/* Set every field of `req` a transport reads, for an operation `op` in direction `dir`
 * with `tag`, to or from world rank `peer`, on transport `tp`: buffers empty, state
 * PENDING. The conduit's requests and the shared transport's inner ones start here. */
static inline void utc__req_prepare(utc_request_t *req, utc__op_t op, int dir, int tag, int peer,
                                    utc__transport_t *tp)
{
    /* every field before priv, one by one (a memset of them was a library call per
     * operation); the transport sets its own part, priv, when it starts the request */
    req->magic = UTC__REQ_MAGIC;
    req->op = op;
    req->owned = false;
    req->heap = false;
    req->dir = dir;
    req->tag = tag;
    req->peer = peer;
    req->tp = tp;
    req->conduit = NULL;
    req->sbuf = NULL;
    req->rbuf = NULL;
    req->size = 0;
    req->received = 0;
    req->owned_buf = NULL;
    req->status = UTC_OK;
    req->tp_err = 0;
    req->next = NULL;
    req->m = (utc__msg_desc_t){0};
    req->posted = false;
    req->canceled_by_user = false;
    req->inflight = NULL;
    req->member = 0;
    req->sub = NULL;
    req->solo = false;
    req->cgen = 0;
    req->sctx = NULL;
    atomic_init(&req->state, UTC__REQ_PENDING);
}

/* Put `req` last in the line *head .. *tail of requests linked by `next` (a transport's
 * queue of posted reads or waiting writes; the caller holds its lock). */
static inline void utc__req_append(utc_request_t **head, utc_request_t **tail,
                                   utc_request_t *req)
{
    req->next = NULL;
    if (*tail)
        (*tail)->next = req;
    else
        *head = req;
    *tail = req;
}

/* Take `req` out of the line *head .. *tail (the caller holds its lock). False when it is
 * not there. */
static inline bool utc__req_remove(utc_request_t **head, utc_request_t **tail, utc_request_t *req)
{
    for (utc_request_t **l = head, *prev = NULL; *l; prev = *l, l = &(*l)->next) {
        if (*l != req)
            continue;
        *l = req->next;
        if (*tail == req)
            *tail = prev;
        req->next = NULL;
        return true;
    }
    return false;
}

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

#endif /* UTC_CONDUITS_REQUEST_H */
