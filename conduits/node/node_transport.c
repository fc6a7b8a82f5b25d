/*
 * Node transport: the ends of the conduit are different ranks on one host. Messages go
 * through memory both processes map (node_engine.c): one FIFO per ordered pair of ranks,
 * shared by every node-local conduit between them, so a conduit costs a small struct and
 * its queues (10,000 conduits add no segment).
 *
 * Writing. A send becomes records in the FIFO towards its peer, in the order sends start
 * (a FIFO-wide queue, `txq`, holds those that wait for room; whoever writes or waits next
 * pushes them, oldest first, so records of one message are never split by another's):
 * - up to INLINE_MAX bytes: one record with the bytes (the write completes at once);
 * - larger, pipelined: a FIRST record (the size and a first part) and CHUNK records,
 *   pushed as the reader frees room, received straight into the read's buffer when a
 *   read waits: the writer's and the reader's copies run at once, on two cores;
 * - larger, with cross-memory attach (CMA) chosen (UTC_NODE_CMA=1, or auto on a host with
 *   more ranks than CPUs, and allowed by the kernel) and a slot free: a descriptor (the
 *   buffer's address and a slot); the reader copies straight from the writer's buffer
 *   into its own with process_vm_readv (one copy, by the reader alone) and marks the slot
 *   done; the write completes then. Measured here the pipeline is 1.5-1.8x faster at
 *   4-64 MiB when both ranks have a core (doc/PERFORMANCE.md), hence the default.
 *
 * Slots: a CMA slot is a word in the shared control page, gen << 2 | state. The writer
 * offers it (OFFERED) with the descriptor; the reader claims it (CAS OFFERED -> COPYING)
 * before copying and marks it DONE after. A writer that must end its write first (its
 * conduit destroyed, its reader's task failed) revokes it (CAS OFFERED -> REVOKED) and
 * gives the buffer back only if that succeeds; when the reader is copying it waits for
 * DONE. A reader whose claim fails never reads the buffer. So a descriptor is never read
 * after its writer gave its buffer back. A reader that will take no offer (its conduit
 * shut down) revokes it too: the write ends with UTC_OK, the message dropped unread.
 *
 * Reading. The thread that waits or tests (or starts a read, probes) drains the FIFO from
 * its peer (node_engine.c: a trylock; a thread that finds another at it leaves the work to
 * it) and dispatches each record to its conduit's transport by (conduit id, sub) through a
 * registry: matched to the oldest read posted for its (direction, peer, tag), or to an
 * earlier any-tag read (posting order decides), else queued as unexpected (copied out of
 * the ring, so the ring frees). Records for a conduit not yet created here wait in a
 * placeholder transport that the creation adopts; records for one destroyed here are
 * dropped, offers declined (ids are assigned in the same order on every rank and never
 * reused). A destroy takes what has come from each member rank and sends it a GONE record:
 * that rank's writes to this one on the conduit end then, with UTC_OK (the message dropped
 * unread, as over MPI, where the destroy receives and drops it).
 *
 * A message that does not fit its read (UTC_ERR_TRUNCATE) stays queued, first in line; a
 * CMA one is copied aside then, so that its write ends without waiting for the retry. An
 * owned read (utc_conduit_read_owned) gets a utc_buf_alloc buffer: between ranks the
 * hand-over copies (a queued large message already sits in such a buffer and is handed
 * over as it is; read into a plain buffer, that copy goes straight back to the allocator,
 * never into utc_buf_free's quarantine). Closing sends an EOS record behind the writer's
 * messages; a failure notice is a CTL record. Waits spin briefly (SPIN_S), then sleep on
 * the peer's bell (node_engine.c), waking every 100 ms at most to ask whether the peer
 * process lives: a killed peer ends them with UTC_ERR_PEER_FAILED.
 *
 * Locks, in order: a FIFO's rx_lock (the drainer), the registry, a transport's lock. A
 * FIFO's tx_lock is taken alone (or, by a shutdown, before the others, never inside).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "node/node_engine.h"
#include "service/buffer.h"
#include "service/request.h"
#include "service/transport.h"
#include "service/wait.h"

/* Messages up to this size go whole in one record. */
#define INLINE_MAX ((size_t)16 << 10)
/* The largest chunk of a pipelined message. */
#define CHUNK_MAX ((size_t)128 << 10)
/* A pipelined message grows the ring up to this size only: enough for the pipeline; a
 * large write then waits for its reader, as over MPI (a burst of small messages may grow
 * it further). */
#define PIPE_RING ((size_t)1 << 20)
/* A pipelined chunk smaller than this waits for more room (unless it ends the message). */
#define CHUNK_MIN ((size_t)4 << 10)
/* How long a waiter polls before it sleeps, and of that how long without yielding. */
#define SPIN_S 50e-6
#define PURE_SPIN_S 20e-6

static inline size_t rec_len(size_t payload)
{
    return (NODE_REC_HDR + payload + NODE_ALIGN - 1) & ~(size_t)(NODE_ALIGN - 1);
}

/* A message taken out of the FIFO before a read asked for it. */
typedef struct node_msg {
    struct node_msg *next;
    uint64_t seq;           /* arrival order, all tags (any-tag reads, probes) */
    int tag;
    int kind;               /* NODE_REC_MSG (bytes here), NODE_REC_CMA (a descriptor) */
    size_t size;
    bool complete;          /* all its bytes have come (a pipelined one: its last chunk) */
    bool cut;               /* complete, but cut short: its writer stopped mid-message (its
                             * conduit destroyed there): the read that takes it fails */
    bool big;               /* buf is a utc_buf_alloc buffer (else the bytes are in data):
                             * handed to an owned read as it is, else discarded once read
                             * (utc__buf_discard: no quarantine, nobody else held it) */
    utc_request_t *reader;  /* a read that took it before its last chunk came */
    void *buf;
    node_cma_t cma;
    alignas(16) unsigned char data[];
} node_msg_t;

/* Reads and queued messages of one (direction, peer, tag). */
typedef struct node_tagq {
    uint64_t key;
    int dir, peer, tag;
    node_msg_t *uhead, *utail;
    utc_request_t *phead, *ptail;
    UT_hash_handle hh;
} node_tagq_t;

typedef struct node_tp {
    utc__transport_t base;
    uint64_t key;           /* conduit id << 32 | sub */
    bool placeholder;       /* made by a record that came before the creation */
    int nmembers;
    int *members;
    utc__olock_t lock;      /* everything below; an owner lock (base/sync.h): the one
                             * thread that reads on it takes it with plain stores */
    node_tagq_t *tagqs;
    node_tagq_t *last_q;
    utc_request_t *anyh, *anyt; /* posted any-tag reads, oldest first */
    utc_request_t *cmar;    /* reads holding a descriptor to copy (node_req_t.cnext) */
    utc_request_t *cmas;    /* CMA sends, from start to end (node_req_t.cnext) */
    uint64_t seq, pseq;
    unsigned char *eos;     /* [dir * nranks + world rank]: that writer's stream ended */
    atomic_bool *gone;      /* [world rank]: that rank destroyed the conduit (a GONE record
                             * came): what is written to it is dropped there, unread */
    atomic_int closed;      /* 0, or the status every operation ends with (shutdown) */
    UT_hash_handle hh;      /* the registry */
} node_tp_t;

static_assert(offsetof(node_tp_t, base) == 0, "transport base must come first");

/* A request's state here (its private part). */
enum {
    R_POSTED = 1, /* in its tag's queue */
    R_ANY,        /* in the any-tag queue */
    R_CMA,        /* holds a descriptor: its owner copies */
    R_ASM,        /* a pipelined message arrives straight into it */
    R_WAITMSG,    /* took a queued message whose last chunk has not come */
    S_QUEUED,     /* in the FIFO's txq */
    S_CMA,        /* descriptor out: waits for the slot's DONE */
    S_DROPPED     /* a CMA send taken out of the txq by a shutdown */
};
enum { K_INLINE = 1, K_PIPE, K_CMA, K_EOS, K_CTL, K_GONE };

typedef struct node_req {
    int phase;
    int kind;               /* sends */
    bool heap;              /* a notice made here: freed once pushed */
    uint64_t pseq;          /* reads: posting order */
    size_t off;             /* pipelined send: bytes pushed */
    int slot;               /* CMA send: its slot (-1: none yet) */
    uint32_t gen;
    node_cma_t cma;         /* CMA read: what to copy */
    node_msg_t *msg;        /* R_WAITMSG */
    node_ctl_msg_t ctl;     /* K_CTL: the notice */
    uint64_t key;           /* K_GONE: the conduit's key (its transport may be freed before
                             * the notice is pushed: r->tp is NULL) */
    utc_request_t *cnext;   /* link in the transport's cmar / cmas line */
} node_req_t;

