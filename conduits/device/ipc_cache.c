/*
 * Device conduits: CUDA IPC memory and event handles, made and opened once and cached
 * (see ipc_cache.h). Three caches of ipc_lru.h: this process's exported handles (by
 * allocation id), the allocations opened from peers (by peer, allocation id and handle)
 * and the events opened from peers (by peer and handle); and a pool of this process's
 * interprocess events.
 */
#include "ipc_cache.h"

#include <assert.h>
#include <cuda.h> /* types of the driver's pointer attributes: no link to libcuda */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "device_util.h"
#include "ipc_lru.h"

/* Exported handles kept (a miss only costs a cudaIpcGetMemHandle again). */
#define EXPORT_CAPACITY 4096
/* Opened allocations and events kept per process (env UTC_DEVICE_IPC_CACHE for memory),
 * and the bytes of the opened allocations beyond the newest (UTC_DEVICE_IPC_CACHE_BYTES):
 * a mapping keeps its allocation alive after its writer freed it, so a writer that
 * allocates a buffer per message would otherwise hold up to 256 of them on the reader. */
#define IMPORT_CAPACITY 256
#define IMPORT_BYTES     ((size_t)1 << 30)
#define IMPORT_BYTES_MAX ((size_t)1 << 50)
#define EVENT_CAPACITY  256

/* ---- the driver's pointer attributes, through the runtime (no link to libcuda) ---- */

typedef CUresult (*get_attrs_fn)(unsigned int, CUpointer_attribute *, void **, CUdeviceptr);
static get_attrs_fn get_attrs;
static pthread_once_t get_attrs_once = PTHREAD_ONCE_INIT;

static void find_get_attrs(void)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuPointerGetAttributes", &fn, 12000, cudaEnableDefault,
                                         &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
        get_attrs = (get_attrs_fn)fn;
    else
        (void)cudaGetLastError();
}

/* What the driver knows of the allocation holding p. */
typedef struct alloc_info {
    CUdeviceptr base;
    size_t extent;
    unsigned long long id;
    int ipc_capable;
} alloc_info_t;

static utc_status_t alloc_of(const void *p, alloc_info_t *a)
{
    pthread_once(&get_attrs_once, find_get_attrs);
    if (!get_attrs)
        return utc__error(UTC_ERR_UNSUPPORTED,
                          "device conduit: the CUDA driver has no cuPointerGetAttributes: IPC "
                          "is off (messages go staged)");
    *a = (alloc_info_t){0};
    CUpointer_attribute what[] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                  CU_POINTER_ATTRIBUTE_RANGE_SIZE, CU_POINTER_ATTRIBUTE_BUFFER_ID,
                                  CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE};
    void *data[] = {&a->base, &a->extent, &a->id, &a->ipc_capable};
    CUresult r = get_attrs(4, what, data, (CUdeviceptr)(uintptr_t)p);
    if (r != CUDA_SUCCESS || !a->base)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "device conduit: %p is not in a device allocation (CUDA driver error "
                          "%d): pass memory from cudaMalloc",
                          p, (int)r);
    return UTC_OK;
}

/* ---- the caches ---------------------------------------------------------------------- */

/* An allocation opened from a peer. */
typedef struct mapping {
    char *base;
    int device;       /* current device when it was opened */
    cudaEvent_t used; /* recorded after each copy_from (made at the first) */
    bool raw;         /* handed out by utc__ipc_import: its users' work is unknown */
} mapping_t;

static utc_status_t export_open(void *arg, const utc__ipc_key_t *key, const void *ctx,
                                void **value);
static void export_close(void *arg, const utc__ipc_key_t *key, void *value);
static utc_status_t mapping_open(void *arg, const utc__ipc_key_t *key, const void *ctx,
                                 void **value);
static void mapping_close(void *arg, const utc__ipc_key_t *key, void *value);
static size_t mapping_weigh(void *arg, const utc__ipc_key_t *key, const void *ctx);
static utc_status_t event_open(void *arg, const utc__ipc_key_t *key, const void *ctx, void **value);
static void event_close(void *arg, const utc__ipc_key_t *key, void *value);

static const utc__ipc_lru_ops_t export_ops = {.open = export_open, .close = export_close};
static const utc__ipc_lru_ops_t mapping_ops = {
    .open = mapping_open, .close = mapping_close, .weigh = mapping_weigh};
