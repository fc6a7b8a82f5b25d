/*
 * GPU buffers with CUDA: a host copy and a device copy (one managed allocation for
 * unified memory), which copy is current, and transfers only when one is stale.
 *
 * Transfers run on the calling thread's stream. Each buffer has an event recorded after
 * its last queued transfer, so that host access waits for that transfer only (not for
 * every kernel on the stream), destroy can wait from any thread, and a transfer queued on
 * another thread's stream is ordered after it.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_cuda.h"
#include "observe/trace.h"

enum { COPY_HOST = 1u, COPY_DEVICE = 2u };

struct utc_gpu_data {
    utc_mem_kind_t kind;
    int device;              /* device of the device copy (of the creating thread) */
    size_t elem_size, nx, ny, nz;
    size_t bytes;
    void *host;              /* == dev for unified memory */
    void *dev;
    unsigned current;        /* COPY_HOST | COPY_DEVICE: the copies that hold the data */
    bool prefetch;           /* unified memory: the device can prefetch (concurrent access) */
    bool pending;            /* a transfer queued on last_stream may still run */
    cudaEvent_t done;        /* recorded after the last queued transfer */
    cudaStream_t last_stream;
    utc_gpu_data_stats_t stats;
};

/* Check the buffer and the caller: a GPU task thread on the buffer's device. */
static utc_status_t enter(const utc_gpu_data_t *d, const char *fn, utc__gpu_thread_t **self)
{
    if (!d)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: the buffer is NULL", fn);
    utc__gpu_thread_t *s = utc__gpu_self(fn);
    if (!s)
        return UTC_ERR_NOT_MEMBER;
    if (s->device != d->device)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: the buffer lives on device %d, but the calling thread uses device "
                          "%d (use a buffer from threads on its own device)",
                          fn, d->device, s->device);
    *self = s;
    return UTC_OK;
}

/* Wait for the buffer's queued transfers. Blocks. */
static utc_status_t wait_pending(utc_gpu_data_t *d, const char *fn)
{
    if (!d->pending)
        return UTC_OK;
    utc_status_t rc = UTC__PROF_CALL(UTC__EV_GPU_SYNC, d->device, d->bytes, -1, -1,
                                     utc__gpu_wait_event(d->done, fn));
    if (rc == UTC_OK)
        d->pending = false;
    return rc;
}

/*
 * Make the host copy safe to touch: its transfers are done and, for unified memory (one
 * allocation that kernels on the stream may be using), the thread's stream is idle.
 */
static utc_status_t host_access(utc_gpu_data_t *d, utc__gpu_thread_t *self, const char *fn)
{
    utc_status_t rc = wait_pending(d, fn);
    if (rc != UTC_OK || d->kind != UTC_MEM_UNIFIED)
        return rc;
    return utc__gpu_wait_stream(self, fn);
}

/* Before queueing on the caller's stream: order after a transfer queued on another. */
static utc_status_t order_on_stream(utc_gpu_data_t *d, utc__gpu_thread_t *self, const char *fn)
{
    if (!d->pending || d->last_stream == self->stream)
        return UTC_OK;
    cudaError_t err = cudaStreamWaitEvent(self->stream, d->done, 0);
    return err == cudaSuccess ? UTC_OK : utc__gpu_error(err, fn, "cudaStreamWaitEvent");
}

/* After queueing a transfer on the caller's stream: record its end. */
static utc_status_t queued(utc_gpu_data_t *d, utc__gpu_thread_t *self, const char *fn)
{
    cudaError_t err = cudaEventRecord(d->done, self->stream);
    if (err != cudaSuccess) {
        /* The transfer cannot be tracked: wait for it here so no one touches it early. */
        (void)cudaStreamSynchronize(self->stream);
        (void)cudaGetLastError();
        d->pending = false;
        return utc__gpu_error(err, fn, "cudaEventRecord");
    }
    d->pending = true;
    d->last_stream = self->stream;
    return UTC_OK;
}

static void count(utc_gpu_data_t *d, bool to_device, size_t bytes)
{
    UTC__PROF_LEAF(to_device ? UTC__EV_GPU_H2D : UTC__EV_GPU_D2H, utc__prof_stamp(), d->device,
                   bytes, -1, -1); /* queued: the copy itself shows in the next gpu_sync */
    if (to_device) {
        d->stats.h2d_bytes += bytes;
        d->stats.h2d_copies++;
    } else {
        d->stats.d2h_bytes += bytes;
        d->stats.d2h_copies++;
    }
}

