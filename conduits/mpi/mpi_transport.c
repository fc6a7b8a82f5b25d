/*
 * MPI transport: the ends of the conduit are on different ranks.
 *
 * Each conduit gets two communicators of its own (MPI_Comm_split of the runtime's world
 * communicator over the ranks that take part, and a duplicate), so its messages can never
 * match another conduit's or a task's, whatever the number of tasks.
 *
 * Every message starts with a header on the "eager" communicator: its MPI tag (2 * tag +
 * direction: the direction bit keeps the two directions apart when, in free mode, one
 * rank holds threads of both tasks), its kind and its size. A message of up to EAGER_MAX
 * bytes travels inside its header. A larger one follows on the "bulk" communicator with
 * that MPI tag, received straight into the reader's buffer once its header is matched to
 * a read (the size is known: no probe).
 *
 * Headers are received into a ring of EAGER_SLOTS receives posted in advance (from the
 * other rank when the conduit spans two, else MPI_ANY_SOURCE; MPI_ANY_TAG; posted at the
 * first read, so a conduit nobody reads on this rank costs no buffers), the way a hand-written MPI program posts its receives early: a small message
 * lands in a posted receive, not in MPI's unexpected queue. The ring is taken in post
 * order, which is the order of arrival, so the headers of one sender are seen in the
 * order they were sent. Each header goes to the oldest unmatched read of its (source,
 * MPI tag), or waits in that queue ("stash") for one; a small message is copied there,
 * a large one stays in MPI until a read takes it. Reads of one (peer, tag) are matched in
 * the order they were posted. A message too large for the reader's buffer stays first in
 * line (received aside when it is a large one), so truncation loses nothing.
 *
 * Waiting never holds a core: requests are tested with back-off (utc__poll_step: spin,
 * yield, then sleeps of at most 1 ms), like utc__mpi_wait, except that a transfer in
 * flight is polled until it should be over.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <assert.h>

#include "utc_internal.h"
#include "service/buffer.h"
#include "service/request.h"
#include "service/transport.h"
#include "service/wait.h"

/* Payload bytes that travel inside the header message. */
#define EAGER_MAX 1008
/* Header receives posted in advance. */
#define EAGER_SLOTS 8

enum { WIRE_SMALL = 1, WIRE_LARGE = 2 };

/* The header in front of every message on the eager communicator. */
typedef struct wire_hdr {
    int32_t mpi_tag; /* 2 * tag + direction */
    uint32_t kind;   /* WIRE_SMALL: the payload follows; WIRE_LARGE: it comes on bulk */
    uint64_t size;
} wire_hdr_t;

#define SLOT_BYTES (sizeof(wire_hdr_t) + EAGER_MAX)
static_assert(sizeof(wire_hdr_t) == 16, "the header keeps the payload 8-byte aligned");

/* A message whose header has arrived before a read could take it. */
typedef struct mpi_stash {
    struct mpi_stash *next;
    uint32_t kind;
    void *buf;   /* WIRE_SMALL, or a large one received aside: utc_buf_alloc, handed over
                  * as it is to an owned read. NULL: a large payload still in MPI */
    size_t size;
} mpi_stash_t;

/* Reads of one (source, MPI tag), oldest first, and its stashed messages. */
typedef struct mpi_rxq {
    uint64_t key;
    int source; /* rank in the conduit's communicators */
    int mpi_tag;
    utc_request_t *phead, *ptail;
    mpi_stash_t *shead, *stail;
    UT_hash_handle hh;
} mpi_rxq_t;

typedef struct mpi_transport {
    utc__transport_t base;
    MPI_Comm comm;         /* headers and small messages */
    MPI_Comm bulk;         /* large payloads */
    int *crank;            /* world rank -> rank in comm (-1: not a member) */
    pthread_mutex_t lock;  /* guards the read queues and the ring; never held while sleeping */
    mpi_rxq_t *rxqs;
    mpi_rxq_t *last_rxq;   /* the queue found last: one stream skips the hash */
    /* the ring of posted header receives (allocated at the first read) */
    unsigned char *ring;
    MPI_Request ring_req[EAGER_SLOTS];
    unsigned ring_next;    /* the oldest posted receive */
    unsigned ring_taken;   /* slots before ring_next taken and not yet posted again */
    int ring_err;          /* an MPI error of the ring: every read fails with it */
    int ring_source;       /* the one rank headers can come from (two members), else
                            * MPI_ANY_SOURCE: MPI matches a named source faster */
} mpi_transport_t;

