/*
 * MPI transport: the ends of the conduit are on different ranks.
 *
 * Each conduit gets two communicators of its own (MPI_Comm_split of the runtime's world
 * communicator over the ranks that take part, and a duplicate), so its messages can never
 * match another conduit's or a task's, whatever the number of tasks.
 *
 * A message travels as a hand-written MPI program would send it, on the "eager"
 * communicator with MPI tag 2 * tag + direction (the direction bit keeps the two
 * directions apart when, in free mode, one rank holds threads of both tasks):
 *
 * - a small one (at most EAGER_MAX bytes) is one message of its own bytes, no header;
 * - a large one is a "first part" of exactly WIRE_BYTES bytes (its first EAGER_MAX bytes,
 *   then its size), and the rest on the "bulk" communicator with the same MPI tag.
 *
 * So the received count tells the two apart, and the size is known before the rest is
 * received (no probe).
 *
 * A read posts its MPI_Irecv at once, with the source and the MPI tag it wants, into a
 * landing area of WIRE_BYTES in its request: MPI matches it directly (no receive of any
 * tag that would have to be sorted afterwards), and a message larger than the reader's
 * buffer never truncates inside MPI. MPI's own ordering per (source, tag, communicator)
 * keeps the messages of one tag in write order, and reads of one (peer, tag) are posted in
 * the order they start, so the k-th read gets the k-th message. Then the first part is
 * copied to the reader's buffer (or a buffer of its own, for owned reads) and the rest,
 * if any, is received straight after it.
 *
 * A message that does not fit its read (UTC_ERR_TRUNCATE) stays first in line: it is kept
 * in its queue's "stash" (the rest of a large one received aside), and while the stash
 * holds messages, each read that gets a message from MPI queues it behind them and takes
 * the oldest, so the order stays the order of writing. Reads that start while the stash is
 * not empty wait their turn without posting. Out of memory, a message is dropped with an
 * error in the log (its rest received into nothing, so later messages flow).
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
#include <mpi.h>
#include <stdalign.h>

#include "utc_internal.h"
#include "base/coll_check.h"
#include "service/buffer.h"
#include "service/request.h"
#include "service/transport.h"
#include "service/wait.h"

/* The MPI tag of the marker each member sends every other one when the conduit shuts
 * down: above every data tag (2 * tag + direction). */
#define MARK_TAG (2 * UTC_CONDUIT_TAG_MAX + 2)
/* The MPI tag of a notice that a task at one end failed on its sender's rank. */
#define CTL_TAG (MARK_TAG + 1)
/* The MPI tag of the end of stream of direction d (utc_conduit_close), on comm: it carries
 * how many messages its sender sent the receiver in that direction. */
#define EOS_TAG(d) (CTL_TAG + 1 + (d))

/* A message's first part: up to EAGER_MAX payload bytes (the whole of a small message), or
 * the first EAGER_MAX bytes of a large one followed by its 8-byte size. */
#define EAGER_MAX 1008
#define WIRE_BYTES (EAGER_MAX + 8)
static_assert(WIRE_BYTES > EAGER_MAX, "a first part is longer than any small message");

/* The MPI transport's part of a request (UTC__REQ_PRIV), set by mpi_start: a request is
 * never zeroed (service/request.h), so every field a later look reads is set there or
 * before its first read. */
typedef struct mpi_req {
    MPI_Request req;       /* the send of a message (or of a large one's first part), or the
                            * receive of the first part, then of the rest */
    MPI_Request bulk;      /* send: the rest of a large message */
    int phase;             /* receive: where it stands (RX_*) */
    int count;             /* receive: bytes of the first part, once it has come */
    struct mpi_rxq *rxq;   /* receive: its queue (kept while the read is in it) */
    /* a large message's first part (send), or where a read's first part lands */
    alignas(16) unsigned char wire[WIRE_BYTES];
} mpi_req_t;
UTC__REQ_PRIV_FITS(mpi_req_t);

/* Request r's MPI part. */
#define MR(r) UTC__REQ_PRIV(r, mpi_req_t)

/* Where a read stands (mpi_req_t.phase). */
enum {
    RX_WAITING = 0, /* behind stashed messages; no receive posted */
    RX_POSTED,      /* its first part's MPI_Irecv is posted */
    RX_ARRIVED,     /* its first part has come (count bytes in wire), not handled */
    RX_REST,        /* matched to a large message: its rest is being received */
    RX_ANY          /* an any-tag read with no message yet, in the transport's anyq */
};

