/*
 * The node engine (node_engine.c): one per process, the memory that the ranks of one host
 * share for their conduits. node_transport.c builds the transport on it; nothing else
 * uses this header.
 *
 * For every ordered pair of ranks on the host (writer -> reader) there is one FIFO of
 * records, shared by all the conduits between them, in POSIX shared memory that the writer
 * creates and the reader maps. See node_engine.c for the layout and the protocols.
 */
#ifndef UTC_CONDUITS_NODE_ENGINE_H
#define UTC_CONDUITS_NODE_ENGINE_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "utc_internal.h"
#include "service/request.h"

/* Records are laid out on cache lines: an 8-byte message is one line. */
#define NODE_ALIGN 64

/* What a record is. */
enum {
    NODE_REC_PAD = 1, /* filler up to the ring's end: skipped */
    NODE_REC_MSG,     /* a whole message, its bytes after the header */
    NODE_REC_FIRST,   /* the first part of a pipelined message (size: the whole) */
    NODE_REC_CHUNK,   /* the next part of the pipelined message in progress */
    NODE_REC_CMA,     /* a descriptor: the reader copies from the writer (node_cma_t) */
    NODE_REC_EOS,     /* the writers of `dir` closed their side (utc_conduit_close) */
    NODE_REC_CTL,     /* a task at one end failed (node_ctl_msg_t) */
    NODE_REC_SWITCH,  /* the writer moved to a bigger ring (node_switch_t) */
    NODE_REC_GONE     /* the conduit was destroyed on the writer's rank: what is written to
                       * that rank on it is dropped there, unread */
};

/* A record's header, in the ring. `seq` is written last (release): the record's absolute
 * position in the FIFO + 1, so a stale word from an earlier lap never reads as ready. */
typedef struct node_rec {
    _Atomic uint64_t seq;
    uint32_t len;    /* bytes of the record, header included, a multiple of NODE_ALIGN */
    uint8_t kind;
    uint8_t dir;
    uint16_t flags;
    int32_t cid;     /* the conduit's id */
    uint32_t sub;    /* which of the conduit's node transports (a shared conduit has one
                      * per pair of members) */
    int32_t tag;
    uint32_t nbytes; /* payload bytes in this record */
    uint64_t size;   /* the message's size */
} node_rec_t;

#define NODE_REC_HDR sizeof(node_rec_t)

static inline unsigned char *node_rec_data(node_rec_t *r) { return (unsigned char *)(r + 1); }

/* A CMA descriptor's payload: where the bytes are in the writer, and its slot. */
typedef struct node_cma {
    uint64_t addr;
    uint32_t slot, gen;
} node_cma_t;

/* A failure notice's payload. */
typedef struct node_ctl_msg {
    int32_t end, rank, rc;
} node_ctl_msg_t;

/* CMA slots of one writer to one reader: a word each, gen << 2 | state. */
#define NODE_SLOTS 64
enum { SLOT_REVOKED = 0, SLOT_OFFERED = 1, SLOT_COPYING = 2, SLOT_DONE = 3 };
#define SLOT_WORD(gen, st) (((gen) << 2) | (st))

/*
 * The shared head of a FIFO (writer W -> reader R), at the start of the segment that W
 * creates first; W's later rings are segments of their own.
 */
typedef struct node_ctl {
    uint32_t magic;
    int32_t writer;        /* W's world rank */
    int32_t writer_pid;
    int32_t ring0;         /* bytes of the first ring (after this page) */
    uint64_t probe_word;   /* CMA probe: R reads it from W at probe_addr */
    uint64_t probe_addr;
    /* R: position consumed (absolute); W reads it when its ring looks full */
    alignas(64) _Atomic uint64_t head;
    /* R's bell for W: bumped (when R sleeps) by W after a record, a ring slot freed or a
     * CMA copy done, and by R's own threads that complete each other's operations */
    alignas(64) atomic_uint bell;
    atomic_uint sleepers;
    /* W's CMA sends, claimed by R while it copies */
    alignas(64) atomic_uint slot[NODE_SLOTS];
} node_ctl_t;

/* The pipelined message being received on a pair: where its chunks go. */
typedef struct node_asm {
    bool on;
    void *dst;             /* NULL: drop the chunks */
    size_t size, got;
    void *target;          /* node_transport.c's: a read or a queued message */
    bool to_read;          /* target is a read (else a queued message) */
    uint64_t key;
} node_asm_t;