static_assert(offsetof(mpi_transport_t, base) == 0, "transport base must come first");

static inline int mpi_tag(const utc_request_t *req) { return 2 * req->tag + req->dir; }

static inline uint64_t rxq_key(int source, int tag)
{
    return ((uint64_t)(uint32_t)source << 32) | (uint32_t)tag;
}

static mpi_rxq_t *rxq_get(mpi_transport_t *t, int source, int tag, bool create)
{
    uint64_t key = rxq_key(source, tag);
    mpi_rxq_t *q = t->last_rxq;
    if (q && q->key == key)
        return q;
    HASH_FIND(hh, t->rxqs, &key, sizeof key, q);
    if (!q && create && (q = calloc(1, sizeof *q))) {
        q->key = key;
        q->source = source;
        q->mpi_tag = tag;
        HASH_ADD(hh, t->rxqs, key, sizeof q->key, q);
    }
    if (q)
        t->last_rxq = q;
    return q;
}

/* Queues kept when empty: a reader of a tag it used before finds its queue without an
 * allocation; beyond this many, empty ones are freed (many distinct tags cost nothing). */
#define RXQ_KEEP 64

static void rxq_trim(mpi_transport_t *t, mpi_rxq_t *q)
{
    if (!q->phead && !q->shead && HASH_COUNT(t->rxqs) > RXQ_KEEP) {
        if (t->last_rxq == q)
            t->last_rxq = NULL;
        HASH_DEL(t->rxqs, q);
        free(q);
    }
}

static void stash_pop(mpi_rxq_t *q)
{
    mpi_stash_t *s = q->shead;
    if (!(q->shead = s->next))
        q->stail = NULL;
    free(s);
}

/* Out of memory: a message (its header already taken) is lost. Its large payload, still in
 * MPI, is received into nothing, so that the writer completes and later messages flow. */
static void drop_message(mpi_transport_t *t, int source, const wire_hdr_t *h)
{
    utc_log(UTC_LOG_ERROR, "conduit %d: out of memory: a %" PRIu64 "-byte message (tag %d) "
            "is lost", t->base.conduit_id, h->size, h->mpi_tag / 2);
    if (h->kind == WIRE_LARGE)
        MPI_Recv(NULL, 0, MPI_BYTE, source, h->mpi_tag, t->bulk, MPI_STATUS_IGNORE);
}

/* Start receiving a large payload of n bytes into dst for read r. */
static bool recv_bulk(mpi_transport_t *t, mpi_rxq_t *q, utc_request_t *r, void *dst, size_t n,
                      utc_status_t *st)
{
    int err = MPI_Irecv(dst, (int)n, MPI_BYTE, q->source, q->mpi_tag, t->bulk, &r->mpi_req);
    if (err) {
        r->mpi_err = err;
        *st = UTC_ERR_MPI;
        return true;
    }
    r->mpi_matched = true;
    return false;
}

/* Under the lock: hand the oldest stashed message to read r (the oldest unmatched one),
 * or refuse it when it does not fit (it stays first in line). Returns true when r is
 * finished, with *st its status; false when its payload is being received. */
