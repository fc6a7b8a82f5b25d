/*
 * Device conduits (utc_conduit_options_t.memory = UTC_CONDUIT_MEM_DEVICE): the device
 * transport, one per host transport of the conduit on this rank, wrapping it (as the
 * shared transport wraps its pairs). The conduit drives it like any transport, so the
 * every-thread protocol, _by, requests, timeouts, close and the lifetime rules are the
 * conduit's; it drives the host transport ("inner") through its ops table.
 *
 * Every message is a descriptor (desc_t) sent on the inner transport with the user's tag
 * (so tags, order, end of stream, failures and timeouts are the host transport's), then
 * the data, by the path between the two ranks, chosen by the writer per message:
 * - handover (inner in-process): the writer copies its buffer into one it allocates on
 *   its stream (cudaMallocAsync), records an event and hands both over; an owned write
 *   hands the utc_gpu_malloc buffer itself. The reader waits the event on its stream,
 *   copies (or, reading owned, keeps the buffer) and frees it on its stream. The handed
 *   buffers are listed here until read, so a destroy frees the unread ones.
 * - ipc (inner between ranks of one host): the writer exports the allocation holding its
 *   buffer (ipc_cache.h), records an interprocess event and sends both; the reader waits
 *   the event on its stream, copies from the mapped range, records its own "copied" event
 *   and acks with its handle on the control tag; the writer's stream waits on it and the
 *   write returns (a rendezvous). A reader that cannot open the handles answers "go"
 *   with ipc_refused instead, and the message (and the pair's later ones) go staged.
 *   A host source, and a buffer from a stream-ordered pool (not IPC capable), go staged.
 * - staged (other host, or UTC_DEVICE_IPC=0): the reader answers "go" on the control tag
 *   and both run the pinned-chunk pipeline (staged.h) on the data tag. One staged receive
 *   at a time per (peer, direction) holds the data tag, so chunks never interleave. A
 *   transfer that failed in the host transport leaves that (peer, direction) out of step
 *   (chan_t.rx_broken, tx_broken): its later staged messages fail with UTC_ERR_STATE.
 *   A staged transfer never holds a thread: once started it is listed on the transport
 *   (dev_tp_t.xfers).
 * Progress (drive): every thread that waits for or tests an operation of the transport
 * moves every staged transfer on, reads the control messages of every write waiting for
 * one, and steps every operation nobody steps now (dev_op_t.stepping: an owner waiting for
 * its operation steps it; drive takes the others, e.g. a read whose thread waits for its
 * own write). So one thread at each end can exchange device messages both ways, in any
 * order of waits.
 * Probes and any-tag reads: the layer takes descriptors off the inner transport into its
 * stash (pull: an any-tag probe of the inner transport, which never sees the layer's own
 * tags, then a read of the tag found) to learn their sizes and tags; reads of a tag look
 * at the stash first, an any-tag read takes the oldest written there.
 * A read that fails after it took a descriptor and before it answered (no device memory
 * for an owned read, a CUDA error once the IPC handles are open, an out-of-step pair)
 * answers "fail" with its status and message: the write ends with that status, and the
 * message is dropped at both ends.
 *
 * The caller's stream: a GPU task thread's own (utc__ctx_gpu); a CPU thread works on a
 * stream of the device layer's own (per device) and waits for it before it returns.
 *
 * Control messages from a reader come back in the other direction on the control tag,
 * naming the write by its sequence number: a writer waiting for one reads the next
 * control message of its (peer, direction) and hands it to the write it names.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "utc_internal.h"
#include "service/request.h"
#include "service/transport.h"
#include "service/wait.h"
#include "device_util.h"
#include "ipc_cache.h"
#include "staged.h"

/* ---- what travels ---- */

enum { K_HANDOVER = 1, K_IPC = 2, K_STAGED = 3 };
static const char *const kind_name[] = {"none", "handover", "ipc", "staged"};

#define DESC_MAGIC 0x55444556u /* "UDEV" */
#define CTL_MAGIC  0x5544434cu /* "UDCL" */

/* A device message's descriptor, on the inner transport with the user's tag. */
typedef struct desc {
    uint32_t magic, kind;
    uint64_t seq; /* the writer's number of the write (its control messages) */
    uint64_t size;
    uint64_t chunk;          /* staged: the chunk size */
    uint64_t hid;            /* handover: the handed buffer's id in the transport */
    utc__ipc_ref_t ref;      /* ipc: the writer's range */
    cudaIpcEventHandle_t ev; /* ipc: the writer's event, recorded after its data */
} desc_t;

/* CTL_BYE: the sender's shutdown; no answer of it follows (every ack it sent is ahead) */
enum { CTL_ACK = 1, CTL_GO = 2, CTL_FAIL = 3, CTL_BYE = 4 };

/* A reader's answer, on the control tag in the other direction. */
typedef struct ctl {
    uint32_t magic, kind;
    uint64_t seq;                /* the write it answers */
    uint32_t ipc_refused;        /* go: the reader could not open the IPC handles */
    int32_t status;              /* fail: the reader's status */
    cudaIpcEventHandle_t copied; /* ack: the reader's event, recorded after its copy */
    char why[160];               /* fail: the reader's message (cut) */
} ctl_t;

/* ---- the transport ---- */

/* A buffer handed over in-process and not yet read. */
typedef struct handed {
    uint64_t id;
    void *ptr;
    int device;
    cudaEvent_t ev;
    struct handed *next;
} handed_t;

/* A descriptor taken off the inner transport and not yet read: one a read took but could
 * not use (its buffer was too small: put first), or one a probe or an any-tag read took to
 * learn its message's size and tag (put last). The next read of its (direction, peer,
 * tag) gets the first of them; an any-tag read the oldest written (lowest seq). */
typedef struct stash {
    int dir, peer, tag;
    desc_t d;
    struct stash *next;
} stash_t;

struct dev_op;

/* The traffic with one peer in one direction of the messages: on the writer's side the
 * writes waiting for a control message, on the reader's side the staged receive that
 * holds the data tag. */
typedef struct chan {
    int peer, dir;
    struct dev_op *waiting; /* writes waiting for their ack or go */
    utc_request_t *ctl_rx;  /* the inner read of the next control message, or NULL */
    ctl_t ctl_buf;
    bool rx_busy; /* a staged receive holds the data tag */
    bool ipc_off; /* the reader refused IPC: staged from now on */
    bool bye;     /* the peer's bye came: it answers nothing any more */
    /* a staged transfer failed in a transfer: the chunk stream of this (peer, dir) is out of
     * step (receiving, sending): its status, 0 while in step */
    utc_status_t rx_broken, tx_broken;
    struct chan *next;
} chan_t;

typedef struct dev_tp {
    utc__transport_t base;
    utc__transport_t *in; /* the host transport (base.inner) */
    pthread_mutex_t lock; /* handed, stash, chans */
    /* held while descriptors are taken into the stash (pull) and while a read looks at the
     * stash and starts its inner read: a read never waits in the inner transport for a
     * message behind one a pull took */
    pthread_mutex_t pull_lock;
    atomic_int down; /* the shutdown's status; 0 while up */
    atomic_uint_fast64_t seq;
    uint64_t next_hid;
    handed_t *handed;
    stash_t *stash;
    chan_t *chans;
    struct dev_op *xfers;  /* the staged transfers in flight (under lock) */
    struct dev_op *live;   /* every operation started and not ended (under lock) */
    uint64_t next_id;      /* the operations' ids (under lock) */
    unsigned pass;         /* drive's passes (under drive) */
    pthread_mutex_t drive; /* held by the one thread moving them on (drive) */
    bool ipc;              /* UTC_DEVICE_IPC is not 0 */
    /* The shutdown's handshake (bye_exchange): the reads inside ipc_answer (their copy
     * queued from a writer's buffer, their ack not yet sent), and whether the handshake is
     * over (the IPC writes still waiting then end with the shutdown's status). */
    atomic_int answering;
    atomic_bool bye_over;
    int *peers; /* the inner transport's other members (the bye goes to each) */
    int npeers;
    utc_request_t **byes; /* the byes not sent within BYE_SEND_S (ended by the inner
                           * shutdown, freed after it) */
    int nbyes;
} dev_tp_t;

/* The staged path's io of an operation: chunks to or from `peer` in direction `dir`. */
typedef struct io_arg {
    dev_tp_t *t;
    int dir, peer;
} io_arg_t;

/* Where an operation stands: its descriptor on the way; a read with its descriptor; a
 * write waiting for its reader's answer; a staged read waiting for its (peer, direction)'s
 * data tag; a staged transfer in flight (listed, moved on by drive); an any-tag read
 * waiting for a message (it looks by pull, no inner read); a read whose stashed message is
 * too large for it (it stays first of its tag: the read ends UTC_ERR_TRUNCATE). */
enum { PH_DESC, PH_GOT, PH_CTL, PH_RXWAIT, PH_STAGED, PH_ANY, PH_TRUNC };

/* One operation's state (the request's private part holds a pointer to it). */
typedef struct dev_op {
    utc_request_t q; /* the inner request: the descriptor's send or receive */
    desc_t d;
    int phase;
    bool gpu;       /* the caller is a GPU task thread (its stream) */
    int device;     /* the device the operation works on */
    cudaStream_t s; /* the caller's stream, or the layer's own (CPU thread) */
    bool dev_buf;   /* the user's buffer is device memory */
    /* a write */
    chan_t *ch;
    struct dev_op *next_wait;
    bool ctl_got;
    bool bye; /* ended by the peer's bye (ctl_err): no answer came */
    utc_status_t ctl_err;
    ctl_t ctl;
    utc__ipc_event_t ev; /* ipc: the writer's event, held until the ack */
    bool ev_held;
    size_t owned_cap;   /* an owned write: its buffer's size (given back on failure) */
    bool answered;      /* a read: its writer has its answer (ack, go or fail) */
    utc_request_t *req; /* the request it is the state of */
    bool claimed;       /* a thread other than its owner's finishes it (a write with its
                         * control message, or a staged transfer: drive) */
    /* Who moves it: while not claimed, the one thread that set `stepping` (under lock):
     * its owner waiting for it, or drive (an operation nobody waits for now). A claim
     * needs it clear. */
    bool stepping;
    uint64_t id;   /* unique on its transport */
    unsigned pass; /* drive's last pass that stepped it */
    struct dev_op *next_live, *prev_live;
    /* a staged transfer */
    io_arg_t ioa;
    utc__staged_io_t io;
    utc__staged_t *x;
    void *dst;    /* a read: where the data goes */
    bool refused; /* a read: the reader refused IPC (its "go" says so) */
    struct dev_op *next_x;
} dev_op_t;

typedef struct dev_priv {
    dev_op_t *op;
    /* an operation that ended with an error, maybe in another thread (drive): its message,
     * raised again in the thread that sees it done (dev_progress, dev_wait) */
    bool has_why;
    char why[512];
} dev_priv_t;
UTC__REQ_PRIV_FITS(dev_priv_t);

static dev_tp_t *dt_of(utc__transport_t *tp)
{
    return (dev_tp_t *)tp;
}
static dev_op_t *op_of(utc_request_t *req)
{
    return UTC__REQ_PRIV(req, dev_priv_t)->op;
}

static utc_status_t cuda_error(int conduit, cudaError_t err, const char *call)
{
    (void)cudaGetLastError();
    return utc__error(UTC_ERR_GPU, "conduit %d (device): %s: %s (%s)", conduit, call,
                      cudaGetErrorString(err), cudaGetErrorName(err));
}

#define CUDA_TRY(t, call)                                                                          \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            return cuda_error((t)->base.conduit_id, e_, #call);                                    \
    } while (0)

/* ---- the layer's streams and events (process-wide, per device) ---- */

#define MAX_DEV 64

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static cudaStream_t own_stream[MAX_DEV];
typedef struct ev_node {
    cudaEvent_t ev;
    int device;
    struct ev_node *next;
} ev_node_t;
static ev_node_t *ev_free;  /* events to reuse */
static ev_node_t *ev_nodes; /* spare nodes */

/* The layer's own stream on `device` (a CPU thread's operations run there). A blocking
 * stream: it runs after the work a CPU thread queued on the legacy default stream before
 * its call (a cudaMemcpyAsync, or a pageable cudaMemcpy whose DMA may still run, filling
 * the buffer it writes), which a non-blocking stream did not wait for. */
static cudaError_t own_stream_get(int device, cudaStream_t *out)
{
    if (device < 0 || device >= MAX_DEV)
        return cudaErrorInvalidDevice;
    pthread_mutex_lock(&pool_lock);
    cudaError_t err = cudaSuccess;
    if (!own_stream[device])
        err = cudaStreamCreateWithFlags(&own_stream[device], cudaStreamDefault);
    *out = own_stream[device];
    pthread_mutex_unlock(&pool_lock);
    return err;
}

