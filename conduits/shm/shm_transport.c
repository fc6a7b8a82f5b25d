/*
 * In-process transport: both ends of the conduit live in this process.
 *
 * Each direction has a ring of fixed-size slots, a bounded multi-producer queue in the
 * style of D. Vyukov's sequence-numbered ring:
 *
 * - slot i starts with seq = i. A writer claims position p (CAS on `tail`) when the slot's
 *   seq == p, fills it, and publishes it with seq = p + 1 (release). The reader takes the
 *   slot at `head` when its seq == head + 1 (acquire), and frees it with
 *   seq = head + slots (release), which a writer one lap later waits for (acquire).
 * - Writers never lock: claiming a slot is one CAS. A message of at most `inline_max`
 *   bytes is copied into the slot and the writer returns at once; a larger one puts only
 *   its address in the slot, the reader copies it straight from the writer's buffer (one
 *   copy) and then completes the writer's request; an owned buffer's pointer is handed
 *   over as it is.
 * - Readers take messages under `rx_lock`: matching tags must be atomic with the pop, or
 *   two readers could take two messages of one tag out of order. The lock is never held
 *   while sleeping or while copying a large message.
 *
 * Tags: a reader that finds a message of another tag at the head moves it into that tag's
 * queue (a small one is copied out of its slot, a large one only by its descriptor), so a
 * reader of tag B never waits behind unread tag-A messages, and the ring keeps moving.
 * Reads that find nothing are posted in their tag's queue and matched in the order they
 * were posted, by whichever reader drains the ring next.
 *
 * A full ring: the write goes to a FIFO backlog (under `tx_lock`, only on this slow path);
 * whoever frees slots (readers) or writes next flushes it in order. Blocked threads sleep
 * on an event word per direction and side (futex after a short spin).
 *
 * A conduit costs what it carries. Each direction starts on a small ring held in the
 * transport itself (SMALL_SLOTS slots of SMALL_STRIDE bytes: 8 B messages, the 8 B
 * ping-pong, never leave it), and moves to the full ring of the options (ring_slots slots
 * of inline_max bytes, mapped on first use) when a write finds the small one full or a
 * message too long for its slots. After SHRINK_AFTER messages that the small ring would
 * have carried, the first time the ring is empty, it moves back and the full ring's pages
 * go back to the system (madvise); the mapping stays until the conduit is destroyed.
 *
 * Moving (ring_swap, under tx_lock then rx_lock, never on the fast path): `tail` holds the
 * position (low POS_BITS bits), a generation and a CLOSED bit. The mover sets CLOSED, so
 * no writer claims a slot; waits for the writers that claimed one to publish it; copies
 * the unread messages to the same positions of the other ring; installs it; and reopens
 * `tail` with the generation bumped. A writer that loaded the old ring fails its CAS on
 * `tail` (closed, or another generation) and looks again; the old ring's memory stays
 * mapped, so its look is harmless. Writers that find `tail` closed take the backlog path.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <assert.h>
#include <stdalign.h>

#include "utc_internal.h"
#include "service/buffer.h"
#include "service/request.h"
#include "service/transport.h"
#include "service/wait.h"

typedef struct shm_slot {
    atomic_size_t seq;
    int tag;
    utc__msg_desc_t d;  /* INLINE: the bytes follow the header (d.ptr unused) */
} shm_slot_t;

/* The bytes follow the header at once: a small message shares the header's cache line,
 * so publishing it moves one line from writer to reader. Slots are 64-byte aligned. */
#define SLOT_HDR ((sizeof(shm_slot_t) + 15) & ~(size_t)15)

/* A message taken out of the ring before anyone asked for it. */
typedef struct shm_msg {
    struct shm_msg *next;
    uint64_t seq;       /* order of arrival in the queues, all tags (any-tag reads) */
    utc__msg_desc_t d;  /* INLINE: d.ptr points at data */
    unsigned char data[];
} shm_msg_t;

/* Reader-side state of one tag: queued messages or posted reads (never both for long). */
typedef struct shm_tagq {
    int tag;
    shm_msg_t *uhead, *utail;
    utc_request_t *phead, *ptail;
    UT_hash_handle hh;
} shm_tagq_t;

/* Positions live in the low POS_BITS bits of `tail`, `head` and the slots' seq, and wrap
 * there (2^48 messages per direction); above them, `tail` holds a generation and CLOSED. */
#define POS_BITS 48
#define POS_MASK (((size_t)1 << POS_BITS) - 1)
#define POS_SIGN ((size_t)1 << (POS_BITS - 1))
#define TAIL_CLOSED ((size_t)1 << 63)
#define TAIL_GEN_ONE ((size_t)1 << POS_BITS)
#define TAIL_GEN_MASK (~POS_MASK & ~TAIL_CLOSED)

/* The small ring every direction starts on (its bytes are part of the transport). */
#define SMALL_SLOTS 8
#define SMALL_STRIDE 128
/* Messages the small ring could have carried, on the full ring, before moving back to the
 * small one (the first time the ring is empty after that). Doubled, up to SHRINK_AFTER_MAX,
 * each time the full ring is needed again soon after: a conduit whose traffic needs the
 * full ring now and then does not keep paying for the move. */
#define SHRINK_AFTER 1024
#define SHRINK_AFTER_MAX ((size_t)1 << 24)

typedef struct shm_ring {
    unsigned char *slots;
    size_t mask, stride;
    size_t cap;       /* bytes a slot holds after its header */
    size_t bytes;     /* mapped bytes (the full ring), 0 for the small one */
} shm_ring_t;

typedef struct shm_dir {
    /* writers */
    alignas(64) atomic_size_t tail;     /* next position to claim, generation, CLOSED */
    /* its own line: every reader checks it after freeing a slot, every writer CASes tail */
    alignas(64) atomic_size_t backlog_n; /* writes waiting for a slot */
    utc__spinlock_t tx_lock;            /* guards the backlog list and ring moves */
    utc_request_t *bhead, *btail;
    /* read by every operation, written only by a move */
    alignas(64) _Atomic(shm_ring_t *) ring; /* the ring in use: &small or &full */
    size_t inline_max;
    atomic_int closed;                  /* 0, or the status every operation now ends with */
    shm_ring_t small, full;             /* full.slots: NULL until first needed */
    /* readers */
    alignas(64) utc__spinlock_t rx_lock; /* guards nqueued, the tag table and head's moves */
    atomic_size_t head;                  /* written under rx_lock; peeked without it */
    size_t nqueued;                      /* posted reads + queued messages, all tags */
    shm_tagq_t *tagqs;
    shm_tagq_t anyq;                     /* posted any-tag reads (not in tagqs) */
    utc_request_t *mhead, *mtail;        /* MATCHED reads whose copy nobody has begun */
    atomic_size_t nmatched;              /* their number (written under rx_lock) */
    bool eos;                            /* the writers' end of stream has been taken */
    uint64_t queued_seq;                 /* next shm_msg_t.seq */
    size_t need_head;                    /* head when the full ring was last needed */
    size_t shrink_after;                 /* messages after need_head before moving back */
    size_t shrunk_head;                  /* head at the last move back, SIZE_MAX: none */
    atomic_bool shrink_wanted;           /* set under rx_lock, seen by after_read */
    /* event words: readers sleep on rx_event (bumped by a publish when a reader sleeps,
     * and by a reader that completes someone else's read), writers on tx_event (bumped
     * when a large write is copied or a backlogged write is flushed). Spinning readers
     * watch the head slot instead, the line a writer touches anyway. */
    alignas(64) atomic_uint rx_event;
    atomic_uint rx_sleepers;
    alignas(64) atomic_uint tx_event;
    atomic_uint tx_sleepers;
    alignas(64) unsigned char small_slots[SMALL_SLOTS * SMALL_STRIDE];
} shm_dir_t;

