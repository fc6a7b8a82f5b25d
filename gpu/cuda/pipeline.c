/*
 * Overlapped item pipelines with CUDA (utc_gpu_pipeline_t, see utc/gpu.h): conduit reads
 * into pinned staging, host-to-device copies on one stream, the caller's kernels on the
 * thread's stream, device-to-host copies on a third, ordered by events, with a ring of
 * `depth` slots of buffers. Which step may run when is the ring's (../pipeline_ring.h);
 * this file does the steps.
 *
 * Depth 1 uses the thread's stream for everything and delivers each result before the
 * next read: the order of a plain read / copy / kernel / copy / write loop.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../pipeline_ring.h"
#include "gpu_cuda.h"

typedef struct slot {
    void *in_host, *out_host; /* pinned staging (no in_host with in_owned) */
    void *in_owned;          /* in_owned: the item's buffer, read owned, until its copy in */
    void *in_dev, *out_dev;
    size_t in_bytes;         /* the item's size, as received */
    size_t out_bytes;        /* the result's size, as done() said */
    utc_request_t *in_req;   /* the conduit read into in_host */
    utc_request_t *out_req;  /* the conduit write from out_host */
    cudaEvent_t h2d_done;    /* after the copy into in_dev */
    cudaEvent_t kernel_done; /* after the item's kernels */
    cudaEvent_t d2h_done;    /* after the copy out of out_dev (or the kernels) */
} slot_t;

struct utc_gpu_pipeline {
    utc__gpu_thread_t *owner;
    int local_id; /* the owner's local thread id: in_owned reads are this thread's */
    utc_gpu_pipeline_options_t o;
    utc__pring_t ring;
    cudaStream_t compute, h2d, d2h; /* h2d and d2h are the pipeline's own when depth > 1 */
    slot_t *slots;
    void *host_mem, *dev_mem;
    bool item_out; /* an item was handed out and not yet done */
    uint64_t item_index;
    utc_status_t failed; /* the error that stopped the pipeline, or UTC_OK */
    char why[256];       /* its message */
};

#define STAGE_ALIGN 256

/* ---- errors ---- */

/* Stop the pipeline on `rc` (not UTC_OK), keeping the message for later calls. */
static utc_status_t stop(utc_gpu_pipeline_t *p, utc_status_t rc)
{
    if (rc != UTC_OK && p->failed == UTC_OK) {
        p->failed = rc;
        snprintf(p->why, sizeof p->why, "%s", utc_last_error());
    }
    return rc;
}

static utc_status_t cuda_stop(utc_gpu_pipeline_t *p, cudaError_t err, const char *fn,
                              const char *call)
{
    return stop(p, utc__gpu_error(err, fn, call));
}

/* The common entry checks of next() and done(). */
static utc_status_t enter(utc_gpu_pipeline_t *p, const void *item, const char *fn)
{
    if (!p || !item)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: the %s is NULL", fn, p ? "item" : "pipeline");
    if (utc__gpu_self(NULL) != p->owner)
        return utc__error(UTC_ERR_NOT_MEMBER,
                          "%s: the pipeline belongs to another thread (only the GPU task thread "
                          "that created it may use it)",
                          fn);
    if (p->failed != UTC_OK)
        return utc__error(p->failed, "%s: the pipeline stopped on an earlier error: %s", fn,
                          p->why);
    return UTC_OK;
}

/* ---- argument checks (before any CUDA call) ---- */

static utc_status_t check_conduit(utc_conduit_t *c, int tag, const char *what, const char *fn)
{
    /* A probe takes nothing and fails as a transfer would: not live, not an end, not a
     * rank that transfers. The end of the stream is no fault of the conduit: items all
     * written and closed before the pipeline starts (the reads then say so), or, probed
     * on `out`, the reader's own writing closed, which does not concern ours. */
    int found;
    utc_msg_info_t info;
    utc_status_t rc = utc_conduit_iprobe(c, tag, &found, &info);
    if (rc == UTC_OK || rc == UTC_ERR_CLOSED)
        return UTC_OK;
    char msg[256];
    snprintf(msg, sizeof msg, "%s", utc_last_error());
    return utc__error(rc, "%s: %s: the calling thread cannot read or write on it: %s", fn, what,
                      msg);
}

static bool bad_tag(int tag)
{
    return tag < 0 || tag > UTC_CONDUIT_TAG_MAX;
}