/* A plain event of the current device `device`, from the pool. */
static cudaError_t ev_get(int device, cudaEvent_t *out)
{
    pthread_mutex_lock(&pool_lock);
    for (ev_node_t **p = &ev_free; *p; p = &(*p)->next)
        if ((*p)->device == device) {
            ev_node_t *n = *p;
            *p = n->next;
            *out = n->ev;
            n->next = ev_nodes;
            ev_nodes = n;
            pthread_mutex_unlock(&pool_lock);
            return cudaSuccess;
        }
    pthread_mutex_unlock(&pool_lock);
    return cudaEventCreateWithFlags(out, cudaEventDisableTiming);
}

static void ev_put(int device, cudaEvent_t ev)
{
    pthread_mutex_lock(&pool_lock);
    ev_node_t *n = ev_nodes;
    if (n)
        ev_nodes = n->next;
    else
        n = malloc(sizeof *n);
    if (n) {
        n->ev = ev;
        n->device = device;
        n->next = ev_free;
        ev_free = n;
    }
    pthread_mutex_unlock(&pool_lock);
    if (!n)
        (void)cudaEventDestroy(ev);
}

/* Wait, on the host, until the work queued on s so far is done: poll with UTC's back-off
 * (a waiting thread must not hold a core), not cudaStreamSynchronize's spin. */
static utc_status_t stream_drain(dev_tp_t *t, int device, cudaStream_t s)
{
    cudaEvent_t ev;
    CUDA_TRY(t, ev_get(device, &ev));
    cudaError_t err = cudaEventRecord(ev, s);
    utc__poll_t p = UTC__POLL_INIT;
    if (err == cudaSuccess)
        while ((err = cudaEventQuery(ev)) == cudaErrorNotReady)
            utc__poll_step(&p);
    ev_put(device, ev);
    return err == cudaSuccess ? UTC_OK : cuda_error(t->base.conduit_id, err, "waiting for the GPU");
}

/* ---- fences of all-threads calls (service/transport.h) ---- */

typedef struct fence {
    cudaEvent_t ev;
    int device;
} fence_t;

utc_status_t utc__device_fence_take(int conduit_id, void **out)
{
    *out = NULL;
    int dev;
    void *s;
    if (!utc__ctx_gpu(utc_ctx_self(), &dev, &s))
        return UTC_OK; /* a CPU thread's transfer is done */
    fence_t *f = malloc(sizeof *f);
    if (!f)
        return utc__error(UTC_ERR_NO_MEMORY, "conduit %d (device): out of memory", conduit_id);
    cudaError_t err = ev_get(dev, &f->ev);
    if (err == cudaSuccess && (err = cudaEventRecord(f->ev, (cudaStream_t)s)) != cudaSuccess)
        ev_put(dev, f->ev);
    if (err != cudaSuccess) {
        free(f);
        return cuda_error(conduit_id, err, "cudaEventRecord");
    }
    f->device = dev;
    *out = f;
    return UTC_OK;
}

utc_status_t utc__device_fence_wait(int conduit_id, void *fence)
{
    fence_t *f = fence;
    if (!f)
        return UTC_OK;
    int dev;
    void *s;
    cudaError_t err;
    if (utc__ctx_gpu(utc_ctx_self(), &dev, &s)) {
        err = cudaStreamWaitEvent((cudaStream_t)s, f->ev, 0); /* another device's: allowed */
    } else { /* a CPU thread: on the host, with UTC's back-off */
        utc__poll_t p = UTC__POLL_INIT;
        while ((err = cudaEventQuery(f->ev)) == cudaErrorNotReady)
            utc__poll_step(&p);
    }
    return err == cudaSuccess ? UTC_OK
                              : cuda_error(conduit_id, err, "waiting for thread 0's transfer");
}

void utc__device_fence_drop(void *fence)
{
    fence_t *f = fence;
    if (!f)
        return;
    ev_put(f->device, f->ev);
    free(f);
}

/* Make `device` the calling thread's current one (a request may be driven by a thread
 * other than the one that started it). */
static cudaError_t use_device(int device)
{
    int cur = -1;
    cudaError_t err = cudaGetDevice(&cur);
    if (err == cudaSuccess && cur != device)
        err = cudaSetDevice(device);
    return err;
}

/* The calling thread's current device (-1 if unknown), for dev_restore: the calls that make
 * an operation's device current (use_device) give the thread its own back on return, as a
 * thread finishing another thread's operation, or a CPU thread passing a buffer of another
 * device, must not find its kernels on another device afterwards. */
static int dev_save(void)
{
    int d = -1;
    if (cudaGetDevice(&d) != cudaSuccess) {
        (void)cudaGetLastError();
        d = -1;
    }
    return d;
}

static void dev_restore(int d)
{
    if (d >= 0 && use_device(d) != cudaSuccess)
        (void)cudaGetLastError();
}

/* Whether p is device memory (a device or managed allocation); its device in *device. */
static bool is_device(const void *p, int *device)
{
    if (!p)
        return false;
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError(); /* a host pointer in old runtimes */
        return false;
    }
    if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged)
        return false;
    if (device)
        *device = a.device;
    return true;
}

/* ---- checks the conduit makes before it starts an operation ---- */

bool utc__device_pointer(const void *p)
{
    return utc__dev_in_use() && is_device(p, NULL);
}

utc_status_t utc__device_check_buffer(const char *fn, int conduit_id, const void *buf, size_t size,
                                      bool send, bool owned)
{
    int bdev = -1, tdev;
    void *s;
    bool dev = is_device(buf, &bdev);
    if (owned && send) {
        size_t cap;
        if (!utc__dev_alloc_find(buf, &cap, NULL))
            return utc__error(UTC_ERR_INVALID_ARG,
                              "%s: buffer %p is not a buffer of "
                              "utc_gpu_malloc (or of utc_conduit_read_owned on a device "
                              "conduit), or it was handed over or freed already: device "
                              "conduit %d hands over only those",
                              fn, buf, conduit_id);
        if (size > cap)
            return utc__error(UTC_ERR_INVALID_ARG,
                              "%s: size %zu is larger than the buffer "
                              "(%zu bytes from utc_gpu_malloc)",
                              fn, size, cap);
    }
    if (dev && utc__ctx_gpu(utc_ctx_self(), &tdev, &s) && bdev != tdev)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: buffer %p is on device %d, and the calling "
                          "GPU thread's device is %d: pass a buffer of the thread's device",
                          fn, buf, bdev, tdev);
    return UTC_OK;
}

/* ---- channels and control messages ---- */

/* The channel of (peer, dir), made when first needed; under t->lock. */
static chan_t *chan_at(dev_tp_t *t, int peer, int dir)
{
    for (chan_t *c = t->chans; c; c = c->next)
        if (c->peer == peer && c->dir == dir)
            return c;
    chan_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->peer = peer;
    c->dir = dir;
    c->next = t->chans;
    t->chans = c;
    return c;
}

/* Send control message m to world rank `peer` in direction `dir` (the reverse of the
 * message it answers). Blocks until sent (a small message). */
static utc_status_t ctl_send(dev_tp_t *t, int dir, int peer, const ctl_t *m)
{
    utc_request_t q;
    utc__req_prepare(&q, UTC__OP_SEND, dir, UTC__DEVICE_TAG_CTL, peer, t->in);
    q.sbuf = m;
    q.size = sizeof *m;
    utc_status_t rc = t->in->ops->start(t->in, &q);
    if (rc != UTC_OK)
        return rc;
    if (utc__req_state(&q) != UTC__REQ_DONE)
        (void)t->in->ops->wait(t->in, &q, -1);
    return q.status;
}

/* Unlink op from its channel's waiting writes; under t->lock. */
static void ctl_unwait(dev_op_t *op)
{
    for (dev_op_t **p = &op->ch->waiting; *p; p = &(*p)->next_wait)
        if (*p == op) {
            *p = op->next_wait;
            return;
        }
}

static void send_ctl_done(dev_tp_t *t, utc_request_t *req, dev_op_t *op);

/* Under t->lock: every write waiting on ch ends with `st` (its owner finishes it); `bye`:
 * ended by the peer's bye (send_ctl_done says so). */
static void chan_end_all(chan_t *ch, utc_status_t st, bool bye)
{
    for (dev_op_t *w = ch->waiting; w; w = w->next_wait) {
        w->ctl_got = true;
        w->ctl_err = st;
        w->bye = bye;
    }
    ch->waiting = NULL;
}

/* The status of writes that the peer's bye ends: the shutdown's here, else canceled (the
 * peer destroyed the conduit first). */
static utc_status_t bye_status(dev_tp_t *t)
{
    int d = atomic_load(&t->down);
    return d ? (utc_status_t)d : UTC_ERR_CANCELED;
}

/*
 * Under t->lock: one step of ch's control messages, while writes wait for one: read the
 * next one (one inner read at a time per channel) and hand it to the write it names. A
 * write other than `self` that gets its message while it waits (PH_CTL) is claimed and
 * returned, for the caller to finish here and now (send_ctl_done, after the lock): the
 * reader may wait for its chunks (or hold back its next reads) while that write's owner
 * waits for something else. NULL otherwise. `self` may be NULL (the shutdown's handshake).
 * The peer's bye ends every write waiting on ch, then and later: no answer follows it.
 */
static dev_op_t *chan_step(dev_tp_t *t, chan_t *ch, dev_op_t *self)
{
    if (!ch->waiting)
        return NULL;
    if (ch->bye) {
        chan_end_all(ch, bye_status(t), true);
        return NULL;
    }
    if (!ch->ctl_rx) {
        utc_request_t *q = malloc(sizeof *q);
        utc_status_t rc = UTC_ERR_NO_MEMORY;
        if (q) {
            utc__req_prepare(q, UTC__OP_RECV, 1 - ch->dir, UTC__DEVICE_TAG_CTL, ch->peer, t->in);
            q->rbuf = &ch->ctl_buf;
            q->size = sizeof ch->ctl_buf;
            rc = t->in->ops->start(t->in, q);
        }
        if (rc != UTC_OK && !self) { /* the handshake's: every waiting write's */
            free(q);
            chan_end_all(ch, rc, false);
            return NULL;
        }
        if (rc != UTC_OK) { /* self's failure; the others try again */
            free(q);
            self->ctl_got = true;
            self->ctl_err = rc;
            ctl_unwait(self);
            return NULL;
        }
        ch->ctl_rx = q;
    }
    utc_request_t *q = ch->ctl_rx;
    if (utc__req_state(q) != UTC__REQ_DONE && !t->in->ops->progress(t->in, q))
        return NULL;
    utc_status_t st = q->status;
    if (st == UTC_OK && (q->received != sizeof(ctl_t) || ch->ctl_buf.magic != CTL_MAGIC))
        st = utc__error(UTC_ERR_INTERNAL,
                        "conduit %d (device): a control message from "
                        "rank %d is not one (%zu bytes)",
                        t->base.conduit_id, ch->peer, q->received);
    ch->ctl_rx = NULL;
    free(q);
    if (st != UTC_OK) { /* every waiting write ends with it (its owner finishes it) */
        chan_end_all(ch, st, false);
        return NULL;
    }
    if (ch->ctl_buf.kind == CTL_BYE) {
        ch->bye = true;
        chan_end_all(ch, bye_status(t), true);
        return NULL;
    }
    dev_op_t **p = &ch->waiting;
    while (*p && (*p)->d.seq != ch->ctl_buf.seq)
        p = &(*p)->next_wait;
    if (!*p && atomic_load(&t->down)) /* (an answer to a write the shutdown ended) */
        return NULL;
    if (!*p) {
        utc_log(UTC_LOG_WARN,
                "conduit %d (device): a control message from rank %d "
                "names write %llu, which no write here waits for; dropped",
                t->base.conduit_id, ch->peer, (unsigned long long)ch->ctl_buf.seq);
        return NULL;
    }
    dev_op_t *w = *p;
    *p = w->next_wait;
    w->ctl = ch->ctl_buf;
    w->ctl_got = true;
    w->ctl_err = UTC_OK;
    if (w != self && w->phase == PH_CTL && !w->claimed && !w->stepping) {
        w->claimed = true;
        return w;
    } /* (one still sending its descriptor, or being moved: its stepper finds it) */
    return NULL;
}

/* One step of a write waiting for its control message (chan_step), a message for another
 * write finished here and now. CTL_MINE once op has its message (or the channel's error in
 * op->ctl_err) and the caller is to finish it; CTL_OTHERS when another thread finishes it
 * (op may be gone when this returns); CTL_WAIT. */
enum { CTL_WAIT, CTL_MINE, CTL_OTHERS };