typedef struct shm_transport {
    utc__transport_t base;
    shm_dir_t dir[2];
} shm_transport_t;

static_assert(offsetof(shm_transport_t, base) == 0, "transport base must come first");

static inline shm_dir_t *dir_of(utc__transport_t *tp, const utc_request_t *req)
{
    return &((shm_transport_t *)tp)->dir[req->dir];
}

/* ---- the ring ---- */

static inline shm_slot_t *slot_at(const shm_ring_t *r, size_t pos)
{
    return (shm_slot_t *)(r->slots + (pos & r->mask) * r->stride);
}

static inline unsigned char *slot_data(shm_slot_t *s) { return (unsigned char *)s + SLOT_HDR; }

static inline size_t pos_next(size_t pos) { return (pos + 1) & POS_MASK; }

/* The ring in use, for a thread that holds rx_lock or tx_lock (moves hold both). */
static inline shm_ring_t *ring_locked(shm_dir_t *d)
{
    /* relaxed: only a move changes it, under both locks */
    return atomic_load_explicit(&d->ring, memory_order_relaxed);
}

static utc__msg_kind_t send_kind(const shm_dir_t *d, const utc_request_t *req)
{
    if (req->owned)
        return UTC__MSG_OWNED;
    return req->size <= d->inline_max ? UTC__MSG_INLINE : UTC__MSG_LARGE;
}

typedef enum {
    PUSH_OK,
    PUSH_FULL,  /* the ring is full */
    PUSH_LONG,  /* an inline message longer than the ring's slots (the small ring) */
    PUSH_MOVING /* a move is under way: take the backlog path */
} push_t;

/* Lock-free: claim the next slot and publish `req`'s message in it as `kind`. */
static push_t ring_push(shm_dir_t *d, utc_request_t *req, utc__msg_kind_t kind)
{
    /* acquire: pairs with the release that reopens tail after a move, so the ring loaded
     * below is at least the one of this generation */
    size_t t = atomic_load_explicit(&d->tail, memory_order_acquire);
    shm_ring_t *r;
    shm_slot_t *s;
    size_t pos;
    for (;;) {
        if (t & TAIL_CLOSED)
            return PUSH_MOVING;
        /* acquire: pairs with the move's release; a ring newer than t's generation makes
         * the CAS below fail (the move closed tail before installing it) */
        r = atomic_load_explicit(&d->ring, memory_order_acquire);
        if (kind == UTC__MSG_INLINE && req->size > r->cap)
            return PUSH_LONG;
        pos = t & POS_MASK;
        s = slot_at(r, pos);
        /* acquire: pairs with the reader's release in ring_release, so our writes into
         * the slot cannot overtake its reads of the previous message */
        size_t dif = (atomic_load_explicit(&s->seq, memory_order_acquire) - pos) & POS_MASK;
        if (dif == 0) {
            /* acquire on failure: the reloaded t is followed by a load of the ring (and
             * C11 wants success at least as strong); free on x86 */
            if (atomic_compare_exchange_weak_explicit(&d->tail, &t,
                                                      (t & ~POS_MASK) | pos_next(pos),
                                                      memory_order_acquire,
                                                      memory_order_acquire))
                break;
        } else if (dif & POS_SIGN) {
            return PUSH_FULL; /* the slot still holds the message of the previous lap */
        } else {
            t = atomic_load_explicit(&d->tail, memory_order_acquire);
        }
    }
    s->tag = req->tag;
    s->d.kind = kind;
    s->d.size = req->size;
    s->d.ptr = req->sbuf;
    s->d.wreq = kind == UTC__MSG_LARGE ? req : NULL;
    if (kind == UTC__MSG_INLINE && req->size)
        memcpy(slot_data(s), req->sbuf, req->size);
    /* release: publishes the slot's contents to the reader's acquire in ring_peek */
    atomic_store_explicit(&s->seq, pos_next(pos), memory_order_release);
    return PUSH_OK;
}

/* Whether a message is published at the head (a hint when called without rx_lock: a ring
 * a move has just left is still mapped, and what it says is checked under the lock). */
static bool ring_ready(shm_dir_t *d)
{
    /* relaxed: a stale head only names a slot that is not ready (its seq moved on) */
    size_t h = atomic_load_explicit(&d->head, memory_order_relaxed);
    /* acquire: pairs with the move's release (see ring_push) */
    shm_ring_t *r = atomic_load_explicit(&d->ring, memory_order_acquire);
    /* acquire: pairs with the writer's release in ring_push */
    return atomic_load_explicit(&slot_at(r, h)->seq, memory_order_acquire) == pos_next(h);
}

/* Under rx_lock: the slot at head if a message is published there, else NULL. */
static shm_slot_t *ring_peek(shm_dir_t *d, utc__msg_desc_t *m)
{
    /* relaxed: head only moves under rx_lock, which we hold */
    size_t h = atomic_load_explicit(&d->head, memory_order_relaxed);
    shm_slot_t *s = slot_at(ring_locked(d), h);
    /* acquire: pairs with the writer's release in ring_push */
    if (atomic_load_explicit(&s->seq, memory_order_acquire) != pos_next(h))
        return NULL;
    *m = s->d;
    if (m->kind == UTC__MSG_INLINE)
        m->ptr = slot_data(s);
    return s;
}

/* Under rx_lock: free the head slot for writers. On the full ring, count the messages the
 * small ring could have carried, and ask for the move back after enough of them. */