static size_t round_up(size_t n)
{
    return (n + STAGE_ALIGN - 1) / STAGE_ALIGN * STAGE_ALIGN;
}

static utc_status_t check_options(const utc_gpu_pipeline_options_t *o, const void *out,
                                  const char *fn)
{
    if (!o || !out)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: %s is NULL", fn, o ? "out" : "opts");
    if (o->depth < 1 || o->depth > UTC_GPU_PIPELINE_DEPTH_MAX)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: depth %d is outside 1 .. %d (1: no overlap; 2 or 3 overlap the "
                          "copies with the kernels)",
                          fn, o->depth, UTC_GPU_PIPELINE_DEPTH_MAX);
    if (!o->in)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: opts->in is NULL (name the conduit the items come from)", fn);
    if (o->in_size == 0)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: in_size is 0 (give the largest item's size in bytes)", fn);
    if (o->out_size > 0 && !o->out == !o->on_result)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: out_size is %zu but %s: give exactly one of out (a conduit) and "
                          "on_result (a callback) for the results",
                          fn, o->out_size,
                          o->out ? "both out and on_result are set"
                                 : "neither out nor on_result is set");
    if (o->out_size == 0 && (o->out || o->on_result))
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: out_size is 0 (no result) but %s is set: give the result's size "
                          "in bytes",
                          fn, o->out ? "out" : "on_result");
    if (o->in_owned != 0 && o->in_owned != 1)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: in_owned is %d (1: the items are owned buffers, handed over "
                          "with utc_conduit_write_owned; 0: they are read into the pipeline's "
                          "staging)",
                          fn, o->in_owned);
    if (bad_tag(o->in_tag) || (o->out && bad_tag(o->out_tag)))
        return utc__error(UTC_ERR_INVALID_ARG, "%s: %s %d is outside 0 .. %d", fn,
                          bad_tag(o->in_tag) ? "in_tag" : "out_tag",
                          bad_tag(o->in_tag) ? o->in_tag : o->out_tag, UTC_CONDUIT_TAG_MAX);
    size_t d = (size_t)o->depth;
    if (o->in_size > SIZE_MAX / 4 / d || o->out_size > SIZE_MAX / 4 / d)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: in_size %zu and out_size %zu times depth %d overflow", fn,
                          o->in_size, o->out_size, o->depth);
    utc_status_t rc = check_conduit(o->in, o->in_tag, "opts->in", fn);
    if (rc == UTC_OK && o->out)
        rc = check_conduit(o->out, o->out_tag, "opts->out", fn);
    return rc;
}

/* ---- making and freeing ---- */

static void free_pipeline(utc_gpu_pipeline_t *p)
{
    for (int i = 0; p->slots && i < p->o.depth; i++) {
        slot_t *s = &p->slots[i];
        if (s->h2d_done)
            (void)cudaEventDestroy(s->h2d_done);
        if (s->kernel_done)
            (void)cudaEventDestroy(s->kernel_done);
        if (s->d2h_done)
            (void)cudaEventDestroy(s->d2h_done);
    }
    if (p->h2d && p->h2d != p->compute)
        (void)cudaStreamDestroy(p->h2d);
    if (p->d2h && p->d2h != p->compute)
        (void)cudaStreamDestroy(p->d2h);
    if (p->dev_mem)
        (void)cudaFree(p->dev_mem);
    if (p->host_mem)
        (void)cudaFreeHost(p->host_mem);
    (void)cudaGetLastError();
    free(p->slots);
    free(p);
}

