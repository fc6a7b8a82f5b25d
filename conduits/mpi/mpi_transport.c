/*
 * MPI transport: the ends of the conduit are on different ranks.
 *
 * Each conduit gets a communicator of its own (MPI_Comm_split of the runtime's world
 * communicator over the ranks that take part), so its messages can never match another
 * conduit's or a task's, whatever the number of tasks. A message's MPI tag is
 * 2 * tag + direction: the direction bit keeps the two directions apart when, in free
 * mode, one rank holds threads of both tasks.
 *
 * Sends are MPI_Isend straight from the caller's buffer. Receives do not know the size
 * in advance: MPI_Improbe (the thread-safe matched probe) finds the next message of the
 * tag, then MPI_Imrecv receives it straight into the reader's buffer (no intermediate
 * copy on our side). Reads of one (peer, tag) are matched in the order they were posted:
 * each queue is probed from its oldest read, under the transport's lock. A message too
 * large for the reader's buffer is received into a side buffer ("stash") and stays first
 * in line for the next read of its tag, so truncation loses nothing.
 *
 * Waiting never holds a core: requests are tested with back-off (utc__poll_step: spin,
 * yield, then sleeps of at most 1 ms), like utc__mpi_wait, except that a transfer in
 * flight is polled until it should be over.
 */
#define _GNU_SOURCE
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

/* A message received before a read could take it (it was too large for that read). */
typedef struct mpi_stash {
    struct mpi_stash *next;
    void *buf; /* utc_buf_alloc: handed over as it is to an owned read */
    size_t size;
} mpi_stash_t;

/* Reads of one (source, MPI tag), oldest first, and its stashed messages. */
typedef struct mpi_rxq {
    uint64_t key;
    utc_request_t *phead, *ptail;
    mpi_stash_t *shead, *stail;
    UT_hash_handle hh;
} mpi_rxq_t;

typedef struct mpi_transport {
    utc__transport_t base;
    MPI_Comm comm;
    int *crank;            /* world rank -> rank in comm (-1: not a member) */
    pthread_mutex_t lock;  /* guards the read queues; never held while sleeping */
    mpi_rxq_t *rxqs;
} mpi_transport_t;

static_assert(offsetof(mpi_transport_t, base) == 0, "transport base must come first");

static inline int mpi_tag(const utc_request_t *req) { return 2 * req->tag + req->dir; }

static inline uint64_t rxq_key(int source, int tag)
{
    return ((uint64_t)(uint32_t)source << 32) | (uint32_t)tag;
}

static mpi_rxq_t *rxq_find(mpi_transport_t *t, const utc_request_t *req)
{
    uint64_t key = rxq_key(t->crank[req->peer], mpi_tag(req));
    mpi_rxq_t *q;
    HASH_FIND(hh, t->rxqs, &key, sizeof key, q);
    return q;
}

/* Queues kept when empty: a reader of a tag it used before finds its queue without an
 * allocation; beyond this many, empty ones are freed (many distinct tags cost nothing). */
#define RXQ_KEEP 64

static void rxq_trim(mpi_transport_t *t, mpi_rxq_t *q)
{
    if (!q->phead && !q->shead && HASH_COUNT(t->rxqs) > RXQ_KEEP) {
        HASH_DEL(t->rxqs, q);
        free(q);
    }
}

/* Under the lock: give the oldest stashed message to read r, or refuse it (too small).
 * Returns r's final status. */
static utc_status_t take_stash(mpi_rxq_t *q, utc_request_t *r)
{
    mpi_stash_t *s = q->shead;
    r->received = s->size;
    if (!r->owned && s->size > r->size)
        return UTC_ERR_TRUNCATE;
    if (r->owned) {
        r->owned_buf = s->buf;
    } else {
        if (s->size)
            memcpy(r->rbuf, s->buf, s->size);
        utc_buf_free(s->buf);
    }
    if (!(q->shead = s->next))
        q->stail = NULL;
    free(s);
    return UTC_OK;
}

/* Under the lock: r (the oldest unmatched read) has probed message msg of n bytes. Receive
 * it: straight into r's buffer, or aside when it does not fit (then r is refused and the
 * message stays first in line). Returns true when r is finished, with *st its status. */