static cudaError_t prefetch(const utc_gpu_data_t *d, bool to_device, cudaStream_t stream)
{
#if CUDART_VERSION >= 13000
    struct cudaMemLocation loc;
    memset(&loc, 0, sizeof loc);
    loc.type = to_device ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
    loc.id = to_device ? d->device : 0;
    return cudaMemPrefetchAsync(d->dev, d->bytes, loc, 0, stream);
#else
    return cudaMemPrefetchAsync(d->dev, d->bytes, to_device ? d->device : cudaCpuDeviceId, stream);
#endif
}

/*
 * Queue a copy of the buffer's bytes on the caller's stream, towards the device copy when
 * to_device: from or to `user` (the caller's memory), or with user NULL between the
 * buffer's own copies (for unified memory, a prefetch). Does not wait.
 */
static utc_status_t queue_copy(utc_gpu_data_t *d, utc__gpu_thread_t *self, bool to_device,
                               void *user, const char *fn)
{
    utc_status_t rc = order_on_stream(d, self, fn);
    if (rc != UTC_OK)
        return rc;
    cudaError_t err = cudaSuccess;
    const char *call = "cudaMemcpyAsync";
    if (!user && d->kind == UTC_MEM_UNIFIED) {
        /* Without prefetch support the pages migrate on demand when touched. */
        call = "cudaMemPrefetchAsync";
        if (d->prefetch)
            err = prefetch(d, to_device, self->stream);
    } else {
        void *host = user ? user : d->host;
        /* Unified memory is one managed allocation: let CUDA see where the pointers live. */
        enum cudaMemcpyKind kind = d->kind == UTC_MEM_UNIFIED ? cudaMemcpyDefault
                                   : to_device               ? cudaMemcpyHostToDevice
                                                             : cudaMemcpyDeviceToHost;
        err = to_device ? cudaMemcpyAsync(d->dev, host, d->bytes, kind, self->stream)
                        : cudaMemcpyAsync(host, d->dev, d->bytes, kind, self->stream);
    }
    if (err != cudaSuccess)
        return utc__gpu_error(err, fn, call);
    count(d, to_device, d->bytes);
    return queued(d, self, fn);
}

/* ---- create / destroy ---- */

static void free_memory(utc_gpu_data_t *d)
{
    cudaError_t err = cudaSuccess, e;
    switch (d->kind) {
    case UTC_MEM_PAGEABLE:
        free(d->host);
        if (d->dev && (e = cudaFree(d->dev)) != cudaSuccess)
            err = e;
        break;
    case UTC_MEM_PINNED:
        if (d->host && (e = cudaFreeHost(d->host)) != cudaSuccess)
            err = e;
        if (d->dev && (e = cudaFree(d->dev)) != cudaSuccess)
            err = e;
        break;
    case UTC_MEM_UNIFIED:
        if (d->dev && (e = cudaFree(d->dev)) != cudaSuccess)
            err = e;
        break;
    }
    if (err != cudaSuccess) {
        utc_log(UTC_LOG_WARN, "utc_gpu_data_destroy: freeing a buffer: %s", cudaGetErrorString(err));
        (void)cudaGetLastError();
    }
    d->host = d->dev = NULL;
}

/* Allocate the copies; pointers are stored only when their allocation succeeded. */
static utc_status_t allocate(utc_gpu_data_t *d, const char *fn)
{
    cudaError_t err;
    void *p = NULL;
    switch (d->kind) {
    case UTC_MEM_PAGEABLE:
    case UTC_MEM_PINNED:
        if (d->kind == UTC_MEM_PAGEABLE) {
            if (!(p = malloc(d->bytes)))
                return utc__error(UTC_ERR_NO_MEMORY, "%s: malloc of %zu bytes failed", fn, d->bytes);
        } else if ((err = cudaMallocHost(&p, d->bytes)) != cudaSuccess) {
            return utc__gpu_error(err, fn, "cudaMallocHost");
        }
        d->host = p;
        p = NULL;
        if ((err = cudaMalloc(&p, d->bytes)) != cudaSuccess)
            return utc__gpu_error(err, fn, "cudaMalloc");
        d->dev = p;
        return UTC_OK;
    case UTC_MEM_UNIFIED: {
        if ((err = cudaMallocManaged(&p, d->bytes, cudaMemAttachGlobal)) != cudaSuccess)
            return utc__gpu_error(err, fn, "cudaMallocManaged");
        d->host = d->dev = p;
        int concurrent = 0;
        err = cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, d->device);
        if (err != cudaSuccess)
            return utc__gpu_error(err, fn, "cudaDeviceGetAttribute");
        d->prefetch = concurrent != 0;
        return UTC_OK;
    }
    }
    return utc__error(UTC_ERR_INVALID_ARG, "%s: unknown memory kind %d", fn, (int)d->kind);
}

