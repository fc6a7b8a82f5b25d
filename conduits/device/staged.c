/*
 * Device conduits: the staged path, a pipeline of pinned host chunks (see staged.h). The
 * order of the steps is chunk_plan.c's; this file does them: D2H and H2D copies on the
 * caller's stream with an event per slot, and the transfers through the io.
 */
#include "staged.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <utc/context.h>

#include "base/errors.h"
#include "base/text.h"
#include "chunk_plan.h"
#include "device_util.h"
#include "service/wait.h"

/* Free rings kept in the pool beyond which a returned ring is freed. */
#define POOL_KEEP 8

/* A ring of pinned slots of one device. A slot's event marks the end of the last copy
 * queued from or into it; `pending` says that copy has not been waited for. */
typedef struct ring {
    size_t chunk;
    int device;
    char *mem; /* UTC__STAGED_DEPTH slots of `chunk` bytes, pinned, portable */
    cudaEvent_t ev[UTC__STAGED_DEPTH];
    bool pending[UTC__STAGED_DEPTH];
    struct ring *next;
} ring_t;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static ring_t *pool;
static unsigned pool_count;
/* Rings whose sends failed, maybe still read by their transport: off the pool until their
 * owner's utc__staged_release. */
typedef struct held {
    const void *owner;
    ring_t *ring;
    struct held *next;
} held_t;
static held_t *held;

static void ring_free(ring_t *r)
{
    for (unsigned i = 0; i < UTC__STAGED_DEPTH; i++) {
        if (r->ev[i]) {
            if (r->pending[i])
                (void)cudaEventSynchronize(r->ev[i]);
            (void)cudaEventDestroy(r->ev[i]);
        }
    }
    if (r->mem)
        (void)cudaFreeHost(r->mem);
    (void)cudaGetLastError();
    free(r);
}

/* A ring of the current device with slots of at least `chunk` bytes: pooled, or made. */
static utc_status_t ring_get(size_t chunk, ring_t **out)
{
    int dev;
    cudaError_t err = cudaGetDevice(&dev);
    if (err != cudaSuccess)
        return utc__device_cuda_error(err, "cudaGetDevice");
    pthread_mutex_lock(&pool_lock);
    ring_t **pp = &pool;
    while (*pp && ((*pp)->device != dev || (*pp)->chunk < chunk))
        pp = &(*pp)->next;
    ring_t *r = *pp;
    if (r) {
        *pp = r->next;
        pool_count--;
    }
    pthread_mutex_unlock(&pool_lock);
    if (r) {
        *out = r;
        return UTC_OK;
    }
    if (chunk > SIZE_MAX / UTC__STAGED_DEPTH)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "device conduit: staged chunks of %zu bytes are "
                          "too large",
                          chunk);
    r = calloc(1, sizeof *r);
    if (!r)
        return utc__error(UTC_ERR_NO_MEMORY, "device conduit: no memory for a staging ring");
    r->chunk = chunk;
    r->device = dev;
    const char *call = "cudaHostAlloc";
    err = cudaHostAlloc((void **)&r->mem, chunk * UTC__STAGED_DEPTH, cudaHostAllocPortable);
    for (unsigned i = 0; i < UTC__STAGED_DEPTH && err == cudaSuccess; i++) {
        call = "cudaEventCreateWithFlags";
        err = cudaEventCreateWithFlags(&r->ev[i], cudaEventDisableTiming);
    }
    if (err != cudaSuccess) {
        utc_status_t st = err == cudaErrorMemoryAllocation
                              ? utc__error(UTC_ERR_NO_MEMORY,
                                           "device conduit: no pinned memory for %d staging "
                                           "chunks of %zu bytes (lower UTC_DEVICE_CHUNK)",
                                           UTC__STAGED_DEPTH, chunk)
                              : utc__device_cuda_error(err, call);
        ring_free(r);
        return st;
    }
    *out = r;
    return UTC_OK;
}

static void ring_put(ring_t *r)
{
    pthread_mutex_lock(&pool_lock);
    bool keep = pool_count < POOL_KEEP;
    if (keep) {
        r->next = pool;
        pool = r;
        pool_count++;
    }
    pthread_mutex_unlock(&pool_lock);
    if (!keep)
        ring_free(r);
}