static int ctl_poll(dev_tp_t *t, utc_request_t *req, utc_status_t stop)
{
    dev_op_t *other = NULL;
    pthread_mutex_lock(&t->lock);
    dev_op_t *op = op_of(req);
    if (!op || op->claimed) { /* another thread finishes it (op may be gone) */
        pthread_mutex_unlock(&t->lock);
        return CTL_OTHERS;
    }
    /* An IPC write's reader may have taken its descriptor, its copy reading the writer's
     * buffer: in the shutdown its answer, or the peer's bye saying none comes, is waited
     * for (bye_exchange), so that a write whose message was read ends UTC_OK with its
     * stream after the copy, never canceled with the buffer still read */
    if (stop != UTC_OK && !op->ctl_got && op->d.kind == K_IPC && atomic_load(&t->down) &&
        !atomic_load(&t->bye_over))
        stop = UTC_OK;
    if (stop != UTC_OK && !op->ctl_got) { /* the shutdown or a failure: no answer comes */
        ctl_unwait(op);
        op->ctl_got = true;
        op->ctl_err = stop;
    }
    if (!op->ctl_got)
        other = chan_step(t, op->ch, op);
    /* op is claimed here, under the lock: once another thread claimed it, that thread may
     * free it as soon as the lock is let go */
    int got = !op->ctl_got ? CTL_WAIT : op->claimed ? CTL_OTHERS : CTL_MINE;
    if (got == CTL_MINE)
        op->claimed = true;
    pthread_mutex_unlock(&t->lock);
    if (other)
        send_ctl_done(t, other->req, other);
    return got;
}

/* ---- the staged path's io: chunks on the inner transport's data tag ---- */

static utc_status_t io_start(void *arg, utc__op_t op, const void *sbuf, void *rbuf, size_t n,
                             void **h)
{
    io_arg_t *a = arg;
    utc_request_t *q = malloc(sizeof *q);
    if (!q)
        return utc__error(UTC_ERR_NO_MEMORY, "conduit %d (device): out of memory",
                          a->t->base.conduit_id);
    utc__req_prepare(q, op, a->dir, UTC__DEVICE_TAG_DATA, a->peer, a->t->in);
    q->sbuf = sbuf;
    q->rbuf = rbuf;
    q->size = n;
    utc_status_t rc = a->t->in->ops->start(a->t->in, q);
    if (rc != UTC_OK) {
        free(q);
        return rc;
    }
    *h = q;
    return UTC_OK;
}

static utc_status_t io_isend(void *arg, const void *buf, size_t n, void **h)
{
    return io_start(arg, UTC__OP_SEND, buf, NULL, n, h);
}

static utc_status_t io_irecv(void *arg, void *buf, size_t n, void **h)
{
    return io_start(arg, UTC__OP_RECV, NULL, buf, n, h);
}

static utc_status_t stopped(dev_tp_t *t);

/* Whether a chunk's transfer is over, without blocking. A receive also ends when the
 * transport stops (a failed task, the shutdown) and the inner transport gives it back: a
 * chunk asked for after the failure ended the reads might never come (its writer stops at
 * the failure notice). */
static bool io_test(void *arg, void *h, utc_status_t *status, size_t *received)
{
    io_arg_t *a = arg;
    utc_request_t *q = h;
    utc__transport_t *in = a->t->in;
    utc_status_t st = UTC_OK;
    if (utc__req_state(q) != UTC__REQ_DONE && !in->ops->progress(in, q)) {
        utc_status_t stop = q->op == UTC__OP_RECV ? stopped(a->t) : UTC_OK;
        if (stop == UTC_OK || !in->ops->cancel(in, q))
            return false;
        st = stop; /* withdrawn: q is no longer the inner transport's */
    }
    if (st == UTC_OK)
        st = q->status;
    if (st == UTC_OK && received)
        *received = q->received;
    else if (st != UTC_OK)
        st = utc__error(st, "conduit %d (device): a staged chunk %s rank %d: %s",
                        a->t->base.conduit_id, q->op == UTC__OP_SEND ? "to" : "from", a->peer,
                        utc_status_string(st));
    free(q);
    *status = st;
    return true;
}

/* Op's staged io toward `peer` in direction `dir` (kept in op: it outlives the call). */
static utc__staged_io_t *io_of(dev_tp_t *t, dev_op_t *op, int dir, int peer)
{
    op->ioa = (io_arg_t){t, dir, peer};
    op->io = (utc__staged_io_t){
        .arg = &op->ioa, .isend = io_isend, .irecv = io_irecv, .test = io_test, .owner = t};
    return &op->io;
}

/* List op's staged transfer, started: drive moves it on and finishes op. Op is not its
 * owner's any more (it may be gone once this returns). */
static void xfer_list(dev_tp_t *t, dev_op_t *op)
{
    pthread_mutex_lock(&t->lock);
    op->phase = PH_STAGED;
    op->claimed = true;
    op->next_x = t->xfers;
    t->xfers = op;
    pthread_mutex_unlock(&t->lock);
}

/* ---- operations ---- */

/* Why operations end now without a transfer: the shutdown, a failure marked here or seen
 * by the inner transport (then marked here too, so messages name it and a run queued
 * again clears both); 0. */
static utc_status_t stopped(dev_tp_t *t)
{
    int d = atomic_load(&t->down);
    if (d)
        return (utc_status_t)d;
    utc__fail_info_t f;
    if (!utc__transport_marked(&t->base) && utc__fail_record_get(&t->in->fail, &f))
        (void)utc__transport_mark_failed(&t->base, f.end, f.rank, f.rc, f.why);
    return utc__transport_fail_status(&t->base);
}

/* Under t->lock: op leaves the live operations. */
static void live_unlink(dev_tp_t *t, dev_op_t *op)
{
    if (op->prev_live)
        op->prev_live->next_live = op->next_live;
    else if (t->live == op)
        t->live = op->next_live;
    if (op->next_live)
        op->next_live->prev_live = op->prev_live;
    op->next_live = op->prev_live = NULL;
}

/* End req with `st` (its state freed first: the owner may reuse req once it is DONE). */
static void op_end(utc_request_t *req, utc_status_t st)
{
    dev_op_t *op = op_of(req);
    if (op) {
        if (st == UTC_ERR_MPI)
            req->tp_err = op->q.tp_err;
        /* unhooked under the lock: a thread looking at it (advance) sees it or nothing */
        dev_tp_t *t = dt_of(req->tp);
        pthread_mutex_lock(&t->lock);
        UTC__REQ_PRIV(req, dev_priv_t)->op = NULL;
        live_unlink(t, op);
        pthread_mutex_unlock(&t->lock);
        free(op);
    }
    dev_priv_t *pv = UTC__REQ_PRIV(req, dev_priv_t);
    pv->has_why = st != UTC_OK && st != UTC_ERR_TRUNCATE;
    if (pv->has_why)
        utc__text_copy(pv->why, sizeof pv->why, utc_last_error());
    utc__req_finish(req, st);
}

/* Whether req is done; if so, the calling thread's last error is its error's message
 * (set by whichever thread ended it). */
static bool done_here(utc_request_t *req)
{
    if (utc__req_state(req) != UTC__REQ_DONE)
        return false;
    dev_priv_t *pv = UTC__REQ_PRIV(req, dev_priv_t);
    if (pv->has_why) {
        pv->has_why = false;
        (void)utc__error(req->status, "%s", pv->why);
    }
    return true;
}

/* The caller's device and stream for an operation on `buf` (is_dev: device memory on
 * bdev): a GPU task thread's own; a CPU thread gets the layer's stream of the buffer's
 * device (else of its current device) and synchronous semantics. */
static utc_status_t op_caller(dev_tp_t *t, dev_op_t *op, bool is_dev, int bdev)
{
    void *s;
    int dev;
    if (utc__ctx_gpu(utc_ctx_self(), &dev, &s)) {
        op->gpu = true;
        op->device = dev;
        op->s = (cudaStream_t)s;
        return UTC_OK;
    }
    op->gpu = false;
    if (is_dev)
        dev = bdev;
    else
        CUDA_TRY(t, cudaGetDevice(&dev));
    op->device = dev;
    CUDA_TRY(t, use_device(dev));
    CUDA_TRY(t, own_stream_get(dev, &op->s));
    return UTC_OK;
}

/* The path of a write to `peer`, for a source in device memory or not. */
static int write_kind(dev_tp_t *t, int peer, int dir, bool dev_src, size_t size)
{
    if (t->in->kind == UTC_CONDUIT_INPROC)
        return K_HANDOVER;
    if (!t->ipc || !dev_src || size == 0 || !utc__same_host(utc_rank(), peer))
        return K_STAGED;
    pthread_mutex_lock(&t->lock);
    chan_t *ch = chan_at(t, peer, dir);
    bool off = ch && ch->ipc_off;
    pthread_mutex_unlock(&t->lock);
    return off ? K_STAGED : K_IPC;
}

const char *utc__device_path(utc__transport_t *tp, int peer)
{
    dev_tp_t *t = dt_of(tp);
    return kind_name[write_kind(t, peer, UTC__DIR_FWD, true, 1)];
}

/* Handover, writer: the buffer to hand over (a copy made on the writer's stream, or the
 * owned buffer itself) and its event, listed until read. */
static utc_status_t handover_send(dev_tp_t *t, utc_request_t *req, dev_op_t *op)
{
    void *p = NULL;
    size_t size = req->size;
    if (req->owned) {
        p = (void *)req->sbuf;
    } else if (size) {
        CUDA_TRY(t, cudaMallocAsync(&p, size, op->s));
        cudaError_t err = cudaMemcpyAsync(p, req->sbuf, size, cudaMemcpyDefault, op->s);
        if (err != cudaSuccess) {
            (void)cudaFreeAsync(p, op->s);
            return cuda_error(t->base.conduit_id, err, "cudaMemcpyAsync");
        }
    }
    handed_t *h = malloc(sizeof *h);
    cudaEvent_t ev;
    cudaError_t err = h ? ev_get(op->device, &ev) : cudaErrorMemoryAllocation;
    if (err == cudaSuccess && (err = cudaEventRecord(ev, op->s)) != cudaSuccess)
        ev_put(op->device, ev);
    if (err != cudaSuccess) {
        free(h);
        if (!req->owned && p)
            (void)cudaFreeAsync(p, op->s);
        return cuda_error(t->base.conduit_id, err, "cudaEventRecord");
    }
    *h = (handed_t){.ptr = p, .device = op->device, .ev = ev};
    pthread_mutex_lock(&t->lock);
    h->id = ++t->next_hid;
    h->next = t->handed;
    t->handed = h;
    pthread_mutex_unlock(&t->lock);
    op->d.hid = h->id;
    return UTC_OK;
}

/* The handed buffer `id`, unlisted (NULL if none). */
static handed_t *handed_take(dev_tp_t *t, uint64_t id)
{
    pthread_mutex_lock(&t->lock);
    handed_t **p = &t->handed;
    while (*p && (*p)->id != id)
        p = &(*p)->next;
    handed_t *h = *p;
    if (h)
        *p = h->next;
    pthread_mutex_unlock(&t->lock);
    return h;
}

/* Give a handed buffer back to nobody: freed on the layer's stream once the writer's copy
 * into it is done. */
static void handed_drop(handed_t *h)
{
    cudaStream_t s;
    int prev = dev_save();
    if (use_device(h->device) == cudaSuccess && own_stream_get(h->device, &s) == cudaSuccess) {
        (void)cudaStreamWaitEvent(s, h->ev, 0);
        if (h->ptr)
            (void)cudaFreeAsync(h->ptr, s);
    }
    (void)cudaGetLastError();
    dev_restore(prev);
    ev_put(h->device, h->ev);
    free(h);
}

/* A write failed after its owned buffer was taken from the registry: the caller's again. */
static void owned_back(utc_request_t *req, dev_op_t *op)
{
    if (req->owned && req->sbuf &&
        utc__dev_alloc_add((void *)req->sbuf, op->owned_cap, op->device) != UTC_OK)
        utc_log(UTC_LOG_WARN,
                "device conduit: owned buffer %p could not be given back to the "
                "caller's records (out of memory): utc_gpu_free will refuse it",
                req->sbuf);
}