static utc_status_t create(utc__gpu_thread_t *self, size_t elem_size, size_t nx, size_t ny,
                           size_t nz, size_t bytes, utc_mem_kind_t kind, utc_gpu_data_t **out,
                           const char *fn)
{
    utc_gpu_data_t *d = calloc(1, sizeof *d);
    if (!d)
        return utc__error(UTC_ERR_NO_MEMORY, "%s: out of memory", fn);
    d->kind = kind;
    d->device = self->device;
    d->elem_size = elem_size;
    d->nx = nx;
    d->ny = ny;
    d->nz = nz;
    d->bytes = bytes;

    /* Allocations and the event belong to the current device: make it the thread's own
     * (task code may have switched), and put back the caller's afterwards. */
    utc_status_t rc;
    int prev = -1;
    cudaError_t err = cudaGetDevice(&prev);
    if (err != cudaSuccess) {
        rc = utc__gpu_error(err, fn, "cudaGetDevice");
        goto fail_struct;
    }
    if (prev != d->device && (err = cudaSetDevice(d->device)) != cudaSuccess) {
        rc = utc__gpu_error(err, fn, "cudaSetDevice");
        goto fail_struct;
    }
    rc = allocate(d, fn);
    if (rc != UTC_OK)
        goto fail_memory;
    if ((err = cudaEventCreateWithFlags(&d->done, UTC__GPU_EVENT_FLAGS)) != cudaSuccess) {
        rc = utc__gpu_error(err, fn, "cudaEventCreateWithFlags");
        goto fail_memory;
    }
    if (prev != d->device && (err = cudaSetDevice(prev)) != cudaSuccess) {
        rc = utc__gpu_error(err, fn, "cudaSetDevice");
        goto fail_event;
    }
    /* Both copies hold the (undefined) initial contents: nothing to copy yet. */
    d->current = COPY_HOST | COPY_DEVICE;
    *out = d;
    return UTC_OK;

fail_event:
    (void)cudaEventDestroy(d->done);
fail_memory:
    free_memory(d);
    if (prev >= 0 && prev != d->device)
        (void)cudaSetDevice(prev);
fail_struct:
    free(d);
    return rc;
}

static utc_status_t check_create(size_t elem_size, size_t nx, size_t ny, size_t nz,
                                 utc_gpu_data_t **out, size_t *bytes, const char *fn)
{
    if (!out)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: out is NULL", fn);
    if (elem_size == 0 || nx == 0 || ny == 0 || nz == 0)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: elem_size and extents must be > 0 (elem_size %zu, nx %zu, ny %zu, "
                          "nz %zu; use 1 for unused dimensions)",
                          fn, elem_size, nx, ny, nz);
    size_t n = elem_size;
    const size_t dims[3] = {nx, ny, nz};
    for (int i = 0; i < 3; i++) {
        if (dims[i] > SIZE_MAX / n)
            return utc__error(UTC_ERR_INVALID_ARG,
                              "%s: %zu x %zu x %zu elements of %zu bytes overflow size_t", fn, nx,
                              ny, nz, elem_size);
        n *= dims[i];
    }
    *bytes = n;
    return UTC_OK;
}

utc_status_t utc_gpu_data_create(size_t elem_size, size_t nx, size_t ny, size_t nz,
                                 utc_mem_kind_t kind, utc_gpu_data_t **out)
{
    static const char fn[] = "utc_gpu_data_create";
    size_t bytes;
    utc_status_t rc = check_create(elem_size, nx, ny, nz, out, &bytes, fn);
    if (rc != UTC_OK)
        return rc;
    if ((int)kind < UTC_MEM_PAGEABLE || (int)kind > UTC_MEM_UNIFIED)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: kind %d is not a utc_mem_kind_t", fn, (int)kind);
    utc__gpu_thread_t *self = utc__gpu_self(fn);
    if (!self)
        return UTC_ERR_NOT_MEMBER;
    return create(self, elem_size, nx, ny, nz, bytes, kind, out, fn);
}

