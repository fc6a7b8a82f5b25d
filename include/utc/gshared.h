/**
 * @file gshared.h
 * @brief Global shared data: task-scoped arrays that the threads of a task, on every rank
 * it spans, read and write with one-sided MPI-3 remote memory access (RMA).
 *
 * A task has three data scopes (dissertation, section 3.4):
 * - private: a thread's own variables;
 * - local shared: the fields of the task's rank instance (the user's task struct), shared
 *   by the task's threads on one rank;
 * - global shared: a utc_gdata_t, one array of `count` elements on **each** rank of the
 *   task, readable and writable from any rank of the task.
 *
 * Every task gets one RMA window of `utc_task_options_t.window_size` bytes per rank when it
 * is created (0: no window, and no global shared data). Objects are carved out of it.
 *
 * Ranks: the `rank` argument of the remote operations is a rank **in the task's group**
 * (`utc_ctx_t.group_rank`: 0 .. group_size-1, in the order ranks first appear in the
 * task's proc list), not a world rank.
 *
 * Elements are opaque bytes: a store copies `elem_size` bytes from a pointer, a load copies
 * `elem_size` bytes to one. The atomic operations need 8-byte elements (int64_t).
 *
 * Threads: every operation may be called by any thread of the task, concurrently with the
 * others (the object holds no lock). It must be a thread of the task that owns the object:
 * other threads get UTC_ERR_NOT_MEMBER and nothing is issued.
 *
 * Consistency (see doc/guide/gshared.md):
 * - utc_gdata_rload returns when the data is in `dst`;
 * - utc_gdata_rstore returns when `src` may be reused; the store is complete at the target
 *   after the issuing rank's next utc_gdata_quiet or utc_gdata_barrier;
 * - utc_gdata_barrier completes every outstanding store of every rank of the task and
 *   synchronizes all its threads: after it, every rank's loads see every store made before;
 * - fetch_add and compare_swap are atomic and complete (visible everywhere) on return.
 */
#ifndef UTC_GSHARED_H
#define UTC_GSHARED_H

#include <stddef.h>
#include <stdint.h>
#include <utc/task.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A global shared data object: `count` elements of `elem_size` bytes on each task rank. */
typedef struct utc_gdata utc_gdata_t;

/**
 * @brief Create a global shared data object of the calling thread's task.
 *
 * Collective over the task: every thread of the task, on every rank of the task, calls it
 * with the same sizes, and all objects of a task are created and destroyed in the same
 * order on every rank. One thread per rank carves the space out of the task's window and
 * zeroes it while the others wait; all get the same object. On return the object is
 * usable from every rank (the ranks have synchronized). Blocks; waiting threads sleep.
 * @param ctx        the calling thread's context
 * @param elem_size  bytes per element (> 0)
 * @param count      elements on each rank (> 0)
 * @param[out] gd    the object, set only on success
 * @return UTC_OK; UTC_ERR_INVALID_ARG (zero size, NULL gd, size overflow);
 *         UTC_ERR_NOT_MEMBER (not called from a thread of a task, or ctx not the caller's);
 *         UTC_ERR_STATE (the task was created with window_size 0); UTC_ERR_MISMATCH (the
 *         ranks passed different sizes, or disagree on the object's place: calls out of
 *         order); UTC_ERR_NO_MEMORY (does not fit in the
 *         window; the message names the sizes); UTC_ERR_MPI.
 */
utc_status_t utc_gdata_create(utc_ctx_t *ctx, size_t elem_size, size_t count, utc_gdata_t **gd)
    __attribute__((warn_unused_result));

/**
 * @brief Destroy a global shared data object and return its space to the task's window.
 *
 * Collective like utc_gdata_create: every thread of the task on every rank calls it. It
 * completes outstanding stores and synchronizes the ranks first, so no access to the
 * object is still in flight when its space is reused. Blocks. The handle is invalid after.
 * Objects still alive when their task is destroyed are freed with it.
 * @return UTC_OK; UTC_ERR_INVALID_HANDLE (NULL or not a live object);
 *         UTC_ERR_NOT_MEMBER (not a thread of the object's task); UTC_ERR_MPI.
 */
utc_status_t utc_gdata_destroy(utc_ctx_t *ctx, utc_gdata_t *gd);

/** @brief Elements on each rank, or 0 for an invalid handle. */
size_t utc_gdata_count(const utc_gdata_t *gd);

/** @brief Bytes per element, or 0 for an invalid handle. */
size_t utc_gdata_elem_size(const utc_gdata_t *gd);

/** @brief Ranks of the task's group (valid remote ranks are 0 .. this-1), or a negative status. */
int utc_gdata_nranks(const utc_gdata_t *gd);

/** @brief This rank's rank in the task's group, or a negative status. */
int utc_gdata_rank(const utc_gdata_t *gd);

/**
 * @brief Pointer to this rank's part (count * elem_size bytes) for direct use.
 *
 * Plain loads and stores through it follow the same rules as utc_gdata_load/store.
 * @return the pointer, or NULL for an invalid handle or when the caller is not a thread of
 *         the object's task (utc_last_error says which).
 */