static void ring_release(shm_dir_t *d, shm_slot_t *s)
{
    size_t h = atomic_load_explicit(&d->head, memory_order_relaxed); /* ours: under the lock */
    shm_ring_t *r = ring_locked(d);
    if (r != &d->small) {
        if (s->d.kind == UTC__MSG_INLINE && s->d.size > d->small.cap)
            d->need_head = h;
        else if (((h - d->need_head) & POS_MASK) >= d->shrink_after &&
                 !atomic_load_explicit(&d->shrink_wanted, memory_order_relaxed))
            /* relaxed: a hint for after_read; the move rechecks under the locks */
            atomic_store_explicit(&d->shrink_wanted, true, memory_order_relaxed);
    }
    /* release: our reads of the slot come before a writer's reuse (its acquire load) */
    atomic_store_explicit(&s->seq, (h + r->mask + 1) & POS_MASK, memory_order_release);
    /* relaxed: peekers only use it as a hint (ring_ready) */
    atomic_store_explicit(&d->head, pos_next(h), memory_order_relaxed);
}

/* Lay ring `r` out for positions from `h` on, every slot free. No lock: `r` is not in use
 * (its first use is published by the release that installs it). */
static void ring_reset(shm_ring_t *r, size_t h)
{
    for (size_t i = 0; i <= r->mask; i++)
        atomic_store_explicit(&slot_at(r, h + i)->seq, (h + i) & POS_MASK,
                              memory_order_relaxed);
}

/*
 * Under tx_lock: move the direction to ring `to`, carrying the unread messages over (or,
 * with `only_if_empty`, only when there are none). False if it did not move. See the
 * opening comment for the protocol.
 */
static bool ring_swap(shm_dir_t *d, shm_ring_t *to, bool only_if_empty)
{
    utc__spin_lock(&d->rx_lock);
    shm_ring_t *from = ring_locked(d);
    /* seq_cst: from here no CAS of a writer succeeds */
    size_t t = atomic_fetch_or(&d->tail, TAIL_CLOSED);
    size_t end = t & POS_MASK;
    size_t h = atomic_load_explicit(&d->head, memory_order_relaxed); /* under rx_lock */
    size_t n = (end - h) & POS_MASK;
    if (from == to || n > to->mask + 1 || (only_if_empty && n)) {
        /* release: as below; the ring did not change, so the generation stays */
        atomic_store_explicit(&d->tail, t, memory_order_release);
        utc__spin_unlock(&d->rx_lock);
        return false;
    }
    ring_reset(to, h);
    for (size_t p = h; p != end; p = pos_next(p)) {
        shm_slot_t *s = slot_at(from, p), *o = slot_at(to, p);
        /* a writer that claimed p before the close publishes it soon (it does not block);
         * acquire: pairs with its release in ring_push */
        for (unsigned i = 0; atomic_load_explicit(&s->seq, memory_order_acquire) != pos_next(p);
             i++) {
            if (i < 128)
                utc__cpu_relax();
            else
                sched_yield();
        }
        o->tag = s->tag;
        o->d = s->d;
        if (s->d.kind == UTC__MSG_INLINE && s->d.size)
            memcpy(slot_data(o), slot_data(s), s->d.size);
        atomic_store_explicit(&o->seq, pos_next(p), memory_order_relaxed);
    }
    if (to != &d->small) {
        /* needed again soon after a move back: wait longer before the next one */
        if (d->shrunk_head != SIZE_MAX &&
            ((h - d->shrunk_head) & POS_MASK) < 4 * d->shrink_after &&
            d->shrink_after < SHRINK_AFTER_MAX)
            d->shrink_after *= 2;
        d->need_head = h;
    } else {
        d->shrunk_head = h;
    }
    /* relaxed: only read after a look at head under rx_lock, or by after_read as a hint */
    atomic_store_explicit(&d->shrink_wanted, false, memory_order_relaxed);
    /* release: the slots written above are visible to whoever loads the new ring */
    atomic_store_explicit(&d->ring, to, memory_order_release);
    /* release: pairs with the writers' acquire loads of tail (see ring_push) */
    atomic_store_explicit(&d->tail, ((t + TAIL_GEN_ONE) & TAIL_GEN_MASK) | end,
                          memory_order_release);
    utc__spin_unlock(&d->rx_lock);
    return true;
}

/* Under tx_lock: move to the full ring (mapping it the first time). False if it is in
 * use already, is no larger than the small one, or cannot be mapped. */