utc_status_t utc_gpu_data_create_default(size_t elem_size, size_t nx, size_t ny, size_t nz,
                                         utc_gpu_data_t **out)
{
    static const char fn[] = "utc_gpu_data_create_default";
    size_t bytes;
    utc_status_t rc = check_create(elem_size, nx, ny, nz, out, &bytes, fn);
    if (rc != UTC_OK)
        return rc;
    utc__gpu_thread_t *self = utc__gpu_self(fn);
    if (!self)
        return UTC_ERR_NOT_MEMBER;
    return create(self, elem_size, nx, ny, nz, bytes, self->ctx->impl->task->opts.mem_kind, out, fn);
}

void utc_gpu_data_destroy(utc_gpu_data_t *d)
{
    if (!d)
        return;
    static const char fn[] = "utc_gpu_data_destroy";
    if (wait_pending(d, fn) != UTC_OK)
        utc_log(UTC_LOG_WARN, "%s: a transfer of the buffer failed: %s", fn, utc_last_error());
    utc__gpu_thread_t *self = utc__gpu_self(NULL);
    if (self && self->device == d->device && utc__gpu_wait_stream(self, fn) != UTC_OK)
        utc_log(UTC_LOG_WARN, "%s: work on the thread's stream failed: %s", fn, utc_last_error());
    cudaError_t err;
    if ((err = cudaEventDestroy(d->done)) != cudaSuccess)
        utc_log(UTC_LOG_WARN, "utc_gpu_data_destroy: cudaEventDestroy: %s", cudaGetErrorString(err));
    (void)cudaGetLastError();
    free_memory(d);
    free(d);
}

/* ---- getters ---- */

void *utc_gpu_data_host(const utc_gpu_data_t *d) { return d ? d->host : NULL; }
void *utc_gpu_data_device(const utc_gpu_data_t *d) { return d ? d->dev : NULL; }
size_t utc_gpu_data_size(const utc_gpu_data_t *d) { return d ? d->bytes : 0; }
size_t utc_gpu_data_elem_size(const utc_gpu_data_t *d) { return d ? d->elem_size : 0; }
utc_mem_kind_t utc_gpu_data_kind(const utc_gpu_data_t *d) { return d ? d->kind : UTC_MEM_PAGEABLE; }

int utc_gpu_data_device_id(const utc_gpu_data_t *d)
{
    if (!d)
        return utc__error(UTC_ERR_INVALID_ARG, "utc_gpu_data_device_id: the buffer is NULL");
    return d->device;
}

utc_status_t utc_gpu_data_dims(const utc_gpu_data_t *d, size_t *nx, size_t *ny, size_t *nz)
{
    if (!d)
        return utc__error(UTC_ERR_INVALID_ARG, "utc_gpu_data_dims: the buffer is NULL");
    if (nx)
        *nx = d->nx;
    if (ny)
        *ny = d->ny;
    if (nz)
        *nz = d->nz;
    return UTC_OK;
}

utc_status_t utc_gpu_data_stats(const utc_gpu_data_t *d, utc_gpu_data_stats_t *out)
{
    if (!d || !out)
        return utc__error(UTC_ERR_INVALID_ARG, "utc_gpu_data_stats: %s is NULL",
                          d ? "out" : "the buffer");
    *out = d->stats;
    return UTC_OK;
}

utc_status_t utc_gpu_data_reset_stats(utc_gpu_data_t *d)
{
    if (!d)
        return utc__error(UTC_ERR_INVALID_ARG, "utc_gpu_data_reset_stats: the buffer is NULL");
    memset(&d->stats, 0, sizeof d->stats);
    return UTC_OK;
}

/* ---- moving data ---- */

utc_status_t utc_gpu_data_sync_device(utc_gpu_data_t *d)
{
    static const char fn[] = "utc_gpu_data_sync_device";
    utc__gpu_thread_t *self = NULL;
    utc_status_t rc = enter(d, fn, &self);
    if (rc != UTC_OK || (d->current & COPY_DEVICE))
        return rc;
    if ((rc = queue_copy(d, self, true, NULL, fn)) != UTC_OK)
        return rc;
    d->current |= COPY_DEVICE;
    return UTC_OK;
}

