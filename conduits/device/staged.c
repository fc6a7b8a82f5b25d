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

typedef struct pipe {
    utc__staged_io_t *io;
    bool send;
    char *user;                 /* the user's buffer */
    bool device;                /* it is device memory */
    ring_t *ring;               /* NULL: the user's buffer is host memory (no copy) */
    cudaStream_t s;             /* the copies' stream */
    void *h[UTC__STAGED_DEPTH]; /* the io's handle of each slot's transfer */
    bool io_failed;             /* a transfer failed: the stream is out of step */
} pipe_t;

/* Wait for the last copy queued from or into the slot. */
static utc_status_t slot_sync(ring_t *r, unsigned slot)
{
    if (!r->pending[slot])
        return UTC_OK;
    cudaError_t err = cudaEventSynchronize(r->ev[slot]);
    if (err != cudaSuccess)
        return utc__device_cuda_error(err, "cudaEventSynchronize(staging slot)");
    r->pending[slot] = false;
    return UTC_OK;
}

/* Queue a copy between the slot and the user's buffer, and the slot's event after it. */
static utc_status_t slot_copy(pipe_t *p, unsigned slot, size_t off, size_t len)
{
    char *pinned = p->ring->mem + (size_t)slot * p->ring->chunk;
    cudaError_t err = p->send
                          ? cudaMemcpyAsync(pinned, p->user + off, len, cudaMemcpyDefault, p->s)
                          : cudaMemcpyAsync(p->user + off, pinned, len, cudaMemcpyDefault, p->s);
    if (err != cudaSuccess)
        return utc__device_cuda_error(err, p->send ? "cudaMemcpyAsync(device to staging)"
                                                   : "cudaMemcpyAsync(staging to device)");
    err = cudaEventRecord(p->ring->ev[slot], p->s);
    if (err != cudaSuccess)
        return utc__device_cuda_error(err, "cudaEventRecord(staging slot)");
    p->ring->pending[slot] = true;
    return UTC_OK;
}

/* The buffer chunk j's transfer uses: the slot, or the user's own bytes. */
static char *transfer_buf(const pipe_t *p, unsigned slot, size_t off)
{
    return p->ring ? p->ring->mem + (size_t)slot * p->ring->chunk : p->user + off;
}