void *utc_gdata_ptr(utc_gdata_t *gd);

/* ---- local access (this rank's part) ---- */

/**
 * @brief Copy element `index` of this rank's part to `dst` (elem_size bytes).
 * @return UTC_OK; UTC_ERR_OUT_OF_RANGE; UTC_ERR_INVALID_ARG (NULL dst);
 *         UTC_ERR_INVALID_HANDLE; UTC_ERR_NOT_MEMBER.
 */
utc_status_t utc_gdata_load(utc_gdata_t *gd, size_t index, void *dst);

/**
 * @brief Copy elem_size bytes from `src` into element `index` of this rank's part.
 * @return as utc_gdata_load.
 */
utc_status_t utc_gdata_store(utc_gdata_t *gd, size_t index, const void *src);

/**
 * @brief Copy elements start .. start+n-1 of this rank's part to `dst`.
 * @return UTC_OK (also for n == 0); UTC_ERR_OUT_OF_RANGE if start + n > count; others as
 *         utc_gdata_load.
 */
utc_status_t utc_gdata_load_block(utc_gdata_t *gd, size_t start, size_t n, void *dst);

/**
 * @brief Copy n elements from `src` into elements start .. start+n-1 of this rank's part.
 * @return as utc_gdata_load_block.
 */
utc_status_t utc_gdata_store_block(utc_gdata_t *gd, size_t start, size_t n, const void *src);

/* ---- remote access (any rank of the task, this one included) ---- */

/**
 * @brief Read element `index` of group rank `rank`'s part into `dst`. Blocks until the
 * data is in `dst` (the caller sleeps after a short spin if it takes long).
 * @return UTC_OK; UTC_ERR_OUT_OF_RANGE (index, or rank outside 0 .. nranks-1);
 *         UTC_ERR_INVALID_ARG; UTC_ERR_INVALID_HANDLE; UTC_ERR_NOT_MEMBER; UTC_ERR_MPI.
 */
utc_status_t utc_gdata_rload(utc_gdata_t *gd, int rank, size_t index, void *dst);

/**
 * @brief Write elem_size bytes from `src` into element `index` of group rank `rank`'s part.
 *
 * Returns when `src` may be reused. The store is complete at the target after this rank's
 * next utc_gdata_quiet or utc_gdata_barrier.
 * @return as utc_gdata_rload.
 */
utc_status_t utc_gdata_rstore(utc_gdata_t *gd, int rank, size_t index, const void *src);

/**
 * @brief Read elements start .. start+n-1 of group rank `rank`'s part into `dst`. Blocks.
 * @return as utc_gdata_rload; UTC_ERR_OUT_OF_RANGE if start + n > count.
 */
utc_status_t utc_gdata_rload_block(utc_gdata_t *gd, int rank, size_t start, size_t n, void *dst);

/**
 * @brief Write n elements from `src` into elements start .. start+n-1 of `rank`'s part.
 * Completes like utc_gdata_rstore.
 * @return as utc_gdata_rload_block.
 */
utc_status_t utc_gdata_rstore_block(utc_gdata_t *gd, int rank, size_t start, size_t n,
                                    const void *src);

/**
 * @brief Complete every remote store this rank has issued on the task's window (all of
 * its objects, all threads): on return they are visible at their targets. Blocks.
 * @return UTC_OK; UTC_ERR_INVALID_HANDLE; UTC_ERR_NOT_MEMBER; UTC_ERR_MPI.
 */
utc_status_t utc_gdata_quiet(utc_gdata_t *gd);

/**
 * @brief Barrier of all threads of the task on all its ranks, with completion of every
 * outstanding remote store first. After it, every load and rload on any rank sees every
 * store (local or remote) made before it. Every thread of the task must call it. Blocks;
 * waiting threads sleep.
 * @return UTC_OK; UTC_ERR_INVALID_HANDLE; UTC_ERR_NOT_MEMBER; UTC_ERR_MPI.
 */
utc_status_t utc_gdata_barrier(utc_gdata_t *gd);

/* ---- atomics on 64-bit integers (objects with elem_size 8) ---- */

/**
 * @brief Atomically add `value` to the int64_t element `index` of `rank`'s part.
 *
 * Atomic with respect to other fetch_add and compare_swap calls (not to rstore or local
 * stores). Complete at the target on return. Blocks.
 * @param gd    the object (elem_size 8)
 * @param rank  group rank that holds the element
 * @param index element index in that rank's part
 * @param value what to add
 * @param[out] old the element's value before the add (may be NULL)
 * @return UTC_OK; UTC_ERR_INVALID_ARG (elem_size is not 8); others as utc_gdata_rload.
 */
utc_status_t utc_gdata_fetch_add(utc_gdata_t *gd, int rank, size_t index, int64_t value,
                                 int64_t *old);