UTC__REQ_PRIV_FITS(node_req_t);

#define NR(req) UTC__REQ_PRIV(req, node_req_t)

static inline node_req_t *nr_of(utc_request_t *r) { return NR(r); }

static inline node_tp_t *tp_of(utc__transport_t *tp) { return (node_tp_t *)tp; }

static inline uint64_t make_key(int cid, unsigned sub)
{
    return ((uint64_t)(uint32_t)cid << 32) | sub;
}

/* ---- the registry of node transports by key ---- */

static utc__spinlock_t reg_lock = UTC__SPINLOCK_INIT;
static node_tp_t *reg_set;
static uint64_t reg_last;   /* the newest key created here */
static bool reg_any;
static int sub_cid = -1;    /* subs: the node transports of one conduit, in creation order */
static unsigned sub_next;

static const utc__transport_ops_t node_ops;

static node_tp_t *tp_alloc(uint64_t key)
{
    node_tp_t *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->eos = calloc(2 * (size_t)utc_nranks(), 1);
    t->gone = calloc((size_t)utc_nranks(), sizeof *t->gone); /* all false */
    if (!t->eos || !t->gone) {
        free(t->eos);
        free(t->gone);
        free(t);
        return NULL;
    }
    t->key = key;
    t->lock = (utc__olock_t)UTC__OLOCK_INIT;
    atomic_init(&t->closed, 0); /* calloc: the failure records are UTC__FAIL_NONE */
    return t;
}

/* Under p's rx_lock: the transport of a record's key, locked; a placeholder when it is not
 * created yet; NULL when it is gone (or out of memory: the record is lost, logged). */
static node_tp_t *reg_find_locked(uint64_t key)
{
    node_tp_t *t;
    utc__spin_lock(&reg_lock);
    HASH_FIND(hh, reg_set, &key, sizeof key, t);
    if (!t && (!reg_any || key > reg_last)) {
        if ((t = tp_alloc(key))) {
            t->placeholder = true;
            HASH_ADD(hh, reg_set, key, sizeof t->key, t);
        } else {
            utc_log(UTC_LOG_ERROR, "node transport: out of memory: a message for conduit %d is "
                    "lost", (int)(key >> 32));
        }
    }
    if (t)
        utc__olock_lock(&t->lock, true);
    utc__spin_unlock(&reg_lock);
    return t;
}

/* ---- queues ---- */

static node_tagq_t *tagq_get(node_tp_t *t, int dir, int peer, int tag, bool create)
{
    uint64_t key = ((uint64_t)(uint32_t)tag << 32) | ((uint64_t)(uint32_t)peer << 1) |
                   (uint64_t)dir;
    node_tagq_t *q = t->last_q;
    if (q && q->key == key)
        return q;
    HASH_FIND(hh, t->tagqs, &key, sizeof key, q);
    if (!q && create && (q = calloc(1, sizeof *q))) {
        q->key = key;
        q->dir = dir;
        q->peer = peer;
        q->tag = tag;
        HASH_ADD(hh, t->tagqs, key, sizeof q->key, q);
    }
    if (q)
        t->last_q = q;
    return q;
}

/* Empty queues kept (a tag used again finds its queue); beyond, empty ones are freed. */
#define TAGQ_KEEP 64

static void tagq_trim(node_tp_t *t, node_tagq_t *q)
{
    if (!q->phead && !q->uhead && HASH_COUNT(t->tagqs) > TAGQ_KEEP) {
        if (t->last_q == q)
            t->last_q = NULL;
        HASH_DEL(t->tagqs, q);
        free(q);
    }
}

static inline node_req_t *nr_of(utc_request_t *r);

/* The cmar / cmas lines, linked through the private part. */
static void clist_push(utc_request_t **head, utc_request_t *r)
{
    nr_of(r)->cnext = *head;
    *head = r;
}

static bool clist_remove(utc_request_t **head, utc_request_t *r)
{
    for (utc_request_t **l = head; *l; l = &nr_of(*l)->cnext) {
        if (*l == r) {
            *l = nr_of(r)->cnext;
            return true;
        }
    }
    return false;
}

static void msg_push(node_tagq_t *q, node_msg_t *m)
{
    m->next = NULL;
    if (q->utail)
        q->utail->next = m;
    else
        q->uhead = m;
    q->utail = m;
}

static void msg_pop(node_tagq_t *q)
{
    node_msg_t *m = q->uhead;
    if (!(q->uhead = m->next))
        q->utail = NULL;
    m->next = NULL;
}

static void msg_free(node_msg_t *m)
{
    if (m->big)
        utc__buf_discard(m->buf);
    free(m);
}

/* The oldest queued message a read from (dir, peer) of any tag would take, and its
 * queue (never one of a device conduit's own tags). */
static node_msg_t *oldest_queued(node_tp_t *t, int dir, int peer, node_tagq_t **qout)
{
    node_msg_t *best = NULL;
    node_tagq_t *q, *tmp;
    HASH_ITER(hh, t->tagqs, q, tmp) {
        if (q->dir == dir && q->peer == peer && q->uhead && !q->phead &&
            !utc__transport_tag_spared(&t->base, q->tag) && (!best || q->uhead->seq < best->seq)) {
            best = q->uhead;
            *qout = q;
        }
    }
    return best;
}

static bool eos_of(const node_tp_t *t, int dir, int peer)
{
    return t->eos[(size_t)dir * (size_t)utc_nranks() + (size_t)peer];
}

/* ---- delivering ---- */

/* Copy (or hand over) complete message m to read r, which fits it; frees m. */
static void give_msg(utc_request_t *r, node_msg_t *m, utc_status_t *st)
{
    const void *src = m->big ? m->buf : m->data;
    *st = UTC_OK;
    if (r->owned) {
        if (m->big) {
            r->owned_buf = m->buf;
            m->big = false; /* handed over */
        } else if ((r->owned_buf = utc_buf_alloc(m->size))) {
            memcpy(r->owned_buf, src, m->size);
        } else {
            *st = UTC_ERR_NO_MEMORY;
        }
    } else if (m->size) {
        memcpy(r->rbuf, src, m->size);
    }
    msg_free(m);
}

static int cma_copy(pid_t pid, void *dst, uint64_t addr, size_t size);

/* CMA message m, refused by a read too small for it (UTC_ERR_TRUNCATE), is kept aside
 * (conduits.md, Received size): copied from its writer into a buffer of ours, its slot
 * marked done, so that the write ends now, not at the retry. False when it is lost (the
 * copy failed: logged); left a descriptor when its writer revoked it or memory is short
 * (the retry copies it then). Under t's lock. */
static bool cma_aside(node_tp_t *t, node_pair_t *p, node_msg_t *m)
{
    void *buf = utc_buf_alloc(m->size);
    atomic_uint *w = &p->ictl->slot[m->cma.slot % NODE_SLOTS];
    unsigned want = SLOT_WORD(m->cma.gen, SLOT_OFFERED);
    if (!buf || !atomic_compare_exchange_strong(w, &want, SLOT_WORD(m->cma.gen, SLOT_COPYING))) {
        if (buf)
            utc__buf_discard(buf);
        return true;
    }
    int err = cma_copy(p->peer_pid, buf, m->cma.addr, m->size);
    /* release: our reads of the writer's buffer before it learns it may reuse it */
    atomic_store_explicit(w, SLOT_WORD(m->cma.gen, SLOT_DONE), memory_order_release);
    utc__node_wake_peer(p);
    if (err) {
        utc_log(UTC_LOG_ERROR,
                "conduit %d: process_vm_readv of a %zu-byte message (tag %d) from rank %d "
                "failed: %s; the message is lost",
                t->base.conduit_id, m->size, m->tag, p->peer, strerror(err));
        utc__buf_discard(buf);
        return false;
    }
    m->kind = NODE_REC_MSG;
    m->big = true;
    m->buf = buf;
    return true;
}

/* Under t's lock: read r takes queued message m (first of q, which r fits unless it gets
 * UTC_ERR_TRUNCATE). True when r is finished (*st its status); false when it now waits
 * (a descriptor to copy, or the rest of the message). */