typedef struct node_pair {
    int peer;              /* world rank */
    pid_t peer_pid;
    atomic_bool dead;      /* the peer's process is gone */
    _Atomic double next_alive; /* utc_wtime of the next liveness look */
    /* ---- outgoing: this rank writes ---- */
    alignas(64) utc__olock_t tx_lock; /* owner lock (base/sync.h): a rank's one
                                       * writing thread takes it with plain stores */
    node_ctl_t *octl;      /* mine: created by this rank */
    unsigned char *oring;
    size_t ocap;
    uint64_t obase, tail;  /* absolute position of ring offset 0; next record */
    uint64_t ohead_seen;   /* the reader's head, last read */
    unsigned ogen;         /* the ring's generation (segment name) */
    /* rings left by switches the reader has not passed yet (its head reaches `until`),
     * oldest first; their generation is ogen - nold + i + 1's predecessor */
    struct {
        unsigned char *ring;
        size_t bytes;
        uint64_t until;
    } old[8];
    int nold;
    unsigned unlinked_gen; /* highest generation whose name is gone */
    utc_request_t *txq, *txq_tail; /* sends waiting for room, oldest first */
    atomic_bool txq_waiting; /* txq holds a send: stored under tx_lock after each change,
                              * read without it (node_transport.c's flush_now) */
    uint64_t slot_busy;    /* CMA slots in use (bitmap) */
    uint32_t slot_gen[NODE_SLOTS];
    /* ---- incoming: the peer writes ---- */
    alignas(64) utc__olock_t rx_lock; /* the drainer's; an owner lock, as tx_lock */
    node_ctl_t *ictl;      /* the peer's, mapped */
    size_t ictl_bytes;
    size_t ictl0_ring;     /* bytes of the peer's first ring (after its control page) */
    unsigned char *iring;
    size_t icap;
    uint64_t ibase, head;
    node_asm_t as;
    uint64_t last_key;     /* node_transport.c's: the transport the last record went to */
    void *last_tp;
    size_t obytes_seg0;    /* size of my first segment (ctl + ring0) */
} node_pair_t;

/* ---- set-up and life ---- */

/* Collective over the world, once (later calls return the first one's answer at once): map
 * the FIFOs between this rank and every other rank of its host, probe cross-memory attach.
 * UTC_OK when the node transport can be used (the same answer on every rank); else an
 * error (logged) and conduits between ranks use MPI. */
utc_status_t utc__node_engine_setup(void);
/* Unmap the host's shared memory and remove names left behind (utc_finalize, after the
 * last conduit: the component's finalize). A later set-up starts afresh. */
void utc__node_engine_finalize(void);

/* The pairs by world rank while the engine is set up (else NULL), and their count: read
 * through utc__node_pair. */
extern node_pair_t **utc__node_by_rank;
extern int utc__node_nranks;

/* The pair with world rank `peer` (on this host), or NULL. Inline: every poll asks. */
static inline node_pair_t *utc__node_pair(int peer)
{
    node_pair_t **by = utc__node_by_rank;
    return by && (unsigned)peer < (unsigned)utc__node_nranks ? by[peer] : NULL;
}
/* Large messages go by cross-memory attach: the kernel allows it (probed at set-up) and
 * UTC_NODE_CMA=1, or unset (auto) with more ranks on the host than CPUs; UTC_NODE_CMA=0:
 * never. Else they are pipelined through the ring. */
bool utc__node_cma_on(void);

/* ---- writing (under p->tx_lock) ---- */

/* Claim room for a record of `len` bytes (a multiple of NODE_ALIGN) in p's ring, growing
 * the ring when it is full and may grow (`may_grow`). NULL: no room now. */
node_rec_t *utc__node_claim(node_pair_t *p, size_t len, bool may_grow);
/* Publish the claimed record (its fields filled in), then wake the reader if it sleeps. */
void utc__node_publish(node_pair_t *p, node_rec_t *r, size_t len, int kind);
/* Bytes a record may carry now without waiting (0: none). */
size_t utc__node_room(node_pair_t *p);

/* ---- reading ---- */

/* Take p's records that have come (if no other thread is at it), dispatching them.
 * True if it took any. */
bool utc__node_drain(node_pair_t *p);

/* utc__node_drain of every pair of this rank: what a waiter does now and then, so that a
 * writer blocked towards this rank goes on while this rank waits for another peer (as MPI
 * takes every peer's messages while it waits; else a cycle of full rings deadlocks). */
void utc__node_drain_all(void);
/* The same, stopping after the record that completed request `until` (NULL: never): the
 * records after it stay for the next drain, in order. */
bool utc__node_drain_until(node_pair_t *p, utc_request_t *until);

/* The transport's part of a drain: called under p->rx_lock for each record. */
void utc__node_dispatch(node_pair_t *p, node_rec_t *r);
/* A pipelined message's last chunk came (p->as is still filled in; under p->rx_lock). */
void utc__node_assembled(node_pair_t *p);

/* ---- waking and sleeping ---- */

/* Wake this process's threads that sleep on peer p (after completing their operation). */
void utc__node_wake_local(node_pair_t *p);
/* Wake the peer's threads that sleep on this rank (after freeing room or a CMA copy). */
void utc__node_wake_peer(node_pair_t *p);
/* The bell that this rank's waiters on p sleep on. */
static inline atomic_uint *utc__node_bell(node_pair_t *p) { return &p->ictl->bell; }
/* Sleep on p's bell while it reads `seen`, at most until `deadline` (< 0: none) and at
 * most one slice (the caller looks again). `ready` (may be NULL) is asked once more after
 * this thread counted itself asleep. */
void utc__node_sleep(node_pair_t *p, unsigned seen, double deadline, bool (*ready)(void *),
                     void *arg);
/* Whether the peer's process still lives (looked at most every 50 ms; a dead one is
 * marked for good). */
bool utc__node_alive(node_pair_t *p);

#endif /* UTC_CONDUITS_NODE_ENGINE_H */