static utc_status_t make_ring(utc_gpu_pipeline_t *p, const char *fn)
{
    size_t d = (size_t)p->o.depth, in = round_up(p->o.in_size), out = round_up(p->o.out_size);
    size_t bytes = d * (in + out), in_host = p->o.in_owned ? 0 : in; /* owned: no staging */
    cudaError_t err = cudaSuccess;
    if (d * (in_host + out) > 0)
        err = cudaMallocHost(&p->host_mem, d * (in_host + out));
    if (err != cudaSuccess)
        return utc__gpu_error(err, fn, "cudaMallocHost (the pinned staging)");
    err = cudaMalloc(&p->dev_mem, bytes);
    if (err != cudaSuccess)
        return utc__gpu_error(err, fn, "cudaMalloc (the device slots)");
    for (size_t i = 0; i < d; i++) {
        slot_t *s = &p->slots[i];
        s->in_host = in_host ? (char *)p->host_mem + i * in_host : NULL;
        s->out_host = p->o.out_size ? (char *)p->host_mem + d * in_host + i * out : NULL;
        s->in_dev = (char *)p->dev_mem + i * in;
        s->out_dev = p->o.out_size ? (char *)p->dev_mem + d * in + i * out : NULL;
        /* kernel_done orders GPU work only; the two the host waits for may sleep. */
        if ((err = cudaEventCreateWithFlags(&s->h2d_done, UTC__GPU_EVENT_FLAGS)) != cudaSuccess ||
            (err = cudaEventCreateWithFlags(&s->kernel_done, cudaEventDisableTiming)) !=
                cudaSuccess ||
            (err = cudaEventCreateWithFlags(&s->d2h_done, UTC__GPU_EVENT_FLAGS)) != cudaSuccess)
            return utc__gpu_error(err, fn, "cudaEventCreateWithFlags");
    }
    if (p->o.depth > 1) {
        if ((err = cudaStreamCreateWithFlags(&p->h2d, cudaStreamNonBlocking)) != cudaSuccess ||
            (err = cudaStreamCreateWithFlags(&p->d2h, cudaStreamNonBlocking)) != cudaSuccess)
            return utc__gpu_error(err, fn, "cudaStreamCreateWithFlags (the copy streams)");
    } else {
        p->h2d = p->d2h = p->compute;
    }
    return UTC_OK;
}

utc_status_t utc_gpu_pipeline_create(const utc_gpu_pipeline_options_t *opts,
                                     utc_gpu_pipeline_t **out)
{
    static const char fn[] = "utc_gpu_pipeline_create";
    utc_status_t rc = check_options(opts, out, fn);
    if (rc != UTC_OK)
        return rc;
    utc__gpu_thread_t *self = utc__gpu_self(fn);
    if (!self)
        return UTC_ERR_NOT_MEMBER;

    utc_gpu_pipeline_t *p = calloc(1, sizeof *p);
    slot_t *slots = calloc((size_t)opts->depth, sizeof *slots);
    if (!p || !slots) {
        free(slots);
        free(p);
        return utc__error(UTC_ERR_NO_MEMORY, "%s: out of memory", fn);
    }
    p->owner = self;
    p->local_id = self->ctx->local_id;
    p->o = *opts;
    p->slots = slots;
    p->compute = self->stream;
    utc__pring_init(&p->ring, (unsigned)opts->depth, opts->count);
    rc = make_ring(p, fn);
    if (rc != UTC_OK) {
        free_pipeline(p);
        return rc;
    }
    *out = p;
    return UTC_OK;
}

/* ---- the steps ---- */

/* A host wait (block) or check (!block) of an event: 1 done, 0 not yet, < 0 error. */
static int event_done(utc_gpu_pipeline_t *p, cudaEvent_t ev, bool block, const char *fn)
{
    if (block) {
        utc_status_t rc = utc__gpu_wait_event(ev, fn);
        return rc == UTC_OK ? 1 : stop(p, rc);
    }
    cudaError_t err = cudaEventQuery(ev);
    if (err == cudaErrorNotReady)
        return 0;
    return err == cudaSuccess ? 1 : cuda_stop(p, err, fn, "the pipeline's GPU work");
}

static int do_post(utc_gpu_pipeline_t *p, slot_t *s, const char *fn)
{
    if (p->o.in_owned)
        return 1; /* an owned item is read when it may arrive (do_arrive_owned) */
    utc_status_t rc = utc_conduit_iread(p->o.in, s->in_host, p->o.in_size, p->o.in_tag, &s->in_req);
    if (rc != UTC_OK)
        return stop(p, utc__error(rc, "%s: reading the next item: %s", fn, utc_last_error()));
    return 1;
}

/* in_owned: item j's buffer, read on the owner's thread (without blocking: only once a
 * probe has seen it). Returns as do_arrive. */