static bool take_msg(node_tp_t *t, node_tagq_t *q, utc_request_t *r, node_msg_t *m,
                     utc_status_t *st)
{
    r->received = m->size;
    r->tag = m->tag;
    if (m->cut) { /* never whole: ends the read as a posted one's assembly would have */
        msg_pop(q);
        tagq_trim(t, q);
        msg_free(m);
        r->received = 0;
        *st = UTC_ERR_CANCELED;
        return true;
    }
    if (!r->owned && m->size > r->size) {
        *st = UTC_ERR_TRUNCATE; /* it stays, first in line */
        if (m->kind == NODE_REC_CMA && !cma_aside(t, utc__node_pair(q->peer), m)) {
            msg_pop(q);
            tagq_trim(t, q);
            free(m);
        }
        return true;
    }
    msg_pop(q);
    tagq_trim(t, q);
    node_req_t *n = NR(r);
    if (m->kind == NODE_REC_CMA) {
        n->cma = m->cma;
        n->phase = R_CMA;
        clist_push(&t->cmar, r);
        free(m);
        return false;
    }
    if (!m->complete) {
        m->reader = r;
        n->msg = m;
        n->phase = R_WAITMSG;
        return false;
    }
    give_msg(r, m, st);
    return true;
}

/* Under t's lock: the posted read a message of (dir, peer, tag) goes to (the oldest of
 * its tag's reads and the any-tag reads from there), taken out of its line; or NULL. */
static utc_request_t *match_read(node_tp_t *t, node_tagq_t *q, int dir, int peer)
{
    utc_request_t *a = NULL;
    bool spared = utc__transport_tag_spared(&t->base, q->tag); /* no any-tag read's */
    for (utc_request_t *r = t->anyh; r && !spared; r = r->next)
        if (r->dir == dir && r->peer == peer) {
            a = r;
            break;
        }
    utc_request_t *p = q->phead;
    if (!a && !p)
        return NULL;
    if (a && (!p || NR(a)->pseq < NR(p)->pseq)) {
        utc__req_remove(&t->anyh, &t->anyt, a);
        return a;
    }
    utc__req_remove(&q->phead, &q->ptail, p);
    return p;
}

/* A descriptor offered for a cross-memory copy that nobody here will take: revoked, so
 * that its writer's send ends. */
static void decline_offer(node_pair_t *p, const node_cma_t *cma)
{
    unsigned want = SLOT_WORD(cma->gen, SLOT_OFFERED);
    if (p && atomic_compare_exchange_strong(&p->ictl->slot[cma->slot % NODE_SLOTS], &want,
                                            SLOT_WORD(cma->gen, SLOT_REVOKED)))
        utc__node_wake_peer(p);
}

/* Under p's rx_lock and t's lock: a MSG, FIRST or CMA record for t. True when a read of
 * another thread was finished or handed work (wake the sleepers). */
static bool deliver(node_tp_t *t, node_pair_t *p, node_rec_t *rec)
{
    int dir = rec->dir, tag = rec->tag, kind = rec->kind;
    size_t size = (size_t)rec->size;
    if (atomic_load_explicit(&t->closed, memory_order_acquire)) {
        /* shut down (destroy is under way): nothing is queued for a read that cannot
         * come, and a pipelined message's chunks go nowhere (the transport's queues are
         * freed while the sender may still be streaming them) */
        if (kind == NODE_REC_FIRST)
            p->as = (node_asm_t){.on = true, .size = size, .got = rec->nbytes, .key = t->key};
        else if (kind == NODE_REC_CMA) {
            node_cma_t cma;
            memcpy(&cma, node_rec_data(rec), sizeof cma);
            decline_offer(p, &cma);
        }
        return false;
    }
    node_tagq_t *q = tagq_get(t, dir, p->peer, tag, true);
    if (!q) {
        utc_log(UTC_LOG_ERROR, "conduit %d: out of memory: a %zu-byte message (tag %d) is lost",
                t->base.conduit_id, size, tag);
        return false;
    }
    utc_request_t *r = t->placeholder ? NULL : match_read(t, q, dir, p->peer);
    bool woke = r != NULL, refused = false;
    if (r) {
        node_req_t *n = NR(r);
        r->received = size;
        r->tag = tag;
        if (!r->owned && size > r->size) {
            utc__req_finish(r, UTC_ERR_TRUNCATE); /* the message is queued below */
            r = NULL;
            refused = true;
        } else if (kind == NODE_REC_CMA) {
            memcpy(&n->cma, node_rec_data(rec), sizeof n->cma);
            n->phase = R_CMA;
            clist_push(&t->cmar, r);
            return true;
        } else {
            void *dst = r->rbuf;
            if (r->owned && !(dst = r->owned_buf = utc_buf_alloc(size))) {
                utc__req_finish(r, UTC_ERR_NO_MEMORY);
                if (kind == NODE_REC_FIRST) /* its chunks go nowhere */
                    p->as = (node_asm_t){.on = true, .size = size, .got = rec->nbytes,
                                         .key = t->key};
                return true;
            }
            if (rec->nbytes)
                memcpy(dst, node_rec_data(rec), rec->nbytes);
            if (kind == NODE_REC_MSG) {
                utc__req_finish(r, UTC_OK);
            } else {
                n->phase = R_ASM;
                p->as = (node_asm_t){.on = true, .dst = dst, .size = size, .got = rec->nbytes,
                                     .target = r, .to_read = true, .key = t->key};
            }
            return true;
        }
    }
    bool small = kind == NODE_REC_MSG && size <= 1024;
    node_msg_t *m = malloc(sizeof *m + (small ? size : 0));
    void *buf = NULL;
    if (m && kind != NODE_REC_CMA && !small && !(buf = utc_buf_alloc(size))) {
        free(m);
        m = NULL;
    }
    if (!m) {
        utc_log(UTC_LOG_ERROR, "conduit %d: out of memory: a %zu-byte message (tag %d) is lost",
                t->base.conduit_id, size, tag);
        if (kind == NODE_REC_FIRST)
            p->as = (node_asm_t){.on = true, .size = size, .got = rec->nbytes, .key = t->key};
        return woke;
    }
    *m = (node_msg_t){.seq = t->seq++, .tag = tag, .kind = kind == NODE_REC_CMA ? kind
                                                                                 : NODE_REC_MSG,
                      .size = size, .complete = kind != NODE_REC_FIRST, .big = buf != NULL,
                      .buf = buf};
    if (kind == NODE_REC_CMA) {
        memcpy(&m->cma, node_rec_data(rec), sizeof m->cma);
        if (refused && !cma_aside(t, p, m)) {
            free(m);
            return woke;
        }
    } else if (rec->nbytes) {
        memcpy(small ? m->data : buf, node_rec_data(rec), rec->nbytes);
    }
    if (kind == NODE_REC_FIRST)
        p->as = (node_asm_t){.on = true, .dst = buf, .size = size, .got = rec->nbytes,
                             .target = m, .to_read = false, .key = t->key};
    msg_push(q, m);
    return woke;
}

/* Under t's lock: end every posted read of (dir, peer) (or all: peer < 0) with `st`. */
static void end_posted(node_tp_t *t, int dir, int peer, utc_status_t st)
{
    node_tagq_t *q, *tmp;
    HASH_ITER(hh, t->tagqs, q, tmp) {
        if (peer >= 0 && (q->dir != dir || q->peer != peer))
            continue;
        if (st == UTC_ERR_CLOSED && utc__transport_tag_spared(&t->base, q->tag))
            continue; /* outside the stream: its messages may follow the end */
        while (q->phead) {
            utc_request_t *r = q->phead;
            q->phead = r->next;
            utc__req_finish(r, st); /* last touch */
        }
        q->ptail = NULL;
    }
    for (utc_request_t **l = &t->anyh, *prev = NULL; *l;) {
        utc_request_t *r = *l;
        if (peer >= 0 && (r->dir != dir || r->peer != peer ||
                          (st == UTC_ERR_CLOSED && oldest_queued(t, dir, peer, &q)))) {
            prev = r;
            l = &r->next;
            continue;
        }
        *l = r->next;
        if (t->anyt == r)
            t->anyt = prev;
        utc__req_finish(r, st);
    }
}

/* Under t's lock: a task at one end failed on rank `rank` (a notice): mark and end reads. */
static void take_notice(node_tp_t *t, const node_ctl_msg_t *c)
{
    if (utc__transport_mark_failed(&t->base, c->end, c->rank, c->rc, UTC_ERR_PEER_FAILED))
        utc_log(UTC_LOG_INFO, "conduit %d: the task at end %d failed on rank %d (%s)",
                t->base.conduit_id, c->end, c->rank, utc_status_string(c->rc));
    end_posted(t, 0, -1, UTC_ERR_PEER_FAILED);
}