static const utc__ipc_lru_ops_t event_ops = {.open = event_open, .close = event_close};

static utc__ipc_lru_t exports, mappings, events;
/* a bad UTC_DEVICE_IPC_CACHE or UTC_DEVICE_IPC_CACHE_BYTES: every import says so */
static utc_status_t caches_status;
static char caches_error[256];
static pthread_once_t caches_once = PTHREAD_ONCE_INIT;

static void caches_init(void)
{
    size_t cap, bytes = IMPORT_BYTES;
    caches_status = utc__device_env_size("UTC_DEVICE_IPC_CACHE", 1, 1 << 20, IMPORT_CAPACITY, &cap);
    if (caches_status == UTC_OK)
        caches_status = utc__device_env_size("UTC_DEVICE_IPC_CACHE_BYTES", 1, IMPORT_BYTES_MAX,
                                             IMPORT_BYTES, &bytes);
    if (caches_status != UTC_OK) {
        snprintf(caches_error, sizeof caches_error, "%s", utc_last_error());
        cap = IMPORT_CAPACITY;
        bytes = IMPORT_BYTES;
    }
    utc__ipc_lru_init(&exports, EXPORT_CAPACITY, &export_ops, NULL);
    utc__ipc_lru_init(&mappings, cap, &mapping_ops, NULL);
    utc__ipc_lru_set_max_bytes(&mappings, bytes);
    utc__ipc_lru_init(&events, EVENT_CAPACITY, &event_ops, NULL);
}

static utc_status_t caches(void)
{
    pthread_once(&caches_once, caches_init);
    if (caches_status != UTC_OK)
        return utc__error(caches_status, "%s", caches_error);
    return UTC_OK;
}

/* ---- export ------------------------------------------------------------------------ */

static utc_status_t export_open(void *arg, const utc__ipc_key_t *key, const void *ctx, void **value)
{
    (void)arg;
    (void)key;
    cudaIpcMemHandle_t *h = malloc(sizeof *h);
    if (!h)
        return utc__error(UTC_ERR_NO_MEMORY, "device conduit: no memory for an IPC handle");
    cudaError_t err = cudaIpcGetMemHandle(h, (void *)ctx);
    if (err != cudaSuccess) {
        free(h);
        return utc__device_cuda_error(err, "cudaIpcGetMemHandle");
    }
    *value = h;
    return UTC_OK;
}

static void export_close(void *arg, const utc__ipc_key_t *key, void *value)
{
    (void)arg;
    (void)key;
    free(value);
}

static utc_status_t copy_handle(void *out, void *value)
{
    memcpy(out, value, sizeof(cudaIpcMemHandle_t));
    return UTC_OK;
}

utc_status_t utc__ipc_export(const void *dptr, size_t size, utc__ipc_ref_t *out)
{
    if (!dptr || !out)
        return utc__error(UTC_ERR_INVALID_ARG, "device conduit: IPC export of a NULL %s",
                          dptr ? "reference" : "pointer");
    struct cudaPointerAttributes pa;
    cudaError_t err = cudaPointerGetAttributes(&pa, dptr);
    if (err != cudaSuccess)
        return utc__device_cuda_error(err, "cudaPointerGetAttributes");
    if (pa.type == cudaMemoryTypeHost || pa.type == cudaMemoryTypeUnregistered)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "device conduit: %p is host memory, not device memory: IPC exports "
                          "device allocations only",
                          dptr);
    if (pa.type == cudaMemoryTypeManaged)
        return utc__error(UTC_ERR_UNSUPPORTED,
                          "device conduit: %p is managed memory, which CUDA IPC cannot export "
                          "(the message goes staged)",
                          dptr);
    alloc_info_t a;
    utc_status_t st = alloc_of(dptr, &a);
    if (st != UTC_OK)
        return st;
    size_t offset = (size_t)((CUdeviceptr)(uintptr_t)dptr - a.base);
    if (offset > a.extent || size > a.extent - offset)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "device conduit: %zu bytes at %p leave their allocation (%zu bytes at "
                          "%#llx, %zu past its start): pass a size within the allocation",
                          size, dptr, a.extent, (unsigned long long)a.base, offset);
    if (!a.ipc_capable)
        return utc__error(UTC_ERR_UNSUPPORTED,
                          "device conduit: the allocation at %#llx is not CUDA IPC capable (from "
                          "a stream-ordered pool, cudaMallocAsync, or a virtual memory mapping): "
                          "the message goes staged",
                          (unsigned long long)a.base);
    if ((st = caches()) != UTC_OK)
        return st;
    utc__ipc_key_t key = {.peer = -1, .id = a.id};
    utc__ipc_ref_t ref = {
        .alloc_id = a.id, .offset = offset, .alloc_size = a.extent, .device = pa.device};
    st =
        utc__ipc_lru_use(&exports, &key, (const void *)(uintptr_t)a.base, copy_handle, &ref.handle);
    if (st == UTC_OK)
        *out = ref;
    return st;
}