static utc_status_t send_start(dev_tp_t *t, utc_request_t *req, dev_op_t *op)
{
    int bdev = -1;
    op->dev_buf = is_device(req->sbuf, &bdev);
    utc_status_t rc = op_caller(t, op, op->dev_buf, bdev);
    if (rc != UTC_OK)
        return rc;
    if (req->owned) {
        int odev;
        if (!utc__dev_alloc_take(req->sbuf, &op->owned_cap, &odev))
            return utc__error(UTC_ERR_INVALID_ARG,
                              "conduit %d: buffer %p is not (any more) a "
                              "buffer of utc_gpu_malloc: an owned write on a device conduit "
                              "hands over only those",
                              t->base.conduit_id, req->sbuf);
        if (req->size > op->owned_cap) {
            op->device = odev;
            owned_back(req, op);
            return utc__error(UTC_ERR_INVALID_ARG,
                              "conduit %d: size %zu is larger than the "
                              "buffer (%zu bytes)",
                              t->base.conduit_id, req->size, op->owned_cap);
        }
    }
    op->d =
        (desc_t){.magic = DESC_MAGIC, .size = req->size, .seq = atomic_fetch_add(&t->seq, 1) + 1};
    op->d.kind = (uint32_t)write_kind(t, req->peer, req->dir, op->dev_buf, req->size);
    if (op->d.kind == K_HANDOVER) {
        rc = handover_send(t, req, op);
    } else if (op->d.kind == K_IPC) {
        rc = utc__ipc_export(req->sbuf, req->size, &op->d.ref);
        if (rc == UTC_ERR_UNSUPPORTED) { /* a pool's buffer: this message goes staged */
            op->d.kind = K_STAGED;
            rc = UTC_OK;
        } else if (rc == UTC_OK && (rc = utc__ipc_event_get(&op->ev)) == UTC_OK) {
            op->ev_held = true;
            op->d.ev = op->ev.handle;
            cudaError_t err = cudaEventRecord(op->ev.event, op->s);
            if (err != cudaSuccess)
                rc = cuda_error(t->base.conduit_id, err, "cudaEventRecord");
        }
    }
    if (rc == UTC_OK && op->d.kind == K_STAGED)
        rc = utc__device_chunk_size(&op->d.chunk);
    /* the copy done on return: for a CPU thread (no stream), and for host memory (the CPU
     * writes it, outside any stream order; a pinned source is copied asynchronously) */
    if (rc == UTC_OK && op->d.kind == K_HANDOVER && (!op->gpu || !op->dev_buf))
        rc = stream_drain(t, op->device, op->s);
    if (rc == UTC_OK && op->d.kind != K_HANDOVER) {
        /* waiting for the reader's answer before the descriptor leaves: the answer may
         * come before this thread sees its send complete */
        pthread_mutex_lock(&t->lock);
        if ((op->ch = chan_at(t, req->peer, req->dir))) {
            op->next_wait = op->ch->waiting;
            op->ch->waiting = op;
        }
        pthread_mutex_unlock(&t->lock);
        if (!op->ch)
            rc = utc__error(UTC_ERR_NO_MEMORY, "conduit %d (device): out of memory",
                            t->base.conduit_id);
    }
    if (rc == UTC_OK) {
        utc__req_prepare(&op->q, UTC__OP_SEND, req->dir, req->tag, req->peer, t->in);
        op->q.sbuf = &op->d;
        op->q.size = sizeof op->d;
        rc = t->in->ops->start(t->in, &op->q);
    }
    if (rc != UTC_OK && op->ch) {
        pthread_mutex_lock(&t->lock);
        if (!op->ctl_got)
            ctl_unwait(op);
        pthread_mutex_unlock(&t->lock);
    }
    if (rc != UTC_OK) {
        if (op->d.kind == K_HANDOVER && op->d.hid) {
            handed_t *h = handed_take(t, op->d.hid);
            if (h && req->owned)
                h->ptr = NULL; /* the caller's again */
            if (h)
                handed_drop(h);
        }
        if (op->ev_held)
            utc__ipc_event_put(&op->ev);
        owned_back(req, op);
    }
    return rc;
}

/* Where a read puts the data: the caller's buffer, or for an owned read a new one. */
static utc_status_t recv_dst(dev_tp_t *t, utc_request_t *req, dev_op_t *op, void **dst)
{
    *dst = req->rbuf;
    if (!req->owned)
        return UTC_OK;
    *dst = NULL;
    op->dev_buf = true;
    cudaError_t err = op->d.size ? cudaMallocAsync(dst, op->d.size, op->s) : cudaSuccess;
    if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        return utc__error(UTC_ERR_NO_MEMORY,
                          "conduit %d (device): an owned read of a %llu-byte message from "
                          "rank %d: device %d has no memory for it (cudaMallocAsync)",
                          t->base.conduit_id, (unsigned long long)op->d.size, req->peer,
                          op->device);
    }
    if (err != cudaSuccess)
        return cuda_error(t->base.conduit_id, err, "cudaMallocAsync");
    return UTC_OK;
}

/* An owned read's buffer is the reader's: recorded for utc_gpu_free. */
static utc_status_t recv_owned_give(utc_request_t *req, dev_op_t *op, void *p)
{
    req->owned_buf = p;
    return p ? utc__dev_alloc_add(p, op->d.size, op->device) : UTC_OK;
}

static utc_status_t handover_recv(dev_tp_t *t, utc_request_t *req, dev_op_t *op)
{
    handed_t *h = handed_take(t, op->d.hid);
    if (!h)
        return utc__error(UTC_ERR_INTERNAL,
                          "conduit %d (device): handed buffer %llu is not "
                          "listed",
                          t->base.conduit_id, (unsigned long long)op->d.hid);
    cudaError_t err = cudaStreamWaitEvent(op->s, h->ev, 0);
    utc_status_t rc = UTC_OK;
    if (err != cudaSuccess) {
        rc = cuda_error(t->base.conduit_id, err, "cudaStreamWaitEvent");
    } else if (req->owned && h->ptr && h->device != op->device) {
        /* the reader's device is another: a buffer of its own, a copy there (a kernel of
         * the reader must not reach another device's memory) */
        void *p = NULL;
        if ((err = cudaMallocAsync(&p, op->d.size, op->s)) != cudaSuccess) {
            rc = cuda_error(t->base.conduit_id, err, "cudaMallocAsync");
        } else if ((err = cudaMemcpyAsync(p, h->ptr, op->d.size, cudaMemcpyDefault, op->s)) !=
                   cudaSuccess) {
            (void)cudaFreeAsync(p, op->s);
            rc = cuda_error(t->base.conduit_id, err, "cudaMemcpyAsync");
        } else {
            rc = recv_owned_give(req, op, p);
        }
    } else if (req->owned) {
        rc = recv_owned_give(req, op, h->ptr);
        h->ptr = NULL;
    } else if (op->d.size) {
        err = cudaMemcpyAsync(req->rbuf, h->ptr, op->d.size, cudaMemcpyDefault, op->s);
        if (err != cudaSuccess)
            rc = cuda_error(t->base.conduit_id, err, "cudaMemcpyAsync");
    }
    if (h->ptr && err == cudaSuccess) {
        (void)cudaFreeAsync(h->ptr, op->s);
        h->ptr = NULL;
    }
    if (h->ptr) {
        handed_drop(h);
    } else {
        ev_put(h->device, h->ev);
        free(h);
    }
    return rc;
}

/* A reader's "copied" events: one interprocess event per stream (by its id, unique for the
 * process's life), kept until finalize. The writer's stream waits on the record that is the
 * event's last when its wait is queued, some time after the ack: a record made in between
 * must be a later point of the same stream (the wait then waits longer, never less). An
 * event shared between streams (put back to the pool at once) let another stream's later
 * record stand for this copy, and the writer reuse its buffer while the copy still read it. */
typedef struct copied_ev {
    unsigned long long stream_id;
    utc__ipc_event_t ev;
    struct copied_ev *next;
} copied_ev_t;
static copied_ev_t *copied_evs; /* under pool_lock */

/* The listed copied event of (stream id, device), or NULL; under pool_lock. */
static copied_ev_t *copied_find(unsigned long long id, int device)
{
    copied_ev_t *c = copied_evs;
    while (c && !(c->stream_id == id && c->ev.device == device))
        c = c->next;
    return c;
}

/* The copied event of stream s (of the current device `device`), made at its first use. */
static utc_status_t copied_event(dev_tp_t *t, int device, cudaStream_t s, utc__ipc_event_t *out)
{
    unsigned long long id;
    CUDA_TRY(t, cudaStreamGetId(s, &id));
    pthread_mutex_lock(&pool_lock);
    copied_ev_t *c = copied_find(id, device);
    if (c)
        *out = c->ev;
    pthread_mutex_unlock(&pool_lock);
    if (c)
        return UTC_OK;
    if (!(c = malloc(sizeof *c)))
        return utc__error(UTC_ERR_NO_MEMORY, "conduit %d (device): out of memory",
                          t->base.conduit_id);
    utc_status_t rc = utc__ipc_event_get(&c->ev);
    if (rc != UTC_OK) {
        free(c);
        return rc;
    }
    c->stream_id = id;
    /* CPU threads share the layer's stream: another may have listed it meanwhile */
    pthread_mutex_lock(&pool_lock);
    copied_ev_t *o = copied_find(id, device);
    if (!o) {
        c->next = copied_evs;
        copied_evs = c;
    }
    *out = o ? o->ev : c->ev;
    pthread_mutex_unlock(&pool_lock);
    if (o) {
        utc__ipc_event_put(&c->ev); /* never recorded: anyone's */
        free(c);
    }
    return UTC_OK;
}

/* IPC, reader: the copy from the writer's range after its event, then the ack with the
 * reader's event. UTC_ERR_UNSUPPORTED when the handles cannot be opened (the caller
 * answers "go" instead: the message goes staged). Inside t->answering (ipc_recv). */
static utc_status_t ipc_answer(dev_tp_t *t, utc_request_t *req, dev_op_t *op, void *dst)
{
    int writer = req->peer;
    /* CUDA IPC is refused where the handles are opened (cached: a second look is cheap); a
     * CUDA error after that is this read's own, answered with a fail */
    cudaEvent_t wev;
    void *src;
    utc_status_t rc = utc__ipc_event_open(writer, &op->d.ev, &wev);
    if (rc == UTC_OK && op->d.size)
        rc = utc__ipc_import(writer, &op->d.ref, &src);
    if (rc == UTC_OK)
        rc = utc__ipc_event_wait(writer, &op->d.ev, op->s);
    else if (rc == UTC_ERR_GPU) {
        utc_log(UTC_LOG_INFO,
                "conduit %d (device): CUDA IPC from rank %d refused (%s); its "
                "messages go staged",
                t->base.conduit_id, writer, utc_last_error());
        return UTC_ERR_UNSUPPORTED;
    }
    if (rc == UTC_OK && op->d.size)
        rc = utc__ipc_copy_from(writer, &op->d.ref, dst, op->d.size, op->s);
    if (rc != UTC_OK)
        return rc;
    utc__ipc_event_t cev = {0};
    cudaError_t err = cudaSuccess;
    if ((rc = copied_event(t, op->device, op->s, &cev)) == UTC_OK &&
        (err = cudaEventRecord(cev.event, op->s)) != cudaSuccess)
        rc = cuda_error(t->base.conduit_id, err, "cudaEventRecord");
    if (rc != UTC_OK) {
        /* the copy is queued: over before the writer hears of the fail (and may free its
         * buffer); the first error's message stays */
        char why[512];
        utc__text_copy(why, sizeof why, utc_last_error());
        (void)stream_drain(t, op->device, op->s);
        return utc__error(rc, "%s", why);
    }
    ctl_t m = {.magic = CTL_MAGIC, .kind = CTL_ACK, .seq = op->d.seq, .copied = cev.handle};
    op->answered = true;
    return ctl_send(t, 1 - req->dir, writer, &m);
}

/* ipc_answer, counted in t->answering: the shutdown sends its bye once no read is inside,
 * so an ack always goes ahead of it, and a read that finds the shutdown begun copies
 * nothing (its writer, told by the bye that no answer comes, takes its buffer back). */
static utc_status_t ipc_recv(dev_tp_t *t, utc_request_t *req, dev_op_t *op, void *dst)
{
    /* seq_cst, both: pairs with dev_shutdown's store of down and load of answering */
    atomic_fetch_add(&t->answering, 1);
    int down = atomic_load(&t->down);
    utc_status_t rc =
        down ? utc__error((utc_status_t)down,
                          "conduit %d (device): the conduit was destroyed before this read "
                          "took its message from rank %d",
                          t->base.conduit_id, req->peer)
             : ipc_answer(t, req, op, dst);
    atomic_fetch_sub(&t->answering, 1);
    return rc;
}

/* A read that took a message's descriptor failed with `rc`: the message is dropped. A
 * handed buffer still listed goes; a writer waiting for this read's answer gets a fail
 * naming rc (unless the conduit is stopping: its writers end by that). */
static void recv_failed(dev_tp_t *t, utc_request_t *req, dev_op_t *op, utc_status_t rc)
{
    if (op->d.kind == K_HANDOVER) {
        handed_t *h = handed_take(t, op->d.hid);
        if (h)
            handed_drop(h);
        return;
    }
    if (op->answered || stopped(t) != UTC_OK)
        return;
    ctl_t m = {.magic = CTL_MAGIC, .kind = CTL_FAIL, .seq = op->d.seq, .status = rc};
    utc__text_copy(m.why, sizeof m.why, utc_last_error());
    op->answered = true;
    if (ctl_send(t, 1 - req->dir, req->peer, &m) != UTC_OK)
        utc_log(UTC_LOG_WARN,
                "conduit %d (device): the fail of write %llu could not be sent to rank %d "
                "(%s)",
                t->base.conduit_id, (unsigned long long)op->d.seq, req->peer, utc_last_error());
    (void)utc__error(rc, "%s", m.why); /* this read's own message again */
}

