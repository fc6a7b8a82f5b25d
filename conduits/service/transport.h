/*
 * Conduit service: the transport interface that every transport (shm/: in-process, mpi/:
 * between ranks, and the shared conduit's transport built of them) implements and the
 * conduit drives, and the component records through which the conduit finds and creates
 * them (conduits/components.c). A transport knows requests, waiting and what its creator
 * tells it; it never calls back into the conduit object.
 */
#ifndef UTC_CONDUITS_TRANSPORT_H
#define UTC_CONDUITS_TRANSPORT_H

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <utc/conduit.h>

#include "base/wait_hook.h"
#include "service/request.h"

/*
 * A transport: the in-process rings, MPI, ... Ops tables are static const, with every op
 * present (none is NULL: an op with nothing to do says so in a function of its own), and
 * checked once at creation (utc__transport_create, with utc__transport_ops_ok).
 */
typedef struct utc__transport_ops {
    const char *name;
    /* True when a read that `shutdown` ended is never touched by the transport again (its
     * `destroy` included): such reads may outlive the transport, as the express path's
     * solo requests do (conduits/async.c). */
    bool solo_reads;
    /* Start `req` (send or receive). Never blocks for long. UTC_OK: the request is in
     * flight or already complete (state DONE with its status); an error: not started. */
    utc_status_t (*start)(utc__transport_t *tp, utc_request_t *req);
    /* A write's fast path: send `req` (a plain write, not owned) at once if it can be
     * sent whole now without queueing, and keep no reference to it (it may live on the
     * caller's stack). True when sent (the caller completes the write itself); false with
     * nothing done, and the caller starts it with `start`. Transports without such a path
     * use utc__transport_no_send_now. */
    bool (*send_now)(utc__transport_t *tp, utc_request_t *req);
    /* Make progress without blocking; true once the request is DONE. */
    bool (*progress)(utc__transport_t *tp, utc_request_t *req);
    /* Block (sleeping after a short spin) until the request is DONE or `timeout_s`
     * passes (< 0: no limit). True when DONE. */
    bool (*wait)(utc__transport_t *tp, utc_request_t *req, double timeout_s);
    /* Withdraw a receive that has no message yet. True if withdrawn; false if a message
     * was matched to it meanwhile (then it will complete: wait for it). */
    bool (*cancel)(utc__transport_t *tp, utc_request_t *req);
    /* Without blocking, look for the message a read like `req` (its direction, peer and
     * tag, or UTC_ANY_TAG) started now would get: UTC_OK with req->received its size and
     * req->tag its tag; UTC_ERR_TIMEOUT when there is none (yet); the transport's close or
     * failure status when none will come. Takes nothing: the message stays for a read. */
    utc_status_t (*probe)(utc__transport_t *tp, utc_request_t *req);
    /* The writers of direction `dir` on this rank are done: after their messages to world
     * rank `peer` (in-process: this rank), an end of stream, so that reads there with
     * nothing left end with UTC_ERR_CLOSED. Blocks until it is sent. (The shared
     * transport: `peer` is the closing writer's member index, and its stream to every
     * reader ends.) */
    utc_status_t (*close)(utc__transport_t *tp, int dir, int peer);
    /* End every operation pending on the transport with `status` (its blocked callers
     * return, its requests complete), wake every waiter, and from then on finish every
     * operation started with `status` at once. Does not free anything: requests may still
     * be tested and waited for. */
    void (*shutdown)(utc__transport_t *tp, utc_status_t status);
    /* A task at one end failed: end every read pending on the transport (and writes
     * waiting for a reader) with `status`, and wake their waiters. Messages stay. The
     * transport's `failed` mark is already set. */
    void (*fail)(utc__transport_t *tp, utc_status_t status);
    /* Tell the other ranks of the transport that end `end`'s task failed on world rank
     * `rank` with `rc` (this rank, or one whose notice this rank passes on: the shared
     * transport). A transport whose ends are all in this process has nothing to tell. */
    void (*notify_failed)(utc__transport_t *tp, int end, int rank, utc_status_t rc);
    /* Free the transport (once no operation refers to it): drops queued messages. */
    void (*destroy)(utc__transport_t *tp);
} utc__transport_ops_t;

