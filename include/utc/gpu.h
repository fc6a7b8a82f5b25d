/**
 * @file gpu.h
 * @brief GPU tasks: threads bound to a CUDA device and a stream, and GPU buffers whose
 * memory kind (pageable, pinned, unified) is a task creation option.
 *
 * A task created with `opts.kind = UTC_TASK_GPU` gives each of its threads a device
 * (round robin over the rank's visible devices, or over `opts.devices`) and a
 * non-blocking CUDA stream of its own, made before the thread's first command. Threads
 * that share a device share its primary context, so kernels launched by several threads
 * and tasks on their own streams run at once when the device has room.
 *
 * Task code launches its kernels on utc_gpu_stream() and moves data with
 * utc_gpu_data_t, a host copy and a device copy (one allocation for unified memory) that
 * knows which copy is current and copies only when needed:
 * @code
 * static int vadd_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
 * {
 *     utc_gpu_data_t *a;
 *     int rc = utc_gpu_data_create_default(sizeof(float), n, 1, 1, &a); // the task's kind
 *     if (rc) return rc;
 *     utc_gpu_data_put_host(a, input);             // host copy current
 *     utc_gpu_data_sync_device(a);                 // one host-to-device copy, async
 *     my_kernel_launch(utc_gpu_data_device(a), n, utc_gpu_stream());
 *     utc_gpu_data_mark_device(a);                 // the kernel wrote the device copy
 *     utc_gpu_data_fetch_host(a, output);          // one device-to-host copy; blocks
 *     utc_gpu_data_destroy(a);
 *     return 0;
 * }
 * @endcode
 *
 * The header needs no CUDA headers: streams are `void *` (a `cudaStream_t`). When
 * `<cuda_runtime_api.h>` is included first, utc_gpu_cuda_stream() returns the typed handle.
 *
 * All utc_gpu_* calls except utc_gpu_device_count(), utc_gpu_supported(), the buffer
 * getters, utc_gpu_malloc() and utc_gpu_free() (any thread: a thread that is not a GPU
 * task thread gets synchronous calls) must be made from a GPU thread of a task (from its
 * init, run or fini); elsewhere they fail with UTC_ERR_NOT_MEMBER. In a build without GPU support every call
 * fails with UTC_ERR_NO_GPU_SUPPORT, and so does creating a GPU task.
 * CUDA errors become UTC_ERR_GPU; utc_last_error() then holds CUDA's own message.
 *
 * Calls documented as blocking poll the GPU for a few microseconds and then sleep until
 * it is done (unlike cudaStreamSynchronize, which by default spins on a core).
 */
#ifndef UTC_GPU_H
#define UTC_GPU_H

#include <stddef.h>
#include <stdint.h>
#include <utc/conduit.h>
#include <utc/status.h>
#include <utc/task.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- devices and the calling thread's stream ---- */

/** @brief Whether this build of UTC has GPU support (1) or is the CPU-only stub (0). */
int utc_gpu_supported(void);

/**
 * @brief Number of CUDA devices visible to this rank.
 *
 * A machine without a GPU or without a usable CUDA driver has 0 devices (not an
 * error); utc_gpu_unavailable_reason() says why.
 * @return the count (>= 0); UTC_ERR_NO_GPU_SUPPORT in a build without GPU support;
 *         UTC_ERR_NOT_INITIALIZED; UTC_ERR_GPU for any other CUDA failure.
 */
int utc_gpu_device_count(void);

/**
 * @brief Why this rank has no usable CUDA device, in CUDA's own words.
 *
 * When utc_gpu_device_count() is 0 or fails, this says why: CUDA's message for the error
 * its start-up returned, the error's name and the driver's and runtime's versions (e.g.
 * "CUDA driver version is insufficient for CUDA runtime version
 * (cudaErrorInsufficientDriver; driver 12.2, runtime 13.0)"). In a build without GPU
 * support it says so. Needs no utc_init(); the first call starts CUDA's runtime.
 * @return a message owned by UTC, valid until the process exits; NULL when at least one
 *         device is visible.
 */
const char *utc_gpu_unavailable_reason(void);

/**
 * @brief The CUDA device of the calling GPU task thread.
 * @return the device ordinal (>= 0); UTC_ERR_NOT_MEMBER when the caller is not a thread
 *         of a GPU task; UTC_ERR_NO_GPU_SUPPORT.
 */