void utc__node_dispatch(node_pair_t *p, node_rec_t *rec)
{
    uint64_t key = make_key(rec->cid, rec->sub);
    node_tp_t *t = p->last_tp; /* a stream of one conduit skips the registry */
    if (t && p->last_key == key) {
        utc__olock_lock(&t->lock, true);
    } else if ((t = reg_find_locked(key))) {
        p->last_tp = t;
        p->last_key = key;
    }
    if (!t) { /* its conduit is gone here: dropped (a pipelined one's chunks too) */
        if (rec->kind == NODE_REC_FIRST) {
            p->as = (node_asm_t){.on = true, .size = (size_t)rec->size, .got = rec->nbytes};
        } else if (rec->kind == NODE_REC_CMA) { /* its writer waits for the slot */
            node_cma_t cma;
            memcpy(&cma, node_rec_data(rec), sizeof cma);
            decline_offer(p, &cma);
        }
        return;
    }
    bool woke = false;
    switch (rec->kind) {
    case NODE_REC_MSG:
    case NODE_REC_FIRST:
    case NODE_REC_CMA:
        woke = deliver(t, p, rec);
        break;
    case NODE_REC_EOS:
        t->eos[(size_t)rec->dir * (size_t)utc_nranks() + (size_t)p->peer] = 1;
        end_posted(t, rec->dir, p->peer, UTC_ERR_CLOSED); /* nothing is queued for them */
        woke = true;
        break;
    case NODE_REC_CTL: {
        node_ctl_msg_t c;
        memcpy(&c, node_rec_data(rec), sizeof c);
        take_notice(t, &c);
        woke = true;
        break;
    }
    case NODE_REC_GONE:
        atomic_store(&t->gone[p->peer], true); /* its writes end (node_progress) */
        woke = true;
        break;
    default:
        break;
    }
    utc__olock_unlock(&t->lock);
    if (woke)
        utc__node_wake_local(p);
}

void utc__node_assembled(node_pair_t *p)
{
    node_asm_t a = p->as;
    if (!a.target)
        return;
    node_tp_t *t = reg_find_locked(a.key);
    if (!t)
        return;
    bool whole = a.got >= a.size;
    if (a.to_read) {
        utc_request_t *r = a.target;
        /* cut short: its writer's conduit was destroyed meanwhile */
        utc__req_finish(r, whole ? UTC_OK : UTC_ERR_CANCELED);
    } else {
        node_msg_t *m = a.target;
        m->complete = true;
        m->cut = !whole; /* a read must not take the part that came as the message */
        if (m->reader) {
            utc_status_t st = UTC_OK;
            utc_request_t *r = m->reader;
            if (whole)
                give_msg(r, m, &st);
            else
                msg_free(m), st = UTC_ERR_CANCELED;
            utc__req_finish(r, st);
        }
    }
    utc__olock_unlock(&t->lock);
    utc__node_wake_local(p);
}

/* ---- writing ---- */

/* Under p's tx_lock: a header for a record of `kind` for send r, `payload` bytes. */
static node_rec_t *rec_start(node_pair_t *p, utc_request_t *r, size_t payload, bool may_grow)
{
    node_rec_t *rec = utc__node_claim(p, rec_len(payload), may_grow);
    if (!rec)
        return NULL;
    node_tp_t *t = tp_of(r->tp);
    rec->dir = (uint8_t)r->dir;
    rec->cid = (int32_t)(t->key >> 32);
    rec->sub = (uint32_t)t->key;
    rec->tag = r->tag;
    rec->nbytes = (uint32_t)payload;
    rec->size = r->size;
    return rec;
}

/* Under p's tx_lock: push what send r still has to push. True once it is all out. */
static bool push_one(node_pair_t *p, utc_request_t *r)
{
    node_req_t *n = NR(r);
    node_rec_t *rec;
    switch (n->kind) {
    case K_INLINE:
        if (!(rec = rec_start(p, r, r->size, true)))
            return false;
        if (r->size)
            memcpy(node_rec_data(rec), r->sbuf, r->size);
        utc__node_publish(p, rec, rec_len(r->size), NODE_REC_MSG);
        return true;
    case K_EOS:
        if (!(rec = rec_start(p, r, 0, true)))
            return false;
        utc__node_publish(p, rec, rec_len(0), NODE_REC_EOS);
        return true;
    case K_CTL:
        if (!(rec = rec_start(p, r, sizeof n->ctl, true)))
            return false;
        memcpy(node_rec_data(rec), &n->ctl, sizeof n->ctl);
        utc__node_publish(p, rec, rec_len(sizeof n->ctl), NODE_REC_CTL);
        return true;
    case K_GONE: /* no transport to name it: the key is the request's */
        if (!(rec = utc__node_claim(p, rec_len(0), true)))
            return false;
        rec->dir = 0;
        rec->cid = (int32_t)(n->key >> 32);
        rec->sub = (uint32_t)n->key;
        rec->tag = 0;
        rec->nbytes = 0;
        rec->size = 0;
        utc__node_publish(p, rec, rec_len(0), NODE_REC_GONE);
        return true;
    case K_CMA: /* its slot was taken at its start */
        if (!(rec = rec_start(p, r, sizeof(node_cma_t), true)))
            return false;
        /* relaxed: published by the record's release */
        atomic_store_explicit(&p->octl->slot[n->slot], SLOT_WORD(n->gen, SLOT_OFFERED),
                              memory_order_relaxed);
        node_cma_t c = {(uint64_t)(uintptr_t)r->sbuf, (uint32_t)n->slot, n->gen};
        memcpy(node_rec_data(rec), &c, sizeof c);
        n->phase = S_CMA;
        utc__node_publish(p, rec, rec_len(sizeof c), NODE_REC_CMA);
        return true;
    case K_PIPE:
        while (n->off < r->size || (n->off == 0 && r->size == 0)) {
            size_t left = r->size - n->off, part = left < CHUNK_MAX ? left : CHUNK_MAX;
            if (!(rec = rec_start(p, r, part, p->ocap < PIPE_RING))) {
                size_t room = utc__node_room(p);
                if (room < part && room < CHUNK_MIN)
                    return false; /* a chunk of a fair size, once the reader frees room */
                part = room < part ? room : part;
                if (!(rec = rec_start(p, r, part, false)))
                    return false;
            }
            memcpy(node_rec_data(rec), (const unsigned char *)r->sbuf + n->off, part);
            utc__node_publish(p, rec, rec_len(part), n->off ? NODE_REC_CHUNK : NODE_REC_FIRST);
            n->off += part;
            if (!r->size)
                break;
        }
        return true;
    }
    return true;
}

/* A send whose records are all out: finished (owned: its buffer freed), or freed (a
 * notice). */
static void send_done(utc_request_t *r)
{
    if (NR(r)->heap) {
        free(r);
        return;
    }
    if (r->owned)
        utc_buf_free((void *)r->sbuf);
    utc__req_finish(r, UTC_OK); /* last touch */
}

/* Under p's tx_lock, after each change of p->txq: publish whether it holds a send. */
static void txq_changed(node_pair_t *p)
{
    /* relaxed: a hint for flush_now, which then takes the lock; every append is followed
     * by its own flush under the lock, so a stale "empty" only defers a push to a later
     * look, and a stale "waiting" costs a lock taken for nothing */
    atomic_store_explicit(&p->txq_waiting, p->txq != NULL, memory_order_relaxed);
}

/* Under p's tx_lock: push the queued sends, oldest first. True if one finished. */
static bool flush(node_pair_t *p)
{
    bool any = false;
    utc_request_t *r;
    while ((r = p->txq) && push_one(p, r)) {
        if (!(p->txq = r->next))
            p->txq_tail = NULL;
        r->next = NULL;
        if (NR(r)->kind == K_CMA) /* now waits for its reader's copy */
            continue;
        send_done(r);
        any = true;
    }
    txq_changed(p);
    return any;
}

/* Push p's queued sends, if any (takes p's tx_lock only then). */
static void flush_now(node_pair_t *p)
{
    /* txq itself is read under the lock only; relaxed: see txq_changed */
    if (!atomic_load_explicit(&p->txq_waiting, memory_order_relaxed))
        return;
    utc__olock_lock(&p->tx_lock, true);
    bool any = flush(p);
    utc__olock_unlock(&p->tx_lock);
    if (any)
        utc__node_wake_local(p);
}

static void txq_append(node_pair_t *p, utc_request_t *r)
{
    NR(r)->phase = S_QUEUED;
    utc__req_append(&p->txq, &p->txq_tail, r);
    txq_changed(p);
}

/* ---- CMA ---- */

/* Copy `size` bytes from address `addr` of process `pid` to dst. 0, or an errno. */
static int cma_copy(pid_t pid, void *dst, uint64_t addr, size_t size)
{
    size_t done = 0;
    while (done < size) {
        struct iovec l = {(unsigned char *)dst + done, size - done};
        struct iovec r = {(void *)(uintptr_t)(addr + done), size - done};
        ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (n == 0)
            return EFAULT;
        done += (size_t)n;
    }
    return 0;
}