void utc__ipc_forget(const void *base)
{
    alloc_info_t a;
    if (!base || alloc_of(base, &a) != UTC_OK) {
        utc__error_clear();
        return;
    }
    if (a.base != (CUdeviceptr)(uintptr_t)base || caches() != UTC_OK)
        return;
    utc__ipc_key_t key = {.peer = -1, .id = a.id};
    utc__ipc_lru_drop(&exports, &key);
}

/* ---- import ------------------------------------------------------------------------ */

static utc_status_t mapping_open(void *arg, const utc__ipc_key_t *key, const void *ctx,
                                 void **value)
{
    (void)arg;
    (void)ctx;
    mapping_t *m = calloc(1, sizeof *m);
    if (!m)
        return utc__error(UTC_ERR_NO_MEMORY, "device conduit: no memory for an IPC mapping");
    cudaIpcMemHandle_t h;
    memcpy(&h, key->bytes, sizeof h);
    cudaError_t err = cudaGetDevice(&m->device);
    void *p = NULL;
    if (err == cudaSuccess)
        err = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
    if (err != cudaSuccess) {
        free(m);
        return utc__device_cuda_error(err, "cudaIpcOpenMemHandle");
    }
    m->base = p;
    *value = m;
    return UTC_OK;
}

static void mapping_close(void *arg, const utc__ipc_key_t *key, void *value)
{
    (void)arg;
    (void)key;
    mapping_t *m = value;
    int cur = -1;
    (void)cudaGetDevice(&cur);
    (void)cudaSetDevice(m->device);
    /* work queued on the mapping must end before it is unmapped */
    if (m->raw)
        (void)cudaDeviceSynchronize();
    else if (m->used)
        (void)cudaEventSynchronize(m->used);
    if (m->used)
        (void)cudaEventDestroy(m->used);
    (void)cudaIpcCloseMemHandle(m->base);
    if (cur >= 0 && cur != m->device)
        (void)cudaSetDevice(cur);
    (void)cudaGetLastError(); /* a close cannot fail: nothing to report it to */
    free(m);
}

/* A mapping's weight: its whole allocation (ctx: the reference it is opened for). */
static size_t mapping_weigh(void *arg, const utc__ipc_key_t *key, const void *ctx)
{
    (void)arg;
    (void)key;
    const utc__ipc_ref_t *ref = ctx;
    return ref ? (size_t)ref->alloc_size : 0;
}

static utc_status_t check_ref(int peer, const utc__ipc_ref_t *ref, const char *what)
{
    if (!ref)
        return utc__error(UTC_ERR_INVALID_ARG, "device conduit: %s: NULL reference", what);
    if (peer < 0 || ref->offset > ref->alloc_size || ref->reserved != 0)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "device conduit: %s: a bad IPC reference from peer %d (offset %llu in "
                          "an allocation of %llu bytes)",
                          what, peer, (unsigned long long)ref->offset,
                          (unsigned long long)ref->alloc_size);
    return caches();
}

static utc__ipc_key_t mapping_key(int peer, const utc__ipc_ref_t *ref)
{
    utc__ipc_key_t key = {.peer = peer, .id = ref->alloc_id};
    static_assert(sizeof ref->handle <= sizeof key.bytes, "an IPC handle fits a key");
    memcpy(key.bytes, &ref->handle, sizeof ref->handle);
    return key;
}

typedef struct import_args {
    const utc__ipc_ref_t *ref;
    void **dptr;
} import_args_t;

static utc_status_t import_fn(void *arg, void *value)
{
    import_args_t *a = arg;
    mapping_t *m = value;
    m->raw = true;
    *a->dptr = m->base + a->ref->offset;
    return UTC_OK;
}