int utc_gpu_device(void);

/**
 * @brief The calling GPU task thread's own CUDA stream (a `cudaStream_t`).
 *
 * The stream is non-blocking (it does not synchronize with the legacy default stream),
 * made when the thread starts and destroyed after the task's fini.
 * @return the stream; NULL when the caller is not a thread of a GPU task or there is no
 *         GPU support (utc_last_error() says which). Note that NULL is also CUDA's legacy
 *         default stream: check the result before launching on it.
 */
void *utc_gpu_stream(void);

/**
 * @brief Wait until all work queued on the calling thread's stream is done. Blocks
 * (sleeps after a short poll: prefer it to cudaStreamSynchronize in task code).
 * @return UTC_OK; UTC_ERR_GPU (an error of the queued work, with CUDA's message);
 *         UTC_ERR_NOT_MEMBER; UTC_ERR_NO_GPU_SUPPORT.
 */
utc_status_t utc_gpu_synchronize(void);

/**
 * @brief Turn the calling thread's last CUDA error (e.g. of a kernel launch) into a status,
 * and clear it (cudaGetLastError). Does not block.
 * @param what names the failed operation in the message (may be NULL)
 * @return UTC_OK; UTC_ERR_GPU with CUDA's message; UTC_ERR_NO_GPU_SUPPORT.
 */
utc_status_t utc_gpu_check(const char *what);

/**
 * @brief Allocate `size` bytes of device memory, stream-ordered on the calling thread's
 * stream (cudaMallocAsync from the current device's default memory pool): work queued on
 * that stream after the call may use it. Such a buffer may be handed over through a device
 * conduit with utc_conduit_write_owned (no copy, in-process), and utc_conduit_read_owned
 * on a device conduit returns one. Called from a GPU task thread; a CPU thread gets memory
 * that is ready when the call returns (device 0 unless it set another).
 * @param size bytes (0 gives NULL and UTC_OK)
 * @param[out] out the device pointer, set only on success
 * @return UTC_OK; UTC_ERR_INVALID_ARG (out NULL); UTC_ERR_NO_MEMORY (the pool is out of
 *         memory); UTC_ERR_GPU (with CUDA's message); UTC_ERR_NO_DEVICE;
 *         UTC_ERR_NO_GPU_SUPPORT in a build without GPU support.
 */
utc_status_t utc_gpu_malloc(size_t size, void **out) __attribute__((warn_unused_result));

/**
 * @brief Free a buffer of utc_gpu_malloc (or of utc_conduit_read_owned on a device
 * conduit), stream-ordered on the calling thread's stream (cudaFreeAsync): work queued on
 * that stream before the call may still use it. NULL is ignored.
 * @param ptr the buffer, or NULL
 * @return UTC_OK; UTC_ERR_INVALID_ARG (not a device pointer from utc_gpu_malloc);
 *         UTC_ERR_GPU; UTC_ERR_NO_GPU_SUPPORT in a build without GPU support.
 */
utc_status_t utc_gpu_free(void *ptr);

#if defined(CUDART_VERSION) || defined(__CUDACC__)
/** @brief utc_gpu_stream() as a `cudaStream_t` (when CUDA's headers are included first). */
static inline cudaStream_t utc_gpu_cuda_stream(void)
{
    return (cudaStream_t)utc_gpu_stream();
}
#endif

/* ---- GPU buffers ---- */

/**
 * @brief A 1D, 2D or 3D buffer of elements of any size with a host copy and a device copy.
 *
 * For UTC_MEM_PAGEABLE the host copy comes from malloc, for UTC_MEM_PINNED from
 * cudaMallocHost; both have a device copy from cudaMalloc on the creating thread's device.
 * For UTC_MEM_UNIFIED there is one managed allocation (cudaMallocManaged): host and
 * device pointers are equal, and "copies" are page migrations (prefetches where the
 * device supports them, demand paging otherwise).
 *
 * The buffer keeps which copy is current. A new buffer's copies are both current (their
 * contents are undefined), so nothing is copied until one side is written. Writes
 * through put_* are seen by the buffer; writes through the raw pointers (a kernel
 * writing utc_gpu_data_device(), code writing utc_gpu_data_host()) must be declared with
 * utc_gpu_data_mark_device() / utc_gpu_data_mark_host().
 *
 * Copies run on the calling thread's stream, after the work already queued there (such
 * as the kernels that wrote the data). A buffer lives on one device and is used by one
 * thread at a time, from threads of GPU tasks on that device; to hand it to another
 * thread, end with a blocking call (or utc_gpu_data_wait()) before the hand-over.
 */