/* A read holding a descriptor (R_CMA), by its owner: claim the slot, copy, mark it done.
 * True when finished here. */
static void read_cma(node_tp_t *t, utc_request_t *r)
{
    node_req_t *n = NR(r);
    node_pair_t *p = utc__node_pair(r->peer);
    atomic_uint *w = &p->ictl->slot[n->cma.slot % NODE_SLOTS];
    unsigned want = SLOT_WORD(n->cma.gen, SLOT_OFFERED);
    utc_status_t st = UTC_OK;
    if (!atomic_compare_exchange_strong(w, &want, SLOT_WORD(n->cma.gen, SLOT_COPYING))) {
        /* revoked: its writer ended the write (its conduit destroyed, or a failure) */
        int cl = atomic_load(&t->closed);
        utc_status_t why = utc__transport_fail_status(&t->base);
        st = cl ? (utc_status_t)cl : why ? why : UTC_ERR_CANCELED;
    } else {
        void *dst = r->rbuf;
        if (r->owned && !(dst = r->owned_buf = utc_buf_alloc(r->received)))
            st = UTC_ERR_NO_MEMORY;
        int err = st ? 0 : cma_copy(p->peer_pid, dst, n->cma.addr, r->received);
        if (err) {
            utc_log(UTC_LOG_ERROR, "conduit %d: process_vm_readv of a %zu-byte message from "
                    "rank %d failed: %s", t->base.conduit_id, r->received, r->peer,
                    strerror(err));
            st = err == ESRCH ? UTC_ERR_PEER_FAILED : UTC_ERR_IO;
            if (r->owned) {
                utc__buf_discard(r->owned_buf);
                r->owned_buf = NULL;
            }
        }
        /* release: our reads of the writer's buffer before it learns it may reuse it */
        atomic_store_explicit(w, SLOT_WORD(n->cma.gen, SLOT_DONE), memory_order_release);
        utc__node_wake_peer(p);
    }
    utc__olock_lock(&t->lock, true);
    /* relaxed: finished only under this lock */
    if (atomic_load_explicit(&r->state, memory_order_relaxed) != UTC__REQ_DONE) {
        clist_remove(&t->cmar, r);
        utc__req_finish(r, st);
    }
    utc__olock_unlock(&t->lock);
}

/* A CMA send's end: its slot goes back. */
static void slot_release(node_pair_t *p, int slot)
{
    utc__olock_lock(&p->tx_lock, true);
    p->slot_busy &= ~(1ull << slot);
    utc__olock_unlock(&p->tx_lock);
}

/* Under t's lock: end CMA send r with `st` unless its reader is copying it (a live
 * reader: then its owner finishes it once the copy is done). The slot is revoked, or the
 * send taken out of the queue before its descriptor went. True when ended. */
static bool cma_send_end(node_tp_t *t, utc_request_t *r, utc_status_t st)
{
    node_req_t *n = NR(r);
    node_pair_t *p = utc__node_pair(r->peer);
    utc__olock_lock(&p->tx_lock, true);
    if (n->phase == S_QUEUED) {
        utc__req_remove(&p->txq, &p->txq_tail, r);
        txq_changed(p);
        n->phase = S_DROPPED;
    }
    int phase = n->phase;
    utc__olock_unlock(&p->tx_lock);
    if (phase == S_CMA) {
        unsigned want = SLOT_WORD(n->gen, SLOT_OFFERED);
        atomic_uint *w = &p->octl->slot[n->slot];
        if (!atomic_compare_exchange_strong(w, &want, SLOT_WORD(n->gen, SLOT_REVOKED)) &&
            want == SLOT_WORD(n->gen, SLOT_COPYING) && !atomic_load(&p->dead))
            return false;
    }
    slot_release(p, n->slot);
    clist_remove(&t->cmas, r);
    if (st == UTC_OK && r->owned) /* dropped by its reader's rank: the buffer is done */
        utc_buf_free((void *)r->sbuf);
    utc__req_finish(r, st);
    return true;
}

/* A CMA send, by its owner: finished once its slot is done, or revoked by the reader's
 * shutdown (the message dropped there unread: the write ends well, as over MPI). */
static void cma_send_poll(node_tp_t *t, utc_request_t *r)
{
    node_req_t *n = NR(r);
    node_pair_t *p = utc__node_pair(r->peer);
    utc__olock_lock(&p->tx_lock, true);
    int phase = n->phase;
    utc__olock_unlock(&p->tx_lock);
    if (phase != S_CMA)
        return;
    /* acquire: pairs with the reader's release of DONE: its copy is over */
    unsigned w = atomic_load_explicit(&p->octl->slot[n->slot], memory_order_acquire);
    if (w != SLOT_WORD(n->gen, SLOT_DONE) && w != SLOT_WORD(n->gen, SLOT_REVOKED))
        return;
    utc__olock_lock(&t->lock, true);
    /* relaxed: finished only under this lock */
    if (atomic_load_explicit(&r->state, memory_order_relaxed) != UTC__REQ_DONE) {
        slot_release(p, n->slot);
        clist_remove(&t->cmas, r);
        if (r->owned)
            utc_buf_free((void *)r->sbuf);
        utc__req_finish(r, UTC_OK);
    }
    utc__olock_unlock(&t->lock);
}

/* ---- failures ---- */

/* The end a failure of r's peer names: a read's writer, a write's reader. */
static int other_end(const utc_request_t *r)
{
    return r->op == UTC__OP_RECV ? r->dir : 1 - r->dir;
}

static void node_fail(utc__transport_t *tp, utc_status_t status);

/* r's peer process is gone (or its ring could not be followed): the transport fails
 * (once), as for a failure notice, with no run's status to name. */
static void peer_gone(node_tp_t *t, const utc_request_t *r)
{
    if (utc__transport_mark_failed(&t->base, other_end(r), r->peer, UTC__FAIL_RC_GONE,
                                   UTC_ERR_PEER_FAILED))
        node_fail(&t->base, UTC_ERR_PEER_FAILED);
}

/* Why operations end now without a transfer (the shutdown, a failure of the other end, a
 * peer process gone), or 0. A send ends on a failure of its reader's end only. */
static utc_status_t stopped(node_tp_t *t, const utc_request_t *r)
{
    int cl = atomic_load_explicit(&t->closed, memory_order_acquire); /* pairs: shutdown */
    if (cl)
        return (utc_status_t)cl;
    node_pair_t *p = utc__node_pair(r->peer);
    if (p && atomic_load_explicit(&p->dead, memory_order_relaxed))
        peer_gone(t, r);
    utc__fail_info_t f; /* a published record, read whole (service/transport.h) */
    if (utc__transport_fail_info(&t->base, &f) && (r->op == UTC__OP_RECV || f.end != r->dir))
        return f.why;
    return UTC_OK;
}

/* ---- the operations ---- */

/* Post read r (or finish it from what is queued). No drain here: a message still in the
 * ring is matched to this read when its wait or test drains it, copied once into the
 * read's buffer (drained now, before the read is posted, it would be copied to the heap
 * and then again). */
static utc_status_t start_read(node_tp_t *t, utc_request_t *r)
{
    node_req_t *n = NR(r);
    utc_status_t st = UTC_OK;
    bool done = false;
    utc__olock_lock(&t->lock, true);
    int cl = atomic_load(&t->closed);
    if (cl) {
        st = (utc_status_t)cl;
        done = true;
    } else if (r->tag == UTC_ANY_TAG) {
        node_tagq_t *q = NULL;
        node_msg_t *m = NULL;
        bool earlier = false; /* an any-tag read from there waits already */
        for (utc_request_t *a = t->anyh; a && !earlier; a = a->next)
            earlier = a->dir == r->dir && a->peer == r->peer;
        if (!earlier && (m = oldest_queued(t, r->dir, r->peer, &q))) {
            done = take_msg(t, q, r, m, &st);
        } else if (!earlier && eos_of(t, r->dir, r->peer)) {
            st = UTC_ERR_CLOSED;
            done = true;
        } else {
            n->phase = R_ANY;
            n->pseq = t->pseq++;
            utc__req_append(&t->anyh, &t->anyt, r);
        }
    } else {
        node_tagq_t *q = tagq_get(t, r->dir, r->peer, r->tag, true);
        if (!q) {
            utc__olock_unlock(&t->lock);
            return utc__error(UTC_ERR_NO_MEMORY, "conduit read: out of memory");
        }
        if (!q->phead && q->uhead) {
            done = take_msg(t, q, r, q->uhead, &st);
        } else if (!q->phead && eos_of(t, r->dir, r->peer) &&
                   !utc__transport_tag_spared(&t->base, r->tag)) {
            st = UTC_ERR_CLOSED;
            done = true;
        } else {
            n->phase = R_POSTED;
            n->pseq = t->pseq++;
            utc__req_append(&q->phead, &q->ptail, r);
        }
    }
    if (done)
        utc__req_finish(r, st);
    utc__olock_unlock(&t->lock);
    return UTC_OK;
}