static int do_arrive_owned(utc_gpu_pipeline_t *p, slot_t *s, uint64_t j, bool block,
                           const char *fn)
{
    utc_status_t rc = UTC_OK;
    if (!block) {
        int found = 0;
        utc_msg_info_t info;
        rc = utc_conduit_iprobe(p->o.in, p->o.in_tag, &found, &info);
        if (rc == UTC_OK && !found)
            return 0;
    }
    void *buf = NULL;
    size_t got = 0;
    if (rc == UTC_OK)
        rc = utc_conduit_read_owned_by(p->o.in, p->local_id, p->o.in_tag, &buf, &got);
    if (rc == UTC_ERR_CLOSED) {
        utc__pring_end(&p->ring, j); /* the writer ended the stream before item j */
        return 2;
    }
    if (rc != UTC_OK)
        return stop(p, utc__error(rc, "%s: reading item %llu: %s", fn, (unsigned long long)j,
                                  utc_last_error()));
    if (got > p->o.in_size) {
        utc_buf_free(buf);
        return stop(p, utc__error(UTC_ERR_TRUNCATE,
                                  "%s: item %llu is %zu bytes, above the pipeline's in_size %zu",
                                  fn, (unsigned long long)j, got, p->o.in_size));
    }
    s->in_owned = buf;
    s->in_bytes = got;
    return 1;
}

static int do_arrive(utc_gpu_pipeline_t *p, slot_t *s, uint64_t j, bool block, const char *fn)
{
    if (p->o.in_owned)
        return do_arrive_owned(p, s, j, block, fn);
    size_t got = 0;
    int rc;
    if (block) {
        rc = utc_request_wait(&s->in_req, &got);
        rc = rc == UTC_OK ? 1 : rc;
    } else {
        int done = 0;
        rc = utc_request_test(&s->in_req, &done, &got);
        rc = rc == UTC_OK ? done : rc;
    }
    if (rc == UTC_ERR_CLOSED) {
        utc__pring_end(&p->ring, j); /* the writer ended the stream before item j */
        return 2;
    }
    if (rc == UTC_ERR_TRUNCATE)
        return stop(p, utc__error(UTC_ERR_TRUNCATE,
                                  "%s: item %llu is %zu bytes, above the pipeline's in_size %zu",
                                  fn, (unsigned long long)j, got, p->o.in_size));
    if (rc < 0)
        return stop(p, utc__error(rc, "%s: reading item %llu: %s", fn, (unsigned long long)j,
                                  utc_last_error()));
    if (rc == 1)
        s->in_bytes = got;
    return rc;
}

static int do_load(utc_gpu_pipeline_t *p, slot_t *s, uint64_t j, const char *fn)
{
    cudaError_t err = cudaSuccess;
    /* The device input is free once the kernel of item j - depth is done. */
    if (j >= p->ring.depth && p->h2d != p->compute)
        err = cudaStreamWaitEvent(p->h2d, s->kernel_done, 0);
    if (err == cudaSuccess && s->in_bytes > 0)
        err = cudaMemcpyAsync(s->in_dev, p->o.in_owned ? s->in_owned : s->in_host, s->in_bytes,
                              cudaMemcpyHostToDevice, p->h2d);
    if (err == cudaSuccess)
        err = cudaEventRecord(s->h2d_done, p->h2d);
    return err == cudaSuccess ? 1 : cuda_stop(p, err, fn, "queueing an item's copy in");
}

static int do_deliver(utc_gpu_pipeline_t *p, slot_t *s, uint64_t j, const char *fn)
{
    if (p->o.out) {
        utc_status_t rc =
            utc_conduit_iwrite(p->o.out, s->out_host, s->out_bytes, p->o.out_tag, &s->out_req);
        if (rc != UTC_OK)
            return stop(p, utc__error(rc, "%s: writing result %llu: %s", fn, (unsigned long long)j,
                                      utc_last_error()));
    } else if (p->o.on_result) {
        int r = p->o.on_result(s->out_host, s->out_bytes, j, p->o.result_arg);
        if (r != 0)
            return stop(p, utc__error(UTC_ERR_TASK_FAILED,
                                      "%s: the result callback returned %d for item %llu", fn, r,
                                      (unsigned long long)j));
    }
    return 1;
}

static int do_release(utc_gpu_pipeline_t *p, slot_t *s, uint64_t j, bool block, const char *fn)
{
    if (!s->out_req)
        return 1;
    int rc;
    if (block) {
        rc = utc_request_wait(&s->out_req, NULL);
        rc = rc == UTC_OK ? 1 : rc;
    } else {
        int done = 0;
        rc = utc_request_test(&s->out_req, &done, NULL);
        rc = rc == UTC_OK ? done : rc;
    }
    if (rc < 0)
        return stop(p, utc__error(rc, "%s: writing result %llu: %s", fn, (unsigned long long)j,
                                  utc_last_error()));
    return rc;
}