utc_status_t utc__ipc_import(int peer, const utc__ipc_ref_t *ref, void **dptr)
{
    utc_status_t st = check_ref(peer, ref, "IPC import");
    if (st != UTC_OK)
        return st;
    if (!dptr)
        return utc__error(UTC_ERR_INVALID_ARG, "device conduit: IPC import: NULL dptr");
    utc__ipc_key_t key = mapping_key(peer, ref);
    void *p;
    st = utc__ipc_lru_use(&mappings, &key, ref, import_fn, &(import_args_t){ref, &p});
    if (st == UTC_OK)
        *dptr = p;
    return st;
}

typedef struct copy_args {
    const utc__ipc_ref_t *ref;
    void *dst;
    size_t size;
    cudaStream_t s;
} copy_args_t;

static utc_status_t copy_fn(void *arg, void *value)
{
    copy_args_t *a = arg;
    mapping_t *m = value;
    cudaError_t err = cudaSuccess;
    const char *call = "cudaEventCreateWithFlags";
    bool earlier = m->used != NULL;
    if (!m->used)
        err = cudaEventCreateWithFlags(&m->used, cudaEventDisableTiming);
    if (err == cudaSuccess) {
        call = "cudaMemcpyAsync";
        err = cudaMemcpyAsync(a->dst, m->base + a->ref->offset, a->size, cudaMemcpyDefault, a->s);
    }
    if (err == cudaSuccess && earlier) {
        /* the copies before this one may be on other streams: the record below covers them
         * too, so that the close's wait on the last record waits for every copy */
        call = "cudaStreamWaitEvent";
        err = cudaStreamWaitEvent(a->s, m->used, 0);
    }
    if (err == cudaSuccess) {
        call = "cudaEventRecord";
        err = cudaEventRecord(m->used, a->s);
    }
    return err == cudaSuccess ? UTC_OK : utc__device_cuda_error(err, call);
}

utc_status_t utc__ipc_copy_from(int peer, const utc__ipc_ref_t *ref, void *dst, size_t size,
                                cudaStream_t s)
{
    utc_status_t st = check_ref(peer, ref, "IPC copy");
    if (st != UTC_OK)
        return st;
    if (size > ref->alloc_size - ref->offset)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "device conduit: IPC copy of %zu bytes from peer %d: its buffer holds "
                          "%llu bytes from there",
                          size, peer, (unsigned long long)(ref->alloc_size - ref->offset));
    if (size == 0)
        return UTC_OK;
    if (!dst)
        return utc__error(UTC_ERR_INVALID_ARG, "device conduit: IPC copy into NULL");
    utc__ipc_key_t key = mapping_key(peer, ref);
    return utc__ipc_lru_use(&mappings, &key, ref, copy_fn,
                            &(copy_args_t){.ref = ref, .dst = dst, .size = size, .s = s});
}

void utc__ipc_close_peer(int peer)
{
    if (caches() != UTC_OK) {
        utc__error_clear();
        return;
    }
    utc__ipc_lru_drop_peer(&mappings, peer);
    utc__ipc_lru_drop_peer(&events, peer);
}

/* ---- interprocess events ------------------------------------------------------------- */

/* The pool of free events: a list, all devices (a handful per rank). */
typedef struct pooled {
    utc__ipc_event_t ev;
    struct pooled *next;
} pooled_t;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pooled_t *pool;

utc_status_t utc__ipc_event_get(utc__ipc_event_t *out)
{
    if (!out)
        return utc__error(UTC_ERR_INVALID_ARG, "device conduit: IPC event get into NULL");
    int dev;
    cudaError_t err = cudaGetDevice(&dev);
    if (err != cudaSuccess)
        return utc__device_cuda_error(err, "cudaGetDevice");
    pthread_mutex_lock(&pool_lock);
    pooled_t **pp = &pool;
    while (*pp && (*pp)->ev.device != dev)
        pp = &(*pp)->next;
    pooled_t *found = *pp;
    if (found)
        *pp = found->next;
    pthread_mutex_unlock(&pool_lock);
    if (found) {
        *out = found->ev;
        free(found);
        return UTC_OK;
    }
    utc__ipc_event_t ev = {.device = dev};
    err = cudaEventCreateWithFlags(&ev.event, cudaEventInterprocess | cudaEventDisableTiming);
    if (err != cudaSuccess)
        return utc__device_cuda_error(err, "cudaEventCreateWithFlags(interprocess)");
    err = cudaIpcGetEventHandle(&ev.handle, ev.event);
    if (err != cudaSuccess) {
        utc_status_t st = utc__device_cuda_error(err, "cudaIpcGetEventHandle");
        (void)cudaEventDestroy(ev.event);
        return st;
    }
    *out = ev;
    return UTC_OK;
}