static utc_status_t node_start(utc__transport_t *tp, utc_request_t *req)
{
    node_tp_t *t = tp_of(tp);
    node_req_t *n = NR(req);
    n->heap = false;
    n->off = 0;
    n->slot = -1;
    n->msg = NULL;
    n->phase = 0;
    req->next = NULL;
    node_pair_t *p = utc__node_pair(req->peer);
    if (!p)
        return utc__error(UTC_ERR_INTERNAL, "conduit %d: rank %d is not on this host",
                          tp->conduit_id, req->peer);
    utc_status_t st = stopped(t, req);
    if (st) {
        utc__req_finish(req, st);
        return UTC_OK;
    }
    if (req->op == UTC__OP_RECV)
        return start_read(t, req);
    n->kind = req->tag == UTC__TAG_EOS   ? K_EOS
              : req->size <= INLINE_MAX ? K_INLINE
              : utc__node_cma_on()      ? K_CMA
                                        : K_PIPE;
    if (n->kind == K_CMA) {
        /* a slot now, or through the ring when all are in use (a write never waits for a
         * slot: later messages would wait behind it) */
        utc__olock_lock(&p->tx_lock, true);
        if (~p->slot_busy) {
            n->slot = __builtin_ctzll(~p->slot_busy);
            p->slot_busy |= 1ull << n->slot;
            n->gen = ++p->slot_gen[n->slot] & 0x3fffffffu;
            n->phase = S_QUEUED;
        } else {
            n->kind = K_PIPE;
        }
        utc__olock_unlock(&p->tx_lock);
    }
    if (n->kind == K_CMA) { /* in the transport's line from now to its end */
        utc__olock_lock(&t->lock, true);
        clist_push(&t->cmas, req);
        utc__olock_unlock(&t->lock);
    }
    utc__olock_lock(&p->tx_lock, true);
    if (n->kind == K_INLINE && !p->txq && push_one(p, req)) {
        utc__olock_unlock(&p->tx_lock);
        send_done(req);
        return UTC_OK;
    }
    txq_append(p, req);
    bool any = flush(p);
    utc__olock_unlock(&p->tx_lock);
    if (any)
        utc__node_wake_local(p);
    return UTC_OK;
}

/* The write fast path: an inline message with nothing queued before it to this peer goes
 * into the ring now (as node_start would), and nothing keeps req. */
static bool node_send_now(utc__transport_t *tp, utc_request_t *req)
{
    node_tp_t *t = tp_of(tp);
    if (req->size > INLINE_MAX || req->tag == UTC__TAG_EOS || req->owned)
        return false;
    node_pair_t *p = utc__node_pair(req->peer);
    if (!p || stopped(t, req))
        return false; /* node_start finishes it with the reason */
    NR(req)->kind = K_INLINE;
    utc__olock_lock(&p->tx_lock, true);
    bool sent = !p->txq && push_one(p, req);
    utc__olock_unlock(&p->tx_lock);
    return sent;
}

static void detach_assembly(node_tp_t *t, node_pair_t *p, utc_status_t st);

static bool node_progress(utc__transport_t *tp, utc_request_t *req)
{
    node_tp_t *t = tp_of(tp);
    node_req_t *n = NR(req);
    if (utc__req_state(req) == UTC__REQ_DONE)
        return true;
    node_pair_t *p = utc__node_pair(req->peer);
    if (req->op == UTC__OP_SEND) {
        flush_now(p);
        if (n->kind == K_CMA)
            cma_send_poll(t, req);
        if (utc__req_state(req) == UTC__REQ_DONE)
            return true;
        utc__node_drain(p); /* the peer may wait for room towards us */
        utc_status_t st = stopped(t, req);
        /* its reader's rank destroyed the conduit (a GONE record came): the message is
         * dropped there, unread, and the write ends well, as over MPI */
        if (st || atomic_load(&t->gone[req->peer])) {
            utc__olock_lock(&t->lock, true);
            if (atomic_load_explicit(&req->state, memory_order_relaxed) != UTC__REQ_DONE) {
                if (n->kind == K_CMA) {
                    cma_send_end(t, req, st);
                } else {
                    /* a pipelined one half out is cut short: the reader drops its part */
                    utc__olock_lock(&p->tx_lock, true);
                    bool out = utc__req_remove(&p->txq, &p->txq_tail, req);
                    txq_changed(p);
                    utc__olock_unlock(&p->tx_lock);
                    if (out && st)
                        utc__req_finish(req, st);
                    else if (out)
                        send_done(req);
                }
            }
            utc__olock_unlock(&t->lock);
        }
        return utc__req_state(req) == UTC__REQ_DONE;
    }
    utc__node_drain_until(p, req);
    if (utc__req_state(req) == UTC__REQ_DONE)
        return true;
    /* this rank's sends to the peer that wait for room (an iwrite's pipelined message, say)
     * go on while a read waits: the peer's read of them may be what its answer waits for */
    flush_now(p);
    if (n->phase == R_CMA) {
        read_cma(t, req);
        return utc__req_state(req) == UTC__REQ_DONE;
    }
    utc_status_t st = stopped(t, req);
    if (st && n->phase == R_ASM) {
        /* a pipelined message half in: its writer may withdraw the rest at the same failure
         * (node_progress's send side) and send nothing more, so the read ends now and the
         * rest of the message goes nowhere */
        utc__olock_lock(&p->rx_lock, false);
        utc__olock_lock(&t->lock, false);
        if (p->as.on && p->as.to_read && p->as.target == req)
            detach_assembly(t, p, st);
        utc__olock_unlock(&t->lock);
        utc__olock_unlock(&p->rx_lock);
    }
    if (st && (n->phase == R_POSTED || n->phase == R_ANY)) {
        utc__olock_lock(&t->lock, true);
        if (atomic_load_explicit(&req->state, memory_order_relaxed) != UTC__REQ_DONE) {
            node_tagq_t *q = tagq_get(t, req->dir, req->peer, req->tag, false);
            bool out = n->phase == R_ANY ? utc__req_remove(&t->anyh, &t->anyt, req)
                                         : q && utc__req_remove(&q->phead, &q->ptail, req);
            if (out)
                utc__req_finish(req, st);
        }
        utc__olock_unlock(&t->lock);
    }
    return utc__req_state(req) == UTC__REQ_DONE;
}

typedef struct wait_look {
    node_tp_t *t;
    utc_request_t *req;
} wait_look_t;

/* Asked once more after a waiter counted itself asleep. */
static bool wait_ready(void *arg)
{
    wait_look_t *w = arg;
    utc__node_drain_all(); /* before it sleeps on one peer's bell */
    return node_progress(&w->t->base, w->req);
}

/* How long a waiter polls before it sleeps: SPIN_S; while a large message moves, about the
 * time it should take at 2 GB/s plus 1 ms (polling yields the core between looks), so the
 * end of a multi-MiB transfer is not found late by a sleep. */
static double spin_for(const utc_request_t *req)
{
    size_t bytes = req->op == UTC__OP_SEND ? req->size : req->received;
    if (bytes <= INLINE_MAX)
        return SPIN_S;
    return 1e-3 + (double)bytes / 2e9;
}

/* Poll (draining, pushing) for spin_for(), then sleep on the peer's bell in slices, asking
 * between them whether the peer process lives. */
static bool node_wait(utc__transport_t *tp, utc_request_t *req, double timeout_s)
{
    node_tp_t *t = tp_of(tp);
    node_pair_t *p = utc__node_pair(req->peer);
    double deadline = utc__deadline(timeout_s), t0 = 0;
    wait_look_t look = {t, req};
    bool yielding = false;
    for (unsigned i = 0;; i++) {
        unsigned seen = atomic_load(utc__node_bell(p)); /* seq_cst: before the look */
        if (node_progress(tp, req))
            return true;
        /* the clock from the 16th look on: a message that comes within the first looks
         * (the usual case of a fine-grained exchange) is found with no clock read */
        if ((i & 15) == 15 || deadline >= 0) {
            /* the other peers' records too: one of them may wait for room towards this
             * rank, and its rank for what this wait waits for (a cycle of full rings) */
            utc__node_drain_all();
            double now = utc_wtime();
            if (!t0)
                t0 = now;
            if (deadline >= 0 && now >= deadline)
                return node_progress(tp, req);
            if (now - t0 >= spin_for(req)) {
                utc__node_sleep(p, seen, deadline, wait_ready, &look);
                if (!utc__node_alive(p))
                    peer_gone(t, req);
                continue;
            }
            /* the first PURE_SPIN_S without yielding: on a loaded host a yield can hand
             * the core away for a whole time slice while the answer is on its way */
            yielding = now - t0 >= PURE_SPIN_S;
        }
        if (!yielding)
            utc__cpu_relax();
        else
            sched_yield();
    }
}