/* The end of a read that had its descriptor, with `rc`: an owned read's buffer is the
 * reader's (or freed, on failure), a CPU thread's data is in place, a failure answers the
 * writer. `own_dst`: op->dst is this layer's (an owned read's buffer, not handed over). */
static void recv_finish(dev_tp_t *t, utc_request_t *req, dev_op_t *op, bool own_dst,
                        utc_status_t rc)
{
    if (own_dst && req->owned && rc == UTC_OK)
        rc = recv_owned_give(req, op, op->dst);
    else if (own_dst && req->owned && op->dst)
        (void)cudaFreeAsync(op->dst, op->s);
    if (rc == UTC_OK && !op->gpu) /* a CPU thread: the data in place on return */
        rc = stream_drain(t, op->device, op->s);
    if (rc != UTC_OK)
        recv_failed(t, req, op, rc);
    op_end(req, rc);
}

/* A read has its descriptor: the data, by the writer's path (a staged one goes on to
 * PH_RXWAIT). */
static void recv_got(dev_tp_t *t, utc_request_t *req, dev_op_t *op)
{
    if (!req->owned && op->d.size > req->size) { /* settled before PH_GOT on every path */
        utc_status_t rc = utc__error(UTC_ERR_INTERNAL,
                                     "conduit %d (device): a %llu-byte message reached a "
                                     "%zu-byte read (a truncation not settled)",
                                     t->base.conduit_id, (unsigned long long)op->d.size, req->size);
        recv_failed(t, req, op, rc);
        op_end(req, rc);
        return;
    }
    req->received = op->d.size;
    cudaError_t err = use_device(op->device);
    utc_status_t rc =
        err == cudaSuccess ? UTC_OK : cuda_error(t->base.conduit_id, err, "cudaSetDevice");
    if (rc == UTC_OK && op->d.kind == K_HANDOVER) {
        recv_finish(t, req, op, false, handover_recv(t, req, op));
        return;
    }
    if (rc == UTC_OK && (rc = recv_dst(t, req, op, &op->dst)) == UTC_OK) {
        if (op->d.kind == K_IPC && (rc = ipc_recv(t, req, op, op->dst)) == UTC_ERR_UNSUPPORTED)
            op->refused = true;
        if (op->d.kind == K_STAGED || op->refused) {
            op->phase = PH_RXWAIT;
            return;
        }
    }
    recv_finish(t, req, op, true, rc);
}

/* A staged read's transfer ended with `st`: the data tag of its (peer, direction) is free
 * again (or out of step), and the read ends. */
static void staged_recv_end(dev_tp_t *t, dev_op_t *op, utc_status_t st)
{
    utc_request_t *req = op->req;
    pthread_mutex_lock(&t->lock);
    chan_t *ch = chan_at(t, req->peer, req->dir); /* there: made by staged_recv_begin */
    if (ch) {
        ch->rx_busy = false;
        if (op->io.out_of_step && !ch->rx_broken)
            ch->rx_broken = st != UTC_OK ? st : UTC_ERR_INTERNAL;
    }
    pthread_mutex_unlock(&t->lock);
    recv_finish(t, req, op, true, st);
}

/* Staged, reader (PH_RXWAIT): once the data tag of (writer, dir) is free, hold it, say
 * "go" and start the transfer (listed: drive moves it on). False while another staged read
 * holds the tag; true once op moved on (listed, or ended). */
static bool staged_recv_begin(dev_tp_t *t, utc_request_t *req, dev_op_t *op)
{
    utc_status_t st = stopped(t);
    if (st != UTC_OK) {
        recv_finish(t, req, op, true, st);
        return true;
    }
    pthread_mutex_lock(&t->lock);
    chan_t *ch = chan_at(t, req->peer, req->dir);
    bool got = ch && !ch->rx_busy && !ch->rx_broken;
    if (got)
        ch->rx_busy = true;
    utc_status_t broken = ch ? ch->rx_broken : UTC_OK;
    pthread_mutex_unlock(&t->lock);
    if (!ch) {
        recv_finish(t, req, op, true,
                    utc__error(UTC_ERR_NO_MEMORY, "conduit %d (device): out of memory",
                               t->base.conduit_id));
        return true;
    }
    if (broken) {
        recv_finish(t, req, op, true,
                    utc__error(UTC_ERR_STATE,
                               "conduit %d (device): the staged chunks from rank %d are out "
                               "of step since a transfer of an earlier message failed midway "
                               "(%s): destroy the conduit",
                               t->base.conduit_id, req->peer, utc_status_string(broken)));
        return true;
    }
    if (!got)
        return false;
    ctl_t m = {.magic = CTL_MAGIC, .kind = CTL_GO, .seq = op->d.seq, .ipc_refused = op->refused};
    op->answered = true;
    utc_status_t rc = ctl_send(t, 1 - req->dir, req->peer, &m);
    bool go_sent = rc == UTC_OK;
    utc__staged_io_t *io = io_of(t, op, req->dir, req->peer);
    cudaError_t err = rc == UTC_OK ? use_device(op->device) : cudaSuccess;
    if (err != cudaSuccess)
        rc = cuda_error(t->base.conduit_id, err, "cudaSetDevice");
    if (rc == UTC_OK)
        rc = utc__staged_start(io, false, op->dst, op->dev_buf, op->d.size, op->d.chunk,
                               op->gpu ? op->s : NULL, &op->x);
    if (rc != UTC_OK) {
        /* no transfer: the writer's chunks (it has its "go") are not taken */
        io->out_of_step = go_sent;
        staged_recv_end(t, op, rc);
        return true;
    }
    xfer_list(t, op);
    return true;
}

/* ---- the stash, probes and any-tag reads ---- */

/* Under t->lock: stash e, among the stashed descriptors of its (dir, peer, tag) in the
 * order they were written (seq), so the first of its tag is the oldest. */
static void stash_insert(dev_tp_t *t, stash_t *e)
{
    stash_t **p = &t->stash;
    for (; *p; p = &(*p)->next)
        if ((*p)->dir == e->dir && (*p)->peer == e->peer && (*p)->tag == e->tag &&
            (*p)->d.seq > e->d.seq)
            break;
    e->next = *p;
    *p = e;
}

/*
 * Under pull_lock: take every descriptor of (dir, peer) that the inner transport has now
 * and that no read started earlier waits for into the stash, in the order they come (an
 * any-tag probe of the inner transport, which never sees the layer's own tags, then a read
 * of the tag it found). UTC_OK (nothing more now); the inner probe's UTC_ERR_CLOSED (the
 * stream is over) or failure status; a descriptor that is none (UTC_ERR_INTERNAL: dropped)
 * or no memory for it; UTC_ERR_MPI with its code in *tp_err.
 */
static utc_status_t pull(dev_tp_t *t, int dir, int peer, int *tp_err)
{
    for (;;) {
        utc_request_t q;
        utc__req_prepare(&q, UTC__OP_RECV, dir, UTC_ANY_TAG, peer, t->in);
        utc_status_t st = t->in->ops->probe(t->in, &q);
        if (st == UTC_ERR_TIMEOUT)
            return UTC_OK;
        if (st != UTC_OK)
            return st;
        stash_t *e = malloc(sizeof *e);
        if (!e)
            return utc__error(UTC_ERR_NO_MEMORY, "conduit %d (device): out of memory",
                              t->base.conduit_id);
        *e = (stash_t){.dir = dir, .peer = peer, .tag = q.tag};
        utc__req_prepare(&q, UTC__OP_RECV, dir, e->tag, peer, t->in);
        q.rbuf = &e->d;
        q.size = sizeof e->d;
        if ((st = t->in->ops->start(t->in, &q)) != UTC_OK) {
            free(e);
            return st;
        }
        /* the probe found it and no read started since (pull_lock): it is there */
        if (utc__req_state(&q) != UTC__REQ_DONE && !t->in->ops->progress(t->in, &q)) {
            if (t->in->ops->cancel(t->in, &q)) { /* gone after all: nothing to take */
                free(e);
                return UTC_OK;
            }
            (void)t->in->ops->wait(t->in, &q, -1); /* matched: arriving */
        }
        st = q.status;
        *tp_err = q.tp_err;
        if (st == UTC_OK && (q.received != sizeof(desc_t) || e->d.magic != DESC_MAGIC))
            st = utc__error(UTC_ERR_INTERNAL,
                            "conduit %d (device): message of tag %d from rank %d is no "
                            "device descriptor (%zu bytes): dropped",
                            t->base.conduit_id, e->tag, peer, q.received);
        if (st != UTC_OK) {
            free(e);
            return st;
        }
        pthread_mutex_lock(&t->lock);
        stash_insert(t, e);
        pthread_mutex_unlock(&t->lock);
    }
}

/* Under t->lock: whether an any-tag read of (dir, peer) started before `id` (0: any) waits
 * (it takes the oldest message there first). */
static bool any_read_before(dev_tp_t *t, int dir, int peer, uint64_t id)
{
    for (dev_op_t *o = t->live; o; o = o->next_live)
        if (o->phase == PH_ANY && o->id && o->req->dir == dir && o->req->peer == peer &&
            (id == 0 || o->id < id))
            return true;
    return false;
}

/* Under t->lock: whether a read of (dir, peer, tag) (UTC_ANY_TAG: of any tag) started
 * before `id` (0: any) still waits for its descriptor: the next message of the tag is its
 * own (reads of a tag get their messages in the order they were started). A read not yet
 * posted (id 0) comes after every posted one. */
static bool tag_read_before(dev_tp_t *t, int dir, int peer, int tag, uint64_t id)
{
    for (dev_op_t *o = t->live; o; o = o->next_live)
        if (o->phase == PH_DESC && o->id && o->req->op == UTC__OP_RECV &&
            (tag == UTC_ANY_TAG || o->req->tag == tag) && o->req->dir == dir &&
            o->req->peer == peer && (id == 0 || o->id < id))
            return true;
    return false;
}

/* Under t->lock: the stashed descriptor an any-tag read started as `id` (0: a probe) gets:
 * the oldest written of (dir, peer) whose tag no earlier read waits for. */
static stash_t *stash_any(dev_tp_t *t, int dir, int peer, uint64_t id)
{
    stash_t *best = NULL;
    for (stash_t *e = t->stash; e; e = e->next)
        if (e->dir == dir && e->peer == peer && (!best || e->d.seq < best->d.seq) &&
            !tag_read_before(t, dir, peer, e->tag, id))
            best = e;
    return best;
}

/* Under t->lock: read req takes stashed descriptor e (PH_GOT), or, too large for it, leaves
 * it first of its tag and ends UTC_ERR_TRUNCATE (PH_TRUNC, its size in op->d). */
static void stash_take(dev_tp_t *t, utc_request_t *req, dev_op_t *op, stash_t *e)
{
    op->d = e->d;
    if (!req->owned && e->d.size > req->size) {
        op->phase = PH_TRUNC;
        return;
    }
    stash_t **p = &t->stash;
    while (*p != e)
        p = &(*p)->next;
    *p = e->next;
    free(e);
    op->phase = PH_GOT;
}

/* Under t->lock: the first stashed descriptor of (dir, peer, tag) (the oldest), or NULL. */
static stash_t *stash_first(dev_tp_t *t, int dir, int peer, int tag)
{
    stash_t *e = t->stash;
    while (e && !(e->dir == dir && e->peer == peer && e->tag == tag))
        e = e->next;
    return e;
}

/* An any-tag read (PH_ANY): the oldest message of (dir, peer) there is, by pull, once the
 * any-tag reads started before it have theirs. True once it moved on (PH_GOT or PH_TRUNC,
 * its tag set; or ended: the stream is over, a failure, the shutdown); false while none
 * came for it. */
static bool any_step(dev_tp_t *t, utc_request_t *req, dev_op_t *op)
{
    int tp_err = 0;
    pthread_mutex_lock(&t->pull_lock);
    utc_status_t st = pull(t, req->dir, req->peer, &tp_err);
    pthread_mutex_lock(&t->lock);
    bool first = !any_read_before(t, req->dir, req->peer, op->id);
    stash_t *e = first ? stash_any(t, req->dir, req->peer, op->id) : NULL;
    if (e) {
        req->tag = e->tag;
        stash_take(t, req, op, e);
    }
    /* messages still there go to the reads started before it, then maybe to it; a read
     * still settling its descriptor may put one back (a truncation) */
    bool left = tag_read_before(t, req->dir, req->peer, UTC_ANY_TAG, 0);
    for (stash_t *x = t->stash; x && !left; x = x->next)
        left = x->dir == req->dir && x->peer == req->peer;
    pthread_mutex_unlock(&t->lock);
    pthread_mutex_unlock(&t->pull_lock);
    op->q.tp_err = tp_err; /* (an MPI error's code, for op_end) */
    if (e)
        return true;
    if (st == UTC_OK)
        st = stopped(t);
    if (st == UTC_OK || (st == UTC_ERR_CLOSED && left))
        return false;
    op_end(req, st);
    return true;
}