static bool take_stash(mpi_transport_t *t, mpi_rxq_t *q, utc_request_t *r, utc_status_t *st)
{
    mpi_stash_t *s = q->shead;
    size_t n = s->size;
    r->received = n;
    if (!r->owned && n > r->size) {
        *st = UTC_ERR_TRUNCATE;
        if (s->buf || s->kind == WIRE_SMALL)
            return true;
        /* a large payload still in MPI: receive it aside, so that it stays in line */
        if (!(s->buf = utc_buf_alloc(n))) {
            drop_message(t, q->source, &(wire_hdr_t){q->mpi_tag, WIRE_LARGE, n});
            stash_pop(q);
            *st = UTC_ERR_NO_MEMORY;
            return true;
        }
        /* the sender has begun this send: it completes without the reader's help */
        int err = MPI_Recv(s->buf, (int)n, MPI_BYTE, q->source, q->mpi_tag, t->bulk,
                           MPI_STATUS_IGNORE);
        if (err) {
            r->mpi_err = err;
            *st = UTC_ERR_MPI;
        }
        return true;
    }
    if (s->buf) { /* a small message (or a large one received aside): hand it over */
        if (r->owned) {
            r->owned_buf = s->buf;
        } else {
            if (n)
                memcpy(r->rbuf, s->buf, n);
            utc_buf_free(s->buf);
        }
        stash_pop(q);
        *st = UTC_OK;
        return true;
    }
    /* a large payload still in MPI: straight into the reader's buffer */
    void *dst = r->rbuf;
    if (r->owned && !(dst = r->owned_buf = utc_buf_alloc(n))) {
        drop_message(t, q->source, &(wire_hdr_t){q->mpi_tag, WIRE_LARGE, n});
        stash_pop(q);
        *st = UTC_ERR_NO_MEMORY;
        return true;
    }
    stash_pop(q);
    return recv_bulk(t, q, r, dst, n, st);
}

/*
 * Under the lock: advance the reads of queue q in order. The oldest unmatched read takes
 * the oldest stashed message; when there is none, later reads wait their turn. Reads
 * whose payload is in flight are tested. A finished read leaves the queue and is marked
 * DONE last: its owner may return and reuse it as soon as it sees DONE, so nothing here
 * touches it afterwards.
 */
static void rxq_progress(mpi_transport_t *t, mpi_rxq_t *q)
{
    utc_request_t **link = &q->phead, *prev = NULL;
    bool waiting = false; /* an older read has no message yet */
    while (*link) {
        utc_request_t *r = *link;
        utc_status_t st = UTC_OK;
        bool done = false;
        int flag = 0, err;
        if (!r->mpi_matched) {
            if (t->ring_err) {
                r->mpi_err = t->ring_err;
                st = UTC_ERR_MPI;
                done = true;
            } else if (waiting || !q->shead) {
                waiting = true;
            } else {
                done = take_stash(t, q, r, &st);
            }
        } else {
            if ((err = MPI_Test(&r->mpi_req, &flag, MPI_STATUS_IGNORE))) {
                r->mpi_err = err;
                st = UTC_ERR_MPI;
                done = true;
            } else {
                done = flag;
            }
        }
        if (!done) {
            prev = r;
            link = &r->next;
            continue;
        }
        *link = r->next;
        if (q->ptail == r)
            q->ptail = prev;
        utc__req_finish(r, st); /* last touch */
    }
}

/* Under the lock: post the ring's receives (first read on this rank). */
static utc_status_t ring_start(mpi_transport_t *t)
{
    if (t->ring)
        return UTC_OK;
    if (!(t->ring = aligned_alloc(64, SLOT_BYTES * EAGER_SLOTS)))
        return utc__error(UTC_ERR_NO_MEMORY, "conduit read: out of memory");
    for (int i = 0; i < EAGER_SLOTS; i++) {
        int err = MPI_Irecv(t->ring + (size_t)i * SLOT_BYTES, (int)SLOT_BYTES, MPI_BYTE,
                            t->ring_source, MPI_ANY_TAG, t->comm, &t->ring_req[i]);
        if (err) {
            t->ring_err = err;
            return utc__mpi_error(err, "conduit read: MPI_Irecv");
        }
    }
    return UTC_OK;
}

/* Under the lock: a small message of n bytes to the oldest unmatched read of q, if there
 * is one and the message fits it. It completes at q's next progress (its request is
 * already done). False: the read must wait for it in the queue. */