typedef struct utc_gpu_data utc_gpu_data_t;

/** Bytes and copies a buffer has moved in each direction (see utc_gpu_data_stats()). */
typedef struct utc_gpu_data_stats {
    uint64_t h2d_bytes;  /**< bytes copied (or migrated) host to device */
    uint64_t d2h_bytes;  /**< bytes copied (or migrated) device to host */
    uint64_t h2d_copies; /**< number of host-to-device transfers */
    uint64_t d2h_copies; /**< number of device-to-host transfers */
} utc_gpu_data_stats_t;

/**
 * @brief Create a buffer of nx * ny * nz elements of elem_size bytes, x fastest.
 *
 * A 1D buffer has ny = nz = 1, a 2D one nz = 1. Call from a GPU task thread; the device
 * copy is on that thread's device. Blocks (allocations).
 * @param elem_size bytes per element (> 0)
 * @param nx, ny, nz extents (each > 0)
 * @param kind memory kind (UTC_MEM_PAGEABLE, UTC_MEM_PINNED or UTC_MEM_UNIFIED)
 * @param[out] out the buffer, set only on success
 * @return UTC_OK; UTC_ERR_INVALID_ARG (NULL out, zero size, size overflow, unknown kind);
 *         UTC_ERR_NOT_MEMBER (not a GPU task thread); UTC_ERR_NO_MEMORY; UTC_ERR_GPU
 *         (allocation failed, with CUDA's message); UTC_ERR_NO_GPU_SUPPORT.
 */
utc_status_t utc_gpu_data_create(size_t elem_size, size_t nx, size_t ny, size_t nz,
                                 utc_mem_kind_t kind, utc_gpu_data_t **out)
    __attribute__((warn_unused_result));

/**
 * @brief utc_gpu_data_create() with the memory kind of the calling thread's task (its
 * `mem_kind` creation option), so task code need not change to try another kind.
 * @return as utc_gpu_data_create().
 */
utc_status_t utc_gpu_data_create_default(size_t elem_size, size_t nx, size_t ny, size_t nz,
                                         utc_gpu_data_t **out)
    __attribute__((warn_unused_result));

/**
 * @brief Free a buffer. NULL is ignored. Blocks: waits for the buffer's copies, and when
 * called from a GPU task thread on the buffer's device, for that thread's stream (so
 * kernels queued there no longer use it). Kernels on other streams must be done.
 */
void utc_gpu_data_destroy(utc_gpu_data_t *data);

/** @brief Pointer to the host copy (equal to the device pointer for unified memory). */
void *utc_gpu_data_host(const utc_gpu_data_t *data);
/** @brief Pointer to the device copy (equal to the host pointer for unified memory). */
void *utc_gpu_data_device(const utc_gpu_data_t *data);
/** @brief Size of the buffer in bytes (0 for NULL). */
size_t utc_gpu_data_size(const utc_gpu_data_t *data);
/** @brief Bytes per element (0 for NULL). */
size_t utc_gpu_data_elem_size(const utc_gpu_data_t *data);
/**
 * @brief Extents of the buffer. Any output pointer may be NULL.
 * @return UTC_OK; UTC_ERR_INVALID_ARG for a NULL buffer; UTC_ERR_NO_GPU_SUPPORT.
 */
utc_status_t utc_gpu_data_dims(const utc_gpu_data_t *data, size_t *nx, size_t *ny, size_t *nz);
/** @brief Memory kind of the buffer (UTC_MEM_PAGEABLE for NULL). */
utc_mem_kind_t utc_gpu_data_kind(const utc_gpu_data_t *data);
/** @brief Device that holds the buffer's device copy, or a negative status. */
int utc_gpu_data_device_id(const utc_gpu_data_t *data);

/**
 * @brief Copy size bytes from src (host memory) into the host copy, which becomes the
 * current one. Blocks (a CPU copy, after the buffer's pending copies; for unified
 * memory, after the calling thread's stream).
 * @return UTC_OK; UTC_ERR_INVALID_ARG (NULL); UTC_ERR_NOT_MEMBER; UTC_ERR_GPU.
 */