/* A ring a failed send used: held for its owner (freed if no memory to list it). */
static void ring_hold(const void *owner, ring_t *r)
{
    held_t *h = malloc(sizeof *h);
    if (!h) { /* better lost than reused under a transfer */
        utc_log(UTC_LOG_WARN,
                "device conduit: a staging ring of %zu-byte chunks is leaked "
                "(out of memory to hold it until its conduit's destroy)",
                r->chunk);
        return;
    }
    *h = (held_t){.owner = owner, .ring = r};
    pthread_mutex_lock(&pool_lock);
    h->next = held;
    held = h;
    pthread_mutex_unlock(&pool_lock);
}

void utc__staged_release(const void *owner)
{
    held_t *mine = NULL;
    pthread_mutex_lock(&pool_lock);
    for (held_t **p = &held; *p;) {
        held_t *h = *p;
        if (h->owner == owner) {
            *p = h->next;
            h->next = mine;
            mine = h;
        } else {
            p = &h->next;
        }
    }
    pthread_mutex_unlock(&pool_lock);
    while (mine) {
        held_t *h = mine;
        mine = h->next;
        ring_put(h->ring);
        free(h);
    }
}

void utc__staged_cache_clear(void)
{
    pthread_mutex_lock(&pool_lock);
    ring_t *r = pool;
    pool = NULL;
    pool_count = 0;
    held_t *h = held;
    held = NULL;
    pthread_mutex_unlock(&pool_lock);
    while (r) {
        ring_t *next = r->next;
        ring_free(r);
        r = next;
    }
    while (h) {
        held_t *next = h->next;
        ring_free(h->ring);
        free(h);
        h = next;
    }
}

/* ---- the pipeline ---------------------------------------------------------------------- */

/* Where a transfer stands: moving its chunks; after an error, waiting for the transfers it
 * started (DRAIN), then sending the abort marks of the chunks it did not send (ABORT) or
 * taking and dropping the chunks it did not receive (SKIP). */
enum { X_RUN, X_DRAIN, X_ABORT, X_SKIP };

struct utc__staged {
    utc__staged_io_t *io;
    bool send;
    char *user;                 /* the user's buffer */
    bool device;                /* it is device memory */
    ring_t *ring;               /* NULL: the user's buffer is host memory (no copy) */
    cudaStream_t s;             /* the copies' stream */
    void *h[UTC__STAGED_DEPTH]; /* the io's handle of each slot's transfer */
    bool io_failed;             /* a transfer failed: the stream is out of step */
    utc__chunk_plan_t plan;
    bool need_out_done; /* the trailing OUT_DONE steps are taken (see run_steps) */
    int stage;          /* X_* */
    utc_status_t st;    /* the first error (X_DRAIN on), or the abort's status */
    char why[512];      /* its message, which the clean-up may overwrite */
    uint64_t next;      /* X_DRAIN, X_ABORT, X_SKIP: the chunk to wait for, send or take */
    void *h1;           /* X_ABORT, X_SKIP: that chunk's transfer, or NULL */
    char *scratch;      /* X_SKIP into device memory: where the dropped chunks go */
    bool scratch_own;   /* it is malloc'd (else the ring's first slot) */
};

/* Whether the last copy queued from or into the slot is over: UTC_OK and *ready. */
static utc_status_t slot_ready(ring_t *r, unsigned slot, bool *ready)
{
    *ready = true;
    if (!r->pending[slot])
        return UTC_OK;
    cudaError_t err = cudaEventQuery(r->ev[slot]);
    if (err == cudaErrorNotReady) {
        *ready = false;
        return UTC_OK;
    }
    if (err != cudaSuccess)
        return utc__device_cuda_error(err, "cudaEventQuery(staging slot)");
    r->pending[slot] = false;
    return UTC_OK;
}