static bool ring_grow(shm_dir_t *d)
{
    shm_ring_t *f = &d->full;
    if (ring_locked(d) == f || !f->bytes)
        return false;
    if (!f->slots) {
        void *p = mmap(NULL, f->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return false;
        f->slots = p;
    }
    return ring_swap(d, f, false);
}

/* No lock held: after SHRINK_AFTER messages the small ring could have carried, move back
 * to it once the ring is empty, and give the full ring's pages back. */
static void ring_shrink(shm_dir_t *d)
{
    utc__spin_lock(&d->tx_lock);
    /* relaxed: rechecked by ring_swap under both locks (it clears the flag) */
    if (atomic_load_explicit(&d->shrink_wanted, memory_order_relaxed) &&
        ring_swap(d, &d->small, true))
        (void)madvise(d->full.slots, d->full.bytes, MADV_DONTNEED);
    utc__spin_unlock(&d->tx_lock);
}

/* After publishing: wake sleeping readers, if any. The seq_cst fence pairs with the one
 * a reader makes between counting itself asleep and its last look at the ring: either
 * it sees our message, or we see it counted. */
static void wake_readers(shm_dir_t *d)
{
    atomic_thread_fence(memory_order_seq_cst);
    /* relaxed: ordered by the fence */
    if (atomic_load_explicit(&d->rx_sleepers, memory_order_relaxed)) {
        atomic_fetch_add(&d->rx_event, 1);
        utc__futex_wake(&d->rx_event, INT_MAX);
    }
}

/* Drop a message nobody will read: free an owned buffer, release a blocked writer with
 * `status`. */
static void drop_message(const utc__msg_desc_t *m, utc_status_t status)
{
    if (m->kind == UTC__MSG_OWNED)
        utc_buf_free((void *)m->ptr);
    else if (m->kind == UTC__MSG_LARGE)
        utc__req_finish(m->wreq, status);
}

static inline utc_status_t closed_status(const shm_dir_t *d)
{
    /* acquire: pairs with the release in shm_shutdown */
    return (utc_status_t)atomic_load_explicit(&d->closed, memory_order_acquire);
}

/* ---- tag queues (under rx_lock) ---- */

static shm_tagq_t *tagq_find(shm_dir_t *d, int tag)
{
    if (tag == UTC_ANY_TAG)
        return &d->anyq;
    shm_tagq_t *q;
    HASH_FIND_INT(d->tagqs, &tag, q);
    return q;
}

static shm_tagq_t *tagq_get(shm_dir_t *d, int tag)
{
    shm_tagq_t *q = tagq_find(d, tag);
    if (!q && (q = calloc(1, sizeof *q))) {
        q->tag = tag;
        HASH_ADD_INT(d->tagqs, tag, q);
    }
    return q;
}

/* Entries kept when empty: a tag used again finds its entry without an allocation;
 * beyond this many, empty ones are freed (many distinct tags cost no memory). */
#define TAGQ_KEEP 64

static void tagq_trim(shm_dir_t *d, shm_tagq_t *q)
{
    if (q && q != &d->anyq && !q->uhead && !q->phead && HASH_COUNT(d->tagqs) > TAGQ_KEEP) {
        HASH_DEL(d->tagqs, q);
        free(q);
    }
}

static bool posted_remove(shm_dir_t *d, utc_request_t *r)
{
    shm_tagq_t *q = tagq_find(d, r->tag);
    if (!q || !utc__req_remove(&q->phead, &q->ptail, r))
        return false;
    r->posted = false;
    d->nqueued--;
    tagq_trim(d, q);
    return true;
}

/* ---- matching (under rx_lock) ---- */

typedef enum { DELIVER_TAKEN, DELIVER_REFUSED } deliver_t;

/*
 * Give message `m` to read `r`. Small messages are copied here; large ones are left to be
 * copied outside the lock (state MATCHED with the descriptor, listed in d's matched
 * reads): by r's owner, or by any reader of the direction that comes first (a thread that
 * waits for a later read must not leave its writer waiting for this one's copy). Refused
 * (r completes with an error, the message stays): too large for r's buffer, or no memory.
 */
static deliver_t deliver(shm_dir_t *d, utc_request_t *r, const utc__msg_desc_t *m)
{
    r->received = m->size;
    if (!r->owned && m->size > r->size) {
        utc__req_finish(r, UTC_ERR_TRUNCATE);
        return DELIVER_REFUSED;
    }
    void *dst = r->rbuf;
    if (r->owned) {
        if (m->kind == UTC__MSG_OWNED) {
            r->owned_buf = (void *)m->ptr; /* the pointer itself crosses */
            utc__req_finish(r, UTC_OK);
            return DELIVER_TAKEN;
        }
        if (!(dst = r->owned_buf = utc_buf_alloc(m->size))) {
            utc__req_finish(r, UTC_ERR_NO_MEMORY);
            return DELIVER_REFUSED;
        }
    }
    if (m->kind == UTC__MSG_INLINE || (m->kind == UTC__MSG_OWNED && m->size <= d->inline_max)) {
        if (m->size)
            memcpy(dst, m->ptr, m->size);
        if (m->kind == UTC__MSG_OWNED)
            utc_buf_free((void *)m->ptr);
        utc__req_finish(r, UTC_OK);
        return DELIVER_TAKEN;
    }
    r->m = *m;
    utc__req_append(&d->mhead, &d->mtail, r); /* r is in no other line now */
    atomic_fetch_add_explicit(&d->nmatched, 1, memory_order_relaxed);
    /* release: the descriptor (and owned_buf) are visible to the owner's acquire */
    atomic_store_explicit(&r->state, UTC__REQ_MATCHED, memory_order_release);
    return DELIVER_TAKEN;
}

/*
 * A large message that a read refused (too large for its buffer) stays queued for the next
 * read of its tag; copy it out of the writer's buffer so that the writer returns with
 * `status` (UTC_OK: its message was taken into the conduit), as the MPI transport receives
 * a truncated message aside. Out of memory, the writer keeps waiting for a read to take it.
 */
static void keep_aside(shm_dir_t *d, utc__msg_desc_t *m, utc_status_t status)
{
    if (m->kind != UTC__MSG_LARGE)
        return;
    void *copy = utc_buf_alloc(m->size);
    if (!copy)
        return;
    memcpy(copy, m->ptr, m->size);
    utc_request_t *w = m->wreq;
    m->kind = UTC__MSG_OWNED;
    m->ptr = copy;
    m->wreq = NULL;
    utc__req_finish(w, status); /* w may be gone after this */
    utc__event_signal(&d->tx_event, &d->tx_sleepers);
}

/* Under rx_lock: offer `m` (tag `tag`) to the reads posted on queue q, oldest first. True
 * when one took it; *refused when one refused it. */
static bool offer(shm_dir_t *d, shm_tagq_t *q, int tag, const utc__msg_desc_t *m,
                  utc_request_t *self, bool *refused, bool *woke)
{
    while (q && q->phead) {
        utc_request_t *r = q->phead;
        if (!(q->phead = r->next))
            q->ptail = NULL;
        r->posted = false;
        d->nqueued--;
        r->tag = tag; /* an any-tag read learns its message's tag */
        deliver_t res = deliver(d, r, m);
        if (r != self)
            *woke = true;
        if (res == DELIVER_TAKEN)
            return true;
        *refused = true;
    }
    return false;
}

static void end_posted(shm_dir_t *d, shm_tagq_t *q, utc_status_t status);

/* Under rx_lock: the end of stream came (after every message of the writers): every read
 * still posted has nothing left to get. Later reads find d->eos. */
static void take_eos(shm_dir_t *d, bool *woke)
{
    d->eos = true;
    shm_tagq_t *q, *tmp;
    HASH_ITER(hh, d->tagqs, q, tmp)
        end_posted(d, q, UTC_ERR_CLOSED);
    end_posted(d, &d->anyq, UTC_ERR_CLOSED);
    *woke = true;
}

/*
 * Offer message `m` with `tag` to that tag's posted reads, oldest first, then to the posted
 * any-tag reads (a read of the tag started earlier comes first), and queue it if none takes
 * it. False if it could not be queued (no memory): it stays where it was. *woke is set when
 * a read other than `self` completed or matched.
 */
static bool dispatch(shm_dir_t *d, int tag, const utc__msg_desc_t *m, utc_request_t *self,
                     bool refused, bool *woke)
{
    if (tag == UTC__TAG_EOS) {
        take_eos(d, woke);
        return true;
    }
    shm_tagq_t *q = tagq_find(d, tag);
    if (offer(d, q, tag, m, self, &refused, woke)) {
        tagq_trim(d, q);
        return true;
    }
    if (offer(d, &d->anyq, tag, m, self, &refused, woke))
        return true;
    size_t extra = m->kind == UTC__MSG_INLINE ? m->size : 0;
    shm_msg_t *msg = malloc(sizeof *msg + extra);
    if (!msg || (!q && !(q = tagq_get(d, tag)))) {
        free(msg);
        return false;
    }
    msg->next = NULL;
    msg->seq = d->queued_seq++;
    msg->d = *m;
    if (m->kind == UTC__MSG_INLINE) {
        if (extra)
            memcpy(msg->data, m->ptr, extra);
        msg->d.ptr = msg->data;
    }
    if (q->utail)
        q->utail->next = msg;
    else
        q->uhead = msg;
    q->utail = msg;
    d->nqueued++;
    if (refused)
        keep_aside(d, &msg->d, UTC_OK);
    *woke = true; /* an unposted reader of this tag polls the ring: tell it to look here */
    return true;
}

/* Move messages from the ring to reads and queues until `self` is no longer pending.
 * Returns how many slots were freed. */
static size_t drain(shm_dir_t *d, utc_request_t *self, bool *woke)
{
    size_t freed = 0;
    utc__msg_desc_t m;
    shm_slot_t *s;
    /* relaxed: self's state changes only under rx_lock, which we hold */
    while (atomic_load_explicit(&self->state, memory_order_relaxed) == UTC__REQ_PENDING &&
           (s = ring_peek(d, &m))) {
        if (!dispatch(d, s->tag, &m, self, false, woke)) {
            if (posted_remove(d, self))
                utc__req_finish(self, UTC_ERR_NO_MEMORY);
            break;
        }
        ring_release(d, s);
        freed++;
    }
    return freed;
}

/* The oldest queued message of any tag (its queue in *qp), or NULL. Called when no
 * any-tag read is posted (a posted one would have taken every message queued since). */
static shm_msg_t *oldest_queued(shm_dir_t *d, shm_tagq_t **qp)
{
    shm_msg_t *best = NULL;
    shm_tagq_t *q, *tmp;
    HASH_ITER(hh, d->tagqs, q, tmp) {
        if (q->uhead && (!best || q->uhead->seq < best->seq)) {
            best = q->uhead;
            *qp = q;
        }
    }
    return best;
}

/*
 * Start (or retry) a read: match it with the oldest message of its tag (of any tag, for
 * UTC_ANY_TAG), or post it. `lazy`: when nothing at all is queued or in the ring, leave it
 * unposted; its owner polls the ring head and comes back (a blocking read, which no one
 * else need serve; asynchronous reads are always posted, so they keep their start order).
 */
static size_t post_read(shm_dir_t *d, utc_request_t *r, bool *woke, bool lazy)
{
    utc__msg_desc_t m;
    shm_slot_t *s;
    shm_tagq_t *q = NULL;
    bool any = r->tag == UTC_ANY_TAG;
    if (d->nqueued == 0) {
        /* fast path: nothing is queued or posted, so the head message, if it has our
         * tag, is the oldest of its tag */
        if ((s = ring_peek(d, &m)) && (s->tag == r->tag || (any && s->tag >= 0))) {
            int tag = s->tag;
            r->tag = tag;
            if (deliver(d, r, &m) == DELIVER_TAKEN || dispatch(d, tag, &m, r, true, woke)) {
                ring_release(d, s);
                return 1;
            }
            return 0;
        }
        if (!s && d->eos) {
            utc__req_finish(r, UTC_ERR_CLOSED);
            return 0;
        }
        if (!s && lazy)
            return 0;
    } else if (any ? !d->anyq.phead && oldest_queued(d, &q)
                   : (q = tagq_find(d, r->tag)) && !q->phead && q->uhead) {
        shm_msg_t *msg = q->uhead;
        r->tag = q->tag; /* an any-tag read learns its message's tag */
        if (deliver(d, r, &msg->d) == DELIVER_TAKEN) {
            if (!(q->uhead = msg->next))
                q->utail = NULL;
            free(msg);
            d->nqueued--;
            tagq_trim(d, q);
        } else {
            keep_aside(d, &msg->d, UTC_OK);
        }
        return 0; /* refused: the message stays at the head of its queue */
    }
    if (d->eos) { /* nothing of its tag is queued, and nothing more comes */
        utc__req_finish(r, UTC_ERR_CLOSED);
        return 0;
    }
    if (!q && !(q = tagq_get(d, r->tag))) {
        utc__req_finish(r, UTC_ERR_NO_MEMORY);
        return 0;
    }
    utc__req_append(&q->phead, &q->ptail, r);
    r->posted = true;
    d->nqueued++;
    return drain(d, r, woke);
}

/* ---- writers' backlog ---- */

/* Push backlogged writes into the ring, in order, while there is room. */
static void flush(shm_dir_t *d)
{
    bool pushed = false, finished = false;
    utc__spin_lock(&d->tx_lock);
    /* seq_cst fence: with the reader's fence in after_read, either we see the slot it
     * freed or it sees our backlog count and flushes itself */
    atomic_thread_fence(memory_order_seq_cst);
    utc_status_t cl = closed_status(d);
    while (cl && d->bhead) { /* closed: the backlog ends here */
        utc_request_t *r = d->bhead;
        d->bhead = r->next;
        atomic_fetch_sub(&d->backlog_n, 1);
        utc__req_finish(r, cl);
        finished = true;
    }
    if (!d->bhead)
        d->btail = NULL;
    while (d->bhead) {
        /* read r before publishing it: a reader may complete a large write, and its owner
         * reuse the request, as soon as it is in the ring */
        utc_request_t *r = d->bhead, *next = r->next;
        utc__msg_kind_t kind = send_kind(d, r);
        push_t pr = ring_push(d, r, kind);
        /* the full ring: for a longer message, or for depth when it is deeper */
        if ((pr == PUSH_LONG || (pr == PUSH_FULL && d->full.mask > d->small.mask)) &&
            ring_grow(d))
            pr = ring_push(d, r, kind);
        if (pr == PUSH_LONG) {
            /* no memory for the full ring: the reader copies from the writer's buffer */
            kind = UTC__MSG_LARGE;
            pr = ring_push(d, r, kind);
        }
        if (pr != PUSH_OK)
            break;
        bool large = kind == UTC__MSG_LARGE;
        if (!(d->bhead = next))
            d->btail = NULL;
        /* seq_cst: a writer that then reads 0 finds its earlier writes in the ring */
        atomic_fetch_sub(&d->backlog_n, 1);
        pushed = true;
        if (!large) {
            utc__req_finish(r, UTC_OK); /* r may be gone after this */
            finished = true;
        }
    }
    utc__spin_unlock(&d->tx_lock);
    if (pushed)
        wake_readers(d);
    if (finished)
        utc__event_signal(&d->tx_event, &d->tx_sleepers);
}

/* After a reader's pass: wake other readers it served, flush writers it made room for. */
static void after_read(shm_dir_t *d, size_t freed, bool woke)
{
    if (woke)
        utc__event_signal(&d->rx_event, &d->rx_sleepers);
    if (freed) {
        /* seq_cst fence: pairs with the one in flush (see there) */
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load(&d->backlog_n))
            flush(d);
        /* relaxed: a hint (see ring_release); ring_swap checks again under the locks */
        if (atomic_load_explicit(&d->shrink_wanted, memory_order_relaxed) && !ring_ready(d))
            ring_shrink(d);
    }
}