/* A read waiting for its descriptor (PH_DESC), the oldest read of its tag, with a stashed
 * message of its tag (one a read truncated, put back first of its tag): its inner read
 * withdrawn (none matched yet), it takes that one. True when it did (PH_GOT or
 * PH_TRUNC). */
static bool desc_stashed(dev_tp_t *t, utc_request_t *req, dev_op_t *op)
{
    bool got = false;
    pthread_mutex_lock(&t->pull_lock);
    pthread_mutex_lock(&t->lock);
    stash_t *e = stash_first(t, req->dir, req->peer, req->tag);
    if (e && utc__req_state(&op->q) != UTC__REQ_DONE && t->in->ops->cancel(t->in, &op->q)) {
        stash_take(t, req, op, e);
        got = true;
    }
    pthread_mutex_unlock(&t->lock);
    pthread_mutex_unlock(&t->pull_lock);
    return got;
}

static utc_status_t recv_start(dev_tp_t *t, utc_request_t *req, dev_op_t *op)
{
    int bdev = -1;
    op->dev_buf = !req->owned && is_device(req->rbuf, &bdev);
    utc_status_t rc = op_caller(t, op, op->dev_buf, bdev);
    if (rc != UTC_OK)
        return rc;
    /* its id (the order of reads) given where it is posted, under pull_lock: ids follow the
     * order the inner transport serves reads in */
    pthread_mutex_lock(&t->pull_lock);
    pthread_mutex_lock(&t->lock);
    op->id = ++t->next_id;
    if (req->tag == UTC_ANY_TAG) { /* looks at each step (PH_ANY) */
        op->phase = PH_ANY;
        pthread_mutex_unlock(&t->lock);
        pthread_mutex_unlock(&t->pull_lock);
        return UTC_OK;
    }
    /* a stashed message of its tag, unless an earlier read of the tag waits (it is that
     * one's): taken, or too large, left first of its tag */
    stash_t *e = tag_read_before(t, req->dir, req->peer, req->tag, op->id)
                     ? NULL
                     : stash_first(t, req->dir, req->peer, req->tag);
    if (e)
        stash_take(t, req, op, e);
    pthread_mutex_unlock(&t->lock);
    if (e) {
        pthread_mutex_unlock(&t->pull_lock);
        return UTC_OK;
    }
    utc__req_prepare(&op->q, UTC__OP_RECV, req->dir, req->tag, req->peer, t->in);
    op->q.rbuf = &op->d;
    op->q.size = sizeof op->d;
    /* posted at once (the in-process transport leaves a blocking read's unposted, polled
     * by its owner: op->q lives on the heap, in op): reads get their messages in the order
     * they were started, and a pull (an any-tag probe of the inner transport) never takes
     * a message a started read waits for */
    op->q.heap = true;
    rc = t->in->ops->start(t->in, &op->q);
    pthread_mutex_unlock(&t->pull_lock);
    return rc;
}

static bool advance(dev_tp_t *t, utc_request_t *req);

static utc_status_t dev_start(utc__transport_t *tp, utc_request_t *req)
{
    dev_tp_t *t = dt_of(tp);
    UTC__REQ_PRIV(req, dev_priv_t)->op = NULL;
    UTC__REQ_PRIV(req, dev_priv_t)->has_why = false;
    utc_status_t st = stopped(t);
    if (st != UTC_OK) {
        utc__req_finish(req, st);
        return UTC_OK;
    }
    dev_op_t *op = calloc(1, sizeof *op);
    if (!op)
        return utc__error(UTC_ERR_NO_MEMORY, "conduit %d (device): out of memory", tp->conduit_id);
    op->phase = PH_DESC;
    op->req = req;
    /* listed (and the request's) from now, held by this thread while it starts: no other
     * thread steps or claims it; a read gets its id where it is posted (recv_start) */
    pthread_mutex_lock(&t->lock);
    UTC__REQ_PRIV(req, dev_priv_t)->op = op;
    op->stepping = true;
    op->next_live = t->live;
    if (t->live)
        t->live->prev_live = op;
    t->live = op;
    pthread_mutex_unlock(&t->lock);
    int prev = dev_save();
    utc_status_t rc = req->op == UTC__OP_SEND ? send_start(t, req, op) : recv_start(t, req, op);
    dev_restore(prev);
    pthread_mutex_lock(&t->lock);
    if (rc != UTC_OK) {
        UTC__REQ_PRIV(req, dev_priv_t)->op = NULL;
        live_unlink(t, op);
    } else {
        if (!op->id)
            op->id = ++t->next_id;
        op->stepping = false;
    }
    pthread_mutex_unlock(&t->lock);
    if (rc != UTC_OK) {
        free(op);
        return rc;
    }
    /* a write's descriptor usually leaves at once: the write then waits for its answer,
     * which any thread's drive takes (or, handed over in-process, it is done). Only its
     * owner sees a descriptor sent later (a full node ring, a slow MPI send). */
    if (req->op == UTC__OP_SEND)
        (void)advance(t, req);
    return UTC_OK;
}

/* A write's end with `rc` (its answer came, or its staged transfer ended): a CPU thread's
 * source is free on return, an owned buffer goes once sent (or is the caller's again). */
static void send_finish(dev_tp_t *t, utc_request_t *req, dev_op_t *op, utc_status_t rc)
{
    if (op->ev_held) {
        utc__ipc_event_put(&op->ev);
        op->ev_held = false;
    }
    if (rc == UTC_OK && !op->gpu)
        rc = stream_drain(t, op->device, op->s);
    if (req->owned && rc == UTC_OK) /* sent: the buffer goes, after the transfer */
        (void)cudaFreeAsync((void *)req->sbuf, op->s);
    else if (rc != UTC_OK)
        owned_back(req, op);
    op_end(req, rc);
}

/* A staged write's transfer ended with `st`: a transfer that failed in the host transport
 * leaves the chunks to its (peer, direction) out of step; the write ends. */
static void send_staged_end(dev_tp_t *t, dev_op_t *op, utc_status_t st)
{
    if (op->io.out_of_step) {
        pthread_mutex_lock(&t->lock);
        if (!op->ch->tx_broken)
            op->ch->tx_broken = st != UTC_OK ? st : UTC_ERR_INTERNAL;
        pthread_mutex_unlock(&t->lock);
    }
    send_finish(t, op->req, op, st);
}

/* A write whose reader said "go": start its staged transfer and list it (drive moves it
 * on and ends the write), or with `rc` an error before it, the abort mark of every chunk
 * (the reader waits for them). Ends the write itself when no transfer could start. */
static void send_staged(dev_tp_t *t, utc_request_t *req, dev_op_t *op, utc_status_t rc)
{
    pthread_mutex_lock(&t->lock);
    if (op->ctl.ipc_refused)
        op->ch->ipc_off = true;
    utc_status_t broken = op->ch->tx_broken;
    pthread_mutex_unlock(&t->lock);
    /* the reader's chunk size: the descriptor's, else (IPC refused) its default */
    utc_status_t cs = op->d.chunk ? UTC_OK : utc__device_chunk_size(&op->d.chunk);
    if (rc == UTC_OK)
        rc = cs;
    if (rc == UTC_OK && broken)
        rc = utc__error(UTC_ERR_STATE,
                        "conduit %d (device): the staged chunks to rank %d are out of step "
                        "since a transfer of an earlier message failed midway (%s): destroy "
                        "the conduit",
                        t->base.conduit_id, req->peer, utc_status_string(broken));
    utc__staged_io_t *io = io_of(t, op, req->dir, req->peer);
    utc_status_t st = UTC_OK;
    if (rc == UTC_OK)
        st = utc__staged_start(io, true, (void *)req->sbuf, op->dev_buf, req->size, op->d.chunk,
                               op->gpu ? op->s : NULL, &op->x);
    else if (op->d.chunk)
        st = utc__staged_start_abort(io, req->size, op->d.chunk, 0, rc, &op->x);
    if (op->x) {
        xfer_list(t, op);
        return;
    }
    /* no transfer: no chunk size, or none could start: the reader waits for chunks never
     * sent */
    io->out_of_step = true;
    send_staged_end(t, op, rc != UTC_OK ? rc : st);
}

/* A write whose control message came: finish it by its path (a staged one goes on in its
 * transfer). */
static void send_ctl_done(dev_tp_t *t, utc_request_t *req, dev_op_t *op)
{
    utc_status_t rc = op->ctl_err;
    if (op->bye)
        rc = utc__error(rc,
                        "conduit %d (device): rank %d destroyed the conduit before it took "
                        "this %s write of %zu bytes",
                        t->base.conduit_id, req->peer, kind_name[op->d.kind], req->size);
    else if (rc == UTC_OK && op->ctl.kind == CTL_GO && atomic_load(&t->down))
        rc = (utc_status_t)atomic_load(&t->down); /* no transfer starts in the shutdown */
    cudaError_t err = use_device(op->device);
    if (rc == UTC_OK && err != cudaSuccess)
        rc = cuda_error(t->base.conduit_id, err, "cudaSetDevice");
    if (rc == UTC_OK && op->ctl.kind == CTL_ACK && op->d.kind == K_IPC) {
        /* the writer's stream waits for the reader's copy: the buffer is reusable in
         * stream order */
        rc = utc__ipc_event_wait(req->peer, &op->ctl.copied, op->s);
    } else if (op->ctl_err == UTC_OK && op->ctl.kind == CTL_GO && !atomic_load(&t->down)) {
        send_staged(t, req, op, rc);
        return;
    } else if (rc == UTC_OK && op->ctl.kind == CTL_FAIL) {
        utc_status_t st = op->ctl.status;
        if (st >= 0 || !strcmp(utc_status_string(st), "unknown status"))
            st = UTC_ERR_INTERNAL; /* not a status: from a reader of another build? */
        op->ctl.why[sizeof op->ctl.why - 1] = 0;
        rc = utc__error(st,
                        "conduit %d (device): the reader on rank %d could not take this %s "
                        "write of %zu bytes, which is dropped: %s",
                        t->base.conduit_id, req->peer, kind_name[op->d.kind], req->size,
                        op->ctl.why);
    } else if (rc == UTC_OK) {
        rc = utc__error(UTC_ERR_INTERNAL,
                        "conduit %d (device): rank %d answered a %s write "
                        "with control message %u",
                        t->base.conduit_id, req->peer, kind_name[op->d.kind], op->ctl.kind);
    }
    send_finish(t, req, op, rc);
}

/*
 * A read's inner read ended with `st` (UTC_OK: op->d came; UTC_ERR_CLOSED): where it goes,
 * decided at once under the locks (so a later read of the tag sees the outcome):
 * - a stashed descriptor of its tag written before op->d (a message another read
 *   truncated while this one was posted) is the read's, and op->d is stashed behind it;
 * - the read's descriptor too large for it stays (stashed) first of its tag:
 *   UTC_ERR_TRUNCATE, its size in req->received;
 * - else PH_GOT. UTC_OK; UTC_ERR_TRUNCATE; st (the end of stream, nothing stashed);
 *   UTC_ERR_NO_MEMORY (op->d could not be kept: dropped).
 */
static utc_status_t desc_settle(dev_tp_t *t, utc_request_t *req, dev_op_t *op, utc_status_t st)
{
    stash_t *spare = st == UTC_OK ? malloc(sizeof *spare) : NULL;
    pthread_mutex_lock(&t->pull_lock);
    pthread_mutex_lock(&t->lock);
    stash_t *first = stash_first(t, req->dir, req->peer, req->tag);
    bool behind = first && (st == UTC_ERR_CLOSED || first->d.seq < op->d.seq);
    bool keep = st == UTC_OK && (behind || (!req->owned && op->d.size > req->size));
    if (keep && !spare) {
        st = utc__error(UTC_ERR_NO_MEMORY,
                        "conduit %d (device): out of memory to keep a message of tag %d "
                        "from rank %d: dropped",
                        t->base.conduit_id, req->tag, req->peer);
    } else if (keep) {
        *spare = (stash_t){.dir = req->dir, .peer = req->peer, .tag = req->tag, .d = op->d};
        stash_insert(t, spare);
        spare = NULL;
        if (!behind) { /* too large: it stays first of its tag */
            req->received = op->d.size;
            st = UTC_ERR_TRUNCATE;
            op->phase = PH_TRUNC;
        }
    }
    if (behind && st != UTC_ERR_NO_MEMORY) {
        stash_take(t, req, op, stash_first(t, req->dir, req->peer, req->tag));
        st = op->phase == PH_TRUNC ? UTC_ERR_TRUNCATE : UTC_OK;
        if (st == UTC_ERR_TRUNCATE)
            req->received = op->d.size;
    } else if (st == UTC_OK) {
        op->phase = PH_GOT;
    }
    pthread_mutex_unlock(&t->lock);
    pthread_mutex_unlock(&t->pull_lock);
    free(spare);
    return st;
}

