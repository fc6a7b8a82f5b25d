/*
 * Device conduits: the staged path, a pipeline of pinned host chunks between two ranks
 * that cannot map each other's device memory (other host, or IPC refused or turned off).
 * Compiled only with UTC_WITH_CUDA.
 *
 * The caller (the device transport) has agreed with the other end on the size and the
 * chunk size (its descriptor carries them) and gives the host transport as an io: the
 * chunks go as messages of `chunk` bytes (the last one shorter), in order; a size of 0
 * sends nothing. A transfer is an object moved on step by step (utc__staged_step), so a
 * thread waiting for anything on the conduit moves every transfer in flight. The sender
 * D2Hs chunk k+1 into a pinned slot while chunk k is in isend; the receiver posts irecv of
 * chunk k+1 while the H2D of chunk k runs. A host side sends from, or receives into, the
 * user's buffer itself (no copy, no slot). The pinned slots (a ring of UTC__STAGED_DEPTH
 * chunks) come from a process-wide pool, reused across calls and threads (pinned
 * allocation is slow); utc__staged_cache_clear frees them.
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
 * data tag). isend/irecv start a transfer of n bytes and give a handle; test says, without
 * blocking, whether that transfer is over: true when it is (the handle released, *status
 * its status, also when it failed; for a receive *received the bytes that came, which the
 * pipeline checks), false while it runs.
 *
 * Every message is n chunks on the wire, whatever happens, so the pair's stream of chunks
 * stays in step:
 * - a sender that fails midway other than in a transfer (a CUDA error, no pinned memory)
 *   sends each chunk it has not sent as an empty message, the writer's abort mark
 *   (utc__staged_start_abort); a receiver that gets one ends with UTC_ERR_IO;
 * - a receiver that fails midway other than in a transfer (a CUDA error, no pinned memory,
 *   an abort mark) still receives every chunk of the message, and drops them.
 * After an error the transfer waits for every handle it started before it ends, so no
 * buffer is freed under a transfer. A failed transfer (the transport's error, a chunk of
 * the wrong size) leaves the stream out of step (chunks of this message may still come,
 * or never): the transfer sets out_of_step, and the caller fails the pair rather than
 * send or receive another message on it. A sender's failed transfer may still hold its
 * slot in the transport (a send to a failed reader, parked until the conduit's destroy):
 * that ring stays off the pool until utc__staged_release(owner).
 */
typedef struct utc__staged_io {
    void *arg;
    utc_status_t (*isend)(void *arg, const void *buf, size_t n, void **h);
    utc_status_t (*irecv)(void *arg, void *buf, size_t n, void **h);
    bool (*test)(void *arg, void *h, utc_status_t *status, size_t *received);
    void *owner;      /* whose transport holds the failed sends (utc__staged_release) */
    bool out_of_step; /* set by a send or receive that left the chunk stream out of step */
} utc__staged_io_t;

/*
 * One staged transfer in flight: a message's send or receive, or a send's abort marks.
 * It never blocks: utc__staged_step takes the steps that are ready and returns, so one
 * thread can move several transfers at once (both directions of a pair, say) and any
 * thread can move it on (one at a time, with the transfer's device current: the caller's
 * job). The io must outlive it.
 */
typedef struct utc__staged utc__staged_t;

/*
 * Start sending (send) or receiving `size` bytes at buf (device memory when buf_device,
 * else host) in chunks of `chunk` bytes (0: utc__device_chunk_size; a receive's must be
 * its sender's) through io, on stream s (NULL: a CPU caller, synchronous semantics, see
 * above). A failure after the arguments were checked (no pinned memory, a CUDA error) is
 * the transfer's own: it then sends its abort marks, or takes and drops the chunks, and
 * ends with that error.
 * @return UTC_OK with *out; UTC_ERR_INVALID_ARG (NULL io, io function or out, NULL buf with
 *         size > 0, a bad UTC_DEVICE_CHUNK), UTC_ERR_NO_MEMORY: *out NULL, nothing sent.
 */
utc_status_t utc__staged_start(utc__staged_io_t *io, bool send, void *buf, bool buf_device,
                               size_t size, size_t chunk, cudaStream_t s, utc__staged_t **out)
    __attribute__((warn_unused_result));

/*
 * The sender's abort marks: chunks `first` .. the last of a message of `size` bytes in
 * chunks of `chunk` (> 0) bytes go as empty messages, so the receiver (which said "go")
 * ends with UTC_ERR_IO and the pair's chunk stream stays in step. The transfer ends with
 * `status` and the last error's message as they are now (UTC_OK: the marks alone), or the
 * io's error (then io->out_of_step is set).
 * @return as utc__staged_start.
 */
utc_status_t utc__staged_start_abort(utc__staged_io_t *io, size_t size, size_t chunk,
                                     uint64_t first, utc_status_t status, utc__staged_t **out)
    __attribute__((warn_unused_result));

/*
 * Take every step of x that is ready, without blocking. True once x is over: *status is
 * its outcome (an error's message in the last error; io->out_of_step set where staged.h
 * says), and x is freed. A receive's outcome: UTC_OK; UTC_ERR_IO (the sender's abort
 * mark came: its write says why); UTC_ERR_INTERNAL (a chunk of the wrong size: out of
 * step); the io's errors; UTC_ERR_GPU; UTC_ERR_NO_MEMORY. A failed receive leaves the
 * destination's contents undefined.
 */
bool utc__staged_step(utc__staged_t *x, utc_status_t *status);

/* The blocking forms: start, then step until over (polling with the conduits' back-off).
 * Their errors: utc__staged_start's, then the transfer's outcome. */
utc_status_t utc__staged_send(utc__staged_io_t *io, const void *src, bool src_device, size_t size,
                              size_t chunk, cudaStream_t s) __attribute__((warn_unused_result));
utc_status_t utc__staged_recv(utc__staged_io_t *io, void *dst, bool dst_device, size_t size,
                              size_t chunk, cudaStream_t s) __attribute__((warn_unused_result));
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