utc_status_t utc_gpu_data_put_host(utc_gpu_data_t *data, const void *src);

/**
 * @brief Copy size bytes from src (host memory) straight into the device copy, which
 * becomes the current one (one host-to-device transfer). Blocks until the copy is done,
 * so src may be reused at once.
 * @return UTC_OK; UTC_ERR_INVALID_ARG; UTC_ERR_NOT_MEMBER; UTC_ERR_GPU.
 */
utc_status_t utc_gpu_data_put_device(utc_gpu_data_t *data, const void *src);

/**
 * @brief Copy the data out into dst through the host copy: first make the host copy
 * current (as utc_gpu_data_sync_host()), then copy it to dst. Later host reads cost
 * nothing. Blocks.
 * @return UTC_OK; UTC_ERR_INVALID_ARG; UTC_ERR_NOT_MEMBER; UTC_ERR_GPU.
 */
utc_status_t utc_gpu_data_fetch_host(utc_gpu_data_t *data, void *dst);

/**
 * @brief Copy the data out into dst without updating the host copy: from the device
 * copy straight to dst (one device-to-host transfer) when only the device copy is
 * current, else from the host copy. Blocks.
 * @return UTC_OK; UTC_ERR_INVALID_ARG; UTC_ERR_NOT_MEMBER; UTC_ERR_GPU.
 */
utc_status_t utc_gpu_data_fetch_device(utc_gpu_data_t *data, void *dst);

/**
 * @brief Make the host copy current: a device-to-host transfer if it is stale, then wait
 * for it. Blocks (also waits for the calling thread's stream when the memory is unified).
 * Afterwards both copies are current and the host copy may be read and written.
 * @return UTC_OK; UTC_ERR_INVALID_ARG; UTC_ERR_NOT_MEMBER; UTC_ERR_GPU.
 */
utc_status_t utc_gpu_data_sync_host(utc_gpu_data_t *data);

/**
 * @brief Make the device copy current: queue a host-to-device transfer on the calling
 * thread's stream if it is stale. Does not wait for the transfer (kernels queued after
 * it on the same stream see the data); for pageable memory CUDA itself may block until
 * the data is staged. The host copy must not be written until a blocking call on the
 * buffer (or utc_gpu_data_wait()).
 * @return UTC_OK; UTC_ERR_INVALID_ARG; UTC_ERR_NOT_MEMBER; UTC_ERR_GPU.
 */
utc_status_t utc_gpu_data_sync_device(utc_gpu_data_t *data);

/**
 * @brief Declare that the host copy was written through utc_gpu_data_host(): it becomes
 * the current copy and the device copy stale. Does not block.
 * @return UTC_OK; UTC_ERR_INVALID_ARG; UTC_ERR_NOT_MEMBER.
 */
utc_status_t utc_gpu_data_mark_host(utc_gpu_data_t *data);

/**
 * @brief Declare that the device copy was (or is being) written through
 * utc_gpu_data_device(), e.g. by a kernel on the thread's stream: it becomes the current
 * copy and the host copy stale. Does not block.
 * @return UTC_OK; UTC_ERR_INVALID_ARG; UTC_ERR_NOT_MEMBER.
 */
utc_status_t utc_gpu_data_mark_device(utc_gpu_data_t *data);

/**
 * @brief Wait until the buffer's queued transfers are done (not other work on the
 * stream). Blocks. May be called from any thread.
 * @return UTC_OK; UTC_ERR_INVALID_ARG; UTC_ERR_GPU.
 */
utc_status_t utc_gpu_data_wait(utc_gpu_data_t *data);

/**
 * @brief Bytes and transfers the buffer has moved since it was made or its counters were
 * reset. A transfer is counted when it is queued. Does not block.
 * @param data     the buffer
 * @param[out] out the counters
 * @return UTC_OK; UTC_ERR_INVALID_ARG; UTC_ERR_NO_GPU_SUPPORT.
 */
utc_status_t utc_gpu_data_stats(const utc_gpu_data_t *data, utc_gpu_data_stats_t *out);

/**
 * @brief Reset the buffer's transfer counters to zero.
 * @return UTC_OK; UTC_ERR_INVALID_ARG; UTC_ERR_NO_GPU_SUPPORT.
 */