/* A MATCHED read taken off d's matched list, outside the lock: the one copy of a large
 * message. */
static void finish_matched(shm_dir_t *d, utc_request_t *r)
{
    utc__msg_desc_t m = r->m;
    void *dst = r->owned ? r->owned_buf : r->rbuf;
    if (m.size)
        memcpy(dst, m.ptr, m.size);
    if (m.kind == UTC__MSG_OWNED) {
        utc_buf_free((void *)m.ptr);
    } else {
        utc__req_finish(m.wreq, UTC_OK); /* the writer may reuse its buffer */
        utc__event_signal(&d->tx_event, &d->tx_sleepers);
    }
    utc__req_finish(r, UTC_OK);
}

/* Under rx_lock: take r off d's matched list; false when another thread took it first (and
 * copies it now). */
static bool matched_claim(shm_dir_t *d, utc_request_t *r)
{
    if (!utc__req_remove(&d->mhead, &d->mtail, r))
        return false;
    atomic_fetch_sub_explicit(&d->nmatched, 1, memory_order_relaxed);
    return true;
}

/* Copy every large message matched to a read of d and not yet copied (reads of other
 * threads, or this thread's earlier ones), oldest first. */
static void copy_matched(shm_dir_t *d)
{
    for (;;) {
        utc__spin_lock(&d->rx_lock);
        utc_request_t *r = d->mhead;
        if (r) {
            if (!(d->mhead = r->next))
                d->mtail = NULL;
            atomic_fetch_sub_explicit(&d->nmatched, 1, memory_order_relaxed);
        }
        utc__spin_unlock(&d->rx_lock);
        if (!r)
            return;
        r->next = NULL;
        finish_matched(d, r);
        utc__event_signal(&d->rx_event, &d->rx_sleepers); /* its owner may sleep */
    }
}