/*
 * A failure record: a task at one end failed (or is destroyed), on which world rank, with
 * which status. Set from any thread, without a lock: the first caller claims it (state
 * NONE -> CLAIMING), writes the fields, then publishes it (PUBLISHED, release); a reader
 * loads the state with acquire and reads the fields only when PUBLISHED, so it sees one
 * caller's whole record. A second caller, while it is claimed or published, changes
 * nothing. Cleared (PUBLISHED -> NONE) when the failed task runs again.
 */
enum { UTC__FAIL_NONE = 0, UTC__FAIL_CLAIMING = 1, UTC__FAIL_PUBLISHED = 2 };

typedef struct utc__fail_record {
    atomic_int state;            /* UTC__FAIL_* */
    atomic_int end, rank, rc;    /* which end's task, on which world rank, with which status */
    atomic_int why;              /* what operations end with: UTC_ERR_PEER_FAILED (the task's
                                  * run failed) or UTC_ERR_CANCELED (the task is destroyed) */
} utc__fail_record_t;

/* A published record's fields, as one value. */
typedef struct utc__fail_info {
    int end, rank, rc;
    utc_status_t why;
} utc__fail_info_t;

/* Claim, write and publish record `f`. False, with nothing changed, when another caller
 * has claimed it (and published it or is about to). */
static inline bool utc__fail_record_set(utc__fail_record_t *f, int end, int rank, int rc,
                                        utc_status_t why)
{
    int expected = UTC__FAIL_NONE;
    if (!atomic_compare_exchange_strong(&f->state, &expected, UTC__FAIL_CLAIMING))
        return false;
    /* relaxed: only the claimer writes them, and the release store below publishes them */
    atomic_store_explicit(&f->end, end, memory_order_relaxed);
    atomic_store_explicit(&f->rank, rank, memory_order_relaxed);
    atomic_store_explicit(&f->rc, rc, memory_order_relaxed);
    atomic_store_explicit(&f->why, (int)why, memory_order_relaxed);
    /* release: pairs with the acquire in utc__fail_record_get */
    atomic_store_explicit(&f->state, UTC__FAIL_PUBLISHED, memory_order_release);
    return true;
}

/* True, with the fields in *out (when out is not NULL), when `f` is published. */
static inline bool utc__fail_record_get(utc__fail_record_t *f, utc__fail_info_t *out)
{
    /* acquire: pairs with the release in utc__fail_record_set: the fields are its writer's */
    if (atomic_load_explicit(&f->state, memory_order_acquire) != UTC__FAIL_PUBLISHED)
        return false;
    if (out) /* relaxed: ordered by the acquire above */
        *out = (utc__fail_info_t){atomic_load_explicit(&f->end, memory_order_relaxed),
                                  atomic_load_explicit(&f->rank, memory_order_relaxed),
                                  atomic_load_explicit(&f->rc, memory_order_relaxed),
                                  atomic_load_explicit(&f->why, memory_order_relaxed)};
    return true;
}

/* Clear a published record (a claim in progress stays: its writer publishes it). */
static inline void utc__fail_record_clear(utc__fail_record_t *f)
{
    int expected = UTC__FAIL_PUBLISHED;
    atomic_compare_exchange_strong(&f->state, &expected, UTC__FAIL_NONE);
}

/* send_now of a transport that has no fast path: always false. */
bool utc__transport_no_send_now(utc__transport_t *tp, utc_request_t *req);

/* Root object of a transport: derived ones put it first, named base. */
struct utc__transport {
    const utc__transport_ops_t *ops;
    int conduit_id;        /* for messages */
    utc_conduit_transport_t kind;
    /* The mark: a task at one end failed or is destroyed (utc__transport_mark_failed).
     * Operations end with its `why` while it is published; cleared by the conduit when a
     * run of that task is queued here. */
    utc__fail_record_t fail;
    /* A failure an inner transport saw, taken as this one's (the shared transport's
     * pairs): operations end with it too, and messages name it, but it is no mark (a
     * failure here still marks the transport and tells the other ranks). Never cleared. */
    utc__fail_record_t seen;
    /* A transport that wraps another (the device layer, conduits/device/): the wrapped
     * one, whose failure mark follows this one's (set by this one's `fail`, cleared with
     * it: failures.c); NULL for every other transport. */
    utc__transport_t *inner;
    /* The host transport of a device conduit (set by the device layer when it wraps it):
     * the top two tags are that layer's own, and a close does not end their stream
     * (utc__transport_tag_spared). False for every other transport. */
    bool device_tags;
};