static bool give_small(mpi_rxq_t *q, const unsigned char *data, size_t n)
{
    utc_request_t *r = q->phead;
    while (r && r->mpi_matched)
        r = r->next;
    if (!r || (!r->owned && n > r->size))
        return false;
    void *dst = r->rbuf;
    if (r->owned && !(dst = r->owned_buf = utc_buf_alloc(n)))
        return false; /* the message stays in line; take_stash tries again */
    if (n)
        memcpy(dst, data, n);
    r->received = n;
    r->mpi_matched = true;
    r->mpi_req = MPI_REQUEST_NULL; /* its test completes at once */
    return true;
}

/* Under the lock: queue a message behind q's others (a small one copied). False: no
 * memory. */
static bool stash_push(mpi_rxq_t *q, const wire_hdr_t *h, const unsigned char *data)
{
    mpi_stash_t *s = malloc(sizeof *s);
    void *buf = NULL;
    if (!s || (h->kind == WIRE_SMALL && !(buf = utc_buf_alloc(h->size)))) {
        free(s);
        return false;
    }
    if (h->size && buf)
        memcpy(buf, data, h->size);
    s->next = NULL;
    s->kind = h->kind;
    s->buf = buf;
    s->size = h->size;
    if (q->stail)
        q->stail->next = s;
    else
        q->shead = s;
    q->stail = s;
    return true;
}

/* Under the lock: post again the receives of the slots taken since the last drain. They
 * are the `ring_taken` slots before the oldest posted one; posting them in the order they
 * were taken keeps the order of matching equal to the ring's order. */
static void ring_repost(mpi_transport_t *t)
{
    for (; t->ring_taken > 0 && !t->ring_err; t->ring_taken--) {
        unsigned i = (t->ring_next + EAGER_SLOTS - t->ring_taken) % EAGER_SLOTS;
        int err = MPI_Irecv(t->ring + (size_t)i * SLOT_BYTES, (int)SLOT_BYTES, MPI_BYTE,
                            t->ring_source, MPI_ANY_TAG, t->comm, &t->ring_req[i]);
        if (err)
            t->ring_err = err;
    }
}

/*
 * Under the lock: take every header that has arrived, in ring order, to its queue: a small
 * message goes straight into the oldest unmatched read when there is one and nothing is
 * ahead of it, else it is stashed; then the receive is posted again. Queues that got
 * something are progressed.
 */
static int ring_drain(mpi_transport_t *t)
{
    int taken = 0;
    ring_repost(t);
    while (t->ring && !t->ring_err && t->ring_taken < EAGER_SLOTS) {
        unsigned i = t->ring_next;
        int flag = 0;
        MPI_Status status;
        int err = MPI_Test(&t->ring_req[i], &flag, &status);
        if (err) {
            t->ring_err = err;
            break;
        }
        if (!flag)
            break;
        unsigned char *slot = t->ring + (size_t)i * SLOT_BYTES;
        wire_hdr_t h;
        memcpy(&h, slot, sizeof h);
        mpi_rxq_t *q = rxq_get(t, status.MPI_SOURCE, h.mpi_tag, true);
        const unsigned char *data = slot + sizeof h;
        /* the common case: a read is waiting and nothing is ahead of it, the bytes go
         * straight to it; else the message waits in its queue */
        bool kept = q && ((h.kind == WIRE_SMALL && !q->shead && give_small(q, data, h.size)) ||
                          stash_push(q, &h, data));
        if (!kept)
            drop_message(t, status.MPI_SOURCE, &h);
        /* posted again at the next drain: off the path of the read that waits for it */
        t->ring_req[i] = MPI_REQUEST_NULL;
        t->ring_taken++;
        t->ring_next = (i + 1) % EAGER_SLOTS;
        taken++;
        if (q) {
            rxq_progress(t, q);
            rxq_trim(t, q); /* only when no read is in it and nothing stashed */
        }
    }
    return taken;
}

/* A send's owner: test its MPI sends; once both are done, free what it holds and finish
 * it. True when it is done. */
static bool send_test(utc_request_t *req)
{
    MPI_Request both[2] = {req->mpi_req, req->mpi_bulk};
    int flag = 0, err = MPI_Testall(2, both, &flag, MPI_STATUSES_IGNORE);
    req->mpi_req = both[0];
    req->mpi_bulk = both[1];
    if (err) {
        req->mpi_err = err;
        free(req->mpi_wire);
        utc__req_finish(req, UTC_ERR_MPI);
    } else if (flag) {
        free(req->mpi_wire);
        if (req->owned)
            utc_buf_free((void *)req->sbuf);
        utc__req_finish(req, UTC_OK);
    }
    return err || flag;
}