void utc__ipc_event_put(const utc__ipc_event_t *ev)
{
    if (!ev)
        return;
    pooled_t *p = malloc(sizeof *p);
    if (!p) { /* cannot keep it: the next get makes another */
        (void)cudaEventDestroy(ev->event);
        return;
    }
    p->ev = *ev;
    pthread_mutex_lock(&pool_lock);
    p->next = pool;
    pool = p;
    pthread_mutex_unlock(&pool_lock);
}

static utc_status_t event_open(void *arg, const utc__ipc_key_t *key, const void *ctx, void **value)
{
    (void)arg;
    (void)ctx;
    cudaIpcEventHandle_t h;
    memcpy(&h, key->bytes, sizeof h);
    cudaEvent_t ev;
    cudaError_t err = cudaIpcOpenEventHandle(&ev, h);
    if (err != cudaSuccess)
        return utc__device_cuda_error(err, "cudaIpcOpenEventHandle");
    *value = ev;
    return UTC_OK;
}

static void event_close(void *arg, const utc__ipc_key_t *key, void *value)
{
    (void)arg;
    (void)key;
    /* waits queued on it keep what they captured: CUDA defers the release */
    (void)cudaEventDestroy((cudaEvent_t)value);
    (void)cudaGetLastError();
}

static utc_status_t event_key(int peer, const cudaIpcEventHandle_t *h, const char *what,
                              utc__ipc_key_t *key)
{
    if (!h || peer < 0)
        return utc__error(UTC_ERR_INVALID_ARG, "device conduit: %s: %s", what,
                          h ? "negative peer" : "NULL event handle");
    *key = (utc__ipc_key_t){.peer = peer};
    static_assert(sizeof *h <= sizeof key->bytes, "an IPC event handle fits a key");
    memcpy(key->bytes, h, sizeof *h);
    return caches();
}

static utc_status_t event_out_fn(void *arg, void *value)
{
    *(cudaEvent_t *)arg = (cudaEvent_t)value;
    return UTC_OK;
}

utc_status_t utc__ipc_event_open(int peer, const cudaIpcEventHandle_t *h, cudaEvent_t *ev)
{
    utc__ipc_key_t key;
    utc_status_t st = event_key(peer, h, "IPC event open", &key);
    if (st != UTC_OK)
        return st;
    if (!ev)
        return utc__error(UTC_ERR_INVALID_ARG, "device conduit: IPC event open into NULL");
    cudaEvent_t e;
    st = utc__ipc_lru_use(&events, &key, NULL, event_out_fn, &e);
    if (st == UTC_OK)
        *ev = e;
    return st;
}

static utc_status_t event_wait_fn(void *arg, void *value)
{
    cudaError_t err = cudaStreamWaitEvent(*(cudaStream_t *)arg, (cudaEvent_t)value, 0);
    return err == cudaSuccess ? UTC_OK : utc__device_cuda_error(err, "cudaStreamWaitEvent");
}

utc_status_t utc__ipc_event_wait(int peer, const cudaIpcEventHandle_t *h, cudaStream_t s)
{
    utc__ipc_key_t key;
    utc_status_t st = event_key(peer, h, "IPC event wait", &key);
    if (st != UTC_OK)
        return st;
    return utc__ipc_lru_use(&events, &key, NULL, event_wait_fn, &s);
}

/* ---- finalize ------------------------------------------------------------------------ */

utc_status_t utc__ipc_settings(void)
{
    return caches();
}

void utc__ipc_cache_clear(void)
{
    pthread_once(&caches_once, caches_init);
    utc__ipc_lru_clear(&mappings);
    utc__ipc_lru_clear(&events);
    utc__ipc_lru_clear(&exports);
    pthread_mutex_lock(&pool_lock);
    pooled_t *p = pool;
    pool = NULL;
    pthread_mutex_unlock(&pool_lock);
    while (p) {
        pooled_t *next = p->next;
        (void)cudaEventDestroy(p->ev.event);
        free(p);
        p = next;
    }
    (void)cudaGetLastError();
}