/*
 * Let the next item take `step` if the ring allows it, waiting for the asynchronous part
 * when `block`. Returns 1 when something changed, 0 when not (not allowed, not complete),
 * or a negative status (the pipeline has stopped).
 */
static int advance(utc_gpu_pipeline_t *p, utc__pring_step_t step, bool block, const char *fn)
{
    utc__pring_t *r = &p->ring;
    if (!utc__pring_may(r, step))
        return 0;
    uint64_t j = utc__pring_next(r, step);
    slot_t *s = &p->slots[utc__pring_slot(r, j)];
    int rc;
    switch (step) {
    case UTC__PRING_POST:
        rc = do_post(p, s, fn);
        break;
    case UTC__PRING_ARRIVE:
        rc = do_arrive(p, s, j, block, fn);
        if (rc == 2)
            return 1; /* the end of the stream: the ring changed, no item arrived */
        break;
    case UTC__PRING_LOAD:
        rc = do_load(p, s, j, fn);
        break;
    case UTC__PRING_FREE_IN:
        rc = event_done(p, s->h2d_done, block, fn);
        if (rc == 1 && s->in_owned) { /* copied in: the item's buffer is done with */
            utc_buf_free(s->in_owned);
            s->in_owned = NULL;
        }
        break;
    case UTC__PRING_COPY_OUT:
        rc = event_done(p, s->d2h_done, block, fn);
        break;
    case UTC__PRING_DELIVER:
        rc = do_deliver(p, s, j, fn);
        break;
    case UTC__PRING_RELEASE:
        rc = do_release(p, s, j, block, fn);
        break;
    default: /* HAND and COMPUTE are next() and done() themselves */
        return 0;
    }
    if (rc == 1)
        (void)utc__pring_take(r, step);
    return rc;
}

/* Take every step that is ready now, without waiting, until none is. */
static utc_status_t pump(utc_gpu_pipeline_t *p, const char *fn)
{
    static const utc__pring_step_t order[] = {
        UTC__PRING_RELEASE, UTC__PRING_DELIVER, UTC__PRING_COPY_OUT, UTC__PRING_FREE_IN,
        UTC__PRING_ARRIVE,  UTC__PRING_LOAD,    UTC__PRING_POST,
    };
    for (bool moved = true; moved;) {
        moved = false;
        for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
            int rc = advance(p, order[i], false, fn);
            if (rc < 0)
                return (utc_status_t)rc;
            moved |= rc == 1;
        }
    }
    return UTC_OK;
}

/* Wait for one step of the output side: the oldest write, else the oldest copy back.
 * Returns 0 when the output side has nothing in flight. */
static int wait_output(utc_gpu_pipeline_t *p, const char *fn)
{
    const uint64_t *n = p->ring.n;
    if (n[UTC__PRING_RELEASE] < n[UTC__PRING_DELIVER])
        return advance(p, UTC__PRING_RELEASE, true, fn);
    if (n[UTC__PRING_COPY_OUT] < n[UTC__PRING_COMPUTE])
        return advance(p, UTC__PRING_COPY_OUT, true, fn);
    return 0;
}

/* Deliver every result of the items computed so far. Blocks. */
static utc_status_t drain(utc_gpu_pipeline_t *p, const char *fn)
{
    for (;;) {
        utc_status_t rc = pump(p, fn);
        if (rc != UTC_OK)
            return rc;
        int w = wait_output(p, fn);
        if (w < 0)
            return (utc_status_t)w;
        if (w == 0 && p->ring.n[UTC__PRING_DELIVER] == p->ring.n[UTC__PRING_COPY_OUT])
            return UTC_OK;
    }
}