/* A send: the header with a small payload in one message; a large payload after it. */
static utc_status_t send_start(mpi_transport_t *t, utc_request_t *req)
{
    int dest = t->crank[req->peer];
    bool small = req->size <= EAGER_MAX;
    size_t wire_size = sizeof(wire_hdr_t) + (small ? req->size : 0);
    unsigned char *wire = req->mpi_wire_inline;
    req->mpi_wire = NULL;
    req->mpi_bulk = MPI_REQUEST_NULL;
    if (wire_size > sizeof req->mpi_wire_inline) {
        if (!(wire = req->mpi_wire = malloc(wire_size)))
            return utc__error(UTC_ERR_NO_MEMORY, "conduit write: out of memory");
    }
    wire_hdr_t h = {.mpi_tag = mpi_tag(req), .kind = small ? WIRE_SMALL : WIRE_LARGE,
                    .size = req->size};
    memcpy(wire, &h, sizeof h);
    if (small && req->size)
        memcpy(wire + sizeof h, req->sbuf, req->size);
    int err = MPI_Isend(wire, (int)wire_size, MPI_BYTE, dest, h.mpi_tag, t->comm, &req->mpi_req);
    if (!err && !small)
        err = MPI_Isend(req->sbuf, (int)req->size, MPI_BYTE, dest, h.mpi_tag, t->bulk,
                        &req->mpi_bulk);
    if (err) {
        /* a header that went out without its payload would leave the reader waiting */
        if (req->mpi_req != MPI_REQUEST_NULL) {
            MPI_Cancel(&req->mpi_req);
            MPI_Wait(&req->mpi_req, MPI_STATUS_IGNORE);
        }
        free(req->mpi_wire);
        req->mpi_wire = NULL;
        return utc__mpi_error(err, "MPI_Isend");
    }
    /* a small message usually leaves at once (MPI copies it out): finish the write here
     * rather than in a first round of its wait */
    if (small)
        send_test(req);
    return UTC_OK;
}

static utc_status_t mpi_start(utc__transport_t *tp, utc_request_t *req)
{
    mpi_transport_t *t = (mpi_transport_t *)tp;
    if (req->op == UTC__OP_SEND)
        return send_start(t, req);
    pthread_mutex_lock(&t->lock);
    utc_status_t rc = ring_start(t);
    mpi_rxq_t *q = rc == UTC_OK ? rxq_get(t, t->crank[req->peer], mpi_tag(req), true) : NULL;
    if (rc == UTC_OK && !q)
        rc = utc__error(UTC_ERR_NO_MEMORY, "conduit read: out of memory");
    if (rc != UTC_OK) {
        pthread_mutex_unlock(&t->lock);
        return rc;
    }
    req->next = NULL;
    req->mpi_matched = false;
    req->mpi_rxq = q;
    if (q->ptail)
        q->ptail->next = req;
    else
        q->phead = req;
    q->ptail = req;
    /* a stashed message is taken now; one still in the ring waits for the next drain
     * (the read's test or wait): starting a read costs no trip through MPI's progress */
    rxq_progress(t, q);
    pthread_mutex_unlock(&t->lock);
    return UTC_OK;
}