static bool take_probed(mpi_transport_t *t, mpi_rxq_t *q, utc_request_t *r, MPI_Message *msg,
                        int count, utc_status_t *st)
{
    size_t n = (size_t)count;
    int err;
    r->received = n;
    if (!r->owned && n > r->size) {
        mpi_stash_t *s = malloc(sizeof *s);
        void *buf = utc_buf_alloc(n);
        if (!s || !buf) {
            free(s);
            utc_buf_free(buf);
            utc_log(UTC_LOG_ERROR, "conduit %d: out of memory: a %zu-byte message (tag %d) "
                    "that did not fit its reader is lost", t->base.conduit_id, n, r->tag);
            MPI_Mrecv(NULL, 0, MPI_BYTE, msg, MPI_STATUS_IGNORE);
            *st = UTC_ERR_NO_MEMORY;
        } else if ((err = MPI_Mrecv(buf, count, MPI_BYTE, msg, MPI_STATUS_IGNORE))) {
            free(s);
            utc_buf_free(buf);
            r->mpi_err = err;
            *st = UTC_ERR_MPI;
        } else {
            s->buf = buf;
            s->size = n;
            s->next = NULL;
            q->shead = q->stail = s; /* the stash was empty */
            *st = UTC_ERR_TRUNCATE;
        }
        return true;
    }
    void *dst = r->rbuf;
    if (r->owned && !(dst = r->owned_buf = utc_buf_alloc(n))) {
        utc_log(UTC_LOG_ERROR, "conduit %d: out of memory: a %zu-byte message (tag %d) is lost",
                t->base.conduit_id, n, r->tag);
        MPI_Mrecv(NULL, 0, MPI_BYTE, msg, MPI_STATUS_IGNORE);
        *st = UTC_ERR_NO_MEMORY;
        return true;
    }
    if ((err = MPI_Imrecv(dst, count, MPI_BYTE, msg, &r->mpi_req))) {
        r->mpi_err = err;
        *st = UTC_ERR_MPI;
        return true;
    }
    r->mpi_matched = true;
    return false;
}

/*
 * Under the lock: advance the reads of queue q in order. The oldest unmatched read probes;
 * when nothing is there, later reads wait their turn. Reads whose receive is in flight are
 * tested. A finished read leaves the queue and is marked DONE last: its owner may return
 * and reuse it as soon as it sees DONE, so nothing here touches it afterwards.
 */
static void rxq_progress(mpi_transport_t *t, mpi_rxq_t *q)
{
    utc_request_t **link = &q->phead, *prev = NULL;
    while (*link) {
        utc_request_t *r = *link;
        utc_status_t st = UTC_OK;
        bool done = false;
        int flag = 0, err;
        if (!r->mpi_matched) {
            if (q->shead) {
                st = take_stash(q, r);
                done = true;
            } else {
                MPI_Message msg;
                MPI_Status status;
                if ((err = MPI_Improbe(t->crank[r->peer], mpi_tag(r), t->comm, &flag, &msg,
                                       &status))) {
                    r->mpi_err = err;
                    st = UTC_ERR_MPI;
                    done = true;
                } else if (!flag) {
                    break; /* nothing yet: later reads must not overtake this one */
                } else {
                    int count = 0;
                    MPI_Get_count(&status, MPI_BYTE, &count);
                    done = take_probed(t, q, r, &msg, count, &st);
                }
            }
        }
        if (!done && r->mpi_matched) {
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

static utc_status_t mpi_start(utc__transport_t *tp, utc_request_t *req)
{
    mpi_transport_t *t = (mpi_transport_t *)tp;
    if (req->op == UTC__OP_SEND) {
        int err = MPI_Isend(req->sbuf, (int)req->size, MPI_BYTE, t->crank[req->peer],
                            mpi_tag(req), t->comm, &req->mpi_req);
        if (err)
            return utc__mpi_error(err, "MPI_Isend");
        return UTC_OK;
    }
    uint64_t key = rxq_key(t->crank[req->peer], mpi_tag(req));
    mpi_rxq_t *q;
    pthread_mutex_lock(&t->lock);
    HASH_FIND(hh, t->rxqs, &key, sizeof key, q);
    if (!q) {
        if (!(q = calloc(1, sizeof *q))) {
            pthread_mutex_unlock(&t->lock);
            return utc__error(UTC_ERR_NO_MEMORY, "conduit read: out of memory");
        }
        q->key = key;
        HASH_ADD(hh, t->rxqs, key, sizeof q->key, q);
    }
    req->next = NULL;
    req->mpi_matched = false;
    if (q->ptail)
        q->ptail->next = req;
    else
        q->phead = req;
    q->ptail = req;
    rxq_progress(t, q);
    rxq_trim(t, q);
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
        int flag = 0, err = MPI_Test(&req->mpi_req, &flag, MPI_STATUS_IGNORE);
        if (err) {
            req->mpi_err = err;
            utc__req_finish(req, UTC_ERR_MPI);
        } else if (flag) {
            if (req->owned)
                utc_buf_free((void *)req->sbuf);
            utc__req_finish(req, UTC_OK);
        }
        *flowing = true;
        return utc__req_state(req) == UTC__REQ_DONE;
    }
    pthread_mutex_lock(&t->lock);
    /* relaxed: reads change state only under this lock */
    if (atomic_load_explicit(&req->state, memory_order_relaxed) != UTC__REQ_DONE) {
        mpi_rxq_t *q = rxq_find(t, req);
        if (q) {
            rxq_progress(t, q);
            rxq_trim(t, q);
        }
        *flowing = req->mpi_matched;
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
    mpi_rxq_t *q = rxq_find(t, req);
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
    utc_status_t rc;
    mpi_transport_t *t = calloc(1, sizeof *t);
    int *crank = malloc(sizeof *crank * (size_t)nranks);
    if (!t || !crank) {
        rc = utc__error(UTC_ERR_NO_MEMORY, "utc_conduit_create: out of memory");
        goto fail;
    }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
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
    t->crank = crank;
    pthread_mutex_init(&t->lock, NULL);
    *out = &t->base;
    return UTC_OK;
fail:
    free(crank);
    free(t);
    MPI_Comm_free(&comm);
    return rc;
}