/* ---- ops ---- */

static utc_status_t shm_start(utc__transport_t *tp, utc_request_t *req)
{
    shm_dir_t *d = dir_of(tp, req);
    utc_status_t cl = closed_status(d);
    if (cl) {
        utc__req_finish(req, cl);
        return UTC_OK;
    }
    if (req->op == UTC__OP_RECV) {
        bool woke = false;
        req->posted = false;
        utc__spin_lock(&d->rx_lock);
        size_t freed = post_read(d, req, &woke, !req->heap);
        utc__spin_unlock(&d->rx_lock);
        after_read(d, freed, woke);
        return UTC_OK;
    }
    /* seq_cst: pairs with the decrement in flush, so a write never overtakes an earlier
     * backlogged write of the same thread */
    utc__msg_kind_t kind = send_kind(d, req); /* before a reader can see req */
    if (atomic_load(&d->backlog_n) == 0 && ring_push(d, req, kind) == PUSH_OK) {
        if (kind != UTC__MSG_LARGE)
            utc__req_finish(req, UTC_OK);
        wake_readers(d);
        return UTC_OK;
    }
    utc__spin_lock(&d->tx_lock);
    utc__req_append(&d->bhead, &d->btail, req);
    atomic_fetch_add(&d->backlog_n, 1); /* seq_cst: see flush */
    utc__spin_unlock(&d->tx_lock);
    flush(d);
    return UTC_OK;
}

/* Under d's rx_lock: end every read posted on q with `status`. */
static void end_posted(shm_dir_t *d, shm_tagq_t *q, utc_status_t status)
{
    while (q->phead) {
        utc_request_t *r = q->phead;
        q->phead = r->next;
        r->posted = false;
        d->nqueued--;
        utc__req_finish(r, status); /* last touch */
    }
    q->ptail = NULL;
}

/* A closed direction: end every read posted on it and drop every message in it (a large
 * writer waiting for its copy is released), then end the backlogged writes. */
static void close_sweep(shm_dir_t *d)
{
    utc_status_t cl = closed_status(d);
    utc__spin_lock(&d->rx_lock);
    shm_tagq_t *q, *tmp;
    HASH_ITER(hh, d->tagqs, q, tmp) {
        while (q->uhead) {
            shm_msg_t *msg = q->uhead;
            q->uhead = msg->next;
            drop_message(&msg->d, cl);
            free(msg);
            d->nqueued--;
        }
        q->utail = NULL;
        end_posted(d, q, cl);
    }
    end_posted(d, &d->anyq, cl);
    utc__msg_desc_t m;
    shm_slot_t *s;
    while ((s = ring_peek(d, &m))) {
        drop_message(&m, cl);
        ring_release(d, s);
    }
    utc__spin_unlock(&d->rx_lock);
    flush(d); /* ends the backlog */
    utc__event_signal(&d->rx_event, &d->rx_sleepers);
    utc__event_signal(&d->tx_event, &d->tx_sleepers);
}

/*
 * A task at one end failed: release the writers waiting for a reader, with `status`
 * (lifetimes.md). The ring's messages move to their tags' queues, which frees slots for the
 * backlog (pushed on by after_read, then moved in turn), and a large message is copied out
 * of its writer's buffer, as a truncated one is; the messages stay queued, in order, for a
 * later run's reads (as a released write's message stays in MPI's hands between ranks).
 */
static void release_writers(shm_dir_t *d, utc_status_t status)
{
    size_t freed;
    do {
        bool woke = false;
        utc__msg_desc_t m;
        shm_slot_t *s;
        freed = 0;
        utc__spin_lock(&d->rx_lock);
        while ((s = ring_peek(d, &m)) && dispatch(d, s->tag, &m, NULL, false, &woke)) {
            ring_release(d, s);
            freed++;
        }
        shm_tagq_t *q, *tmp;
        HASH_ITER(hh, d->tagqs, q, tmp)
            for (shm_msg_t *msg = q->uhead; msg; msg = msg->next)
                keep_aside(d, &msg->d, status);
        utc__spin_unlock(&d->rx_lock);
        after_read(d, freed, woke);
    } while (freed && atomic_load(&d->backlog_n));
}

/* A task at one end failed: end the posted reads (readers polling the ring and the ones
 * that come later see the mark in shm_progress) and release the writers to it. */
static void shm_fail(utc__transport_t *tp, utc_status_t status)
{
    shm_transport_t *t = (shm_transport_t *)tp;
    utc__fail_info_t f;
    int failed_end = utc__transport_fail_info(tp, &f) ? f.end : -1;
    for (int i = 0; i < 2; i++) {
        shm_dir_t *d = &t->dir[i];
        utc__spin_lock(&d->rx_lock);
        shm_tagq_t *q, *tmp;
        HASH_ITER(hh, d->tagqs, q, tmp)
            end_posted(d, q, status);
        end_posted(d, &d->anyq, status);
        utc__spin_unlock(&d->rx_lock);
        utc__event_signal(&d->rx_event, &d->rx_sleepers);
        if (failed_end != i) { /* dir i is read by the end that failed */
            release_writers(d, status);
            utc__event_signal(&d->tx_event, &d->tx_sleepers);
        }
    }
}