/* Queue a copy between the slot and the user's buffer, and the slot's event after it. */
static utc_status_t slot_copy(utc__staged_t *x, unsigned slot, size_t off, size_t len)
{
    char *pinned = x->ring->mem + (size_t)slot * x->ring->chunk;
    cudaError_t err = x->send
                          ? cudaMemcpyAsync(pinned, x->user + off, len, cudaMemcpyDefault, x->s)
                          : cudaMemcpyAsync(x->user + off, pinned, len, cudaMemcpyDefault, x->s);
    if (err != cudaSuccess)
        return utc__device_cuda_error(err, x->send ? "cudaMemcpyAsync(device to staging)"
                                                   : "cudaMemcpyAsync(staging to device)");
    err = cudaEventRecord(x->ring->ev[slot], x->s);
    if (err != cudaSuccess)
        return utc__device_cuda_error(err, "cudaEventRecord(staging slot)");
    x->ring->pending[slot] = true;
    return UTC_OK;
}

/* The buffer chunk j's transfer uses: the slot, or the user's own bytes. */
static char *transfer_buf(const utc__staged_t *x, unsigned slot, size_t off)
{
    return x->ring ? x->ring->mem + (size_t)slot * x->ring->chunk : x->user + off;
}

/* The io's step: its error marks the stream out of step. */
static utc_status_t io_step(utc__staged_t *x, utc_status_t st)
{
    if (st != UTC_OK)
        x->io_failed = true;
    return st;
}

/* A received chunk of `got` bytes where `len` were due: neither whole nor the sender's
 * abort mark (empty), so the stream is out of step. */
static bool chunk_out_of_step(size_t got, size_t len)
{
    return got != len && got != 0;
}

/* A received chunk's size against the expected `len`: an empty one is the sender's abort
 * mark; any other size leaves the stream out of step. */
static utc_status_t chunk_size_check(utc__staged_t *x, size_t got, size_t len)
{
    if (got == len)
        return UTC_OK;
    if (got == 0)
        return utc__error(UTC_ERR_IO, "device conduit, staged receive: the writer stopped its "
                                      "message of this read midway (an empty chunk came: its write "
                                      "reports why); the rest of the message is skipped");
    x->io_failed = true;
    return utc__error(UTC_ERR_INTERNAL,
                      "device conduit, staged receive: a chunk of %zu bytes came where "
                      "%zu were due: the pair's chunk stream is out of step",
                      got, len);
}

/* The io's transfer h, if over: true with its status (an io error marks the stream out of
 * step) and *got. */
static bool io_over(utc__staged_t *x, void *h, utc_status_t *st, size_t *got)
{
    if (!x->io->test(x->io->arg, h, st, got))
        return false;
    io_step(x, *st);
    return true;
}

/*
 * Chunk j (in `slot`, at `off`, `len` bytes) takes `step`, if it is ready (*ready false:
 * not yet, nothing done). Send: IN is the D2H, OUT the isend; receive: IN the irecv, OUT
 * the H2D. A host side has no copy steps.
 */
static utc_status_t do_step(utc__staged_t *x, utc__chunk_step_t step, unsigned slot, size_t off,
                            size_t len, bool *ready)
{
    *ready = true;
    bool copy_step = x->send ? step <= UTC__CHUNK_IN_DONE : step >= UTC__CHUNK_OUT_START;
    if (copy_step && !x->ring)
        return UTC_OK;
    const utc__staged_io_t *io = x->io;
    utc_status_t st = UTC_OK;
    size_t got = 0;
    switch (step) {
    case UTC__CHUNK_IN_START:
        /* the slot's last copy (maybe an H2D of an earlier receive) must be over */
        if (x->ring && ((st = slot_ready(x->ring, slot, ready)) != UTC_OK || !*ready))
            return st;
        if (x->send)
            return slot_copy(x, slot, off, len);
        return io_step(x, io->irecv(io->arg, transfer_buf(x, slot, off), len, &x->h[slot]));
    case UTC__CHUNK_IN_DONE:
        if (x->send)
            return slot_ready(x->ring, slot, ready);
        if (!(*ready = io_over(x, x->h[slot], &st, &got)))
            return UTC_OK;
        return st != UTC_OK ? st : chunk_size_check(x, got, len);
    case UTC__CHUNK_OUT_START:
        if (x->send)
            return io_step(x, io->isend(io->arg, transfer_buf(x, slot, off), len, &x->h[slot]));
        return slot_copy(x, slot, off, len);
    case UTC__CHUNK_OUT_DONE:
        if (x->send)
            return (*ready = io_over(x, x->h[slot], &st, NULL)) ? st : UTC_OK;
        return slot_ready(x->ring, slot, ready);
    default:
        return utc__error(UTC_ERR_INTERNAL, "device conduit: staged step %d", (int)step);
    }
}