/* A message whose read could not take it: stashed first in line. */
typedef struct mpi_stash {
    struct mpi_stash *next;
    size_t size;
    void *buf;     /* the whole message (utc_buf_alloc: handed as it is to an owned read) */
    void *first;   /* or a large one whose rest is still in MPI: its first EAGER_MAX bytes */
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

/* A send that ended while MPI still held it (its reader's task failed). */
typedef struct mpi_parked {
    struct mpi_parked *next;
    MPI_Request mpi[2]; /* the first part (or the whole), the rest */
    void *owned;        /* an owned buffer, freed once MPI is done with it, or NULL */
} mpi_parked_t;

typedef struct mpi_transport {
    utc__transport_t base;
    MPI_Comm comm;         /* small messages and first parts */
    MPI_Comm bulk;         /* the rest of large messages */
    int nmembers, me;      /* ranks in comm, and this one's */
    int *crank;            /* world rank -> rank in comm (-1: not a member) */
    utc__spinlock_t lock;  /* guards the read queues; never held while sleeping */
    mpi_rxq_t *rxqs;
    mpi_rxq_t *last_rxq;   /* the queue found last: one stream skips the hash */
    mpi_rxq_t anyq;        /* any-tag reads with no message yet, oldest first (not in rxqs) */
    atomic_int closed;     /* 0, or the status every operation now ends with (shutdown) */
    /* notices of failed tasks from the other members (on bulk, tag CTL_TAG), under lock */
    int ctl[4];            /* end, world rank, status, 0 */
    MPI_Request ctl_req;
    mpi_parked_t *parked;  /* sends to a failed reader, under lock (park_send) */
    /* End of stream (utc_conduit_close), indexed [dir * nmembers + rank in comm]: messages
     * this rank sent there (any thread); under lock, what it received from there (taken
     * out of MPI) and, once its end of stream came, how many it sent (-1: not yet). */
    atomic_uint *sent;
    unsigned *got;
    int64_t *eos;
    bool any_eos;          /* some end of stream came (under lock) */
    unsigned polls;        /* reads' progress calls, for the end-of-stream look (under lock) */
    atomic_uint send_polls; /* sends' progress calls, for the failure-notice look */
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
    if (q != &t->anyq && !q->phead && !q->shead && HASH_COUNT(t->rxqs) > RXQ_KEEP) {
        if (t->last_rxq == q)
            t->last_rxq = NULL;
        HASH_DEL(t->rxqs, q);
        free(q);
    }
}

/* Put read r last in q's line. */
static void rxq_append(mpi_rxq_t *q, utc_request_t *r)
{
    utc__req_append(&q->phead, &q->ptail, r);
}

/* Take the read at *link (after `prev`, NULL when first) out of q's line. */
static void rxq_unlink(mpi_rxq_t *q, utc_request_t **link, utc_request_t *prev)
{
    utc_request_t *r = *link;
    *link = r->next;
    if (q->ptail == r)
        q->ptail = prev;
}

/* Index of (direction, rank in comm) in the end-of-stream counts (sent, got, eos). */
static inline int eos_slot(const mpi_transport_t *t, int dir, int source)
{
    return dir * t->nmembers + source;
}

/* Whether MPI tag `mtag`'s messages are outside the end of stream (a device conduit's own
 * tags: utc__transport_tag_spared): neither counted in it nor ended by it. */
static inline bool mtag_spared(const mpi_transport_t *t, int mtag)
{
    return utc__transport_tag_spared(&t->base, mtag >> 1);
}

/* Under the lock: a message of MPI tag `mtag` from `source` is out of MPI (counted against
 * its direction's end of stream). */
static inline void got_one(mpi_transport_t *t, int source, int mtag)
{
    if (!mtag_spared(t, mtag))
        t->got[eos_slot(t, mtag & 1, source)]++;
}

/* ---- the stash ---- */

static void stash_pop(mpi_rxq_t *q)
{
    mpi_stash_t *s = q->shead;
    if (!(q->shead = s->next))
        q->stail = NULL;
    free(s);
}

/* MPI counts are ints. `n` bytes as a count and a type: MPI_BYTE up to INT_MAX; above, one
 * element of a committed struct type (1 MiB blocks, then the remainder), which the caller
 * releases with bytes_type_done once the operation is posted (MPI keeps it alive for the
 * operation). Both ends build the same signature: n bytes. */
#define BLOCK ((size_t)1 << 20)
static int bytes_type(size_t n, int *count, MPI_Datatype *type)
{
    if (n <= INT_MAX) {
        *count = (int)n;
        *type = MPI_BYTE;
        return MPI_SUCCESS;
    }
    MPI_Datatype block;
    int err = MPI_Type_contiguous((int)BLOCK, MPI_BYTE, &block);
    if (err)
        return err;
    int lens[2] = {(int)(n / BLOCK), (int)(n % BLOCK)};
    MPI_Aint disp[2] = {0, (MPI_Aint)(n / BLOCK * BLOCK)};
    MPI_Datatype types[2] = {block, MPI_BYTE};
    err = MPI_Type_create_struct(lens[1] ? 2 : 1, lens, disp, types, type);
    MPI_Type_free(&block);
    if (!err && (err = MPI_Type_commit(type)))
        MPI_Type_free(type);
    *count = 1;
    return err;
}

static void bytes_type_done(MPI_Datatype *type)
{
    if (*type != MPI_BYTE)
        MPI_Type_free(type);
}

/* A rest that came empty: its writer could not send it (send_start) and sent nothing in
 * its place, so that this reader does not wait for ever. */
static bool rest_missing(const MPI_Status *status)
{
    int count = 0;
    MPI_Get_count(status, MPI_BYTE, &count);
    return count == 0;
}

/* A large message whose rest is still in MPI is lost (out of memory): receive the rest
 * into nothing, so that the writer completes and later messages flow. */
static void drop_rest(mpi_transport_t *t, mpi_rxq_t *q, size_t size)
{
    utc_log(UTC_LOG_ERROR, "conduit %d: out of memory: a %zu-byte message (tag %d) is lost",
            t->base.conduit_id, size, q->mpi_tag / 2);
    MPI_Recv(NULL, 0, MPI_BYTE, q->source, q->mpi_tag, t->bulk, MPI_STATUS_IGNORE);
}

/* Receive the rest of a large message of `size` bytes (its first part already at dst). */
static int recv_rest_now(mpi_transport_t *t, mpi_rxq_t *q, unsigned char *dst, size_t size)
{
    int count;
    MPI_Datatype type;
    MPI_Status status;
    int err = bytes_type(size - EAGER_MAX, &count, &type);
    if (err)
        return err;
    /* the sender has begun this send: it completes without the reader's help */
    err = MPI_Recv(dst + EAGER_MAX, count, type, q->source, q->mpi_tag, t->bulk, &status);
    bytes_type_done(&type);
    return !err && rest_missing(&status) ? UTC__TP_ERR_REST_MISSING : err;
}

/* Stash a first part (`count` bytes at `wire`) behind the others. The rest of a large
 * one stays in MPI. False: out of memory (the message is dropped, with an error in the
 * log). */
static bool stash_push_wire(mpi_transport_t *t, mpi_rxq_t *q, const unsigned char *wire,
                            int count)
{
    mpi_stash_t *s = malloc(sizeof *s);
    bool large = count > EAGER_MAX;
    size_t size = (size_t)count;
    void *copy = NULL;
    if (large)
        memcpy(&size, wire + EAGER_MAX, sizeof(uint64_t));
    if (s && (copy = large ? malloc(EAGER_MAX) : utc_buf_alloc(size)))
        memcpy(copy, wire, large ? EAGER_MAX : size);
    if (!s || !copy) {
        free(s);
        if (large)
            drop_rest(t, q, size);
        else
            utc_log(UTC_LOG_ERROR, "conduit %d: out of memory: a %zu-byte message (tag %d) is "
                    "lost", t->base.conduit_id, size, q->mpi_tag / 2);
        return false;
    }
    s->next = NULL;
    s->size = size;
    s->buf = large ? NULL : copy;
    s->first = large ? copy : NULL;
    if (q->stail)
        q->stail->next = s;
    else
        q->shead = s;
    q->stail = s;
    return true;
}

/* Stash the first part that read r got (count bytes in its landing area). */
static bool stash_push(mpi_transport_t *t, mpi_rxq_t *q, const utc_request_t *r)
{
    return stash_push_wire(t, q, MR(r)->wire, MR(r)->count);
}

/* Under the lock: receive the end of stream (MPI tag `etag`) that `source` (MPI_ANY_SOURCE:
 * any member) sent, if it has come. True when one was taken. */
static bool take_eos(mpi_transport_t *t, int source, int etag)
{
    int flag = 0;
    int64_t count = 0;
    MPI_Message msg;
    MPI_Status st;
    if (MPI_Improbe(source, etag, t->comm, &flag, &msg, &st) || !flag ||
        MPI_Mrecv(&count, 1, MPI_INT64_T, &msg, &st))
        return false;
    t->eos[eos_slot(t, etag - EOS_TAG(0), st.MPI_SOURCE)] = count;
    t->any_eos = true;
    return true;
}

/*
 * Under the lock: take the next message from `source` with MPI tag `mtag` (MPI_ANY_TAG:
 * whatever data message comes next from there) out of MPI, into its queue's stash, where
 * the next read of its tag finds it (only its first part: the rest of a large one stays
 * in MPI). Only a message no posted read waits for is still in MPI to be taken. Returns
 * its queue, or NULL when none has come (or it was lost, out of memory: logged).
 */
static mpi_rxq_t *pull(mpi_transport_t *t, int source, int mtag)
{
    int flag = 0, count = 0;
    MPI_Status st;
    MPI_Message msg;
    while (mtag == MPI_ANY_TAG) {
        if (MPI_Iprobe(source, MPI_ANY_TAG, t->comm, &flag, &st) || !flag)
            return NULL;
        if (st.MPI_TAG == EOS_TAG(0) || st.MPI_TAG == EOS_TAG(1)) {
            take_eos(t, source, st.MPI_TAG);
            continue;
        }
        if ((mtag = st.MPI_TAG) >= MARK_TAG) /* the conduit is shutting down */
            return NULL;
    }
    if (MPI_Improbe(source, mtag, t->comm, &flag, &msg, &st) || !flag)
        return NULL;
    alignas(16) unsigned char wire[WIRE_BYTES];
    if (MPI_Mrecv(wire, WIRE_BYTES, MPI_BYTE, &msg, &st))
        return NULL;
    MPI_Get_count(&st, MPI_BYTE, &count);
    got_one(t, source, mtag);
    mpi_rxq_t *q = rxq_get(t, source, mtag, true);
    if (!q) {
        utc_log(UTC_LOG_ERROR, "conduit %d: out of memory: a message (tag %d) is lost",
                t->base.conduit_id, mtag / 2);
        if (count > EAGER_MAX)
            MPI_Recv(NULL, 0, MPI_BYTE, source, mtag, t->bulk, MPI_STATUS_IGNORE);
        return NULL;
    }
    return stash_push_wire(t, q, wire, count) ? q : NULL;
}

/* A queue of `source` and direction `dir` whose oldest stashed message no read waits
 * for: what an any-tag read takes (or a probe reports) before asking MPI. A device
 * conduit's own tags are no user's messages: never one of those. */
static mpi_rxq_t *stash_free(mpi_transport_t *t, int source, int dir)
{
    mpi_rxq_t *q, *tmp;
    HASH_ITER(hh, t->rxqs, q, tmp) {
        if (q->source == source && (q->mpi_tag & 1) == dir && q->shead && !q->phead &&
            !mtag_spared(t, q->mpi_tag))
            return q;
    }
    return NULL;
}

/* Under the lock: the queue of the next message of any tag that a read from `source` in
 * direction `dir` would get, pulling from MPI (messages of the other direction go to their
 * own stashes), or NULL. */
static mpi_rxq_t *next_any(mpi_transport_t *t, int source, int dir)
{
    mpi_rxq_t *q = stash_free(t, source, dir);
    while (!q && (q = pull(t, source, MPI_ANY_TAG)))
        if ((q->mpi_tag & 1) != dir || q->phead || mtag_spared(t, q->mpi_tag))
            q = NULL;
    return q;
}

/* Start receiving the rest of a large message into dst + EAGER_MAX for read r. False:
 * r is finished (an MPI error, in *st). */
static bool post_rest(mpi_transport_t *t, mpi_rxq_t *q, utc_request_t *r, unsigned char *dst,
                      size_t size, utc_status_t *st)
{
    int count;
    MPI_Datatype type;
    int err = bytes_type(size - EAGER_MAX, &count, &type);
    if (!err) {
        err = MPI_Irecv(dst + EAGER_MAX, count, type, q->source, q->mpi_tag, t->bulk,
                        &MR(r)->req);
        bytes_type_done(&type);
    }
    if (err) {
        r->tp_err = err;
        *st = UTC_ERR_MPI;
        return false;
    }
    MR(r)->phase = RX_REST;
    return true;
}

/* Under the lock: read r takes the oldest stashed message, or refuses it when it does not
 * fit (it stays first in line). True when r is finished, with *st its status; false when
 * the rest of the message is being received. */
static bool take_stash(mpi_transport_t *t, mpi_rxq_t *q, utc_request_t *r, utc_status_t *st)
{
    mpi_stash_t *s = q->shead;
    size_t n = s->size;
    r->received = n;
    *st = UTC_OK;
    if (!r->owned && n > r->size) {
        *st = UTC_ERR_TRUNCATE;
        if (s->first) { /* keep it whole: receive its rest aside */
            unsigned char *buf = utc_buf_alloc(n);
            if (!buf) {
                drop_rest(t, q, n);
                free(s->first);
                stash_pop(q);
                *st = UTC_ERR_NO_MEMORY;
                return true;
            }
            memcpy(buf, s->first, EAGER_MAX);
            free(s->first);
            s->first = NULL;
            s->buf = buf;
            int err = recv_rest_now(t, q, buf, n);
            if (err) { /* the message is lost */
                r->tp_err = err;
                *st = UTC_ERR_MPI;
                utc__buf_discard(buf);
                stash_pop(q);
            }
        }
        return true;
    }
    if (s->buf) { /* a whole message: hand it over */
        if (r->owned) {
            r->owned_buf = s->buf;
        } else {
            if (n)
                memcpy(r->rbuf, s->buf, n);
            utc__buf_discard(s->buf);
        }
        stash_pop(q);
        return true;
    }
    /* a large one whose rest is in MPI: straight after its first part */
    unsigned char *dst = r->rbuf;
    if (r->owned && !(dst = r->owned_buf = utc_buf_alloc(n))) {
        drop_rest(t, q, n);
        free(s->first);
        stash_pop(q);
        *st = UTC_ERR_NO_MEMORY;
        return true;
    }
    memcpy(dst, s->first, EAGER_MAX);
    free(s->first);
    stash_pop(q);
    return !post_rest(t, q, r, dst, n, st);
}

/* ---- reads ---- */

/* Under the lock: post read r's receive of its first part. */
static bool post_first(mpi_transport_t *t, mpi_rxq_t *q, utc_request_t *r, utc_status_t *st)
{
    int err = MPI_Irecv(MR(r)->wire, WIRE_BYTES, MPI_BYTE, q->source, q->mpi_tag, t->comm,
                        &MR(r)->req);
    if (err) {
        r->tp_err = err;
        *st = UTC_ERR_MPI;
        return false;
    }
    MR(r)->phase = RX_POSTED;
    return true;
}

/* Under the lock: read r's first part has come (and every older read of q has its
 * message). True when r is finished, with *st its status. */
static bool arrived(mpi_transport_t *t, mpi_rxq_t *q, utc_request_t *r, utc_status_t *st)
{
    *st = UTC_OK;
    if (q->shead) { /* older messages wait: this one queues behind them */
        stash_push(t, q, r);
        return take_stash(t, q, r, st);
    }
    bool large = MR(r)->count > EAGER_MAX;
    size_t n = (size_t)MR(r)->count;
    if (large)
        memcpy(&n, MR(r)->wire + EAGER_MAX, sizeof(uint64_t));
    r->received = n;
    if (!r->owned && n > r->size) { /* it stays first in line */
        *st = UTC_ERR_TRUNCATE;
        if (!stash_push(t, q, r))
            *st = UTC_ERR_NO_MEMORY;
        else if (large)
            return take_stash(t, q, r, st); /* receives its rest aside */
        return true;
    }
    unsigned char *dst = r->rbuf;
    if (r->owned && !(dst = r->owned_buf = utc_buf_alloc(n))) {
        if (large)
            drop_rest(t, q, n);
        *st = UTC_ERR_NO_MEMORY;
        return true;
    }
    if (large || n) /* an empty message may go to a NULL buffer */
        memcpy(dst, MR(r)->wire, large ? EAGER_MAX : n);
    return !large || !post_rest(t, q, r, dst, n, st);
}

/*
 * Under the lock: advance the reads of queue q in order. A read takes a message only once
 * every older read has one: the oldest waiting read takes the oldest stashed message, or
 * posts its receive when nothing is stashed; a posted one whose first part has come
 * handles it. Reads receiving their rest are tested wherever they are. A finished read
 * leaves the queue and is marked DONE last: its owner may return and reuse it as soon as
 * it sees DONE, so nothing here touches it afterwards.
 */
static void rxq_progress(mpi_transport_t *t, mpi_rxq_t *q)
{
    utc_request_t **link = &q->phead, *prev = NULL;
    bool blocked = false; /* an older read has no message yet */
    while (*link) {
        utc_request_t *r = *link;
        utc_status_t st = UTC_OK;
        bool done = false;
        int flag = 0, err;
        MPI_Status status;
        switch (MR(r)->phase) {
        case RX_WAITING:
            if (q->shead) {
                if (!blocked)
                    done = take_stash(t, q, r, &st);
                break;
            }
            if (!post_first(t, q, r, &st)) {
                done = true;
                break;
            }
            /* posted now; its message may have come already */
            /* fall through */
        case RX_POSTED:
            if (blocked)
                break;
            if ((err = MPI_Test(&MR(r)->req, &flag, &status))) {
                r->tp_err = err;
                st = UTC_ERR_MPI;
                done = true;
                break;
            }
            if (!flag)
                break;
            MPI_Get_count(&status, MPI_BYTE, &MR(r)->count);
            got_one(t, q->source, q->mpi_tag);
            MR(r)->phase = RX_ARRIVED;
            /* fall through */
        case RX_ARRIVED:
            if (blocked)
                break;
            done = arrived(t, q, r, &st);
            break;
        case RX_REST:
            if ((err = MPI_Test(&MR(r)->req, &flag, &status))) {
                r->tp_err = err;
                st = UTC_ERR_MPI;
                done = true;
            } else if ((done = flag) && rest_missing(&status)) {
                r->tp_err = UTC__TP_ERR_REST_MISSING;
                st = UTC_ERR_MPI;
            }
            break;
        }
        if (!done) {
            if (MR(r)->phase != RX_REST)
                blocked = true;
            prev = r;
            link = &r->next;
            continue;
        }
        rxq_unlink(q, link, prev);
        utc__req_finish(r, st); /* last touch */
    }
}

/*
 * Under the lock: serve the any-tag reads waiting in anyq, oldest first. One that finds a
 * message (stashed, or pulled from MPI) learns its tag and joins that tag's queue, where
 * rxq_progress hands it the message as to any read of the tag. A read of a tag started
 * earlier comes first: its receive is posted in MPI, so MPI gives it the message.
 */
static void any_progress(mpi_transport_t *t)
{
    utc_request_t **link = &t->anyq.phead, *prev = NULL;
    while (*link) {
        utc_request_t *r = *link;
        mpi_rxq_t *q = next_any(t, t->crank[r->peer], r->dir);
        if (!q) {
            prev = r;
            link = &r->next;
            continue;
        }
        rxq_unlink(&t->anyq, link, prev);
        r->tag = q->mpi_tag >> 1;
        MR(r)->rxq = q;
        MR(r)->phase = RX_WAITING;
        rxq_append(q, r);
        rxq_progress(t, q); /* r is first in q: it takes the stashed message */
    }
}

/* Under the lock: end every read with `status`; a receive MPI had matched already loses
 * its message (the conduit is failing or closing). */
static void end_reads(mpi_transport_t *t, utc_status_t status)
{
    mpi_rxq_t *q, *tmp;
    HASH_ITER(hh, t->rxqs, q, tmp) {
        while (q->phead) {
            utc_request_t *r = q->phead;
            q->phead = r->next;
            if (MR(r)->phase == RX_POSTED || MR(r)->phase == RX_REST) {
                MPI_Cancel(&MR(r)->req);
                MPI_Wait(&MR(r)->req, MPI_STATUS_IGNORE);
            }
            utc__req_finish(r, status); /* last touch */
        }
        q->ptail = NULL;
    }
    while (t->anyq.phead) { /* no MPI request of their own */
        utc_request_t *r = t->anyq.phead;
        t->anyq.phead = r->next;
        utc__req_finish(r, status);
    }
    t->anyq.ptail = NULL;
}

/* Under the lock: cancel read r's posted receive (r in queue q). True when it was
 * withdrawn; false when MPI had matched a message to it already: then r has it (state
 * RX_ARRIVED, counted as taken out of MPI). */
static bool withdraw_posted(mpi_transport_t *t, mpi_rxq_t *q, utc_request_t *r)
{
    MPI_Status status;
    int cancelled = 0;
    MPI_Cancel(&MR(r)->req);
    MPI_Wait(&MR(r)->req, &status);
    MPI_Test_cancelled(&status, &cancelled);
    if (cancelled)
        return true;
    MPI_Get_count(&status, MPI_BYTE, &MR(r)->count);
    got_one(t, q->source, q->mpi_tag);
    MR(r)->phase = RX_ARRIVED;
    return false;
}

/* ---- end of stream ---- */

/* Under the lock: `source`'s end of stream in direction `dir` came, and every message it
 * sent before it is out of MPI (in a read, or a stash). */
static bool stream_over(const mpi_transport_t *t, int source, int dir)
{
    int i = eos_slot(t, dir, source);
    return t->eos[i] >= 0 && (int64_t)t->got[i] >= t->eos[i];
}

/* Under the lock: end the reads of q that nothing is left for (its stream is over, and
 * the older reads have taken the stash) with UTC_ERR_CLOSED. */
static void close_reads(mpi_transport_t *t, mpi_rxq_t *q)
{
    rxq_progress(t, q); /* stashed messages go to the oldest reads first */
    utc_request_t **link = &q->phead, *prev = NULL;
    while (*link) {
        utc_request_t *r = *link;
        bool over = MR(r)->phase == RX_WAITING && !q->shead;
        if (MR(r)->phase == RX_POSTED)
            over = withdraw_posted(t, q, r); /* else its message came after all */
        if (!over) {
            prev = r;
            link = &r->next;
            continue;
        }
        rxq_unlink(q, link, prev);
        utc__req_finish(r, UTC_ERR_CLOSED); /* last touch */
    }
    rxq_trim(t, q);
}

/*
 * Under the lock: take the ends of stream that have come. A source whose end of stream
 * came before all its messages were out of MPI: take out the ones no read waits for (into
 * their stashes). Then every read whose source's stream is over and that nothing is left
 * for ends with UTC_ERR_CLOSED. Called off the fast path (see its callers).
 */
static void settle_eos(mpi_transport_t *t)
{
    while (take_eos(t, MPI_ANY_SOURCE, EOS_TAG(0)) || take_eos(t, MPI_ANY_SOURCE, EOS_TAG(1)))
        ;
    if (!t->any_eos)
        return;
    for (int i = 0; i < 2 * t->nmembers; i++)
        while (t->eos[i] >= 0 && (int64_t)t->got[i] < t->eos[i] &&
               pull(t, i % t->nmembers, MPI_ANY_TAG))
            ;
    mpi_rxq_t *q, *tmp;
    HASH_ITER(hh, t->rxqs, q, tmp) {
        if (q->phead && !mtag_spared(t, q->mpi_tag) && stream_over(t, q->source, q->mpi_tag & 1))
            close_reads(t, q);
    }
    utc_request_t **link = &t->anyq.phead, *prev = NULL;
    while (*link) {
        utc_request_t *r = *link;
        int source = t->crank[r->peer];
        if (!stream_over(t, source, r->dir) || stash_free(t, source, r->dir)) {
            prev = r;
            link = &r->next;
            continue;
        }
        rxq_unlink(&t->anyq, link, prev);
        utc__req_finish(r, UTC_ERR_CLOSED);
    }
}

/* Under the lock: post the receive of the next failure notice. */
static void ctl_post(mpi_transport_t *t)
{
    if (MPI_Irecv(t->ctl, 4, MPI_INT, MPI_ANY_SOURCE, CTL_TAG, t->bulk, &t->ctl_req))
        t->ctl_req = MPI_REQUEST_NULL;
}

/* Under the lock: take the failure notices that have come: mark the transport failed and
 * end the reads. */
static void ctl_poll(mpi_transport_t *t)
{
    int flag = 1;
    while (t->ctl_req != MPI_REQUEST_NULL && flag) {
        if (MPI_Test(&t->ctl_req, &flag, MPI_STATUS_IGNORE) || !flag)
            break;
        if (utc__transport_mark_failed(&t->base, t->ctl[0], t->ctl[1], t->ctl[2],
                                       UTC_ERR_PEER_FAILED))
            utc_log(UTC_LOG_INFO, "conduit %d: the task at end %d failed on rank %d (%s)",
                    t->base.conduit_id, t->ctl[0], t->ctl[1], utc_status_string(t->ctl[2]));
        end_reads(t, UTC_ERR_PEER_FAILED);
        ctl_post(t);
    }
}

static void mpi_fail(utc__transport_t *tp, utc_status_t status)
{
    mpi_transport_t *t = (mpi_transport_t *)tp;
    utc__spin_lock(&t->lock);
    end_reads(t, status);
    utc__spin_unlock(&t->lock);
}

/* Tell every other member (on bulk, tag CTL_TAG): a small message, it leaves at once. */
static void mpi_notify_failed(utc__transport_t *tp, int end, int rank, utc_status_t rc)
{
    mpi_transport_t *t = (mpi_transport_t *)tp;
    int msg[4] = {end, rank, (int)rc, 0};
    for (int m = 0; m < t->nmembers; m++)
        if (m != t->me)
            MPI_Send(msg, 4, MPI_INT, m, CTL_TAG, t->bulk);
}

/* ---- sends ---- */

/* A send's owner: test its MPI sends; once done, free what it holds and finish it, with
 * `done_status` (UTC_OK, or the conduit's close status). True when it is done. */
static bool send_test(utc_request_t *req, utc_status_t done_status)
{
    int flag = 0, err;
    if (MR(req)->bulk == MPI_REQUEST_NULL) {
        err = MPI_Test(&MR(req)->req, &flag, MPI_STATUS_IGNORE);
    } else {
        MPI_Request both[2] = {MR(req)->req, MR(req)->bulk};
        err = MPI_Testall(2, both, &flag, MPI_STATUSES_IGNORE);
        MR(req)->req = both[0];
        MR(req)->bulk = both[1];
    }
    if (err) {
        req->tp_err = err;
        utc__req_finish(req, UTC_ERR_MPI);
    } else if (flag) {
        if (req->owned)
            utc_buf_free((void *)req->sbuf);
        utc__req_finish(req, done_status);
    }
    return err || flag;
}

/* A send: a small message as it is; a large one as its first part, then the rest. */
static utc_status_t send_start(mpi_transport_t *t, utc_request_t *req)
{
    int dest = t->crank[req->peer], tag = mpi_tag(req), err;
    /* counted once in MPI: an end of stream sent after this send counts it (a spared
     * tag's message is outside the stream) */
    atomic_uint *sent = &t->sent[eos_slot(t, req->dir, dest)];
    bool spared = mtag_spared(t, tag);
    if (req->size <= EAGER_MAX) {
        if ((err = MPI_Isend(req->sbuf, (int)req->size, MPI_BYTE, dest, tag, t->comm,
                             &MR(req)->req)))
            return utc__mpi_error(err, "MPI_Isend");
        if (!spared)
            atomic_fetch_add_explicit(sent, 1, memory_order_relaxed);
        /* a small message usually leaves at once (MPI copies it out): finish the write
         * here rather than in a first round of its wait */
        send_test(req, UTC_OK);
        return UTC_OK;
    }
    uint64_t size = req->size;
    int count;
    MPI_Datatype type;
    /* everything that can fail comes before the first part: once it is out, the reader
     * waits for the rest */
    if ((err = bytes_type(req->size - EAGER_MAX, &count, &type)))
        return utc__mpi_error(err, "MPI_Type_create_struct (a message over 2 GiB)");
    memcpy(MR(req)->wire, req->sbuf, EAGER_MAX);
    memcpy(MR(req)->wire + EAGER_MAX, &size, sizeof size);
    if ((err = MPI_Isend(MR(req)->wire, WIRE_BYTES, MPI_BYTE, dest, tag, t->comm,
                         &MR(req)->req))) {
        bytes_type_done(&type);
        return utc__mpi_error(err, "MPI_Isend");
    }
    if (!spared)
        atomic_fetch_add_explicit(sent, 1, memory_order_relaxed);
    err = MPI_Isend((const unsigned char *)req->sbuf + EAGER_MAX, count, type, dest, tag,
                    t->bulk, &MR(req)->bulk);
    bytes_type_done(&type);
    if (err) {
        /* the first part is out: an empty rest tells the reader (rest_missing), which
         * fails its read instead of waiting for ever */
        MPI_Send(NULL, 0, MPI_BYTE, dest, tag, t->bulk);
        MPI_Wait(&MR(req)->req, MPI_STATUS_IGNORE);
        return utc__mpi_error(err, "MPI_Isend (the rest of a large message)");
    }
    return UTC_OK;
}

/* ---- the transport's operations ---- */

static inline utc_status_t closed_status(mpi_transport_t *t)
{
    /* acquire: pairs with the release in mpi_shutdown */
    return (utc_status_t)atomic_load_explicit(&t->closed, memory_order_acquire);
}

static utc_status_t mpi_start(utc__transport_t *tp, utc_request_t *req)
{
    mpi_transport_t *t = (mpi_transport_t *)tp;
    /* the request's MPI part, before anything may look at it */
    MR(req)->req = MR(req)->bulk = MPI_REQUEST_NULL;
    MR(req)->rxq = NULL;
    MR(req)->phase = RX_WAITING;
    if (req->op == UTC__OP_SEND) {
        utc_status_t cl = closed_status(t);
        if (cl) {
            utc__req_finish(req, cl);
            return UTC_OK;
        }
        return send_start(t, req);
    }
    utc__spin_lock(&t->lock);
    utc_status_t cl = closed_status(t);
    if (cl) { /* checked under the lock: the shutdown's sweep holds it */
        utc__spin_unlock(&t->lock);
        utc__req_finish(req, cl);
        return UTC_OK;
    }
    if (req->tag == UTC_ANY_TAG) {
        MR(req)->rxq = &t->anyq;
        MR(req)->phase = RX_ANY;
        rxq_append(&t->anyq, req);
        any_progress(t);
        if (t->any_eos)
            settle_eos(t);
        utc__spin_unlock(&t->lock);
        return UTC_OK;
    }
    mpi_rxq_t *q = rxq_get(t, t->crank[req->peer], mpi_tag(req), true);
    if (!q) {
        utc__spin_unlock(&t->lock);
        return utc__error(UTC_ERR_NO_MEMORY, "conduit read: out of memory");
    }
    MR(req)->rxq = q;
    if (!q->shead && !(q->ptail && MR(q->ptail)->phase == RX_WAITING)) {
        /* nothing in line before it: post its receive now, as early as it can be */
        utc_status_t st;
        if (!post_first(t, q, req, &st)) {
            utc__spin_unlock(&t->lock);
            return utc__mpi_error(req->tp_err, "conduit read: MPI_Irecv");
        }
    }
    rxq_append(q, req);
    /* a stashed message is taken now; one in flight waits for the read's test or wait */
    if (MR(req)->phase == RX_WAITING)
        rxq_progress(t, q);
    if (t->any_eos) /* a stream already over ends the read now */
        settle_eos(t);
    utc__spin_unlock(&t->lock);
    return UTC_OK;
}

/* A send whose reader's task failed: its MPI sends (and its owned buffer) move to the
 * transport's parked list, to be completed by the destroy's drain; the request is free to
 * end. Out of memory: MPI is left to finish them on its own (an owned buffer then leaks). */
static void park_send(mpi_transport_t *t, utc_request_t *req)
{
    mpi_parked_t *p = malloc(sizeof *p);
    if (!p) {
        if (MR(req)->req != MPI_REQUEST_NULL)
            MPI_Request_free(&MR(req)->req);
        if (MR(req)->bulk != MPI_REQUEST_NULL)
            MPI_Request_free(&MR(req)->bulk);
        return;
    }
    p->mpi[0] = MR(req)->req;
    p->mpi[1] = MR(req)->bulk;
    p->owned = req->owned ? (void *)req->sbuf : NULL;
    MR(req)->req = MR(req)->bulk = MPI_REQUEST_NULL;
    utc__spin_lock(&t->lock);
    p->next = t->parked;
    t->parked = p;
    utc__spin_unlock(&t->lock);
}

/* After the drain: the parked sends have completed (their readers' ranks took them). */
static void parked_complete(mpi_transport_t *t, bool drained)
{
    while (t->parked) {
        mpi_parked_t *p = t->parked;
        t->parked = p->next;
        if (drained) {
            MPI_Waitall(2, p->mpi, MPI_STATUSES_IGNORE);
            utc_buf_free(p->owned);
        } else { /* destroyed without a shutdown: MPI finishes them on its own */
            for (int i = 0; i < 2; i++)
                if (p->mpi[i] != MPI_REQUEST_NULL)
                    MPI_Request_free(&p->mpi[i]);
        }
        free(p);
    }
}

/* Progress; *flowing: data is moving (a send in flight, or a read receiving its rest). */
static bool progress_ex(mpi_transport_t *t, utc_request_t *req, bool *flowing)
{
    *flowing = false;
    if (utc__req_state(req) == UTC__REQ_DONE)
        return true;
    if (req->op == UTC__OP_SEND) {
        /* a send is only ever tested by its owner */
        *flowing = true;
        /* closed: MPI still holds the send until the members' drains take it (collective,
         * under way); it ends then, with the close status */
        if (send_test(req, closed_status(t)))
            return true;
        /* now and then, as a wait does: has a failure notice come? (a send that is only
         * tested, never waited for, learns of it here); relaxed: the count only paces the
         * look */
        if ((atomic_fetch_add_explicit(&t->send_polls, 1, memory_order_relaxed) & 63) == 63) {
            utc__spin_lock(&t->lock);
            ctl_poll(t);
            utc__spin_unlock(&t->lock);
        }
        /* a reader's task that failed will not take it: it ends now, its MPI sends parked
         * until the conduit's destroy drains them */
        utc__fail_info_t f;
        if (utc__fail_record_get(&t->base.fail, &f) && f.end != req->dir && !closed_status(t)) {
            park_send(t, req);
            utc__req_finish(req, f.why);
            return true;
        }
        return false;
    }
    utc__spin_lock(&t->lock);
    /* relaxed: reads change state only under this lock */
    if (atomic_load_explicit(&req->state, memory_order_relaxed) != UTC__REQ_DONE) {
        /* the queue is not freed while the read is in it */
        if ((++t->polls & 63) == 0) {
            /* now and then, as a wait does: has the writer closed, has a task at the other
             * end failed? (a read that is only tested learns of them here) */
            settle_eos(t);
            ctl_poll(t);
        }
        if (utc__req_state(req) == UTC__REQ_DONE) {
            utc__spin_unlock(&t->lock);
            return true;
        }
        if (MR(req)->rxq == &t->anyq)
            any_progress(t); /* it may move to its message's queue */
        mpi_rxq_t *q = MR(req)->rxq;
        if (q != &t->anyq)
            rxq_progress(t, q);
        if (atomic_load_explicit(&req->state, memory_order_relaxed) == UTC__REQ_DONE)
            rxq_trim(t, q);
        else
            *flowing = MR(req)->phase == RX_REST;
    }
    utc__spin_unlock(&t->lock);
    return utc__req_state(req) == UTC__REQ_DONE;
}

static bool mpi_progress(utc__transport_t *tp, utc_request_t *req)
{
    bool flowing;
    return progress_ex((mpi_transport_t *)tp, req, &flowing);
}

/*
 * One look of a waiting read that is first in its queue with its receive posted (the
 * usual case): under the lock, test that receive alone and, once its first part is in,
 * handle it (arrived(): the read is first in line, so nothing older waits). The general
 * progress_ex also walks the queue and looks for ends of stream now and then; a waiting
 * read makes those looks in mpi_wait after its first polls, and the reads behind it
 * advance when they are tested or waited for. 1: the read is done; 0: not yet; -1: it is
 * not in that state, or no longer (a large message's rest is coming): use progress_ex.
 */
static int posted_poll(mpi_transport_t *t, utc_request_t *req)
{
    int flag = 0, err, ret = 0;
    MPI_Status status;
    utc_status_t st = UTC_OK;
    utc__spin_lock(&t->lock);
    mpi_rxq_t *q = MR(req)->rxq;
    /* relaxed: reads change state only under this lock */
    if (atomic_load_explicit(&req->state, memory_order_relaxed) == UTC__REQ_DONE) {
        ret = 1;
    } else if (MR(req)->phase != RX_POSTED || q == &t->anyq || q->phead != req) {
        ret = -1;
    } else if ((err = MPI_Test(&MR(req)->req, &flag, &status))) {
        req->tp_err = err;
        st = UTC_ERR_MPI;
        ret = 1;
    } else if (flag) {
        MPI_Get_count(&status, MPI_BYTE, &MR(req)->count);
        got_one(t, q->source, q->mpi_tag);
        MR(req)->phase = RX_ARRIVED;
        ret = arrived(t, q, req, &st) ? 1 : -1;
    }
    if (ret > 0 && atomic_load_explicit(&req->state, memory_order_relaxed) != UTC__REQ_DONE) {
        /* finished here: out of the queue, then DONE last (rxq_progress's order) */
        rxq_unlink(q, &q->phead, NULL);
        utc__req_finish(req, st);
        rxq_trim(t, q);
    }
    utc__spin_unlock(&t->lock);
    return ret;
}

/* Test with back-off. Once data is moving, keep polling (yielding) for about the time the
 * transfer should take at 2 GB/s plus 1 ms, so a multi-MiB message is not finished late
 * by a sleep; a waiter with nothing coming sleeps after ~1 ms. */
static bool mpi_wait(utc__transport_t *tp, utc_request_t *req, double timeout_s)
{
    mpi_transport_t *t = (mpi_transport_t *)tp;
    utc__poll_t p = UTC__POLL_INIT;
    double deadline = utc__deadline(timeout_s);
    bool flowing = false, was_flowing = false;
    bool posted = req->op == UTC__OP_RECV;
    for (;;) {
        int got = posted ? posted_poll(t, req) : -1;
        if (got > 0)
            return true;
        if (got < 0) {
            posted = false; /* from now on the general way */
            if (progress_ex(t, req, &flowing))
                return true;
        }
        if (flowing && !was_flowing) {
            size_t bytes = req->op == UTC__OP_SEND ? req->size : req->received;
            p.busy_until = utc_wtime() + 1e-3 + (double)bytes / 2e9;
            was_flowing = true;
        }
        if (deadline >= 0 && (p.iter & 15) == 0 && utc_wtime() >= deadline)
            return false;
        if (p.iter >= 64 && (p.iter & 15) == 0) {
            /* off the fast path: has a task at the other end failed? (a read ends then; a
             * write waiting for a failed reader is parked by progress_ex and ends) */
            utc__spin_lock(&t->lock);
            ctl_poll(t);
            settle_eos(t);
            utc__spin_unlock(&t->lock);
        }
        utc__poll_step(&p);
    }
}

/* Withdraw a read with no message: a posted receive is cancelled in MPI (when MPI had
 * matched it already, the read keeps its message and is not withdrawn). */
static bool mpi_cancel(utc__transport_t *tp, utc_request_t *req)
{
    mpi_transport_t *t = (mpi_transport_t *)tp;
    if (req->op != UTC__OP_RECV)
        return false;
    bool removed = false;
    utc__spin_lock(&t->lock);
    mpi_rxq_t *q = MR(req)->rxq;
    /* relaxed: under the lock, as above */
    if (atomic_load_explicit(&req->state, memory_order_relaxed) != UTC__REQ_DONE &&
        (MR(req)->phase == RX_WAITING || MR(req)->phase == RX_POSTED ||
         MR(req)->phase == RX_ANY)) {
        /* a message MPI had matched already: the read stays, to be handled in order */
        removed = MR(req)->phase != RX_POSTED || withdraw_posted(t, q, req);
        for (utc_request_t **p = &q->phead, *prev = NULL; removed && *p;
             prev = *p, p = &(*p)->next) {
            if (*p == req) {
                rxq_unlink(q, p, prev);
                break;
            }
        }
        if (q != &t->anyq) {
            rxq_progress(t, q); /* a stashed message may now go to the next read */
            if (removed)
                rxq_trim(t, q);
        }
    }
    utc__spin_unlock(&t->lock);
    return removed;
}

/* Under the lock: the queue whose next message a probe like `req` reports, or NULL;
 * `may_pull`: take the next one of its tag out of MPI when none is stashed. */
static mpi_rxq_t *probe_look(mpi_transport_t *t, const utc_request_t *req, int source,
                             bool may_pull)
{
    mpi_rxq_t *q;
    if (req->tag == UTC_ANY_TAG) {
        /* an any-tag read started earlier takes the next one */
        for (utc_request_t *r = t->anyq.phead; r; r = r->next)
            if (r->peer == req->peer && r->dir == req->dir)
                return NULL;
        return next_any(t, source, req->dir);
    }
    if ((q = rxq_get(t, source, mpi_tag(req), false)) && q->phead)
        return NULL; /* reads of the tag started earlier take the next one */
    if (q && q->shead)
        return q;
    return may_pull ? pull(t, source, mpi_tag(req)) : NULL;
}

static utc_status_t mpi_probe(utc__transport_t *tp, utc_request_t *req)
{
    mpi_transport_t *t = (mpi_transport_t *)tp;
    int source = t->crank[req->peer];
    mpi_rxq_t *q = NULL;
    utc__spin_lock(&t->lock);
    utc_status_t cl = closed_status(t);
    if (!cl) {
        ctl_poll(t);
        q = probe_look(t, req, source, true);
    }
    bool over = false;
    if (!q && !cl) {
        settle_eos(t);
        /* settle_eos takes out of MPI what came before an end of stream, this tag's
         * message among them: look again before calling the stream over */
        if (!(q = probe_look(t, req, source, false)))
            over = stream_over(t, source, req->dir);
    }
    if (q && q->shead) {
        req->received = q->shead->size;
        req->tag = q->mpi_tag >> 1;
    }
    utc__spin_unlock(&t->lock);
    if (q)
        return UTC_OK;
    if (cl)
        return cl;
    if (over) /* checked after the look: what came before its end of stream was found */
        return UTC_ERR_CLOSED;
    utc_status_t why = utc__transport_fail_status(tp);
    if (why)
        return why;
    return UTC_ERR_TIMEOUT;
}

/* The end of stream: after this rank's messages of direction `dir` to `peer`, their
 * count (the reader knows it has them all once it has taken that many out of MPI). */
static utc_status_t mpi_close(utc__transport_t *tp, int dir, int peer)
{
    mpi_transport_t *t = (mpi_transport_t *)tp;
    utc_status_t cl = closed_status(t);
    if (cl)
        return cl;
    int dest = t->crank[peer];
    int64_t count = atomic_load(&t->sent[eos_slot(t, dir, dest)]);
    int err = MPI_Send(&count, 1, MPI_INT64_T, dest, EOS_TAG(dir), t->comm);
    return err ? utc__mpi_error(err, "utc_conduit_close: MPI_Send") : UTC_OK;
}

/* Cancel a receive still posted in MPI (its buffer is about to go). */
static void cancel_posted(MPI_Request *r)
{
    if (*r == MPI_REQUEST_NULL)
        return;
    MPI_Cancel(r);
    MPI_Wait(r, MPI_STATUS_IGNORE);
}

/* Receive (and drop) whatever is still on its way on `comm`; count the marks. */
static bool drain_step(mpi_transport_t *t, MPI_Comm comm, int *marks)
{
    int flag = 0, count = 0;
    MPI_Message msg;
    MPI_Status st;
    if (MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &msg, &st) != MPI_SUCCESS ||
        !flag)
        return false;
    MPI_Get_count(&st, MPI_BYTE, &count);
    void *buf = count > 0 ? malloc((size_t)count) : NULL;
    if (count > 0 && !buf) { /* receive it piecewise: truncation consumes it all the same */
        MPI_Mrecv(NULL, 0, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
    } else {
        MPI_Mrecv(buf, count, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        free(buf);
    }
    if (st.MPI_TAG == MARK_TAG)
        (*marks)++;
    else
        utc_log(UTC_LOG_DEBUG, "conduit %d: a %d-byte message (tag %d) from rank %d dropped "
                "at destroy", t->base.conduit_id, count, st.MPI_TAG / 2, st.MPI_SOURCE);
    return true;
}

/*
 * Shutdown, across ranks: leave nothing of this conduit in MPI, or a later conduit whose
 * communicator reuses the freed one's context could trip on it. Every member sends every
 * other one a mark on both communicators after its last message, then receives (and
 * drops) everything until it has every other member's marks: MPI keeps each sender's
 * messages in order, so nothing can follow a mark. Waits for the other members to shut
 * down too (destroy is collective), saying so every 10 s.
 */
static void drain_to_marks(mpi_transport_t *t)
{
    int others = t->nmembers - 1, marks[2] = {0, 0};
    MPI_Request *sends = calloc((size_t)(2 * others > 0 ? 2 * others : 1), sizeof *sends);
    int nsends = 0;
    for (int m = 0; m < t->nmembers && sends; m++) {
        if (m == t->me)
            continue;
        MPI_Isend(NULL, 0, MPI_BYTE, m, MARK_TAG, t->comm, &sends[nsends++]);
        MPI_Isend(NULL, 0, MPI_BYTE, m, MARK_TAG, t->bulk, &sends[nsends++]);
    }
    if (!sends) { /* out of memory: one at a time */
        for (int m = 0; m < t->nmembers; m++) {
            if (m == t->me)
                continue;
            MPI_Send(NULL, 0, MPI_BYTE, m, MARK_TAG, t->comm);
            MPI_Send(NULL, 0, MPI_BYTE, m, MARK_TAG, t->bulk);
        }
    }
    utc__poll_t p = UTC__POLL_INIT;
    double next_note = utc_wtime() + 10;
    while (marks[0] < others || marks[1] < others) {
        bool got = false;
        while (drain_step(t, t->comm, &marks[0]))
            got = true;
        while (drain_step(t, t->bulk, &marks[1]))
            got = true;
        if (got) {
            p = (utc__poll_t)UTC__POLL_INIT;
            continue;
        }
        if (utc_wtime() > next_note) {
            utc_log(UTC_LOG_WARN, "conduit %d: utc_conduit_destroy waits for %d other rank(s) "
                    "to destroy it too (it is collective)", t->base.conduit_id,
                    others - (marks[0] < marks[1] ? marks[0] : marks[1]));
            next_note += 10;
        }
        utc__poll_step(&p);
    }
    if (sends) {
        MPI_Waitall(nsends, sends, MPI_STATUSES_IGNORE);
        free(sends);
    }
}

/* End every read with `status` (their MPI receives cancelled) and drop the stash; sends
 * end at their owner's next test. From now on every operation ends at its start. Then
 * drain the conduit's messages still in MPI (collective over the members). */
static void mpi_shutdown(utc__transport_t *tp, utc_status_t status)
{
    mpi_transport_t *t = (mpi_transport_t *)tp;
    utc__spin_lock(&t->lock);
    /* release: pairs with the acquire in closed_status */
    atomic_store_explicit(&t->closed, (int)status, memory_order_release);
    end_reads(t, status);
    cancel_posted(&t->ctl_req);
    mpi_rxq_t *q, *tmp;
    HASH_ITER(hh, t->rxqs, q, tmp) {
        while (q->shead) {
            mpi_stash_t *s = q->shead;
            utc__buf_discard(s->buf);
            free(s->first);
            stash_pop(q);
        }
    }
    utc__spin_unlock(&t->lock);
    drain_to_marks(t);
    utc__spin_lock(&t->lock);
    parked_complete(t, true);
    utc__spin_unlock(&t->lock);
}

static void mpi_destroy(utc__transport_t *tp)
{
    mpi_transport_t *t = (mpi_transport_t *)tp;
    mpi_rxq_t *q, *tmp;
    HASH_ITER(hh, t->rxqs, q, tmp) {
        for (utc_request_t *r = q->phead; r; r = r->next) /* none after a shutdown */
            if (MR(r)->phase == RX_POSTED || MR(r)->phase == RX_REST)
                cancel_posted(&MR(r)->req);
        while (q->shead) {
            mpi_stash_t *s = q->shead;
            q->shead = s->next;
            utc__buf_discard(s->buf);
            free(s->first);
            free(s);
        }
        HASH_DEL(t->rxqs, q);
        free(q);
    }
    cancel_posted(&t->ctl_req); /* a transport destroyed without a shutdown */
    parked_complete(t, false);  /* none after a shutdown */
    MPI_Comm_free(&t->bulk);
    MPI_Comm_free(&t->comm);
    free(t->crank);
    free(t->sent);
    free(t->got);
    free(t->eos);
    free(t);
}

static const utc__transport_ops_t mpi_ops = {
    .name = "MPI",
    .start = mpi_start,
    .send_now = utc__transport_no_send_now,
    .progress = mpi_progress,
    .wait = mpi_wait,
    .cancel = mpi_cancel,
    .probe = mpi_probe,
    .close = mpi_close,
    .shutdown = mpi_shutdown,
    .fail = mpi_fail,
    .notify_failed = mpi_notify_failed,
    .destroy = mpi_destroy,
};

/* Collective over all ranks: args->members lists the world ranks that take part
 * (ascending); *out is NULL on the others. */
static utc_status_t mpi_create(const utc__transport_args_t *args, utc__transport_t **out)
{
    const int *members = args->members;
    int nmembers = args->nmembers;
    MPI_Comm world = utc__world_comm(), comm = MPI_COMM_NULL;
    int me = utc_rank(), nranks = utc_nranks(), member = 0, err;
    for (int i = 0; i < nmembers; i++)
        member |= members[i] == me;
    /* Open MPI's blocking collectives spin: meet first in a barrier that early ranks wait
     * for asleep (tested with back-off); the creation's argument check met already, when
     * it is on (base/coll_check.h) */
    if (!utc__coll_check_on()) {
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
    if (t) {
        t->sent = calloc(2 * (size_t)nmembers, sizeof *t->sent);
        t->got = calloc(2 * (size_t)nmembers, sizeof *t->got);
        t->eos = malloc(2 * (size_t)nmembers * sizeof *t->eos);
    }
    if (!t || !crank || !t->sent || !t->got || !t->eos) {
        rc = utc__error(UTC_ERR_NO_MEMORY, "utc_conduit_create: out of memory");
        goto fail;
    }
    for (int i = 0; i < 2 * nmembers; i++) {
        atomic_init(&t->sent[i], 0);
        t->eos[i] = -1; /* not come */
    }
    atomic_init(&t->send_polls, 0);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    t->bulk = bulk;
    int *tag_ub = NULL, flag = 0;
    /* a predefined attribute: only MPI_COMM_WORLD is sure to carry it */
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    if (!flag || !tag_ub || *tag_ub < EOS_TAG(1)) {
        rc = utc__error(UTC_ERR_UNSUPPORTED,
                        "utc_conduit_create: this MPI's largest tag (MPI_TAG_UB) is %d; conduits "
                        "need at least %d (2 * UTC_CONDUIT_TAG_MAX + 5)",
                        flag && tag_ub ? *tag_ub : -1, EOS_TAG(1));
        goto fail;
    }
    for (int r = 0; r < nranks; r++)
        crank[r] = -1;
    for (int i = 0; i < nmembers; i++)
        crank[members[i]] = i;
    t->base.ops = &mpi_ops;
    t->base.conduit_id = args->conduit_id;
    t->base.kind = UTC_CONDUIT_MPI;
    t->comm = comm;
    t->nmembers = nmembers;
    MPI_Comm_rank(comm, &t->me);
    t->crank = crank;
    t->lock = (utc__spinlock_t)UTC__SPINLOCK_INIT;
    ctl_post(t);
    *out = &t->base;
    return UTC_OK;
fail:
    MPI_Comm_free(&bulk);
    free(crank);
    if (t) {
        free(t->sent);
        free(t->got);
        free(t->eos);
    }
    free(t);
    MPI_Comm_free(&comm);
    return rc;
}

static bool mpi_reaches(int a, int b) { return a != b; }

const utc__transport_component_t utc__mpi_component = {
    .name = "mpi",
    .kind = UTC_CONDUIT_MPI,
    .reaches = mpi_reaches,
    .collective = true,
    .create = mpi_create,
    .req_priv = sizeof(mpi_req_t),
};