static bool node_cancel(utc__transport_t *tp, utc_request_t *req)
{
    node_tp_t *t = tp_of(tp);
    node_req_t *n = NR(req);
    if (req->op != UTC__OP_RECV)
        return false;
    bool out = false;
    utc__olock_lock(&t->lock, true);
    if (atomic_load_explicit(&req->state, memory_order_relaxed) != UTC__REQ_DONE) {
        if (n->phase == R_ANY) {
            out = utc__req_remove(&t->anyh, &t->anyt, req);
        } else if (n->phase == R_POSTED) {
            node_tagq_t *q = tagq_get(t, req->dir, req->peer, req->tag, false);
            out = q && utc__req_remove(&q->phead, &q->ptail, req);
        }
    }
    utc__olock_unlock(&t->lock);
    return out;
}

static utc_status_t node_probe(utc__transport_t *tp, utc_request_t *req)
{
    node_tp_t *t = tp_of(tp);
    node_pair_t *p = utc__node_pair(req->peer);
    utc__node_drain(p);
    utc_status_t st = UTC_ERR_TIMEOUT;
    bool found = false;
    utc__olock_lock(&t->lock, true);
    int cl = atomic_load(&t->closed);
    if (cl) {
        st = (utc_status_t)cl;
    } else if (req->tag == UTC_ANY_TAG) {
        bool earlier = false;
        for (utc_request_t *a = t->anyh; a && !earlier; a = a->next)
            earlier = a->dir == req->dir && a->peer == req->peer;
        node_tagq_t *q = NULL;
        node_msg_t *m = earlier ? NULL : oldest_queued(t, req->dir, req->peer, &q);
        if (m) {
            req->received = m->size;
            req->tag = m->tag;
            found = true;
        } else if (!earlier && eos_of(t, req->dir, req->peer)) {
            st = UTC_ERR_CLOSED;
        }
    } else {
        node_tagq_t *q = tagq_get(t, req->dir, req->peer, req->tag, false);
        if (q && !q->phead && q->uhead) {
            req->received = q->uhead->size;
            found = true;
        } else if ((!q || !q->phead) && eos_of(t, req->dir, req->peer)) {
            st = UTC_ERR_CLOSED;
        }
    }
    utc__olock_unlock(&t->lock);
    if (found)
        return UTC_OK;
    if (st != UTC_ERR_TIMEOUT)
        return st;
    if (!utc__node_alive(p))
        peer_gone(t, req);
    utc_status_t why = utc__transport_fail_status(tp);
    return why ? why : UTC_ERR_TIMEOUT;
}

/* The end of stream: a record behind the messages this rank's writers of `dir` started. */
static utc_status_t node_close(utc__transport_t *tp, int dir, int peer)
{
    utc_request_t req;
    utc__req_prepare(&req, UTC__OP_SEND, dir, UTC__TAG_EOS, peer, tp);
    utc_status_t rc = node_start(tp, &req);
    if (rc == UTC_OK && !node_wait(tp, &req, -1))
        rc = UTC_ERR_INTERNAL;
    return rc == UTC_OK ? req.status : rc;
}

/* Under t's lock: drop the queued messages (offered descriptors are declined). */
static void drop_queued(node_tp_t *t)
{
    node_tagq_t *q, *tmp;
    HASH_ITER(hh, t->tagqs, q, tmp) {
        while (q->uhead) {
            node_msg_t *m = q->uhead;
            msg_pop(q);
            if (m->kind == NODE_REC_CMA)
                decline_offer(utc__node_pair(q->peer), &m->cma);
            if (m->complete) /* else the FIFO's assembly still writes into it */
                msg_free(m);
        }
    }
}

/* t's pipelined message in progress on p, if any, goes nowhere from now on; a read it
 * went to ends with `st`. Under p's rx_lock and t's lock. */
static void detach_assembly(node_tp_t *t, node_pair_t *p, utc_status_t st)
{
    if (!p->as.on || p->as.key != t->key || !p->as.target)
        return;
    if (p->as.to_read) {
        utc__req_finish(p->as.target, st);
    } else {
        node_msg_t *m = p->as.target;
        if (m->reader)
            utc__req_finish(m->reader, st);
        /* a queued one is freed with its queue; one a read took is ours */
        if (m->reader || m->complete)
            msg_free(m);
        else
            m->complete = true; /* so that drop_queued frees it */
    }
    p->as.dst = NULL;
    p->as.target = NULL;
}

/* Tell p's rank that this one destroyed t: a GONE record, behind what this rank wrote to
 * it (pushed later when the ring is full: whoever writes or waits next here flushes it). */
static void send_gone(node_tp_t *t, node_pair_t *p)
{
    if (atomic_load(&p->dead))
        return;
    utc_request_t *r = malloc(sizeof *r);
    if (!r) {
        utc_log(UTC_LOG_ERROR,
                "conduit %d: out of memory: rank %d is not told of its destroy (a write of "
                "its there may wait for good)",
                t->base.conduit_id, p->peer);
        return;
    }
    utc__req_prepare(r, UTC__OP_SEND, 0, 0, p->peer, NULL);
    node_req_t *n = NR(r);
    n->kind = K_GONE;
    n->heap = true;
    n->key = t->key;
    utc__olock_lock(&p->tx_lock, false);
    txq_append(p, r);
    flush(p);
    utc__olock_unlock(&p->tx_lock);
}

static void node_shutdown(utc__transport_t *tp, utc_status_t status)
{
    node_tp_t *t = tp_of(tp);
    /* release: pairs with the acquire in stopped */
    atomic_store_explicit(&t->closed, (int)status, memory_order_release);
    for (int i = 0; i < t->nmembers; i++) {
        node_pair_t *p = utc__node_pair(t->members[i]);
        if (!p)
            continue;
        /* the sends not yet out; a CMA one is ended below, with its slot */
        utc__olock_lock(&p->tx_lock, false);
        utc_request_t *keep = NULL, *keep_tail = NULL, *gone = NULL;
        while (p->txq) {
            utc_request_t *r = p->txq;
            p->txq = r->next;
            r->next = NULL;
            if (r->tp != tp) {
                utc__req_append(&keep, &keep_tail, r);
            } else if (NR(r)->kind == K_CMA) {
                NR(r)->phase = S_DROPPED;
            } else {
                r->next = gone;
                gone = r;
            }
        }
        p->txq = keep;
        p->txq_tail = keep_tail;
        txq_changed(p);
        utc__olock_unlock(&p->tx_lock);
        while (gone) {
            utc_request_t *r = gone;
            gone = r->next;
            if (NR(r)->heap)
                free(r);
            else
                utc__req_finish(r, status);
        }
        utc__olock_lock(&p->rx_lock, false);
        utc__olock_lock(&t->lock, false);
        detach_assembly(t, p, status);
        utc__olock_unlock(&t->lock);
        utc__olock_unlock(&p->rx_lock);
    }
    utc__olock_lock(&t->lock, false);
    end_posted(t, 0, -1, status);
    drop_queued(t);
    for (utc_request_t *r = t->cmar, *next; r; r = next) {
        next = NR(r)->cnext;
        node_pair_t *p = utc__node_pair(r->peer);
        unsigned want = SLOT_WORD(NR(r)->cma.gen, SLOT_OFFERED);
        if (atomic_compare_exchange_strong(&p->ictl->slot[NR(r)->cma.slot % NODE_SLOTS], &want,
                                           SLOT_WORD(NR(r)->cma.gen, SLOT_REVOKED))) {
            clist_remove(&t->cmar, r);
            utc__req_finish(r, status);
            utc__node_wake_peer(p);
        }
    }
    for (utc_request_t *r = t->cmas, *next; r; r = next) {
        next = NR(r)->cnext;
        cma_send_end(t, r, status);
    }
    utc__olock_unlock(&t->lock);
    for (int i = 0; i < t->nmembers; i++) {
        node_pair_t *p = utc__node_pair(t->members[i]);
        if (!p)
            continue;
        /* The peer's writers on this conduit may wait for this rank, which reads no more:
         * what is in the FIFO from it now is taken (offers declined, a pipelined message
         * dropped), and a GONE record tells it that the rest goes nowhere, so their writes
         * end (node_progress) as over MPI, where the destroy receives and drops them. */
        send_gone(t, p);
        utc__node_drain(p);
        utc__node_wake_local(p);
    }
}