/* Until the next item may be handed out or the stream has ended. Blocks. */
static utc_status_t wait_input(utc_gpu_pipeline_t *p, const char *fn)
{
    utc__pring_t *r = &p->ring;
    for (;;) {
        utc_status_t rc = pump(p, fn);
        if (rc != UTC_OK)
            return rc;
        if (utc__pring_may(r, UTC__PRING_HAND) || utc__pring_exhausted(r))
            return UTC_OK;
        const uint64_t *n = r->n;
        int w;
        if (utc__pring_may(r, UTC__PRING_ARRIVE)) {
            /* Deliver what is computed before sleeping on the read: a writer that waits for
             * a result before it writes the next item must not wait for ever. */
            if ((rc = drain(p, fn)) != UTC_OK)
                return rc;
            /* draining pumped the ring: the awaited item may have come meanwhile, and its
             * writer may wait for its result before it writes the next one */
            if (utc__pring_may(r, UTC__PRING_HAND) || utc__pring_exhausted(r))
                return UTC_OK;
            w = advance(p, UTC__PRING_ARRIVE, true, fn);
        } else if (utc__pring_may(r, UTC__PRING_FREE_IN)) {
            w = advance(p, UTC__PRING_FREE_IN, true, fn);
        } else {
            return stop(p, utc__error(UTC_ERR_INTERNAL,
                                      "%s: the pipeline's ring cannot move (posted %llu, "
                                      "loaded %llu, handed %llu, computed %llu)",
                                      fn, (unsigned long long)n[UTC__PRING_POST],
                                      (unsigned long long)n[UTC__PRING_LOAD],
                                      (unsigned long long)n[UTC__PRING_HAND],
                                      (unsigned long long)n[UTC__PRING_COMPUTE]));
        }
        if (w < 0)
            return (utc_status_t)w;
    }
}

/* Withdraw the reads started beyond the end of the stream (or of a stopped pipeline). */
static void cancel_reads(utc_gpu_pipeline_t *p)
{
    for (int i = 0; i < p->o.depth; i++) {
        slot_t *s = &p->slots[i];
        if (!s->in_req)
            continue;
        (void)utc_request_cancel(&s->in_req);
        (void)utc_request_wait(&s->in_req, NULL); /* CANCELED, CLOSED, or a dropped item */
        s->in_req = NULL;
    }
}

utc_status_t utc_gpu_pipeline_next(utc_gpu_pipeline_t *p, utc_gpu_item_t *item)
{
    static const char fn[] = "utc_gpu_pipeline_next";
    utc_status_t rc = enter(p, item, fn);
    if (rc != UTC_OK)
        return rc;
    if (p->item_out)
        return utc__error(UTC_ERR_STATE,
                          "%s: item %llu is still out: pass it to utc_gpu_pipeline_done first", fn,
                          (unsigned long long)p->item_index);
    if ((rc = wait_input(p, fn)) != UTC_OK)
        return rc;
    utc__pring_t *r = &p->ring;
    if (utc__pring_exhausted(r)) {
        if ((rc = drain(p, fn)) != UTC_OK)
            return rc;
        cancel_reads(p);
        return utc__error(UTC_ERR_CLOSED, "%s: end of the stream after %llu item(s)", fn,
                          (unsigned long long)r->limit);
    }
    uint64_t j = utc__pring_take(r, UTC__PRING_HAND);
    slot_t *s = &p->slots[utc__pring_slot(r, j)];
    cudaError_t err = cudaSuccess;
    if (p->h2d != p->compute)
        err = cudaStreamWaitEvent(p->compute, s->h2d_done, 0);
    /* The device output is free once the copy back of item j - depth is done. */
    if (err == cudaSuccess && j >= r->depth && p->d2h != p->compute)
        err = cudaStreamWaitEvent(p->compute, s->d2h_done, 0);
    if (err != cudaSuccess)
        return cuda_stop(p, err, fn, "cudaStreamWaitEvent");
    item->in = s->in_dev;
    item->in_size = s->in_bytes;
    item->out = s->out_dev;
    item->out_size = p->o.out_size;
    item->index = j;
    item->stream = (void *)p->compute;
    p->item_out = true;
    p->item_index = j;
    return UTC_OK;
}

