/*
 * Device conduits: CUDA IPC memory and event handles, made and opened once and cached
 * (compiled only with UTC_WITH_CUDA).
 *
 * Writer (exporter): utc__ipc_export gives the reference of a device range (the handle of
 * the allocation holding it, cached per allocation, and the range's offset in it); the
 * writer sends it in its descriptor. utc__ipc_event_get gives a pooled interprocess event
 * with its handle, recorded on the writer's stream and sent too.
 * Reader (importer): utc__ipc_copy_from (or utc__ipc_import) opens the allocation once per
 * (peer, allocation) and keeps it open (least recently used closed beyond a count or a
 * byte total);
 * utc__ipc_event_wait (or utc__ipc_event_open) opens the writer's event once per (peer,
 * handle).
 *
 * Allocations from a stream-ordered pool (cudaMallocAsync, utc_gpu_malloc) are not legacy
 * IPC capable (cudaIpcGetMemHandle refuses them): utc__ipc_export says so with
 * UTC_ERR_UNSUPPORTED, and the caller sends that message staged.
 *
 * Every function is thread-safe. Importer caches are bounded by counts (env
 * UTC_DEVICE_IPC_CACHE, default 256 allocations; events: 256), and the opened allocations
 * also by bytes (UTC_DEVICE_IPC_CACHE_BYTES, default 1 GiB, beyond the newest one): an
 * opened allocation stays allocated after its writer frees it, until it is closed here.
 */
#ifndef UTC_CONDUITS_DEVICE_IPC_CACHE_H
#define UTC_CONDUITS_DEVICE_IPC_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include <utc/status.h>

/* A device range as another process on the host opens it (sent as bytes: same host). */
typedef struct utc__ipc_ref {
    cudaIpcMemHandle_t handle; /* of the allocation holding the range */
    uint64_t alloc_id;         /* the allocation's id, unique in the exporting process */
    uint64_t offset;           /* of the range from the allocation's base */
    uint64_t alloc_size;       /* the allocation's extent (bytes from its base) */
    int32_t device;            /* the exporter's device ordinal of the allocation */
    int32_t reserved;          /* zero */
} utc__ipc_ref_t;

/*
 * The reference of [dptr, dptr + size) (size 0: dptr must still be a device address), for
 * another process of this host. The handle is made once per allocation (cached by the
 * allocation's id until utc__ipc_forget).
 * @return UTC_OK; UTC_ERR_INVALID_ARG (NULL, a host or unregistered pointer, or a range
 *         that leaves its allocation: the message names which); UTC_ERR_UNSUPPORTED (the
 *         allocation is not IPC capable: from a stream-ordered pool, or the driver lacks
 *         IPC; the caller sends the message staged); UTC_ERR_GPU; UTC_ERR_NO_MEMORY.
 */
utc_status_t utc__ipc_export(const void *dptr, size_t size, utc__ipc_ref_t *out)
    __attribute__((warn_unused_result));

/* The allocation whose base is `base` is about to be freed by its owner: forget its handle
 * (utc_gpu_free calls it). A pointer that is not a cached allocation's base is ignored. */
void utc__ipc_forget(const void *base);

/*
 * The address, in this process, of ref's range exported by `peer` (its world rank): the
 * allocation opened once (cudaIpcOpenMemHandle, lazy peer access) and cached per (peer,
 * allocation id). The mapping stays valid until evicted (capacity other opens later) or
 * closed (utc__ipc_close_peer, utc__ipc_cache_clear): use it at once, or better use
 * utc__ipc_copy_from, whose copy is queued before any eviction can close the mapping.
 * An eviction of a mapping used through this call synchronizes its device before it
 * closes it (nothing tells when the caller's work on it ends).
 * @return UTC_OK; UTC_ERR_INVALID_ARG (NULL, a bad reference); UTC_ERR_GPU (the open
 *         failed: CUDA's message); UTC_ERR_NO_MEMORY.
 */
utc_status_t utc__ipc_import(int peer, const utc__ipc_ref_t *ref, void **dptr)
    __attribute__((warn_unused_result));

/*
 * Queue on stream s a copy of `size` bytes from the start of ref's range (exported by
 * `peer`) into dst (device or host memory): the allocation opened once and cached as in
 * utc__ipc_import; the copy is queued under the cache's lock and an event recorded after
 * it, which an eviction waits for before it closes the mapping.
 * @return UTC_OK; UTC_ERR_INVALID_ARG (size beyond the range's allocation);
 *         utc__ipc_import's errors; UTC_ERR_GPU (the copy could not be queued).
 */
utc_status_t utc__ipc_copy_from(int peer, const utc__ipc_ref_t *ref, void *dst, size_t size,
                                cudaStream_t s) __attribute__((warn_unused_result));

/* Whether UTC_DEVICE_IPC_CACHE and UTC_DEVICE_IPC_CACHE_BYTES are valid (a device
 * conduit's creation checks them on every rank). UTC_OK; UTC_ERR_INVALID_ARG. */
utc_status_t utc__ipc_settings(void) __attribute__((warn_unused_result));
/* Close every allocation and event opened from `peer` (its end closed or failed). */
void utc__ipc_close_peer(int peer);
/* Close everything opened, forget every exported handle and destroy the pooled events
 * (finalize: no transfer may be in flight). */
void utc__ipc_cache_clear(void);

/* An interprocess event of this process, pooled (created once, reused). */
typedef struct utc__ipc_event {
    cudaEvent_t event;           /* cudaEventInterprocess | cudaEventDisableTiming */
    cudaIpcEventHandle_t handle; /* its handle, made once */
    int device;                  /* the device it was created on */
} utc__ipc_event_t;

/*
 * A free interprocess event of the calling thread's current device, from the pool (made
 * when the pool has none). Record it on the stream, send its handle, and put it back only
 * once the other process has queued its wait on it (its ack came): a record before that
 * would move what the other process waits for.
 * @return UTC_OK; UTC_ERR_GPU; UTC_ERR_NO_MEMORY.
 */
utc_status_t utc__ipc_event_get(utc__ipc_event_t *out) __attribute__((warn_unused_result));
/* Give ev back to the pool (see utc__ipc_event_get for when). */
void utc__ipc_event_put(const utc__ipc_event_t *ev);

/*
 * The event of handle h (made by `peer`), opened once (cudaIpcOpenEventHandle) and cached
 * per (peer, handle bytes). Valid until evicted or closed: use it at once, or better use
 * utc__ipc_event_wait.
 * @return UTC_OK; UTC_ERR_INVALID_ARG (NULL); UTC_ERR_GPU; UTC_ERR_NO_MEMORY.
 */
utc_status_t utc__ipc_event_open(int peer, const cudaIpcEventHandle_t *h, cudaEvent_t *ev)
    __attribute__((warn_unused_result));

/*
 * Make stream s wait for the last record of `peer`'s event h (opened and cached as in
 * utc__ipc_event_open; the wait is queued under the cache's lock).
 * @return as utc__ipc_event_open; UTC_ERR_GPU if the wait could not be queued.
 */
utc_status_t utc__ipc_event_wait(int peer, const cudaIpcEventHandle_t *h, cudaStream_t s)
    __attribute__((warn_unused_result));

#endif /* UTC_CONDUITS_DEVICE_IPC_CACHE_H */