/* Whether `step` ends a transfer of the io (its handle is released, failed or not). */
static bool io_done_step(const utc__staged_t *x, utc__chunk_step_t step)
{
    return step == (x->send ? UTC__CHUNK_OUT_DONE : UTC__CHUNK_IN_DONE);
}

/* An error: keep it (the first), and wait for the transfers started (X_DRAIN). */
static void fail(utc__staged_t *x, utc_status_t st)
{
    x->st = st;
    utc__text_copy(x->why, sizeof x->why, utc_last_error());
    x->stage = X_DRAIN;
    x->next = x->plan.n[x->send ? UTC__CHUNK_OUT_DONE : UTC__CHUNK_IN_DONE];
}

/*
 * X_RUN: the chunks' steps in the plan's order while they are ready. A waiting step (a
 * DONE) that is not ready gives way to the other waiting step where the plan allows it,
 * so a transfer that is over is seen while a copy still runs, and the reverse. True when
 * every step is taken (or an error moved the transfer on to X_DRAIN).
 */
static bool run_steps(utc__staged_t *x)
{
    utc__chunk_plan_t *plan = &x->plan;
    for (;;) {
        utc__chunk_step_t step = utc__chunk_plan_next(plan, x->need_out_done);
        if (step == UTC__CHUNK_NONE)
            return true;
        utc__chunk_step_t tries[2] = {step, UTC__CHUNK_NONE};
        if (step == UTC__CHUNK_IN_DONE || step == UTC__CHUNK_OUT_DONE) {
            utc__chunk_step_t other =
                step == UTC__CHUNK_IN_DONE ? UTC__CHUNK_OUT_DONE : UTC__CHUNK_IN_DONE;
            if (utc__chunk_plan_may(plan, other))
                tries[1] = other;
        }
        bool ready = false;
        for (int i = 0; i < 2 && !ready && tries[i] != UTC__CHUNK_NONE; i++) {
            step = tries[i];
            uint64_t j = plan->n[step];
            size_t off, len;
            utc__chunk_plan_span(plan, j, &off, &len);
            utc_status_t st = do_step(x, step, utc__chunk_plan_slot(plan, j), off, len, &ready);
            if (st != UTC_OK) {
                /* a wait released its handle, failed or not: not one to drain */
                if (io_done_step(x, step))
                    (void)utc__chunk_plan_take(plan, step);
                fail(x, st);
                return true;
            }
        }
        if (!ready)
            return false;
        (void)utc__chunk_plan_take(plan, step);
    }
}

/* X_DRAIN: every transfer started and not waited for is over (their own errors are not the
 * first one; a wrong size among them leaves the stream out of step). True when done. */
static bool drain_steps(utc__staged_t *x)
{
    utc__chunk_step_t start = x->send ? UTC__CHUNK_OUT_START : UTC__CHUNK_IN_START;
    for (; x->next < x->plan.n[start]; x->next++) {
        size_t off, len, got = 0;
        utc__chunk_plan_span(&x->plan, x->next, &off, &len);
        utc_status_t st;
        if (!io_over(x, x->h[utc__chunk_plan_slot(&x->plan, x->next)], &st, x->send ? NULL : &got))
            return false;
        if (!x->send && st == UTC_OK && chunk_out_of_step(got, len))
            x->io_failed = true;
    }
    return true;
}

/* X_SKIP into device memory: where the dropped chunks go (a host destination's own bytes
 * take them). False when there is nowhere yet (the ring's first slot still in a copy). */
static bool skip_scratch(utc__staged_t *x)
{
    if (!x->device || x->scratch)
        return true;
    if ((x->scratch = malloc(x->plan.chunk))) {
        x->scratch_own = true;
        return true;
    }
    if (!x->ring) {
        x->io_failed = true; /* nowhere to take them */
        return true;
    }
    /* the first slot, once the copies queued from it are over (or failed) */
    bool ready = true;
    if (slot_ready(x->ring, 0, &ready) != UTC_OK)
        x->ring->pending[0] = false; /* failed: nothing runs there any more */
    else if (!ready)
        return false;
    x->scratch = x->ring->mem;
    return true;
}