/* Whether messages of `tag` on `tp` are outside the stream a close ends: the device
 * layer's own tags on a device conduit's host transport (a staged write's chunks, and a
 * reader's answers in the other direction, may follow their direction's end of stream,
 * sent by a write or read begun before it). The transport counts no such message in an
 * end of stream and ends no read of such a tag with UTC_ERR_CLOSED. */
static inline bool utc__transport_tag_spared(const utc__transport_t *tp, int tag)
{
    return tp->device_tags && tag > UTC_CONDUIT_DEVICE_TAG_MAX;
}

/* The `rc` of a failure record when no run failed: the peer's process is gone, or what it
 * sent can no longer be received (why = UTC_ERR_PEER_FAILED). Not a UTC status. */
#define UTC__FAIL_RC_GONE INT_MIN

/* Mark `tp` failed: end `end`'s task on world rank `rank` failed with `rc` (why =
 * UTC_ERR_PEER_FAILED; rc UTC__FAIL_RC_GONE: its process is gone) or is destroyed (why =
 * UTC_ERR_CANCELED). False if a mark is there already (then nothing changes). Takes no
 * lock. */
static inline bool utc__transport_mark_failed(utc__transport_t *tp, int end, int rank, int rc,
                                              utc_status_t why)
{
    return utc__fail_record_set(&tp->fail, end, rank, rc, why);
}

/* True when `tp` is marked failed (its mark is published). */
static inline bool utc__transport_marked(utc__transport_t *tp)
{
    return utc__fail_record_get(&tp->fail, NULL);
}

/* What operations on `tp` end with because of a failure (its mark's, else what it has
 * seen), or UTC_OK: one acquire load on the usual path. */
static inline utc_status_t utc__transport_fail_status(utc__transport_t *tp)
{
    utc__fail_info_t f;
    if (utc__fail_record_get(&tp->fail, &f) || utc__fail_record_get(&tp->seen, &f))
        return f.why;
    return UTC_OK;
}

/* The failure behind utc__transport_fail_status, for a message: true with *out. */
static inline bool utc__transport_fail_info(utc__transport_t *tp, utc__fail_info_t *out)
{
    return utc__fail_record_get(&tp->fail, out) || utc__fail_record_get(&tp->seen, out);
}

/* True when every op of `ops` is there (the name and the ten functions). */
bool utc__transport_ops_ok(const utc__transport_ops_t *ops);

/* ---- transport components ----
 *
 * Each transport is a folder under conduits/ with one component record; the component
 * table (conduits/components.c) lists them, most specific first, and one function picks
 * the component for a pair of ranks (utc__transport_pick). Nothing else names a transport.
 */

/* What a component's create gets. */
typedef struct utc__transport_args {
    int conduit_id;
    const utc_conduit_options_t *opts;
    const int *members;    /* the world ranks that take part, ascending (this one included
                            * when it takes part) */
    int nmembers;
} utc__transport_args_t;

typedef struct utc__transport_component {
    const char *name;                    /* "inproc", "node", "mpi": logs, trace, stats */
    utc_conduit_transport_t kind;
    /* True when the component carries messages between world ranks `a` and `b` (a == b:
     * within one rank). Every rank gives the same answer for the same pair (it is asked
     * about pairs of other ranks too, to know which collective creates to enter). */
    bool (*reaches)(int a, int b);
    /* Create the transport of conduit `args->conduit_id` on this rank. A collective
     * component's create is entered by every rank of the world, members or not (*out is
     * NULL on the others); any other's only on the ranks that need it. A collective
     * component that cannot be used in this run (its set-up refused: no shared memory,
     * say) returns UTC_ERR_UNSUPPORTED on every rank alike: it is then switched off (the
     * pick skips it, for this conduit and every later one) and the pairs pick again. */
    bool collective;
    utc_status_t (*create)(const utc__transport_args_t *args, utc__transport_t **out);
    size_t req_priv;                     /* bytes of a request's private part it uses */
    /* At utc_finalize, once every conduit is gone: give back what the component holds for
     * the process (mapped memory, say). NULL: nothing to give back. */
    void (*finalize)(void);
} utc__transport_component_t;

