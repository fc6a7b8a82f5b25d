/*
 * Device conduits: the staged path, a pipeline of pinned host chunks between two ranks
 * that cannot map each other's device memory (other host, or IPC refused or turned off).
 * Compiled only with UTC_WITH_CUDA.
 *
 * The caller (the device transport) has agreed with the other end on the size and the
 * chunk size (its descriptor carries them) and gives the host transport as an io: the
 * chunks go as messages of `chunk` bytes (the last one shorter), in order; a size of 0
 * sends nothing. The sender D2Hs chunk k+1 into a pinned slot while chunk k is in isend;
 * the receiver posts irecv of chunk k+1 while the H2D of chunk k runs. A host side sends
 * from, or receives into, the user's buffer itself (no copy, no slot). The pinned slots
 * (a ring of UTC__STAGED_DEPTH chunks) come from a process-wide pool, reused across calls
 * and threads (pinned allocation is slow); utc__staged_cache_clear frees them.
 *
 * Stream rules (s: the caller's stream; NULL for a CPU thread, synchronous semantics):
 * - send: the data is read as it is after the work queued on s before the call (the D2Hs
 *   are queued on s; a host source waits for s first); returns when every chunk is sent:
 *   the source may be reused at once.
 * - receive: a device destination returns with the last H2D queued on s (stream order:
 *   work queued later on s sees the data); with s NULL it returns with the data in place.
 *   A host destination is written by the transport directly (after s is idle, since work
 *   queued before may still read it) and is in place on return.
 */
#ifndef UTC_CONDUITS_DEVICE_STAGED_H
#define UTC_CONDUITS_DEVICE_STAGED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include <utc/status.h>

/* Pinned slots per ring. */
#define UTC__STAGED_DEPTH 3
/* The chunk size's default and bounds (env UTC_DEVICE_CHUNK, bytes). */
#define UTC__DEVICE_CHUNK_DEFAULT ((size_t)4 << 20)
#define UTC__DEVICE_CHUNK_MIN     ((size_t)64 << 10)
#define UTC__DEVICE_CHUNK_MAX     ((size_t)256 << 20)

/*
 * The transport the chunks go through (the pair's host transport, on the device layer's
 * data tag). isend/irecv start a transfer of n bytes and give a handle; wait blocks until
 * that transfer completes and releases the handle (also when it fails: then it returns the
 * error); for a receive it sets *received to the bytes that came (the pipeline checks it).
 *
 * Every message is n chunks on the wire, whatever happens, so the pair's stream of chunks
 * stays in step:
 * - a sender that fails midway other than in a transfer (a CUDA error, no pinned memory)
 *   sends each chunk it has not sent as an empty message, the writer's abort mark
 *   (utc__staged_send_abort); a receiver that gets one ends with UTC_ERR_IO;
 * - a receiver that fails midway other than in a transfer (a CUDA error, no pinned memory,
 *   an abort mark) still receives every chunk of the message, and drops them.
 * After an error the pipeline waits for every handle it started before it returns, so no
 * buffer is freed under a transfer. A failed transfer (the transport's error, a chunk of
 * the wrong size) leaves the stream out of step (chunks of this message may still come,
 * or never): the pipeline sets out_of_step, and the caller fails the pair rather than
 * send or receive another message on it. A sender's failed transfer may still hold its
 * slot in the transport (a send to a failed reader, parked until the conduit's destroy):
 * that ring stays off the pool until utc__staged_release(owner).
 */
typedef struct utc__staged_io {
    void *arg;
    utc_status_t (*isend)(void *arg, const void *buf, size_t n, void **h);
    utc_status_t (*irecv)(void *arg, void *buf, size_t n, void **h);
    utc_status_t (*wait)(void *arg, void *h, size_t *received);
    void *owner;      /* whose transport holds the failed sends (utc__staged_release) */
    bool out_of_step; /* set by a send or receive that left the chunk stream out of step */
} utc__staged_io_t;

/*
 * Send `size` bytes at src (device memory when src_device, else host) in chunks of
 * `chunk` bytes (0: utc__device_chunk_size) through io. May block (until every chunk is
 * sent).
 * @return UTC_OK; UTC_ERR_INVALID_ARG (NULL io or its functions, NULL src with size > 0);
 *         io's errors; UTC_ERR_GPU; UTC_ERR_NO_MEMORY (pinned slots).
 */
utc_status_t utc__staged_send(utc__staged_io_t *io, const void *src, bool src_device, size_t size,
                              size_t chunk, cudaStream_t s) __attribute__((warn_unused_result));

/*
 * Receive `size` bytes into dst (device memory when dst_device, else host) in chunks of
 * `chunk` bytes (0: utc__device_chunk_size; the sender's chunk size) through io. May block
 * (until every chunk arrived).
 * @return as utc__staged_send; UTC_ERR_IO (the sender's abort mark came: its write says
 *         why); UTC_ERR_INTERNAL (a chunk of the wrong size: out of step). A failed
 *         receive leaves the destination's contents undefined.
 */
utc_status_t utc__staged_recv(utc__staged_io_t *io, void *dst, bool dst_device, size_t size,
                              size_t chunk, cudaStream_t s) __attribute__((warn_unused_result));

/*
 * The sender's abort mark: chunks `first` .. the last of a message of `size` bytes in
 * chunks of `chunk` (> 0) bytes go as empty messages, so the receiver (which said "go")
 * ends with UTC_ERR_IO and the pair's chunk stream stays in step. May block.
 * @return UTC_OK; io's errors (then io->out_of_step is set).
 */
utc_status_t utc__staged_send_abort(utc__staged_io_t *io, size_t size, size_t chunk, uint64_t first)
    __attribute__((warn_unused_result));

/* The rings of `owner`'s failed sends (utc__staged_io_t.owner) go back to the pool: call it
 * once its transport no longer holds any transfer (after its destroy). */
void utc__staged_release(const void *owner);

/*
 * The chunk size: env UTC_DEVICE_CHUNK (bytes, UTC__DEVICE_CHUNK_MIN .. _MAX), else
 * UTC__DEVICE_CHUNK_DEFAULT. Read at each call (cheap).
 * @return UTC_OK; UTC_ERR_INVALID_ARG naming UTC_DEVICE_CHUNK, its value and the bounds.
 */
utc_status_t utc__device_chunk_size(size_t *out) __attribute__((warn_unused_result));

/* Free the pooled pinned slots (finalize: no staged transfer may be in flight). */
void utc__staged_cache_clear(void);

#endif /* UTC_CONDUITS_DEVICE_STAGED_H */