/* The io's step: its error marks the stream out of step. */
static utc_status_t io_step(pipe_t *p, utc_status_t st)
{
    if (st != UTC_OK)
        p->io_failed = true;
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
static utc_status_t chunk_size_check(pipe_t *p, size_t got, size_t len)
{
    if (got == len)
        return UTC_OK;
    if (got == 0)
        return utc__error(UTC_ERR_IO, "device conduit, staged receive: the writer stopped its "
                                      "message of this read midway (an empty chunk came: its write "
                                      "reports why); the rest of the message is skipped");
    p->io_failed = true;
    return utc__error(UTC_ERR_INTERNAL,
                      "device conduit, staged receive: a chunk of %zu bytes came where "
                      "%zu were due: the pair's chunk stream is out of step",
                      got, len);
}

/*
 * Chunk j (in `slot`, at `off`, `len` bytes) takes `step`. Send: IN is the D2H, OUT the
 * isend; receive: IN the irecv, OUT the H2D. A host side has no copy steps.
 */
static utc_status_t do_step(pipe_t *p, utc__chunk_step_t step, unsigned slot, size_t off,
                            size_t len)
{
    bool copy_step = p->send ? step <= UTC__CHUNK_IN_DONE : step >= UTC__CHUNK_OUT_START;
    if (copy_step && !p->ring)
        return UTC_OK;
    const utc__staged_io_t *io = p->io;
    switch (step) {
    case UTC__CHUNK_IN_START:
        if (p->ring) {
            /* the slot's last copy (maybe an H2D of an earlier receive) must be over */
            utc_status_t st = slot_sync(p->ring, slot);
            if (st != UTC_OK)
                return st;
        }
        if (p->send)
            return slot_copy(p, slot, off, len);
        return io_step(p, io->irecv(io->arg, transfer_buf(p, slot, off), len, &p->h[slot]));
    case UTC__CHUNK_IN_DONE: {
        if (p->send)
            return slot_sync(p->ring, slot);
        size_t got = 0;
        utc_status_t st = io_step(p, io->wait(io->arg, p->h[slot], &got));
        return st != UTC_OK ? st : chunk_size_check(p, got, len);
    }
    case UTC__CHUNK_OUT_START:
        if (p->send)
            return io_step(p, io->isend(io->arg, transfer_buf(p, slot, off), len, &p->h[slot]));
        return slot_copy(p, slot, off, len);
    case UTC__CHUNK_OUT_DONE:
        if (p->send)
            return io_step(p, io->wait(io->arg, p->h[slot], NULL));
        return slot_sync(p->ring, slot);
    default:
        return utc__error(UTC_ERR_INTERNAL, "device conduit: staged step %d", (int)step);
    }
}

/* After an error: wait for every transfer started and not waited for, so that no buffer
 * is reused under it (their own errors are not the first one; a wrong size among them
 * leaves the stream out of step). */
static void drain(pipe_t *p, const utc__chunk_plan_t *plan)
{
    utc__chunk_step_t start = p->send ? UTC__CHUNK_OUT_START : UTC__CHUNK_IN_START;
    for (uint64_t j = plan->n[start + 1]; j < plan->n[start]; j++) {
        size_t off, len, got = 0;
        utc__chunk_plan_span(plan, j, &off, &len);
        utc_status_t st =
            p->io->wait(p->io->arg, p->h[utc__chunk_plan_slot(plan, j)], p->send ? NULL : &got);
        if (st != UTC_OK || (!p->send && chunk_out_of_step(got, len)))
            p->io_failed = true;
    }
}

/* One chunk's transfer, started and waited for; *got: the bytes received. */
static utc_status_t transfer_one(utc__staged_io_t *io, bool send, void *buf, size_t n, size_t *got)
{
    void *h;
    utc_status_t st = send ? io->isend(io->arg, buf, n, &h) : io->irecv(io->arg, buf, n, &h);
    if (st == UTC_OK)
        st = io->wait(io->arg, h, send ? NULL : got);
    return st;
}

utc_status_t utc__staged_send_abort(utc__staged_io_t *io, size_t size, size_t chunk, uint64_t first)
{
    static char mark;
    if (!io || !chunk)
        return utc__error(UTC_ERR_INVALID_ARG, "device conduit, staged send: abort mark "
                                               "with no io or a chunk size of 0");
    utc__chunk_plan_t plan; /* for its chunk count */
    utc__chunk_plan_init(&plan, size, chunk, UTC__STAGED_DEPTH);
    for (uint64_t j = first; j < plan.nchunks; j++) {
        utc_status_t st = transfer_one(io, true, &mark, 0, NULL);
        if (st != UTC_OK) {
            io->out_of_step = true;
            return st;
        }
    }
    return UTC_OK;
}

/* A receive that failed other than in a transfer: take the chunks not yet asked for and
 * drop them (into a scratch buffer; a host destination's own bytes). */
static void skip_rest(pipe_t *p, const utc__chunk_plan_t *plan)
{
    uint64_t j = plan->n[UTC__CHUNK_IN_START];
    if (j >= plan->nchunks)
        return;
    char *scratch = p->device ? NULL : p->user; /* host: the bytes of each chunk */
    char *mem = NULL;
    if (p->device && !(scratch = mem = malloc(plan->chunk))) {
        if (!p->ring) {
            p->io_failed = true; /* nowhere to take them */
            return;
        }
        /* the first slot, once the copies queued from it are over (or failed) */
        (void)slot_sync(p->ring, 0);
        scratch = p->ring->mem;
    }
    for (; j < plan->nchunks && !p->io_failed; j++) {
        size_t off, len, got = 0;
        utc__chunk_plan_span(plan, j, &off, &len);
        char *buf = p->device ? scratch : scratch + off;
        if (transfer_one(p->io, false, buf, len, &got) != UTC_OK || chunk_out_of_step(got, len))
            p->io_failed = true;
    }
    free(mem);
    (void)cudaGetLastError();
}

static utc_status_t run(utc__staged_io_t *io, bool send, char *user, bool device, size_t size,
                        size_t chunk, cudaStream_t s, const char *fn)
{
    if (!io || !io->isend || !io->irecv || !io->wait)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: NULL io or io function", fn);
    if (!user && size > 0)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: NULL buffer with size %zu", fn, size);
    io->out_of_step = false;
    utc_status_t st = UTC_OK;
    if (chunk == 0 && (st = utc__device_chunk_size(&chunk)) != UTC_OK)
        return st;
    if (size == 0)
        return UTC_OK;
    pipe_t p = {.io = io, .send = send, .user = user, .device = device, .s = s};
    utc__chunk_plan_t plan;
    utc__chunk_plan_init(&plan, size, chunk, UTC__STAGED_DEPTH);
    if (device) {
        st = ring_get(chunk, &p.ring);
    } else if (s) {
        /* the host buffer as it is after the work queued on s (send), or free of it
         * (receive): wait for s to be idle */
        cudaError_t err = cudaStreamSynchronize(s);
        if (err != cudaSuccess)
            st = utc__device_cuda_error(err, "cudaStreamSynchronize");
    }
    /* a receive into a device from a CPU thread (no stream) ends with the data in place */
    bool need_out_done = send || !s;
    utc__chunk_step_t step;
    while (st == UTC_OK && (step = utc__chunk_plan_next(&plan, need_out_done)) != UTC__CHUNK_NONE) {
        uint64_t j = plan.n[step];
        size_t off, len;
        utc__chunk_plan_span(&plan, j, &off, &len);
        if ((st = do_step(&p, step, utc__chunk_plan_slot(&plan, j), off, len)) != UTC_OK) {
            /* a wait released its handle, failed or not: not one to drain */
            if (step == (send ? UTC__CHUNK_OUT_DONE : UTC__CHUNK_IN_DONE))
                (void)utc__chunk_plan_take(&plan, step);
            break;
        }
        (void)utc__chunk_plan_take(&plan, step);
    }
    if (st != UTC_OK) {
        char why[512]; /* the first error's message, which the clean-up may overwrite */
        utc__text_copy(why, sizeof why, utc_last_error());
        drain(&p, &plan);
        /* the other end counts on every chunk of the message: an error other than a
         * transfer's sends the rest as abort marks, or takes the rest and drops it */
        if (!p.io_failed && send &&
            utc__staged_send_abort(io, size, chunk, plan.n[UTC__CHUNK_OUT_START]) != UTC_OK)
            p.io_failed = true;
        else if (!p.io_failed && !send)
            skip_rest(&p, &plan);
        st = utc__error(st, "%s", why);
    }
    if (p.io_failed)
        io->out_of_step = true;
    if (p.ring && send && p.io_failed)
        ring_hold(io->owner, p.ring); /* the transport may still read its slots */
    else if (p.ring)
        ring_put(p.ring);
    return st;
}

utc_status_t utc__staged_send(utc__staged_io_t *io, const void *src, bool src_device, size_t size,
                              size_t chunk, cudaStream_t s)
{
    return run(io, true, (char *)src, src_device, size, chunk, s, "device conduit, staged send");
}

utc_status_t utc__staged_recv(utc__staged_io_t *io, void *dst, bool dst_device, size_t size,
                              size_t chunk, cudaStream_t s)
{
    return run(io, false, dst, dst_device, size, chunk, s, "device conduit, staged receive");
}

utc_status_t utc__device_chunk_size(size_t *out)
{
    if (!out)
        return utc__error(UTC_ERR_INVALID_ARG, "device conduit: the chunk size asked for with no place to put it");
    return utc__device_env_size("UTC_DEVICE_CHUNK", UTC__DEVICE_CHUNK_MIN, UTC__DEVICE_CHUNK_MAX,
                                UTC__DEVICE_CHUNK_DEFAULT, out);
}