utc_status_t utc_gpu_pipeline_done(utc_gpu_pipeline_t *p, const utc_gpu_item_t *item)
{
    static const char fn[] = "utc_gpu_pipeline_done";
    utc_status_t rc = enter(p, item, fn);
    if (rc != UTC_OK)
        return rc;
    if (!p->item_out)
        return utc__error(UTC_ERR_STATE, "%s: no item is out (call utc_gpu_pipeline_next first)",
                          fn);
    if (item->index != p->item_index)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: item %llu is not the item out (%llu)", fn,
                          (unsigned long long)item->index, (unsigned long long)p->item_index);
    if (item->out_size > p->o.out_size)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: item %llu's out_size %zu is above the pipeline's out_size %zu", fn,
                          (unsigned long long)item->index, item->out_size, p->o.out_size);

    /* The ring is full until the result of item index - depth is delivered. */
    utc__pring_t *r = &p->ring;
    while (!utc__pring_may(r, UTC__PRING_COMPUTE)) {
        if ((rc = pump(p, fn)) != UTC_OK)
            return rc;
        int w = utc__pring_may(r, UTC__PRING_COMPUTE) ? 1 : wait_output(p, fn);
        if (w < 0)
            return (utc_status_t)w;
        if (w == 0)
            return stop(p,
                        utc__error(UTC_ERR_INTERNAL, "%s: the pipeline's output cannot move", fn));
    }
    uint64_t j = utc__pring_take(r, UTC__PRING_COMPUTE);
    slot_t *s = &p->slots[utc__pring_slot(r, j)];
    s->out_bytes = item->out_size;
    p->item_out = false;
    cudaError_t err = cudaEventRecord(s->kernel_done, p->compute);
    cudaStream_t out_stream = p->o.out_size ? p->d2h : p->compute;
    if (err == cudaSuccess && out_stream != p->compute)
        err = cudaStreamWaitEvent(out_stream, s->kernel_done, 0);
    if (err == cudaSuccess && s->out_bytes > 0)
        err = cudaMemcpyAsync(s->out_host, s->out_dev, s->out_bytes, cudaMemcpyDeviceToHost,
                              out_stream);
    if (err == cudaSuccess)
        err = cudaEventRecord(s->d2h_done, out_stream);
    if (err != cudaSuccess)
        return cuda_stop(p, err, fn, "queueing a result's copy back");
    /* Depth 1: this result is delivered before the next item is read. */
    return p->o.depth == 1 ? drain(p, fn) : pump(p, fn);
}

void utc_gpu_pipeline_destroy(utc_gpu_pipeline_t *p)
{
    if (!p)
        return;
    if (utc__gpu_self(NULL) != p->owner)
        utc_log(UTC_LOG_WARN, "utc_gpu_pipeline_destroy: called from a thread other than the "
                              "pipeline's own; its stream is not waited for");
    else if (utc__gpu_wait_stream(p->owner, "utc_gpu_pipeline_destroy") != UTC_OK)
        utc_log(UTC_LOG_WARN, "utc_gpu_pipeline_destroy: %s", utc_last_error());
    if (p->h2d != p->compute)
        (void)cudaStreamSynchronize(p->h2d);
    if (p->d2h != p->compute)
        (void)cudaStreamSynchronize(p->d2h);
    cancel_reads(p);
    for (int i = 0; i < p->o.depth; i++) {
        if (p->slots[i].out_req)
            (void)utc_request_wait(&p->slots[i].out_req, NULL);
        utc_buf_free(p->slots[i].in_owned); /* read, not yet copied in (the streams are idle) */
    }
    free_pipeline(p);
}

utc_status_t utc_gpu_pipeline_run(const utc_gpu_pipeline_options_t *opts, utc_gpu_kernel_fn kernel,
                                  void *arg, uint64_t *processed)
{
    static const char fn[] = "utc_gpu_pipeline_run";
    if (processed)
        *processed = 0;
    if (!kernel)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: kernel is NULL (give the function that launches an item's "
                          "kernels)",
                          fn);
    utc_gpu_pipeline_t *p;
    utc_status_t rc = utc_gpu_pipeline_create(opts, &p);
    if (rc != UTC_OK)
        return rc;
    utc_gpu_item_t it;
    uint64_t n = 0;
    while ((rc = utc_gpu_pipeline_next(p, &it)) == UTC_OK) {
        int k = kernel(&it, arg);
        if (k != 0) {
            rc =
                utc__error(utc__user_status(k), "%s: the kernel callback returned %d for item %llu",
                           fn, k, (unsigned long long)it.index);
            break;
        }
        if ((rc = utc_gpu_pipeline_done(p, &it)) != UTC_OK)
            break;
        n++;
    }
    utc_gpu_pipeline_destroy(p);
    if (processed)
        *processed = n;
    return rc == UTC_ERR_CLOSED ? UTC_OK : rc;
}