/* The descriptor's send or receive completed (q DONE): next phase. */
static void desc_done(dev_tp_t *t, utc_request_t *req, dev_op_t *op)
{
    utc_status_t st = op->q.status;
    if (req->op == UTC__OP_RECV) {
        if (st == UTC_OK && (op->q.received != sizeof(desc_t) || op->d.magic != DESC_MAGIC))
            st = utc__error(UTC_ERR_INTERNAL,
                            "conduit %d (device): message of tag %d from "
                            "rank %d is no device descriptor (%zu bytes)",
                            t->base.conduit_id, req->tag, req->peer, op->q.received);
        utc_status_t came = st;
        if (st == UTC_OK || st == UTC_ERR_CLOSED)
            st = desc_settle(t, req, op, st);
        if (st == UTC_ERR_NO_MEMORY && came == UTC_OK)
            recv_failed(t, req, op, st); /* its writer learns it was dropped */
        if (st != UTC_OK)
            op_end(req, st);
        return;
    }
    if (st != UTC_OK) {
        if (op->ch) {
            pthread_mutex_lock(&t->lock);
            if (!op->ctl_got)
                ctl_unwait(op);
            pthread_mutex_unlock(&t->lock);
        }
        if (op->d.kind == K_HANDOVER) {
            handed_t *h = handed_take(t, op->d.hid);
            if (h && req->owned)
                h->ptr = NULL;
            if (h)
                handed_drop(h);
        }
        if (op->ev_held)
            utc__ipc_event_put(&op->ev);
        owned_back(req, op);
        op_end(req, st);
        return;
    }
    if (op->d.kind == K_HANDOVER) { /* handed over: the reader takes it from here */
        op_end(req, UTC_OK);
        return;
    }
    pthread_mutex_lock(&t->lock); /* from now on another thread may finish it */
    op->phase = PH_CTL;
    pthread_mutex_unlock(&t->lock);
}

/* What op_step did: nothing (op is as it was, still the caller's), or something (op may
 * have ended, or be another thread's now: the caller touches neither op nor, unless it
 * is its owner, its request). */
enum { STEP_WAIT, STEP_DID };

/* One step of op, whose `stepping` the caller holds: its phase's action, as far as it goes
 * without waiting (a staged transfer is started and listed, not run). `stashed`: the
 * stash had descriptors when the caller looked. */
static int op_step(dev_tp_t *t, dev_op_t *op, bool stashed)
{
    utc_request_t *req = op->req;
    switch (op->phase) {
    case PH_DESC:
        if (req->op == UTC__OP_RECV) {
            /* reads of a tag take their messages in the order they were started */
            pthread_mutex_lock(&t->lock);
            bool later = tag_read_before(t, req->dir, req->peer, req->tag, op->id);
            pthread_mutex_unlock(&t->lock);
            if (later)
                return STEP_WAIT;
            if (stashed && desc_stashed(t, req, op))
                return STEP_DID; /* (PH_GOT or PH_TRUNC) */
        }
        if (utc__req_state(&op->q) != UTC__REQ_DONE && !t->in->ops->progress(t->in, &op->q))
            return STEP_WAIT;
        desc_done(t, req, op);
        return STEP_DID;
    case PH_GOT:
        recv_got(t, req, op);
        return STEP_DID;
    case PH_TRUNC: /* its message stays first of its tag */
        req->received = op->d.size;
        op_end(req, UTC_ERR_TRUNCATE);
        return STEP_DID;
    case PH_RXWAIT:
        return staged_recv_begin(t, req, op) ? STEP_DID : STEP_WAIT;
    case PH_ANY:
        return any_step(t, req, op) ? STEP_DID : STEP_WAIT;
    case PH_CTL: {
        int got = ctl_poll(t, req, stopped(t));
        if (got == CTL_WAIT)
            return STEP_WAIT;
        if (got == CTL_MINE)
            send_ctl_done(t, req, op);
        return STEP_DID; /* (CTL_OTHERS: another thread finishes it) */
    }
    default:
        return STEP_WAIT; /* PH_STAGED: listed, drive's */
    }
}

/* The owner's moves: req on as far as it goes without waiting, unless another thread
 * steps it now (drive) or finishes it (claimed). True once DONE. */
static bool advance_steps(dev_tp_t *t, utc_request_t *req)
{
    dev_op_t *held = NULL; /* the op whose `stepping` this thread holds */
    for (;;) {
        if (utc__req_state(req) == UTC__REQ_DONE)
            return true;
        pthread_mutex_lock(&t->lock);
        dev_op_t *op = op_of(req);
        if (!op || op->claimed) { /* ended, or another thread's to finish (and free) */
            pthread_mutex_unlock(&t->lock);
            return utc__req_state(req) == UTC__REQ_DONE;
        }
        if (op != held) {
            if (op->stepping) { /* drive moves it now */
                pthread_mutex_unlock(&t->lock);
                return false;
            }
            op->stepping = true;
            held = op;
        }
        bool stashed = t->stash != NULL;
        pthread_mutex_unlock(&t->lock);
        if (op_step(t, op, stashed) == STEP_WAIT) {
            pthread_mutex_lock(&t->lock);
            op->stepping = false;
            pthread_mutex_unlock(&t->lock);
            return false;
        }
    }
}

/* advance_steps, the calling thread's device its own again afterwards */
static bool advance(dev_tp_t *t, utc_request_t *req)
{
    if (utc__req_state(req) == UTC__REQ_DONE)
        return true;
    int prev = dev_save();
    bool done = advance_steps(t, req);
    dev_restore(prev);
    return done;
}

/* Drive's part: one step of every operation that neither its owner nor another thread
 * moves now (a read whose reader waits for another request, say: its writer may wait for
 * its answer). Under t->drive. */
static void drive_idle(dev_tp_t *t)
{
    unsigned pass = ++t->pass;
    for (;;) {
        pthread_mutex_lock(&t->lock);
        dev_op_t *op = t->live;
        while (op && (op->claimed || op->stepping || op->pass == pass))
            op = op->next_live;
        if (!op) {
            pthread_mutex_unlock(&t->lock);
            return;
        }
        op->pass = pass;
        op->stepping = true;
        uint64_t id = op->id;
        bool stashed = t->stash != NULL;
        pthread_mutex_unlock(&t->lock);
        if (use_device(op->device) != cudaSuccess)
            (void)cudaGetLastError(); /* its own calls fail and say why */
        int did = op_step(t, op, stashed);
        pthread_mutex_lock(&t->lock);
        if (did == STEP_WAIT) {
            op->stepping = false;
        } else { /* op may be gone: give it back only if it is still there, unclaimed */
            for (dev_op_t *o = t->live; o; o = o->next_live)
                if (o == op && o->id == id) {
                    if (!o->claimed)
                        o->stepping = false;
                    break;
                }
        }
        pthread_mutex_unlock(&t->lock);
    }
}

/*
 * Move on every staged transfer in flight on t (each one step as far as it goes without
 * waiting; one that ends finishes its operation), after a step of every operation nobody
 * steps now (drive_idle: a write waiting for its answer reads its channel there). Called
 * by every thread that waits for or tests an operation of t, whichever operation: so a
 * thread blocked in a read still sends its own staged writes. One thread at a time
 * (trylock: another one driving is as good).
 */
static void drive(dev_tp_t *t)
{
    if (pthread_mutex_trylock(&t->drive) != 0)
        return;
    int prev = dev_save();
    drive_idle(t);
    pthread_mutex_lock(&t->lock);
    dev_op_t *list = t->xfers, *keep = NULL, **tail = &keep;
    t->xfers = NULL;
    pthread_mutex_unlock(&t->lock);
    while (list) {
        dev_op_t *op = list;
        list = op->next_x;
        op->next_x = NULL;
        if (use_device(op->device) != cudaSuccess)
            (void)cudaGetLastError(); /* the transfer's own calls fail and say why */
        utc_status_t st;
        if (!utc__staged_step(op->x, &st)) {
            *tail = op;
            tail = &op->next_x;
            continue;
        }
        op->x = NULL;
        if (op->req->op == UTC__OP_SEND)
            send_staged_end(t, op, st);
        else
            staged_recv_end(t, op, st);
    }
    if (keep) { /* before the ones listed meanwhile: the older ones first */
        pthread_mutex_lock(&t->lock);
        *tail = t->xfers;
        t->xfers = keep;
        pthread_mutex_unlock(&t->lock);
    }
    dev_restore(prev);
    pthread_mutex_unlock(&t->drive);
}

static bool dev_progress(utc__transport_t *tp, utc_request_t *req)
{
    dev_tp_t *t = dt_of(tp);
    if (!advance(t, req))
        drive(t);
    return done_here(req);
}

/* The longest sleep in the inner wait of a read's descriptor: work for drive (a write
 * waiting for its answer, a staged transfer) may come meanwhile. */
#define DESC_NAP_S 0.01

static bool dev_wait(utc__transport_t *tp, utc_request_t *req, double timeout_s)
{
    dev_tp_t *t = dt_of(tp);
    double deadline = utc__deadline(timeout_s);
    utc__poll_t p = UTC__POLL_INIT;
    for (;;) {
        if (advance(t, req))
            return done_here(req);
        drive(t);
        if (utc__req_state(req) == UTC__REQ_DONE)
            return done_here(req);
        double left = deadline < 0 ? -1 : deadline - utc_wtime();
        if (deadline >= 0 && left <= 0)
            return false;
        /* its descriptor on the way, nothing else to move: a nap in the inner wait (held
         * as its stepper, so no other thread frees it meanwhile); else poll, driving */
        pthread_mutex_lock(&t->lock);
        dev_op_t *op = op_of(req);
        bool nap = op && !op->claimed && !op->stepping && op->phase == PH_DESC && !t->xfers;
        for (dev_op_t *o = t->live; o && nap; o = o->next_live)
            nap = o == op || o->claimed; /* no other operation for drive to move (a write
                                          * waiting for its answer is one) */
        if (nap)
            op->stepping = true;
        pthread_mutex_unlock(&t->lock);
        if (nap) {
            (void)t->in->ops->wait(t->in, &op->q,
                                   left < 0 || left > DESC_NAP_S ? DESC_NAP_S : left);
            pthread_mutex_lock(&t->lock);
            op->stepping = false;
            pthread_mutex_unlock(&t->lock);
        } else {
            utc__poll_step(&p);
        }
    }
}

static bool dev_cancel(utc__transport_t *tp, utc_request_t *req)
{
    dev_tp_t *t = dt_of(tp);
    if (req->op != UTC__OP_RECV)
        return false;
    /* under the lock: an op nobody steps or finishes now is the caller's (its owner's) to
     * withdraw; one drive steps now is its again after that one bounded step */
    utc__poll_t p = UTC__POLL_INIT;
    dev_op_t *op;
    for (;;) {
        pthread_mutex_lock(&t->lock);
        op = op_of(req);
        if (!(op && !op->claimed && op->stepping && (op->phase == PH_ANY || op->phase == PH_DESC)))
            break;
        pthread_mutex_unlock(&t->lock);
        utc__poll_step(&p);
    }
    bool out = op && !op->claimed && !op->stepping &&
               (op->phase == PH_ANY || (op->phase == PH_DESC && t->in->ops->cancel(t->in, &op->q)));
    if (out) { /* unhooked, as op_end does: a thread looking at it sees it or nothing */
        UTC__REQ_PRIV(req, dev_priv_t)->op = NULL;
        live_unlink(t, op);
    }
    pthread_mutex_unlock(&t->lock);
    if (out)
        free(op);
    return out;
}

/* A probe: the stash, after taking into it what the inner transport has (pull), says the
 * message's size and tag; nothing is read. The probing thread moves the transfers on. */
static utc_status_t dev_probe(utc__transport_t *tp, utc_request_t *req)
{
    dev_tp_t *t = dt_of(tp);
    drive(t);
    int tp_err = 0;
    pthread_mutex_lock(&t->pull_lock);
    utc_status_t st = pull(t, req->dir, req->peer, &tp_err);
    pthread_mutex_lock(&t->lock);
    /* what a read started now would get: not a message earlier reads wait for (the oldest
     * one when an any-tag read waits; its tag's next when a read of its tag does) */
    stash_t *e = NULL;
    bool any_waits = any_read_before(t, req->dir, req->peer, 0), hidden;
    if (req->tag == UTC_ANY_TAG) {
        /* (a read settling its descriptor may put one back: not over yet) */
        hidden = any_waits || tag_read_before(t, req->dir, req->peer, UTC_ANY_TAG, 0);
        e = any_waits ? NULL : stash_any(t, req->dir, req->peer, 0);
    } else {
        hidden = tag_read_before(t, req->dir, req->peer, req->tag, 0);
        e = hidden ? NULL : stash_first(t, req->dir, req->peer, req->tag);
        stash_t *oldest = e && any_waits ? stash_any(t, req->dir, req->peer, 0) : NULL;
        if (oldest == e && oldest) {
            e = NULL;
            hidden = true;
        }
    }
    desc_t d = e ? e->d : (desc_t){0};
    int tag = e ? e->tag : req->tag;
    bool got = e != NULL;
    pthread_mutex_unlock(&t->lock);
    pthread_mutex_unlock(&t->pull_lock);
    req->tp_err = tp_err;
    if (got) {
        req->received = (size_t)d.size;
        req->tag = tag;
        return UTC_OK;
    }
    if (hidden && (st == UTC_OK || st == UTC_ERR_CLOSED)) /* there is one: an earlier read's */
        return UTC_ERR_TIMEOUT;
    if (st == UTC_OK)
        st = stopped(t);
    return st != UTC_OK ? st : UTC_ERR_TIMEOUT;
}