/* X_ABORT (an empty message per chunk left) and X_SKIP (each chunk left taken and
 * dropped): one transfer at a time, until the last chunk or a failed transfer. True when
 * done. */
static bool rest_steps(utc__staged_t *x)
{
    static char mark;
    bool abort = x->stage == X_ABORT;
    if (!abort && !skip_scratch(x))
        return false;
    while (x->next < x->plan.nchunks && !x->io_failed) {
        size_t off, len, got = 0;
        utc__chunk_plan_span(&x->plan, x->next, &off, &len);
        char *buf = abort ? &mark : x->device ? x->scratch : x->user + off;
        utc_status_t st = UTC_OK;
        if (!x->h1)
            st = abort ? x->io->isend(x->io->arg, buf, 0, &x->h1)
                       : x->io->irecv(x->io->arg, buf, len, &x->h1);
        if (st == UTC_OK && !io_over(x, x->h1, &st, abort ? NULL : &got))
            return false;
        x->h1 = NULL;
        if (st != UTC_OK || (!abort && chunk_out_of_step(got, len)))
            x->io_failed = true;
        if (st != UTC_OK && x->st == UTC_OK) { /* the marks alone: their error is the outcome */
            x->st = st;
            utc__text_copy(x->why, sizeof x->why, utc_last_error());
        }
        x->next++;
    }
    return true;
}

/* The transfer is over: its outcome, the ring back (or held: a failed send's transport may
 * still read it), x freed. */
static utc_status_t finish(utc__staged_t *x)
{
    utc_status_t st = x->st;
    if (st != UTC_OK)
        st = utc__error(st, "%s", x->why);
    if (x->io_failed)
        x->io->out_of_step = true;
    if (x->ring && x->send && x->io_failed)
        ring_hold(x->io->owner, x->ring);
    else if (x->ring)
        ring_put(x->ring);
    if (x->scratch_own)
        free(x->scratch);
    if (st != UTC_OK && (x->ring || x->s))
        (void)cudaGetLastError(); /* a failed copy's error is reported: clear it */
    free(x);
    return st;
}

bool utc__staged_step(utc__staged_t *x, utc_status_t *status)
{
    if (x->stage == X_RUN && !run_steps(x))
        return false;
    if (x->stage == X_RUN) {
        *status = finish(x);
        return true;
    }
    if (x->stage == X_DRAIN) {
        if (!drain_steps(x))
            return false;
        /* the other end counts on every chunk of the message: an error other than a
         * transfer's sends the rest as abort marks, or takes the rest and drops it */
        x->stage = x->send ? X_ABORT : X_SKIP;
        x->next = x->plan.n[x->send ? UTC__CHUNK_OUT_START : UTC__CHUNK_IN_START];
    }
    if (!x->io_failed && !rest_steps(x))
        return false;
    *status = finish(x);
    return true;
}

/* The checks every start makes; *chunk set from the setting when 0. */
static utc_status_t start_check(utc__staged_io_t *io, const void *buf, size_t size, size_t *chunk,
                                utc__staged_t **out, const char *fn)
{
    if (out)
        *out = NULL;
    if (!io || !io->isend || !io->irecv || !io->test || !out)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: NULL io, io function or output", fn);
    if (!buf && size > 0)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: NULL buffer with size %zu", fn, size);
    if (*chunk == 0)
        return utc__device_chunk_size(chunk);
    return UTC_OK;
}

/* A transfer in X_RUN (no ring, no copy yet). */
static utc_status_t new_transfer(utc__staged_io_t *io, bool send, char *buf, bool device,
                                 size_t size, size_t chunk, cudaStream_t s, utc__staged_t **out)
{
    utc__staged_t *x = calloc(1, sizeof *x);
    if (!x)
        return utc__error(UTC_ERR_NO_MEMORY, "device conduit: no memory for a staged transfer");
    *x = (utc__staged_t){
        .io = io, .send = send, .user = buf, .device = device, .s = s, .stage = X_RUN};
    /* a receive into a device from a CPU thread (no stream) ends with the data in place */
    x->need_out_done = send || !s;
    utc__chunk_plan_init(&x->plan, size, chunk, UTC__STAGED_DEPTH);
    io->out_of_step = false;
    *out = x;
    return UTC_OK;
}