static void shm_shutdown(utc__transport_t *tp, utc_status_t status)
{
    shm_transport_t *t = (shm_transport_t *)tp;
    for (int i = 0; i < 2; i++) {
        /* release: pairs with the acquire in closed_status */
        atomic_store_explicit(&t->dir[i].closed, (int)status, memory_order_release);
        close_sweep(&t->dir[i]);
    }
}

static bool shm_progress(utc__transport_t *tp, utc_request_t *req)
{
    shm_dir_t *d = dir_of(tp, req);
    unsigned st = utc__req_state(req);
    if (st == UTC__REQ_DONE)
        return true;
    if (req->op == UTC__OP_SEND) {
        utc__fail_info_t f;
        if (closed_status(d))
            close_sweep(d); /* a large write pushed after the shutdown's sweep */
        /* a write this look misses is released by shm_fail, which runs after the mark is
         * published and wakes the writers */
        else if (utc__transport_fail_info(tp, &f) && f.end != req->dir) /* its reader's end */
            release_writers(d, f.why); /* pushed after shm_fail's release */
        else if (atomic_load(&d->backlog_n))
            flush(d);
        return utc__req_state(req) == UTC__REQ_DONE;
    }
    if (st == UTC__REQ_PENDING) {
        bool woke = false;
        size_t freed = 0;
        utc__spin_lock(&d->rx_lock);
        utc_status_t cl = closed_status(d);
        /* relaxed: only changed under the lock we hold */
        if (atomic_load_explicit(&req->state, memory_order_relaxed) != UTC__REQ_PENDING) {
        } else if (cl || utc__transport_fail_status(tp)) {
            if (req->posted)
                posted_remove(d, req);
            utc__req_finish(req, cl ? cl : utc__transport_fail_status(tp));
        } else {
            freed = req->posted ? drain(d, req, &woke) : post_read(d, req, &woke, true);
        }
        utc__spin_unlock(&d->rx_lock);
        after_read(d, freed, woke);
        st = utc__req_state(req);
    }
    if (st == UTC__REQ_MATCHED) {
        utc__spin_lock(&d->rx_lock);
        bool mine = matched_claim(d, req);
        utc__spin_unlock(&d->rx_lock);
        if (mine)
            finish_matched(d, req);
        st = utc__req_state(req); /* else another thread copies it: DONE soon */
    }
    /* relaxed: a hint; copy_matched looks under the lock */
    if (atomic_load_explicit(&d->nmatched, memory_order_relaxed))
        copy_matched(d);
    return st == UTC__REQ_DONE;
}

/* A reader's reasons to look again: its read was served, an event, a message at head. */
static bool rx_ready(shm_dir_t *d, utc_request_t *req, unsigned ev)
{
    return utc__req_state(req) != UTC__REQ_PENDING ||
           atomic_load_explicit(&d->rx_event, memory_order_relaxed) != ev || ring_ready(d);
}

/* Readers: spin on the ring head (no shared counter bounces between writer and reader),
 * then count themselves asleep and sleep on rx_event, which a publisher bumps only when
 * someone sleeps. Writers: spin, then sleep, on tx_event. */
static bool shm_wait(utc__transport_t *tp, utc_request_t *req, double timeout_s)
{
    shm_dir_t *d = dir_of(tp, req);
    double deadline = utc__deadline(timeout_s);
    if (req->op == UTC__OP_SEND) {
        for (;;) {
            /* seq_cst, read before looking: any change after the look alters it */
            unsigned old = atomic_load(&d->tx_event);
            if (shm_progress(tp, req))
                return true;
            if (!utc__event_wait(&d->tx_event, old, &d->tx_sleepers, deadline))
                return shm_progress(tp, req);
        }
    }
    for (;;) {
        unsigned ev = atomic_load(&d->rx_event); /* seq_cst: as above */
        if (shm_progress(tp, req))
            return true;
        double t0 = 0;
        for (unsigned i = 0; !rx_ready(d, req, ev); i++) {
            if (i < 256) {
                utc__cpu_relax();
                continue;
            }
            double now = utc_wtime();
            if (!t0)
                t0 = now;
            if (deadline >= 0 && now >= deadline)
                return shm_progress(tp, req);
            if (now - t0 < 50e-6) {
                sched_yield();
                continue;
            }
            /* sleep: count ourselves, then a seq_cst fence (pairs with wake_readers) and
             * one more look before the futex compares rx_event with ev */
            atomic_fetch_add(&d->rx_sleepers, 1);
            atomic_thread_fence(memory_order_seq_cst);
            if (!rx_ready(d, req, ev)) {
                if (deadline < 0)
                    utc__futex_wait(&d->rx_event, ev);
                else if (deadline > now)
                    utc__futex_wait_timeout(&d->rx_event, ev, deadline - now);
            }
            atomic_fetch_sub(&d->rx_sleepers, 1);
            t0 = 0;
            i = 0;
        }
    }
}

static bool shm_cancel(utc__transport_t *tp, utc_request_t *req)
{
    shm_dir_t *d = dir_of(tp, req);
    if (req->op != UTC__OP_RECV)
        return false;
    utc__spin_lock(&d->rx_lock);
    /* relaxed: only changed under the lock we hold; an unposted read has nothing to undo */
    bool removed = atomic_load_explicit(&req->state, memory_order_relaxed) == UTC__REQ_PENDING &&
                   (!req->posted || posted_remove(d, req));
    utc__spin_unlock(&d->rx_lock);
    return removed;
}

/*
 * Under rx_lock: the message that a read of `tag` (UTC_ANY_TAG: any) started now would get,
 * if one is there and no read started earlier waits for it: its size and tag. Messages of
 * other tags at the ring's head move to their queues (or to the reads waiting for them), as
 * a read's pass would move them. *freed counts the slots freed.
 */
static bool probe_locked(shm_dir_t *d, int tag, size_t *size, int *got, size_t *freed,
                         bool *woke)
{
    for (;;) {
        shm_tagq_t *q = tagq_find(d, tag);
        if (q && q->phead)
            return false; /* earlier reads take the next message */
        shm_msg_t *msg = tag == UTC_ANY_TAG ? oldest_queued(d, &q) : q ? q->uhead : NULL;
        if (msg) {
            *size = msg->d.size;
            *got = q->tag;
            return true;
        }
        utc__msg_desc_t m;
        shm_slot_t *s = ring_peek(d, &m);
        if (!s)
            return false;
        shm_tagq_t *mine = tagq_find(d, s->tag);
        if ((tag == UTC_ANY_TAG ? s->tag >= 0 : s->tag == tag) && !(mine && mine->phead) &&
            !d->anyq.phead) {
            *size = m.size;
            *got = s->tag;
            return true;
        }
        if (!dispatch(d, s->tag, &m, NULL, false, woke))
            return false; /* no memory to queue it: it stays at the head */
        ring_release(d, s);
        (*freed)++;
    }
}