/* Progress; *flowing: data is moving (a send in flight, or a read matched to a message). */
static bool progress_ex(mpi_transport_t *t, utc_request_t *req, bool *flowing)
{
    *flowing = false;
    if (utc__req_state(req) == UTC__REQ_DONE)
        return true;
    if (req->op == UTC__OP_SEND) {
        /* a send is only ever tested by its owner */
        *flowing = true;
        return send_test(req);
    }
    pthread_mutex_lock(&t->lock);
    /* relaxed: reads change state only under this lock */
    if (atomic_load_explicit(&req->state, memory_order_relaxed) != UTC__REQ_DONE &&
        (ring_drain(t) > 0 || req->mpi_matched || t->ring_err) &&
        atomic_load_explicit(&req->state, memory_order_relaxed) != UTC__REQ_DONE) {
        /* something arrived, or a payload is in flight: the read's queue may move (an
         * unmatched read whose header has not come has nothing else to do). The queue is
         * not freed while the read is in it. */
        mpi_rxq_t *q = req->mpi_rxq;
        rxq_progress(t, q);
        if (atomic_load_explicit(&req->state, memory_order_relaxed) == UTC__REQ_DONE)
            rxq_trim(t, q);
        *flowing = atomic_load_explicit(&req->state, memory_order_relaxed) != UTC__REQ_DONE &&
                   req->mpi_matched;
    }
    pthread_mutex_unlock(&t->lock);
    return utc__req_state(req) == UTC__REQ_DONE;
}

static bool mpi_progress(utc__transport_t *tp, utc_request_t *req)
{
    bool flowing;
    return progress_ex((mpi_transport_t *)tp, req, &flowing);
}

/* Test with back-off. Once data is moving, keep polling (yielding) for about the time the
 * transfer should take at 2 GB/s plus 1 ms, so a multi-MiB message is not finished late
 * by a sleep; a waiter with nothing coming sleeps after ~1 ms. */
static bool mpi_wait(utc__transport_t *tp, utc_request_t *req, double timeout_s)
{
    mpi_transport_t *t = (mpi_transport_t *)tp;
    utc__poll_t p = UTC__POLL_INIT;
    double deadline = utc__deadline(timeout_s);
    bool flowing, was_flowing = false;
    for (;;) {
        if (progress_ex(t, req, &flowing))
            return true;
        if (flowing && !was_flowing) {
            size_t bytes = req->op == UTC__OP_SEND ? req->size : req->received;
            p.busy_until = utc_wtime() + 1e-3 + (double)bytes / 2e9;
            was_flowing = true;
        }
        if (deadline >= 0 && (p.iter & 15) == 0 && utc_wtime() >= deadline)
            return false;
        utc__poll_step(&p);
    }
}

static bool mpi_cancel(utc__transport_t *tp, utc_request_t *req)
{
    mpi_transport_t *t = (mpi_transport_t *)tp;
    if (req->op != UTC__OP_RECV)
        return false;
    bool removed = false;
    pthread_mutex_lock(&t->lock);
    mpi_rxq_t *q = rxq_get(t, t->crank[req->peer], mpi_tag(req), false);
    /* relaxed: under the lock, as above */
    if (q && !req->mpi_matched &&
        atomic_load_explicit(&req->state, memory_order_relaxed) != UTC__REQ_DONE) {
        for (utc_request_t **p = &q->phead, *prev = NULL; *p; prev = *p, p = &(*p)->next) {
            if (*p == req) {
                *p = req->next;
                if (q->ptail == req)
                    q->ptail = prev;
                removed = true;
                break;
            }
        }
        rxq_progress(t, q); /* a stashed message may now go to the next read */
        rxq_trim(t, q);
    }
    pthread_mutex_unlock(&t->lock);
    return removed;
}

static void mpi_destroy(utc__transport_t *tp)
{
    mpi_transport_t *t = (mpi_transport_t *)tp;
    mpi_rxq_t *q, *tmp;
    HASH_ITER(hh, t->rxqs, q, tmp) {
        while (q->shead) {
            mpi_stash_t *s = q->shead;
            q->shead = s->next;
            utc_buf_free(s->buf);
            free(s);
        }
        HASH_DEL(t->rxqs, q);
        free(q);
    }
    if (t->ring) {
        for (int i = 0; i < EAGER_SLOTS; i++) {
            if (t->ring_req[i] == MPI_REQUEST_NULL)
                continue;
            MPI_Cancel(&t->ring_req[i]);
            MPI_Wait(&t->ring_req[i], MPI_STATUS_IGNORE);
        }
        free(t->ring);
    }
    MPI_Comm_free(&t->bulk);
    MPI_Comm_free(&t->comm);
    pthread_mutex_destroy(&t->lock);
    free(t->crank);
    free(t);
}