static void node_fail(utc__transport_t *tp, utc_status_t status)
{
    node_tp_t *t = tp_of(tp);
    utc__olock_lock(&t->lock, false);
    end_posted(t, 0, -1, status);
    utc__olock_unlock(&t->lock);
    for (int i = 0; i < t->nmembers; i++) {
        node_pair_t *p = utc__node_pair(t->members[i]);
        if (p)
            utc__node_wake_local(p);
    }
}

/* Tell the peers that end `end`'s task failed on world rank `rank` (this one, or one whose
 * notice the shared transport passes on) with `rc`: a CTL record to each, behind what this
 * rank wrote to it. */
static void node_notify_failed(utc__transport_t *tp, int end, int rank, utc_status_t rc)
{
    node_tp_t *t = tp_of(tp);
    for (int i = 0; i < t->nmembers; i++) {
        node_pair_t *p = utc__node_pair(t->members[i]);
        if (!p || atomic_load(&p->dead))
            continue;
        utc_request_t *r = malloc(sizeof *r);
        if (!r) {
            utc_log(UTC_LOG_ERROR, "conduit %d: out of memory: rank %d is not told of a "
                    "failure", tp->conduit_id, p->peer);
            continue;
        }
        utc__req_prepare(r, UTC__OP_SEND, 0, 0, p->peer, tp);
        node_req_t *n = NR(r);
        n->kind = K_CTL;
        n->heap = true;
        n->ctl = (node_ctl_msg_t){end, rank, (int32_t)rc};
        utc__olock_lock(&p->tx_lock, false);
        txq_append(p, r);
        flush(p);
        utc__olock_unlock(&p->tx_lock);
    }
}

static void node_destroy(utc__transport_t *tp)
{
    node_tp_t *t = tp_of(tp);
    utc__spin_lock(&reg_lock);
    HASH_DEL(reg_set, t);
    utc__spin_unlock(&reg_lock);
    for (int i = 0; i < t->nmembers; i++) {
        node_pair_t *p = utc__node_pair(t->members[i]);
        if (!p)
            continue;
        utc__olock_lock(&p->rx_lock, false); /* the drainers' cache of it */
        if (p->last_tp == t)
            p->last_tp = NULL;
        /* a message of ours still being assembled: its chunks go nowhere from now on
         * (its buffer is freed with the queues below) */
        utc__olock_lock(&t->lock, false);
        detach_assembly(t, p, UTC_ERR_CANCELED);
        utc__olock_unlock(&t->lock);
        utc__olock_unlock(&p->rx_lock);
    }
    if (!atomic_load(&t->closed))
        node_shutdown(tp, UTC_ERR_CANCELED);
    /* CMA sends whose reader is copying (none after a shutdown, but in a rare race):
     * their buffers stay theirs until the copy ends */
    utc__olock_lock(&t->lock, false);
    while (t->cmas) {
        utc_request_t *r = t->cmas;
        node_pair_t *p = utc__node_pair(r->peer);
        unsigned w = NR(r)->phase == S_CMA ? atomic_load(&p->octl->slot[NR(r)->slot]) : 0;
        if (NR(r)->phase == S_CMA && w == SLOT_WORD(NR(r)->gen, SLOT_COPYING) &&
            utc__node_alive(p)) {
            utc__olock_unlock(&t->lock);
            sched_yield();
            utc__olock_lock(&t->lock, false);
            continue;
        }
        slot_release(p, NR(r)->slot);
        t->cmas = NR(r)->cnext;
        utc__req_finish(r, UTC_ERR_CANCELED);
    }
    utc__olock_unlock(&t->lock);
    node_tagq_t *q, *tmp;
    HASH_ITER(hh, t->tagqs, q, tmp) {
        while (q->uhead) {
            node_msg_t *m = q->uhead;
            msg_pop(q);
            msg_free(m);
        }
        HASH_DEL(t->tagqs, q);
        free(q);
    }
    free(t->members);
    free(t->eos);
    free(t->gone);
    free(t);
}

static const utc__transport_ops_t node_ops = {
    .name = "node",
    .solo_reads = true, /* the shutdown takes every read out of every line */
    .start = node_start,
    .send_now = node_send_now,
    .progress = node_progress,
    .wait = node_wait,
    .cancel = node_cancel,
    .probe = node_probe,
    .close = node_close,
    .shutdown = node_shutdown,
    .fail = node_fail,
    .notify_failed = node_notify_failed,
    .destroy = node_destroy,
};

/* The component's create: collective over the world (every rank enters it, members or
 * not), so the first one sets up the host's shared memory on every rank (node_engine.c)
 * and every rank numbers the conduit's node transports alike. UTC_ERR_UNSUPPORTED on every
 * rank alike when the set-up failed (then, and for later conduits, the component is off
 * and the pick gives MPI: components.c). */
static utc_status_t node_create(const utc__transport_args_t *a, utc__transport_t **out)
{
    *out = NULL;
    utc_status_t rc = utc__node_engine_setup();
    if (rc != UTC_OK)
        return rc;
    int me = utc_rank();
    bool member = false;
    for (int i = 0; i < a->nmembers; i++)
        member |= a->members[i] == me;
    utc__spin_lock(&reg_lock);
    unsigned sub = a->conduit_id == sub_cid ? sub_next++ : 0;
    if (a->conduit_id != sub_cid) {
        sub_cid = a->conduit_id;
        sub_next = 1;
    }
    uint64_t key = make_key(a->conduit_id, sub);
    reg_last = key;
    reg_any = true;
    utc__spin_unlock(&reg_lock);
    if (!member)
        return UTC_OK;
    for (int i = 0; i < a->nmembers; i++)
        if (a->members[i] != me && !utc__node_pair(a->members[i]))
            return utc__error(UTC_ERR_INTERNAL, "utc_conduit_create: node transport: rank %d is "
                              "not on this rank's host", a->members[i]);
    int *members = malloc(sizeof *members * (size_t)a->nmembers);
    node_tp_t *fresh = NULL;
    if (!members || !(fresh = tp_alloc(key))) {
        free(members);
        return utc__error(UTC_ERR_NO_MEMORY, "utc_conduit_create: out of memory");
    }
    memcpy(members, a->members, sizeof *members * (size_t)a->nmembers);
    utc__spin_lock(&reg_lock);
    node_tp_t *t;
    HASH_FIND(hh, reg_set, &key, sizeof key, t);
    if (!t) {
        t = fresh;
        fresh = NULL;
        HASH_ADD(hh, reg_set, key, sizeof t->key, t);
    }
    utc__olock_lock(&t->lock, false);
    t->base.ops = &node_ops;
    t->base.conduit_id = a->conduit_id;
    t->base.kind = UTC_CONDUIT_NODE;
    t->members = members;
    t->nmembers = a->nmembers;
    bool adopted = t->placeholder;
    t->placeholder = false;
    utc__olock_unlock(&t->lock);
    utc__spin_unlock(&reg_lock);
    if (fresh) {
        free(fresh->eos);
        free(fresh->gone);
        free(fresh);
    }
    if (adopted) { /* messages came first: posted reads could not exist, nothing to match */
        for (int i = 0; i < t->nmembers; i++) {
            node_pair_t *p = utc__node_pair(t->members[i]);
            if (p)
                utc__node_wake_local(p);
        }
    }
    *out = &t->base;
    return UTC_OK;
}

/* Two ranks of one host (the host map of utc_init: the same answer on every rank). */
static bool node_reaches(int a, int b) { return a != b && utc__same_host(a, b); }

/* utc_finalize, every conduit gone: the notices still queued behind a full ring (a GONE
 * record, a failure notice) are pushed if they fit now, else freed: nobody reads them. */
static void node_finalize(void)
{
    for (int r = 0; utc__node_by_rank && r < utc__node_nranks; r++) {
        node_pair_t *p = utc__node_by_rank[r];
        if (!p)
            continue;
        utc__olock_lock(&p->tx_lock, false);
        flush(p);
        utc_request_t *left = p->txq;
        p->txq = p->txq_tail = NULL;
        txq_changed(p);
        utc__olock_unlock(&p->tx_lock);
        while (left) {
            utc_request_t *q = left;
            left = q->next;
            if (NR(q)->heap)
                free(q);
        }
    }
    utc__node_engine_finalize();
}

const utc__transport_component_t utc__node_component = {
    .name = "node",
    .kind = UTC_CONDUIT_NODE,
    .reaches = node_reaches,
    .collective = true,
    .create = node_create,
    .req_priv = sizeof(node_req_t),
    .finalize = node_finalize,
};