utc_status_t utc__staged_start(utc__staged_io_t *io, bool send, void *buf, bool buf_device,
                               size_t size, size_t chunk, cudaStream_t s, utc__staged_t **out)
{
    const char *fn = send ? "device conduit, staged send" : "device conduit, staged receive";
    utc_status_t st = start_check(io, buf, size, &chunk, out, fn);
    if (st != UTC_OK ||
        (st = new_transfer(io, send, buf, buf_device, size, chunk, s, out)) != UTC_OK)
        return st;
    utc__staged_t *x = *out;
    if (size == 0)
        return UTC_OK;
    if (buf_device) {
        st = ring_get(chunk, &x->ring);
    } else if (s) {
        /* the host buffer as it is after the work queued on s (send), or free of it
         * (receive): wait for s to be idle (the GPU's work, not the other end's) */
        cudaError_t err = cudaStreamSynchronize(s);
        if (err != cudaSuccess)
            st = utc__device_cuda_error(err, "cudaStreamSynchronize");
    }
    if (st != UTC_OK)
        fail(x, st); /* nothing started: on to the abort marks, or the chunks dropped */
    return UTC_OK;
}

utc_status_t utc__staged_start_abort(utc__staged_io_t *io, size_t size, size_t chunk,
                                     uint64_t first, utc_status_t status, utc__staged_t **out)
{
    static char none;
    const char *fn = "device conduit, staged send (abort marks)";
    if (out)
        *out = NULL;
    if (chunk == 0)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: a chunk size of 0", fn);
    char why[512];
    utc__text_copy(why, sizeof why, utc_last_error());
    utc_status_t st = start_check(io, &none, size, &chunk, out, fn);
    if (st != UTC_OK ||
        (st = new_transfer(io, true, NULL, false, size, chunk, NULL, out)) != UTC_OK)
        return st;
    utc__staged_t *x = *out;
    x->stage = X_ABORT;
    x->next = first;
    x->st = status;
    utc__text_copy(x->why, sizeof x->why, why);
    return UTC_OK;
}

/* Step x until it is over, polling. */
static utc_status_t run_to_end(utc__staged_t *x)
{
    utc__poll_t p = UTC__POLL_INIT;
    utc_status_t st;
    while (!utc__staged_step(x, &st))
        utc__poll_step(&p);
    return st;
}

utc_status_t utc__staged_send(utc__staged_io_t *io, const void *src, bool src_device, size_t size,
                              size_t chunk, cudaStream_t s)
{
    utc__staged_t *x;
    utc_status_t st = utc__staged_start(io, true, (void *)src, src_device, size, chunk, s, &x);
    return st != UTC_OK ? st : run_to_end(x);
}

utc_status_t utc__staged_recv(utc__staged_io_t *io, void *dst, bool dst_device, size_t size,
                              size_t chunk, cudaStream_t s)
{
    utc__staged_t *x;
    utc_status_t st = utc__staged_start(io, false, dst, dst_device, size, chunk, s, &x);
    return st != UTC_OK ? st : run_to_end(x);
}

utc_status_t utc__staged_send_abort(utc__staged_io_t *io, size_t size, size_t chunk, uint64_t first)
{
    utc__staged_t *x;
    utc_status_t st = utc__staged_start_abort(io, size, chunk, first, UTC_OK, &x);
    return st != UTC_OK ? st : run_to_end(x);
}

utc_status_t utc__device_chunk_size(size_t *out)
{
    if (!out)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "device conduit: the chunk size asked for with no place to put it");
    return utc__device_env_size("UTC_DEVICE_CHUNK", UTC__DEVICE_CHUNK_MIN, UTC__DEVICE_CHUNK_MAX,
                                UTC__DEVICE_CHUNK_DEFAULT, out);
}