/* The components, each defined in its transport's folder. */
extern const utc__transport_component_t utc__inproc_component; /* conduits/shm/ */
extern const utc__transport_component_t utc__node_component;   /* conduits/node/ */
extern const utc__transport_component_t utc__mpi_component;    /* conduits/mpi/ */

/* The component table (conduits/components.c): every transport, most specific first. A
 * conduit holds at most one transport of each, by its index here. */
#define UTC__TRANSPORT_MAX 8
extern const utc__transport_component_t *const utc__transport_components[];
extern const int utc__transport_ncomponents;

/* The index in the component table of the transport between world ranks `a` and `b` of a
 * conduit with options `opts`: the first component that reaches the pair and is not
 * switched off (opts->transport == UTC_CONDUIT_MPI, resolved by utc__transport_choice,
 * leaves only MPI between two ranks; a component whose set-up was refused is off for the
 * rest of the run: utc__transport_create). The same on every rank. -1: none reaches it. */
int utc__transport_pick(int a, int b, const utc_conduit_options_t *opts);

/* Create component `comp`'s transport for `args` (its create: collective or not, as the
 * record says) and check its ops table; UTC_ERR_INTERNAL, with the message, for a
 * component whose table or request part is not complete. *out is NULL on a rank that is
 * no member of a collective component's transport. UTC_ERR_UNSUPPORTED (on every rank
 * alike) when a collective component's create refused: the component is off from now on
 * (utc__transport_off), and the caller asks the pick again for the pairs it gave it. */
utc_status_t utc__transport_create(int comp, const utc__transport_args_t *args,
                                   utc__transport_t **out);

/* True when component `comp` is switched off for the rest of the run (its create returned
 * UTC_ERR_UNSUPPORTED: utc__transport_create). */
bool utc__transport_off(int comp);

/* At utc_finalize, after the last conduit: every component's finalize, and the components
 * switched on again (for a next utc_init). */
void utc__transport_components_finalize(void);

/* The transport a creation asked for, the option (opts->transport) winning over the
 * environment variable UTC_TRANSPORT ("auto" or "mpi"): *out is UTC_CONDUIT_MPI (MPI
 * between every two ranks), UTC_CONDUIT_NODE (asked for by the option) or UTC_CONDUIT_NONE
 * (automatic). UTC_ERR_INVALID_ARG, with a message naming `fn`, the option or the
 * variable and their values, for anything else. */
utc_status_t utc__transport_choice(const utc_conduit_options_t *opts, const char *fn,
                                   utc_conduit_transport_t *out);

/* ---- the device layer (conduits/device/; without CUDA a small file that refuses) ---- */

/* The device layer's own tags on a device conduit's host transports: the reader's acks
 * and "go" to the writer, and the staged path's chunks. Users' tags stay below them
 * (UTC_CONDUIT_DEVICE_TAG_MAX). */
#define UTC__DEVICE_TAG_CTL (UTC_CONDUIT_TAG_MAX - 1)
#define UTC__DEVICE_TAG_DATA UTC_CONDUIT_TAG_MAX

/* Whether a device conduit can be made on this rank: UTC_OK, or UTC_ERR_NO_GPU_SUPPORT
 * with the reason (a build without CUDA, no usable device) in the last error, or
 * UTC_ERR_INVALID_ARG for a bad device setting of its environment (UTC_DEVICE_*). Starts
 * CUDA. Not collective (the caller agrees with the other ranks). */
utc_status_t utc__device_available(void);