utc_status_t utc_gpu_data_reset_stats(utc_gpu_data_t *data);

/* ---- overlapped item pipelines: copies of the next items while the current kernel runs ---- */

/**
 * @brief A stream of items read from a conduit into device memory, one kernel per item,
 * its result copied back and written to a conduit (or given to a host callback), with the
 * copies of other items overlapped with the kernel (the overlap of the thesis on disjoint
 * address spaces).
 *
 * With depth d >= 2 the pipeline keeps a ring of d slots, each a pinned host staging
 * buffer and a device buffer for the item and for its result. While the kernel of item i
 * runs on the calling thread's stream, the host-to-device copy of item i + 1 runs on a copy
 * stream of the pipeline's own and the device-to-host copy of item i - 1 on another;
 * events order each copy after the kernel that last used its buffer. The conduit reads of
 * the next items are started early too (at most d items beyond the last item passed to
 * utc_gpu_pipeline_done()). A read copies the item into the slot's pinned staging, on the
 * calling thread; with `in_owned` the writer hands each item over in a buffer of its own
 * (utc_buf_alloc_pinned, utc_conduit_write_owned) and the copy to the device starts
 * straight from it, so no host copy is on the pipeline's path. With depth 1 nothing overlaps: each item is read, copied in,
 * computed, copied out and delivered before the next is read (the order of a plain loop
 * over utc_conduit_read, cudaMemcpy, kernel, cudaMemcpy, utc_conduit_write).
 *
 * A pipeline belongs to the GPU task thread that created it: only that thread may call it.
 * Results are delivered in item order, byte for byte what the same kernel gives at depth 1.
 * @code
 * static int filter_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
 * {
 *     filter_task_t *t = (filter_task_t *)self;
 *     utc_gpu_pipeline_options_t o = UTC_GPU_PIPELINE_OPTIONS_INIT;
 *     o.in = t->items;  o.in_tag = 0;  o.in_size = ITEM_BYTES;     // items from a conduit
 *     o.out = t->items; o.out_tag = 1; o.out_size = ITEM_BYTES;    // results back to it
 *     o.depth = 3;
 *     utc_gpu_pipeline_t *p;
 *     int rc = utc_gpu_pipeline_create(&o, &p);
 *     if (rc) return rc;
 *     utc_gpu_item_t it;
 *     while ((rc = utc_gpu_pipeline_next(p, &it)) == UTC_OK) {
 *         my_filter_launch(it.in, it.out, it.in_size, it.stream);  // on it.stream, async
 *         if ((rc = utc_gpu_pipeline_done(p, &it)) != UTC_OK) break;
 *     }
 *     utc_gpu_pipeline_destroy(p);
 *     return rc == UTC_ERR_CLOSED ? 0 : rc;   // CLOSED: the writer ended the stream
 * }
 * @endcode
 * utc_gpu_pipeline_run() is the same loop with the kernel as a callback.
 */
typedef struct utc_gpu_pipeline utc_gpu_pipeline_t;

/** The largest pipeline depth (slots in the ring). */
#define UTC_GPU_PIPELINE_DEPTH_MAX 64

/**
 * @brief A host callback that receives each result (instead of an output conduit).
 * @param result the result's bytes in pinned host memory, valid until the callback returns
 * @param size   its size (the item's out_size)
 * @param index  the item's index (0, 1, 2, ... in order)
 * @param arg    utc_gpu_pipeline_options_t.result_arg
 * @return 0 to go on; any other value stops the pipeline: its calls then fail with
 *         UTC_ERR_TASK_FAILED.
 */
typedef int (*utc_gpu_result_fn)(const void *result, size_t size, uint64_t index, void *arg);