static utc_status_t shm_probe(utc__transport_t *tp, utc_request_t *req)
{
    shm_dir_t *d = dir_of(tp, req);
    bool woke = false, found;
    size_t freed = 0, size = 0;
    int got = req->tag;
    utc__spin_lock(&d->rx_lock);
    utc_status_t cl = closed_status(d);
    found = !cl && probe_locked(d, req->tag, &size, &got, &freed, &woke);
    utc__spin_unlock(&d->rx_lock);
    after_read(d, freed, woke);
    if (found) {
        req->received = size;
        req->tag = got;
        return UTC_OK;
    }
    if (cl)
        return cl;
    if (d->eos) /* set under rx_lock before any look that could miss a message */
        return UTC_ERR_CLOSED;
    utc_status_t why = utc__transport_fail_status(tp);
    if (why)
        return why;
    return UTC_ERR_TIMEOUT;
}

/* The end of stream goes through the ring as a message of its own, behind everything the
 * writers of `dir` started before it. */
static utc_status_t shm_close(utc__transport_t *tp, int dir, int peer)
{
    utc_request_t req;
    utc__req_prepare(&req, UTC__OP_SEND, dir, UTC__TAG_EOS, peer, tp);
    utc_status_t rc = shm_start(tp, &req);
    if (rc == UTC_OK && !shm_wait(tp, &req, -1))
        rc = UTC_ERR_INTERNAL;
    return rc == UTC_OK ? req.status : rc;
}

static void shm_destroy(utc__transport_t *tp)
{
    shm_transport_t *t = (shm_transport_t *)tp;
    for (int i = 0; i < 2; i++) {
        shm_dir_t *d = &t->dir[i];
        shm_tagq_t *q, *tmp;
        HASH_ITER(hh, d->tagqs, q, tmp) {
            while (q->uhead) {
                shm_msg_t *msg = q->uhead;
                q->uhead = msg->next;
                drop_message(&msg->d, UTC_ERR_CANCELED);
                free(msg);
            }
            for (utc_request_t *r = q->phead, *next; r; r = next) {
                next = r->next;
                utc__req_finish(r, UTC_ERR_CANCELED);
            }
            HASH_DEL(d->tagqs, q);
            free(q);
        }
        for (utc_request_t *r = d->anyq.phead, *next; r; r = next) {
            next = r->next;
            utc__req_finish(r, UTC_ERR_CANCELED);
        }
        utc__msg_desc_t m;
        shm_slot_t *s;
        while ((s = ring_peek(d, &m))) {
            drop_message(&m, UTC_ERR_CANCELED);
            ring_release(d, s);
        }
        for (utc_request_t *r = d->bhead, *next; r; r = next) {
            next = r->next;
            utc__req_finish(r, UTC_ERR_CANCELED);
        }
        if (d->full.slots)
            munmap(d->full.slots, d->full.bytes);
    }
    free(t);
}

/* Nothing to tell: both ends are in this process, where the failure is marked already
 * (the conduit marks the transport and calls its fail op, which ends the pending reads). */
static void shm_notify_failed(utc__transport_t *tp, int end, int rank, utc_status_t rc)
{
    (void)tp, (void)end, (void)rank, (void)rc;
}

static const utc__transport_ops_t shm_ops = {
    .name = "in-process",
    .start = shm_start,
    .send_now = utc__transport_no_send_now,
    .progress = shm_progress,
    .wait = shm_wait,
    .cancel = shm_cancel,
    .probe = shm_probe,
    .close = shm_close,
    .shutdown = shm_shutdown,
    .fail = shm_fail,
    .notify_failed = shm_notify_failed,
    .destroy = shm_destroy,
};

/* On the rank that holds both ends (not collective): the rings of args->opts. */
static utc_status_t shm_create(const utc__transport_args_t *args, utc__transport_t **out)
{
    const utc_conduit_options_t *opts = args->opts;
    size_t size = (sizeof(shm_transport_t) + 63) & ~(size_t)63;
    shm_transport_t *t = aligned_alloc(64, size);
    if (!t)
        return utc__error(UTC_ERR_NO_MEMORY, "utc_conduit_create: no memory for the rings");
    memset(t, 0, size);
    t->base.ops = &shm_ops;
    t->base.conduit_id = args->conduit_id;
    t->base.kind = UTC_CONDUIT_INPROC;
    size_t nslots = opts->ring_slots;
    size_t stride = (SLOT_HDR + opts->inline_max + 63) & ~(size_t)63;
    for (int i = 0; i < 2; i++) {
        shm_dir_t *d = &t->dir[i];
        d->inline_max = opts->inline_max;
        d->small.slots = d->small_slots;
        d->small.mask = (nslots < SMALL_SLOTS ? nslots : SMALL_SLOTS) - 1;
        d->small.stride = stride < SMALL_STRIDE ? stride : SMALL_STRIDE;
        d->small.cap = d->small.stride - SLOT_HDR;
        /* the full ring is mapped when first needed; none when the small one is as large */
        d->full.mask = nslots - 1;
        d->full.stride = stride;
        d->full.cap = stride - SLOT_HDR;
        if (nslots > d->small.mask + 1 || stride > d->small.stride)
            d->full.bytes = (nslots * stride + 4095) & ~(size_t)4095;
        ring_reset(&d->small, 0);
        atomic_init(&d->ring, &d->small);
        atomic_init(&d->tail, 0);
        atomic_init(&d->head, 0);
        d->shrink_after = SHRINK_AFTER;
        d->shrunk_head = SIZE_MAX; /* never moved back yet */
        atomic_init(&d->shrink_wanted, false);
        atomic_init(&d->backlog_n, 0);
        atomic_init(&d->rx_event, 0);
        atomic_init(&d->rx_sleepers, 0);
        atomic_init(&d->tx_event, 0);
        atomic_init(&d->tx_sleepers, 0);
        atomic_init(&d->nmatched, 0);
        atomic_init(&d->closed, 0);
        d->tx_lock = (utc__spinlock_t)UTC__SPINLOCK_INIT;
        d->rx_lock = (utc__spinlock_t)UTC__SPINLOCK_INIT;
    }
    *out = &t->base;
    return UTC_OK;
}

static bool shm_reaches(int a, int b) { return a == b; }

const utc__transport_component_t utc__inproc_component = {
    .name = "inproc",
    .kind = UTC_CONDUIT_INPROC,
    .reaches = shm_reaches,
    .collective = false,
    .create = shm_create,
    .req_priv = 0, /* its state of a request is in the request's common part (m, posted) */
};