/* Wrap `inner`, the transport that carries the pair's host messages (created by its
 * component for `args`), into a device transport: every message becomes a device message
 * (a descriptor on the inner transport with the user's tag, then the data by the path
 * between the two ranks: handover in-process, CUDA IPC on one host, staged otherwise).
 * On success *out owns inner (its destroy destroys inner); on failure inner is the
 * caller's still. */
utc_status_t utc__device_transport_create(utc__transport_t *inner,
                                          const utc__transport_args_t *args,
                                          utc__transport_t **out);

/* The path device transport `tp` uses toward world rank `peer`: "handover", "ipc",
 * "staged". */
const char *utc__device_path(utc__transport_t *tp, int peer);

/* The checks of a buffer that call `fn` passes to device conduit `conduit_id`: a device
 * pointer on another device than the calling GPU thread's, a pointer that is no device
 * pointer for an owned write (not from utc_gpu_malloc), a size larger than such a buffer:
 * UTC_ERR_INVALID_ARG with the message. UTC_OK for everything else. */
utc_status_t utc__device_check_buffer(const char *fn, int conduit_id, const void *buf,
                                      size_t size, bool send, bool owned);

/* True when `p` is device memory (a CUDA device or managed allocation). Asks CUDA only
 * once the process uses it (utc__dev_in_use), so a host-only program never starts it. */
bool utc__device_pointer(const void *p);

/* All-threads calls on a device conduit (conduits/all_threads.c): the transferring
 * thread takes a fence after its transfer, and every other thread of the call waits for it
 * before it returns, so each caller's stream (or, on a CPU thread, the caller itself) is
 * ordered after the transfer as the transferring thread's is. A GPU thread's fence is an
 * event recorded on its stream; a CPU thread's transfer is done on return: no fence
 * (*fence NULL). A fence is dropped once every sibling has waited for it. */
utc_status_t utc__device_fence_take(int conduit_id, void **fence);
utc_status_t utc__device_fence_wait(int conduit_id, void *fence);
void utc__device_fence_drop(void *fence);

/* At utc_finalize, once every conduit is gone: the device layer's cached handles, pooled
 * events, pinned slots and streams go. */
void utc__device_finalize(void);

/* ---- transports ---- */

/* A shared conduit's transport (conduits/shared/): one inner transport (the component
 * utc__transport_pick gives) per pair of a writer and a reader. Collective over all
 * ranks. `entry[i]` is the entry
 * rank of member i (the `nwriters` writers first, then the `nreaders` readers). Requests
 * carry their caller's member index (req->member); close's `peer` is the closing writer's
 * member index; its reads fill in req->peer, the world rank of the writer. */
utc_status_t utc__shared_transport_create(int conduit_id, utc_shared_mode_t mode,
                                          const int *entry, int nwriters, int nreaders,
                                          const utc_conduit_options_t *opts,
                                          utc__transport_t **out);

/* A shared conduit's credit window in `mode` (share mode: opts->credits, or when that is
 * 0 the environment variable UTC_SHARE_CREDITS, else UTC_CONDUIT_CREDITS_DEFAULT; publish
 * mode: 0, and credits set are refused). UTC_ERR_INVALID_ARG, with the message, for a bad
 * value. The range of opts->credits is checked by the caller. */
utc_status_t utc__shared_credits(const utc_conduit_options_t *opts, utc_shared_mode_t mode,
                                 int *credits);

/* The world rank that a wait of member `member` of shared transport `tp` names as its
 * peer: the entry rank of the first member on the other side (its wait detail names them
 * all). */
int utc__shared_transport_peer(const utc__transport_t *tp, int member);

/* A wait of a shared conduit's member, told on demand (base/wait_hook.h): whom it waits
 * for on which ranks, and a share-mode reader's asks. Lives on the waiter's stack. */
typedef struct utc__shared_wait {
    utc__wait_detail_t base;
    utc__transport_t *tp;
    int member, tag;
} utc__shared_wait_t;

/* Fill `w` for a wait of member `member` (a writer writes, a reader reads) on `tag`
 * (< 0: unknown). */
void utc__shared_wait_init(utc__shared_wait_t *w, utc__transport_t *tp, int member, int tag);

#endif /* UTC_CONDUITS_TRANSPORT_H */