/** Options of utc_gpu_pipeline_create(). Start from UTC_GPU_PIPELINE_OPTIONS_INIT. */
typedef struct utc_gpu_pipeline_options {
    utc_conduit_t *in; /**< the conduit the items come from (the calling task is one end) */
    int in_tag;        /**< their tag, 0 .. UTC_CONDUIT_TAG_MAX */
    size_t in_size;    /**< the largest item in bytes (> 0); a larger one fails with
                        *   UTC_ERR_TRUNCATE */
    /** Bytes of device memory for each item's result; 0: no result is copied back (then
     * out and on_result must be unset). */
    size_t out_size;
    utc_conduit_t *out; /**< where results are written (tag out_tag), or NULL */
    int out_tag;        /**< the results' tag, 0 .. UTC_CONDUIT_TAG_MAX */
    utc_gpu_result_fn on_result; /**< or: the host callback that gets each result */
    void *result_arg;            /**< on_result's argument */
    /** Slots in the ring: 1 (no overlap) .. UTC_GPU_PIPELINE_DEPTH_MAX; 2 overlaps each
     * kernel with the next item's copy in and the previous result's copy out, 3 also
     * absorbs jitter. */
    int depth;
    /** Items to process; 0: until the writer closes the conduit (utc_conduit_close). With
     * a count, no read beyond the count is started. */
    uint64_t count;
    /** 1: the items are owned buffers (the writer hands them over with
     * utc_conduit_write_owned); the pipeline reads each one with utc_conduit_read_owned_by
     * on the calling thread, copies it to the device straight from that buffer (no copy into
     * the pinned staging: in-process the item crosses with no host copy at all) and frees it
     * once that copy is done. Allocate them with utc_buf_alloc_pinned so the copy runs at
     * full speed (a pageable buffer works, through CUDA's slower staged copy). 0 (the
     * default): each item is read into the slot's pinned staging (utc_conduit_iread: a host
     * copy of the item by the calling thread). */
    int in_owned;
} utc_gpu_pipeline_options_t;

/** Default options: no conduits, depth 2, until the writer closes the stream, items read
 * into the pinned staging. */
#define UTC_GPU_PIPELINE_OPTIONS_INIT                                                    \
    { .in = NULL, .in_tag = 0, .in_size = 0, .out_size = 0, .out = NULL, .out_tag = 0,    \
      .on_result = NULL, .result_arg = NULL, .depth = 2, .count = 0, .in_owned = 0 }

/** One item handed to the caller by utc_gpu_pipeline_next(). */
typedef struct utc_gpu_item {
    void *in;         /**< device memory holding the item (its slot's: the kernel may
                       *   overwrite it) */
    size_t in_size;   /**< the item's size in bytes, as received */
    void *out;        /**< device memory for the result: out_size bytes (NULL when the
                       *   options' out_size is 0) */
    size_t out_size;  /**< bytes of the result to deliver: the options' out_size; the
                       *   caller may lower it before utc_gpu_pipeline_done() */
    uint64_t index;   /**< the item's index: 0, 1, 2, ... in the order they were written */
    void *stream;     /**< the stream to launch the item's kernels on (a cudaStream_t: the
                       *   calling thread's utc_gpu_stream()) */
} utc_gpu_item_t;

/**
 * @brief Make a pipeline for the calling GPU task thread: allocates the ring (pinned host
 * staging and device buffers, events, and for depth >= 2 two copy streams). Starts no
 * read. Blocks (allocations).
 *
 * The arguments are checked before any CUDA call, in this order: opts, depth, in_size,
 * out_size with out and on_result, tags, then the conduits (the calling task must be an
 * end of each, on a rank that transfers), then the caller (a thread of a GPU task).
 * @param opts     the options (see utc_gpu_pipeline_options_t)
 * @param[out] out the pipeline, set only on success
 * @return UTC_OK; UTC_ERR_INVALID_ARG (NULL opts or out, depth outside
 *         1 .. UTC_GPU_PIPELINE_DEPTH_MAX, in_size 0, out_size > 0 without exactly one of
 *         out and on_result or out_size 0 with one, bad tag, in NULL, ring size overflow);
 *         UTC_ERR_INVALID_HANDLE (a conduit is not live); UTC_ERR_NOT_MEMBER (the calling
 *         thread's task is not an end of a conduit, or this rank does not transfer on it,
 *         or the caller is not a thread of a GPU task); UTC_ERR_NO_MEMORY; UTC_ERR_GPU;
 *         UTC_ERR_NO_GPU_SUPPORT.
 */
utc_status_t utc_gpu_pipeline_create(const utc_gpu_pipeline_options_t *opts,
                                     utc_gpu_pipeline_t **out)
    __attribute__((warn_unused_result));