/* Make the host copy current and safe to touch. Blocks. */
static utc_status_t sync_host(utc_gpu_data_t *d, utc__gpu_thread_t *self, const char *fn)
{
    if (!(d->current & COPY_HOST)) {
        utc_status_t rc = queue_copy(d, self, false, NULL, fn);
        if (rc != UTC_OK)
            return rc;
        d->current |= COPY_HOST;
    }
    return host_access(d, self, fn);
}

utc_status_t utc_gpu_data_sync_host(utc_gpu_data_t *d)
{
    static const char fn[] = "utc_gpu_data_sync_host";
    utc__gpu_thread_t *self = NULL;
    utc_status_t rc = enter(d, fn, &self);
    return rc != UTC_OK ? rc : sync_host(d, self, fn);
}

enum { PUT, FETCH };

/*
 * The one path of the put and fetch calls: copy all the buffer's bytes from the caller's
 * `user` memory into the buffer (PUT), or from the buffer to it (FETCH). `copy` is the
 * buffer's copy a put writes (and makes the only current one), or the one a fetch reads
 * (the host copy whenever it holds the data, as no transfer is needed then). Blocks until
 * the copy is done.
 */
static utc_status_t copy_user(utc_gpu_data_t *d, int way, unsigned copy, void *user,
                              const char *fn)
{
    utc__gpu_thread_t *self = NULL;
    utc_status_t rc = enter(d, fn, &self);
    if (rc != UTC_OK)
        return rc;
    if (!user)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: %s is NULL", fn, way == PUT ? "src" : "dst");
    if (way == FETCH && (d->current & COPY_HOST))
        copy = COPY_HOST;
    if (copy == COPY_DEVICE) {
        if ((rc = queue_copy(d, self, way == PUT, user, fn)) != UTC_OK ||
            (rc = wait_pending(d, fn)) != UTC_OK)
            return rc;
    } else {
        /* A put overwrites the host copy; a fetch needs it current. */
        rc = way == PUT ? host_access(d, self, fn) : sync_host(d, self, fn);
        if (rc != UTC_OK)
            return rc;
        if (user != d->host)
            memmove(way == PUT ? d->host : user, way == PUT ? user : d->host, d->bytes);
    }
    if (way == PUT)
        d->current = copy;
    return UTC_OK;
}

/* The puts only read src: the cast lets them share copy_user with the fetches. */
utc_status_t utc_gpu_data_put_host(utc_gpu_data_t *d, const void *src)
{
    return copy_user(d, PUT, COPY_HOST, (void *)src, "utc_gpu_data_put_host");
}

utc_status_t utc_gpu_data_put_device(utc_gpu_data_t *d, const void *src)
{
    return copy_user(d, PUT, COPY_DEVICE, (void *)src, "utc_gpu_data_put_device");
}

utc_status_t utc_gpu_data_fetch_host(utc_gpu_data_t *d, void *dst)
{
    return copy_user(d, FETCH, COPY_HOST, dst, "utc_gpu_data_fetch_host");
}

utc_status_t utc_gpu_data_fetch_device(utc_gpu_data_t *d, void *dst)
{
    return copy_user(d, FETCH, COPY_DEVICE, dst, "utc_gpu_data_fetch_device");
}

utc_status_t utc_gpu_data_mark_host(utc_gpu_data_t *d)
{
    utc__gpu_thread_t *self = NULL;
    utc_status_t rc = enter(d, "utc_gpu_data_mark_host", &self);
    if (rc == UTC_OK)
        d->current = COPY_HOST;
    return rc;
}

utc_status_t utc_gpu_data_mark_device(utc_gpu_data_t *d)
{
    utc__gpu_thread_t *self = NULL;
    utc_status_t rc = enter(d, "utc_gpu_data_mark_device", &self);
    if (rc == UTC_OK)
        d->current = COPY_DEVICE;
    return rc;
}

utc_status_t utc_gpu_data_wait(utc_gpu_data_t *d)
{
    if (!d)
        return utc__error(UTC_ERR_INVALID_ARG, "utc_gpu_data_wait: the buffer is NULL");
    return wait_pending(d, "utc_gpu_data_wait");
}