/**
 * @brief Atomically: if element `index` of `rank`'s part equals `compare`, set it to
 * `value`. Complete at the target on return. Blocks.
 * @param gd      the object (elem_size 8)
 * @param rank    group rank that holds the element
 * @param index   element index in that rank's part
 * @param compare the value the element must have to be swapped
 * @param value   the new value
 * @param[out] old the element's value before (equal to `compare` iff it was swapped);
 *                 may be NULL
 * @return as utc_gdata_fetch_add.
 */
utc_status_t utc_gdata_compare_swap(utc_gdata_t *gd, int rank, size_t index, int64_t compare,
                                    int64_t value, int64_t *old);

/* ---- signals ---- */

/** How utc_gdata_wait_until compares the element with its value. */
typedef enum utc_cmp {
    UTC_CMP_EQ = 0, /**< element == value */
    UTC_CMP_NE,     /**< element != value */
    UTC_CMP_GT,     /**< element > value */
    UTC_CMP_GE,     /**< element >= value */
    UTC_CMP_LT,     /**< element < value */
    UTC_CMP_LE      /**< element <= value */
} utc_cmp_t;

/**
 * @brief Store a block and then a signal element on rank `rank`: the n elements from
 * `start` on, from `src`, then `sig_value` into element `sig_index` (outside the block).
 *
 * Both are complete at the target on return (no quiet needed), and no thread that waits
 * for the element (utc_gdata_wait_until) sees it before the block: the producer's half of
 * a handoff between ranks, the "put with signal" of OpenSHMEM and NVSHMEM. n may be 0 (the
 * signal alone). On a window in shared memory (all the task's ranks on one node) this is
 * a copy into the target's memory; elsewhere an MPI put, a flush and an atomic store.
 * @param gd        the object (elem_size 8)
 * @param rank      group rank that holds the block and the element
 * @param start     first element of the block
 * @param n         elements of the block (0: none)
 * @param src       the block (may be NULL when n is 0); free again on return
 * @param sig_index the signal element
 * @param sig_value what it is set to
 * @return UTC_OK; UTC_ERR_INVALID_ARG (elem_size is not 8, NULL src, the element inside the
 *         block); UTC_ERR_OUT_OF_RANGE (rank, block or element); UTC_ERR_INVALID_HANDLE;
 *         UTC_ERR_NOT_MEMBER; UTC_ERR_MPI.
 */
utc_status_t utc_gdata_rstore_signal(utc_gdata_t *gd, int rank, size_t start, size_t n,
                                     const void *src, size_t sig_index, int64_t sig_value);

/**
 * @brief Wait until the int64_t element `index` of this rank's part compares with `value`
 * as `cmp` says: a signal from a thread of the task on any rank.
 *
 * The signalling thread stores a block and the element with utc_gdata_rstore_signal; or
 * completes the stores it signals (utc_gdata_quiet), then stores the element on this rank
 * (utc_gdata_rstore of that one element, then utc_gdata_quiet so it completes; or
 * fetch_add / compare_swap). Once this call returns, those stores are
 * visible to this rank's loads (utc_gdata_load, or through utc_gdata_ptr) and rloads: a
 * handoff from producer to consumer without a barrier of the whole task, the "put with
 * signal" of OpenSHMEM and NVSHMEM. The element is read whole (it is 8-byte aligned); give
 * each signal element one writer at a time, or use the atomics.
 *
 * Waiting costs little. On one node (the window in shared memory) the call polls for
 * 0.2 ms (UTC_GSHARED_SIGNAL_POLL_US): it spins ~50 us and then yields, or yields from the
 * start when the task has more threads on the node than the process has CPUs; then it
 * sleeps on a futex
 * that utc_gdata_rstore_signal, utc_gdata_quiet and the atomics wake when they store to
 * the element's rank, and looks by itself at least every 1 ms
 * (UTC_GSHARED_SIGNAL_SLEEP_US), which catches other stores (through utc_gdata_ptr).
 * Elsewhere it spins ~50 us, yields until 0.2 ms, then sleeps in doubling steps of at most
 * 1 ms. Another thread of the rank calling utc_gdata_destroy does not end the wait: the
 * destroy waits for this thread to call it too.
 * @param gd        the object (elem_size 8)
 * @param index     element of this rank's part
 * @param cmp       the comparison
 * @param value     what the element is compared with
 * @param timeout_s seconds to wait at most; < 0: no limit
 * @param[out] seen the element's value when the call returns (may be NULL)
 * @return UTC_OK; UTC_ERR_TIMEOUT; UTC_ERR_INVALID_ARG (elem_size is not 8, unknown cmp);
 *         UTC_ERR_OUT_OF_RANGE; UTC_ERR_INVALID_HANDLE; UTC_ERR_NOT_MEMBER; UTC_ERR_MPI.
 */
utc_status_t utc_gdata_wait_until(utc_gdata_t *gd, size_t index, utc_cmp_t cmp, int64_t value,
                                  double timeout_s, int64_t *seen);

#ifdef __cplusplus
}
#endif
#endif /* UTC_GSHARED_H */