/**
 * @brief Get the next item, in device memory, ready for its kernel: launch the kernel on
 * item->stream, then call utc_gpu_pipeline_done(). Blocks until the item has been read
 * (and, for depth 1, until the previous result was delivered); meanwhile starts the reads
 * and copies of the items after it.
 *
 * At the end of the stream (the writer closed the conduit, or `count` items were handed
 * out) it first delivers every result still in flight, then returns UTC_ERR_CLOSED.
 * @param p          the pipeline
 * @param[out] item  the item, set only on success
 * @return UTC_OK; UTC_ERR_CLOSED (no more items; every result was delivered);
 *         UTC_ERR_INVALID_ARG (NULL); UTC_ERR_NOT_MEMBER (not the creating thread);
 *         UTC_ERR_STATE (the previous item was not passed to utc_gpu_pipeline_done());
 *         UTC_ERR_TRUNCATE (an item larger than in_size; the pipeline stops); the errors
 *         of utc_conduit_read / utc_conduit_write; UTC_ERR_GPU; UTC_ERR_TASK_FAILED (the
 *         result callback returned non-zero). After an error other than UTC_ERR_STATE,
 *         UTC_ERR_INVALID_ARG and UTC_ERR_NOT_MEMBER the pipeline is stopped and every
 *         later call returns that error again: destroy it.
 */
utc_status_t utc_gpu_pipeline_next(utc_gpu_pipeline_t *p, utc_gpu_item_t *item)
    __attribute__((warn_unused_result));

/**
 * @brief Say that the kernels of `item` (the last item from utc_gpu_pipeline_next()) are
 * queued on item->stream: the result's copy back is queued after them, and it is
 * delivered (written to the output conduit or given to the callback) when it has arrived.
 * Does not wait for the kernel. Blocks only while the ring is full: until the result of
 * item index - depth is delivered. With depth 1 it blocks until this item's result is
 * delivered.
 * @param p    the pipeline
 * @param item the item utc_gpu_pipeline_next() gave (its out_size may have been lowered)
 * @return UTC_OK; UTC_ERR_INVALID_ARG (NULL, not the current item, out_size above the
 *         options' out_size); UTC_ERR_NOT_MEMBER; UTC_ERR_STATE (no item is out); the
 *         errors of utc_gpu_pipeline_next().
 */
utc_status_t utc_gpu_pipeline_done(utc_gpu_pipeline_t *p, const utc_gpu_item_t *item)
    __attribute__((warn_unused_result));

/**
 * @brief Free a pipeline. NULL is ignored. Blocks: waits for its GPU work and its
 * conduit writes; reads started beyond the last item are canceled (a message that
 * one of them had already taken is dropped: set `count` when the writer does not close
 * the stream). Results not yet delivered are dropped (utc_gpu_pipeline_next() returning
 * UTC_ERR_CLOSED means every one was delivered). Call it from the creating thread.
 */
void utc_gpu_pipeline_destroy(utc_gpu_pipeline_t *p);

/**
 * @brief A kernel callback of utc_gpu_pipeline_run(): launch the kernels of one item on
 * item->stream (do not wait for them).
 * @param item the item (in, in_size, out, out_size, index, stream); may lower out_size
 * @param arg  utc_gpu_pipeline_run()'s arg
 * @return 0, or a non-zero value that stops the pipeline (returned by
 *         utc_gpu_pipeline_run() when it is a utc_status_t, else UTC_ERR_TASK_FAILED).
 */
typedef int (*utc_gpu_kernel_fn)(utc_gpu_item_t *item, void *arg);

/**
 * @brief Run a whole pipeline: create it, call `kernel` for every item until the end of
 * the stream, deliver every result, destroy it. Call from a GPU task thread. Blocks.
 * @param opts      the options, as utc_gpu_pipeline_create()
 * @param kernel    launches one item's kernels (not NULL)
 * @param arg       passed to kernel
 * @param[out] processed the number of items processed (may be NULL; set also on error)
 * @return UTC_OK when the stream ended (closed, or `count` items) and every result was
 *         delivered; UTC_ERR_INVALID_ARG (NULL kernel, and the errors of
 *         utc_gpu_pipeline_create()); the kernel's non-zero return; the errors of
 *         utc_gpu_pipeline_next().
 */
utc_status_t utc_gpu_pipeline_run(const utc_gpu_pipeline_options_t *opts,
                                  utc_gpu_kernel_fn kernel, void *arg, uint64_t *processed)
    __attribute__((warn_unused_result));

#ifdef __cplusplus
}
#endif
#endif /* UTC_GPU_H */
