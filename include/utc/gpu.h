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
 * All utc_gpu_* calls except utc_gpu_device_count(), utc_gpu_supported() and the
 * buffer getters must be made from a thread of a GPU task (from its init, run or fini);
 * elsewhere they fail with UTC_ERR_NOT_MEMBER. In a build without GPU support every call
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

#ifdef __cplusplus
}
#endif
#endif /* UTC_GPU_H */