static const utc__transport_ops_t mpi_ops = {
    .name = "MPI",
    .start = mpi_start,
    .progress = mpi_progress,
    .wait = mpi_wait,
    .cancel = mpi_cancel,
    .destroy = mpi_destroy,
};

utc_status_t utc__mpi_transport_create(int conduit_id, const int *members, int nmembers,
                                       utc__transport_t **out)
{
    MPI_Comm world = utc__world_comm(), comm = MPI_COMM_NULL;
    int me = utc_rank(), nranks = utc_nranks(), member = 0, err;
    for (int i = 0; i < nmembers; i++)
        member |= members[i] == me;
    /* Open MPI's blocking collectives spin: meet first in a barrier that early ranks wait
     * for asleep (tested with back-off) */
    MPI_Request bar;
    if ((err = MPI_Ibarrier(world, &bar)))
        return utc__mpi_error(err, "utc_conduit_create: MPI_Ibarrier");
    for (utc__poll_t p = UTC__POLL_INIT;;) {
        int done = 0;
        if ((err = MPI_Test(&bar, &done, MPI_STATUS_IGNORE)))
            return utc__mpi_error(err, "utc_conduit_create: MPI_Test");
        if (done)
            break;
        utc__poll_step(&p);
    }
    /* collective over the world: non-members get MPI_COMM_NULL; key = world rank keeps
     * the members in ascending order */
    if ((err = MPI_Comm_split(world, member ? 0 : MPI_UNDEFINED, me, &comm)))
        return utc__mpi_error(err, "utc_conduit_create: MPI_Comm_split");
    if (!member) {
        *out = NULL;
        return UTC_OK;
    }
    /* collective over the members: before anything that may fail on one of them alone */
    MPI_Comm bulk;
    if ((err = MPI_Comm_dup(comm, &bulk))) {
        MPI_Comm_free(&comm);
        return utc__mpi_error(err, "utc_conduit_create: MPI_Comm_dup");
    }
    MPI_Comm_set_errhandler(bulk, MPI_ERRORS_RETURN);
    utc_status_t rc;
    mpi_transport_t *t = calloc(1, sizeof *t);
    int *crank = malloc(sizeof *crank * (size_t)nranks);
    if (!t || !crank) {
        rc = utc__error(UTC_ERR_NO_MEMORY, "utc_conduit_create: out of memory");
        goto fail;
    }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    t->bulk = bulk;
    int *tag_ub = NULL, flag = 0;
    /* a predefined attribute: only MPI_COMM_WORLD is sure to carry it */
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    if (!flag || !tag_ub || *tag_ub < 2 * UTC_CONDUIT_TAG_MAX + 1) {
        rc = utc__error(UTC_ERR_UNSUPPORTED,
                        "utc_conduit_create: this MPI's largest tag (MPI_TAG_UB) is %d; conduits "
                        "need at least %d (2 * UTC_CONDUIT_TAG_MAX + 1)",
                        flag && tag_ub ? *tag_ub : -1, 2 * UTC_CONDUIT_TAG_MAX + 1);
        goto fail;
    }
    for (int r = 0; r < nranks; r++)
        crank[r] = -1;
    for (int i = 0; i < nmembers; i++)
        crank[members[i]] = i;
    t->base.ops = &mpi_ops;
    t->base.conduit_id = conduit_id;
    t->base.kind = UTC_CONDUIT_MPI;
    t->comm = comm;
    for (int i = 0; i < EAGER_SLOTS; i++)
        t->ring_req[i] = MPI_REQUEST_NULL;
    /* with two members, the other one is the only sender (a rank never sends to itself) */
    t->ring_source = nmembers == 2 ? crank[members[0] == me ? members[1] : members[0]]
                                   : MPI_ANY_SOURCE;
    t->crank = crank;
    pthread_mutex_init(&t->lock, NULL);
    *out = &t->base;
    return UTC_OK;
fail:
    MPI_Comm_free(&bulk);
    free(crank);
    free(t);
    MPI_Comm_free(&comm);
    return rc;
}