static utc_status_t dev_close(utc__transport_t *tp, int dir, int peer)
{
    dev_tp_t *t = dt_of(tp);
    return t->in->ops->close(t->in, dir, peer);
}

/* How long the shutdown waits for its byes to leave (bye_exchange). */
#define BYE_SEND_S 1.0

/* Under t->lock: whether an IPC write waits on ch for its answer. */
static bool chan_ipc_waits(const chan_t *ch)
{
    for (const dev_op_t *w = ch->waiting; w; w = w->next_wait)
        if (w->d.kind == K_IPC)
            return true;
    return false;
}

/*
 * The shutdown's handshake, before the inner transport's shutdown (down is set, no read is
 * inside ipc_answer): a bye to every peer in both directions, behind every ack this rank
 * sent; then, while IPC writes of this rank wait for an answer, their channels are read
 * until it comes or the peer's bye does. An IPC write's reader copies straight from the
 * writer's buffer: a write canceled while its reader's ack was on its way let the writer
 * reuse the buffer under the copy of a read that returned UTC_OK. So such a write ends
 * UTC_OK, its stream after the copy; one whose descriptor the reader never took ends with
 * the shutdown's status. Waits for the peer's destroy (collective) only while such a write
 * waits, saying so every 10 s.
 */
static void bye_exchange(dev_tp_t *t)
{
    static const ctl_t bye = {.magic = CTL_MAGIC, .kind = CTL_BYE};
    /* A peer that waits for this bye reads its channel (draining the ring towards it), so
     * the bye leaves at once then. A bye still not out after BYE_SEND_S (a full ring
     * towards a rank that reads nothing now: it already destroyed the conduit, say) is
     * left to the inner shutdown, which ends it: the destroy must not wait for a rank
     * that may never read again. */
    double until = utc_wtime() + BYE_SEND_S;
    t->byes = malloc(sizeof *t->byes * (size_t)(2 * t->npeers + 1));
    for (int i = 0; i < t->npeers; i++)
        for (int dir = 0; dir < 2; dir++) {
            utc_request_t *q = malloc(sizeof *q);
            utc_status_t rc = UTC_ERR_NO_MEMORY;
            if (q) {
                utc__req_prepare(q, UTC__OP_SEND, dir, UTC__DEVICE_TAG_CTL, t->peers[i], t->in);
                q->sbuf = &bye;
                q->size = sizeof bye;
                rc = t->in->ops->start(t->in, q);
            }
            if (rc != UTC_OK) {
                free(q);
                utc_log(UTC_LOG_DEBUG, "conduit %d (device): the bye to rank %d not sent (%s)",
                        t->base.conduit_id, t->peers[i], utc_last_error());
                continue;
            }
            double left = until - utc_wtime();
            if (utc__req_state(q) != UTC__REQ_DONE) /* (no list: no memory, wait it out) */
                (void)t->in->ops->wait(t->in, q, !t->byes ? -1 : left > 0 ? left : 0);
            if (utc__req_state(q) == UTC__REQ_DONE)
                free(q);
            else if (t->byes)
                t->byes[t->nbyes++] = q; /* (else the inner transport's still: left) */
        }
    if (t->nbyes)
        utc_log(UTC_LOG_DEBUG,
                "conduit %d (device): %d bye(s) not out within %.1f s (full rings towards "
                "ranks that read nothing now)",
                t->base.conduit_id, t->nbyes, BYE_SEND_S);
    utc__poll_t p = UTC__POLL_INIT;
    double next_note = utc_wtime() + 10;
    int prev = dev_save();
    for (;;) {
        bool waits = false;
        dev_op_t *other = NULL;
        pthread_mutex_lock(&t->lock);
        for (chan_t *ch = t->chans; ch && !other; ch = ch->next)
            if (chan_ipc_waits(ch)) {
                other = chan_step(t, ch, NULL);
                waits |= chan_ipc_waits(ch);
            }
        pthread_mutex_unlock(&t->lock);
        if (other) { /* an answer came: that write ends here */
            send_ctl_done(t, other->req, other);
            p = (utc__poll_t)UTC__POLL_INIT;
            continue;
        }
        if (!waits)
            break;
        if (utc_wtime() > next_note) {
            utc_log(UTC_LOG_WARN,
                    "conduit %d (device): utc_conduit_destroy waits for the answers to its "
                    "CUDA IPC writes, or for their readers' ranks to destroy it too (it is "
                    "collective)",
                    t->base.conduit_id);
            next_note += 10;
        }
        utc__poll_step(&p);
    }
    dev_restore(prev);
    atomic_store(&t->bye_over, true);
}

/* The byes the inner shutdown ended (or that went meanwhile): freed. */
static void byes_free(dev_tp_t *t)
{
    for (int i = 0; i < t->nbyes; i++) {
        utc_request_t *q = t->byes[i];
        utc__poll_t p = UTC__POLL_INIT;
        double give_up = utc_wtime() + 5;
        while (utc__req_state(q) != UTC__REQ_DONE && !t->in->ops->progress(t->in, q) &&
               utc_wtime() < give_up)
            utc__poll_step(&p);
        if (utc__req_state(q) == UTC__REQ_DONE)
            free(q); /* else still the inner transport's: left (a few bytes) */
    }
    free(t->byes);
    t->byes = NULL;
    t->nbyes = 0;
}

static void dev_shutdown(utc__transport_t *tp, utc_status_t status)
{
    dev_tp_t *t = dt_of(tp);
    /* seq_cst, both: pairs with ipc_recv (a read sees down, or is waited for here) */
    atomic_store(&t->down, (int)status);
    utc__poll_t p = UTC__POLL_INIT;
    while (atomic_load(&t->answering))
        utc__poll_step(&p);
    if (t->in->kind != UTC_CONDUIT_INPROC)
        bye_exchange(t);
    t->in->ops->shutdown(t->in, status);
    byes_free(t);
}

static void dev_fail(utc__transport_t *tp, utc_status_t status)
{
    dev_tp_t *t = dt_of(tp);
    utc__fail_info_t f;
    /* the inner transport's reads end too; its mark follows this one's (cleared with it) */
    if (utc__fail_record_get(&tp->fail, &f))
        (void)utc__transport_mark_failed(t->in, f.end, f.rank, f.rc, f.why);
    t->in->ops->fail(t->in, status);
}

static void dev_notify_failed(utc__transport_t *tp, int end, int rank, utc_status_t rc)
{
    dev_tp_t *t = dt_of(tp);
    t->in->ops->notify_failed(t->in, end, rank, rc);
}

static void dev_destroy(utc__transport_t *tp)
{
    dev_tp_t *t = dt_of(tp);
    /* unread handed buffers (their descriptors go with the inner transport) */
    while (t->handed) {
        handed_t *h = t->handed;
        t->handed = h->next;
        handed_drop(h);
    }
    while (t->stash) {
        stash_t *s = t->stash;
        t->stash = s->next;
        free(s); /* a handover's buffer is in `handed`, dropped above */
    }
    /* transfers whose operations nobody waited for: run to their end (at once after the
     * shutdown), without their requests */
    int prev = dev_save();
    while (t->xfers) {
        dev_op_t *op = t->xfers;
        t->xfers = op->next_x;
        utc__poll_t p = UTC__POLL_INIT;
        utc_status_t st;
        if (use_device(op->device) != cudaSuccess)
            (void)cudaGetLastError();
        while (!utc__staged_step(op->x, &st))
            utc__poll_step(&p);
        free(op);
    }
    dev_restore(prev);
    while (t->chans) {
        chan_t *c = t->chans;
        t->chans = c->next;
        free(c->ctl_rx); /* ended by the shutdown */
        free(c);
    }
    t->in->ops->destroy(t->in);
    utc__staged_release(t); /* the failed sends' rings: the inner transport is done */
    free(t->peers);
    pthread_mutex_destroy(&t->drive);
    pthread_mutex_destroy(&t->pull_lock);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

static const utc__transport_ops_t dev_ops = {
    .name = "device",
    .start = dev_start,
    .send_now = utc__transport_no_send_now,
    .progress = dev_progress,
    .wait = dev_wait,
    .cancel = dev_cancel,
    .probe = dev_probe,
    .close = dev_close,
    .shutdown = dev_shutdown,
    .fail = dev_fail,
    .notify_failed = dev_notify_failed,
    .destroy = dev_destroy,
};

/* UTC_DEVICE_IPC: unset or 1 on, 0 off; anything else is refused. */
static utc_status_t ipc_choice(bool *on)
{
    const char *v = getenv("UTC_DEVICE_IPC");
    if (!v || !*v || !strcmp(v, "1")) {
        *on = true;
        return UTC_OK;
    }
    if (!strcmp(v, "0")) {
        *on = false;
        return UTC_OK;
    }
    return utc__error(UTC_ERR_INVALID_ARG,
                      "utc_conduit_create: UTC_DEVICE_IPC='%.40s' is "
                      "neither 0 (device messages between ranks of one host go staged) nor 1 "
                      "(CUDA IPC, the default)",
                      v);
}

utc_status_t utc__device_available(void)
{
    bool ipc;
    size_t chunk;
    utc_status_t rc = ipc_choice(&ipc);
    if (rc != UTC_OK || (rc = utc__device_chunk_size(&chunk)) != UTC_OK ||
        (rc = utc__ipc_settings()) != UTC_OK)
        return rc;
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess || n == 0) {
        (void)cudaGetLastError();
        return utc__error(UTC_ERR_NO_GPU_SUPPORT,
                          "utc_conduit_create: a device conduit needs "
                          "a CUDA device, and rank %d has none usable (%s)",
                          utc_rank(), err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
    }
    return UTC_OK;
}

static pthread_once_t forget_once = PTHREAD_ONCE_INIT;
static void forget_hook(void)
{
    utc__dev_alloc_on_free(utc__ipc_forget);
}

utc_status_t utc__device_transport_create(utc__transport_t *inner,
                                          const utc__transport_args_t *args, utc__transport_t **out)
{
    bool ipc;
    utc_status_t rc = ipc_choice(&ipc);
    if (rc != UTC_OK)
        return rc;
    dev_tp_t *t = calloc(1, sizeof *t);
    if (!t)
        return utc__error(UTC_ERR_NO_MEMORY, "utc_conduit_create: out of memory");
    t->base.ops = &dev_ops;
    t->base.conduit_id = args->conduit_id;
    t->base.kind = inner->kind;
    t->base.inner = inner;
    t->in = inner;
    /* a staged write's chunks and a reader's answers may follow their direction's close */
    inner->device_tags = true;
    t->ipc = ipc;
    if (args->nmembers > 0 && !(t->peers = malloc(sizeof *t->peers * (size_t)args->nmembers))) {
        free(t);
        return utc__error(UTC_ERR_NO_MEMORY, "utc_conduit_create: out of memory");
    }
    for (int i = 0; i < args->nmembers; i++)
        if (args->members[i] != utc_rank())
            t->peers[t->npeers++] = args->members[i];
    pthread_mutex_init(&t->lock, NULL);
    pthread_mutex_init(&t->drive, NULL);
    pthread_mutex_init(&t->pull_lock, NULL);
    pthread_once(&forget_once, forget_hook);
    utc__dev_mark_in_use();
    *out = &t->base;
    return UTC_OK;
}

void utc__device_finalize(void)
{
    pthread_mutex_lock(&pool_lock);
    while (copied_evs) {
        copied_ev_t *c = copied_evs;
        copied_evs = c->next;
        (void)cudaEventDestroy(c->ev.event);
        free(c);
    }
    pthread_mutex_unlock(&pool_lock);
    utc__ipc_cache_clear();
    utc__staged_cache_clear();
    pthread_mutex_lock(&pool_lock);
    while (ev_free) {
        ev_node_t *n = ev_free;
        ev_free = n->next;
        (void)cudaEventDestroy(n->ev);
        free(n);
    }
    while (ev_nodes) {
        ev_node_t *n = ev_nodes;
        ev_nodes = n->next;
        free(n);
    }
    for (int d = 0; d < MAX_DEV; d++)
        if (own_stream[d]) {
            (void)cudaStreamDestroy(own_stream[d]);
            own_stream[d] = NULL;
        }
    pthread_mutex_unlock(&pool_lock);
    (void)cudaGetLastError();
}
