/**
 * @file collectives.h
 * @brief Task collectives: broadcast, gather, scatter, reduce, allreduce, allgather(v),
 * all-to-all(v), scan and exclusive scan among the ranks of one task, on a communicator of
 * the task's own.
 *
 * A collective moves data between the **ranks** of a task; on each rank the buffers are the
 * rank's (local shared scope, e.g. fields of the task struct). Two forms:
 * - `utc_task_X(ctx, ...)`: called by every thread of the task on every rank of the task,
 *   with the same arguments on one rank. One thread per rank makes the MPI call while the
 *   others wait (sleeping); all return its status. Buffers may be filled by any local
 *   thread before the call: the call starts only when all local threads have arrived.
 * - `utc_task_X_by(ctx, thread, ...)`: only local thread `thread` (its ctx->local_id) makes
 *   the call on its rank; any other thread that calls it returns UTC_OK at once without
 *   waiting. The same thread id is usually named on every rank, but it need not be.
 *
 * Ranks (`root`) are ranks in the task's group (utc_ctx_t.group_rank). Counts are in
 * elements. Gathered and scattered data is laid out by group rank, `count` elements each;
 * the v-forms (allgatherv, alltoallv) take a count per group rank and, optionally, where
 * each block starts (displacements in elements; NULL: the blocks one after the other, in
 * group rank order). Send and receive areas may not overlap, except in the in-place forms
 * each call names.
 * Collectives of one task must be issued in the same order on all its ranks, and not from
 * two threads of a rank at once (as with MPI collectives on one communicator). They need no
 * window: they work in tasks created with window_size 0.
 *
 * Every collective first checks that the task's ranks agree: the call, count, type, op and
 * root, whether each rank's own argument checks passed, and for the v-forms that what rank
 * i sends to rank j is what rank j expects from rank i, compared in one small exchange.
 * When they do not (or a bad argument is seen on some ranks only, e.g. a NULL buffer at
 * the root), every rank returns UTC_ERR_MISMATCH before any data moves, with a message
 * naming the call, the task and each rank's value (for the v-forms: the pairs of ranks
 * whose counts differ), and the next collective works. (All-to-all(v), not in place, up to
 * 8 ranks: its data leaves with the check, so on a mismatch recvbuf may have been written;
 * sendbuf never is.)
 * UTC_CHECK=0 in the environment turns the check off (it costs one round of small
 * messages per call, doc/PERFORMANCE.md); then a rank's local error is returned on that
 * rank only, and counts that do not match between ranks give short or cut data.
 */
#ifndef UTC_COLLECTIVES_H
#define UTC_COLLECTIVES_H

#include <stddef.h>
#include <utc/task.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Element types of task collectives. Unsigned types reduce as unsigned (MIN and MAX
 * compare them as unsigned, sums wrap modulo 2^bits); signed sums that overflow are
 * undefined, as in C. */
typedef enum utc_datatype {
    UTC_TYPE_INT = 0,     /**< int */
    UTC_TYPE_INT64 = 1,   /**< int64_t */
    UTC_TYPE_FLOAT = 2,   /**< float */
    UTC_TYPE_DOUBLE = 3,  /**< double */
    UTC_TYPE_BYTE = 4,    /**< opaque bytes; reduced as uint8_t (sum wraps modulo 256) */
    UTC_TYPE_INT8 = 5,    /**< int8_t */
    UTC_TYPE_UINT8 = 6,   /**< uint8_t */
    UTC_TYPE_INT16 = 7,   /**< int16_t */
    UTC_TYPE_UINT16 = 8,  /**< uint16_t */
    UTC_TYPE_INT32 = 9,   /**< int32_t */
    UTC_TYPE_UINT32 = 10, /**< uint32_t */
    UTC_TYPE_UINT64 = 11  /**< uint64_t */
} utc_datatype_t;

/** Reduction operations. */
typedef enum utc_reduce_op {
    UTC_OP_SUM = 0, /**< sum */
    UTC_OP_MIN = 1, /**< minimum */
    UTC_OP_MAX = 2  /**< maximum */
} utc_reduce_op_t;

/** @brief Size in bytes of one element of `type`, or 0 for an unknown type. */
size_t utc_datatype_size(utc_datatype_t type);

/**
 * @brief Broadcast `count` elements of `buf` from group rank `root` to every rank of the
 * task. Blocks.
 * @param ctx   the calling thread's context
 * @param buf   on root: the data; elsewhere: receives it
 * @param count elements (<= INT_MAX)
 * @param type  element type
 * @param root  group rank of the source
 * @return UTC_OK; UTC_ERR_NOT_MEMBER (ctx not the caller's, or no task thread);
 *         UTC_ERR_OUT_OF_RANGE (root); UTC_ERR_INVALID_ARG (NULL buffer with count > 0,
 *         type, count too large: when every rank finds the same); UTC_ERR_MISMATCH on every
 *         rank when the ranks disagree on the call, count, type, op or root, or only some
 *         find a bad argument (see above); UTC_ERR_MPI naming the call and the task.
 */
utc_status_t utc_task_bcast(utc_ctx_t *ctx, void *buf, size_t count, utc_datatype_t type, int root);

/**
 * @brief Gather `count` elements from every rank into `recvbuf` on `root`, rank r's at
 * element r * count. Blocks.
 * @param ctx     the calling thread's context
 * @param sendbuf this rank's `count` elements
 * @param recvbuf on root: group_size * count elements; ignored elsewhere (may be NULL)
 * @param count   elements from each rank (<= INT_MAX)
 * @param type    element type
 * @param root    group rank that receives
 * @return as utc_task_bcast.
 */
utc_status_t utc_task_gather(utc_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t count,
                             utc_datatype_t type, int root);

/**
 * @brief Scatter: rank r receives elements r * count .. r * count + count-1 of `sendbuf`
 * on `root` into its `recvbuf`. Blocks.
 * @param ctx     the calling thread's context
 * @param sendbuf on root: group_size * count elements; ignored elsewhere (may be NULL)
 * @param recvbuf `count` elements
 * @param count   elements to each rank (<= INT_MAX)
 * @param type    element type
 * @param root    group rank that sends
 * @return as utc_task_bcast.
 */
utc_status_t utc_task_scatter(utc_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t count,
                              utc_datatype_t type, int root);

/**
 * @brief Element-wise reduction of every rank's `sendbuf` with `op` into `recvbuf` on
 * `root`. `sendbuf == recvbuf` is allowed (in place). Blocks.
 * @param ctx     the calling thread's context
 * @param sendbuf this rank's `count` elements
 * @param recvbuf on root: `count` elements; ignored elsewhere (may be NULL)
 * @param count   elements (<= INT_MAX)
 * @param type    element type
 * @param op      reduction operation
 * @param root    group rank that receives the result
 * @return as utc_task_bcast; UTC_ERR_INVALID_ARG also for an unknown op.
 */
utc_status_t utc_task_reduce(utc_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t count,
                             utc_datatype_t type, utc_reduce_op_t op, int root);

/**
 * @brief Element-wise reduction of every rank's `sendbuf` into every rank's `recvbuf`.
 * `sendbuf == recvbuf` is allowed (in place). Blocks.
 * @return as utc_task_reduce.
 */
utc_status_t utc_task_allreduce(utc_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t count,
                                utc_datatype_t type, utc_reduce_op_t op);

/**
 * @brief Allgather: every rank's `count` elements of `sendbuf` into every rank's
 * `recvbuf`, rank r's at element r * count. Blocks.
 * @param ctx     the calling thread's context
 * @param sendbuf this rank's `count` elements; or `recvbuf` + group_rank * count elements
 *                (in place: this rank's block is already there)
 * @param recvbuf group_size * count elements
 * @param count   elements from each rank (<= INT_MAX; group_size * count too)
 * @param type    element type
 * @return as utc_task_bcast (no root); UTC_ERR_INVALID_ARG also when sendbuf overlaps
 *         recvbuf other than in place.
 */
utc_status_t utc_task_allgather(utc_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t count,
                                utc_datatype_t type);

/**
 * @brief Allgather with a count per rank: rank r's `sendcount` elements land in every
 * rank's `recvbuf` at element `displs[r]` (NULL: the blocks one after the other by group
 * rank). Rank r's `sendcount` must equal `recvcounts[r]` on every rank (checked: see the
 * file's description). Blocks.
 * @param ctx        the calling thread's context
 * @param sendbuf    this rank's `sendcount` elements; or `recvbuf` + displs[group_rank]
 *                   elements (in place)
 * @param sendcount  elements this rank contributes (<= INT_MAX)
 * @param recvbuf    room for every block
 * @param recvcounts group_size counts: what each rank contributes (each <= INT_MAX)
 * @param displs     group_size displacements in elements (each <= INT_MAX), or NULL
 *                   (packed; the total must then be <= INT_MAX)
 * @param type       element type
 * @return as utc_task_allgather; UTC_ERR_INVALID_ARG also for NULL recvcounts; and
 *         UTC_ERR_MISMATCH on every rank when a rank's sendcount is not what another
 *         rank's recvcounts says, naming the two ranks and both counts.
 */
utc_status_t utc_task_allgatherv(utc_ctx_t *ctx, const void *sendbuf, size_t sendcount,
                                 void *recvbuf, const size_t *recvcounts, const size_t *displs,
                                 utc_datatype_t type);

/**
 * @brief All-to-all: block j of this rank's `sendbuf` (elements j * count ..) goes to group
 * rank j, and lands in its `recvbuf` at element (this rank) * count. Blocks.
 * @param ctx     the calling thread's context
 * @param sendbuf group_size * count elements; or `recvbuf` itself (in place)
 * @param recvbuf group_size * count elements
 * @param count   elements to each rank (<= INT_MAX; group_size * count too)
 * @param type    element type
 * @return as utc_task_allgather.
 */
utc_status_t utc_task_alltoall(utc_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t count,
                               utc_datatype_t type);

/**
 * @brief All-to-all with counts per pair (MPI_Alltoallv): `sendcounts[j]` elements from
 * element `sdispls[j]` of `sendbuf` go to group rank j, where they land at element
 * `rdispls[i]` of its `recvbuf` (i: this rank). What rank i sends to rank j must be what
 * rank j expects from rank i (sendcounts[j] on i == recvcounts[i] on j; checked: see the
 * file's description). Blocks.
 * @param ctx        the calling thread's context
 * @param sendbuf    the blocks to send; or `recvbuf` itself (in place: sendcounts and
 *                   sdispls are not read, this rank sends recvcounts[j] elements from
 *                   rdispls[j] to rank j, and each block is replaced by what rank j sends)
 * @param sendcounts group_size counts (each <= INT_MAX); NULL in place
 * @param sdispls    group_size displacements in elements, or NULL (packed)
 * @param recvbuf    room for every incoming block
 * @param recvcounts group_size counts (each <= INT_MAX)
 * @param rdispls    group_size displacements in elements, or NULL (packed)
 * @param type       element type
 * @return as utc_task_allgatherv.
 */
utc_status_t utc_task_alltoallv(utc_ctx_t *ctx, const void *sendbuf, const size_t *sendcounts,
                                const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                const size_t *rdispls, utc_datatype_t type);

/**
 * @brief Inclusive prefix reduction: group rank r's `recvbuf` gets the element-wise
 * reduction with `op` of the `sendbuf`s of group ranks 0 .. r. `sendbuf == recvbuf` is
 * allowed (in place). Blocks.
 * @param ctx     the calling thread's context
 * @param sendbuf this rank's `count` elements
 * @param recvbuf `count` elements
 * @param count   elements (<= INT_MAX)
 * @param type    element type
 * @param op      reduction operation
 * @return as utc_task_allreduce.
 */
utc_status_t utc_task_scan(utc_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t count,
                           utc_datatype_t type, utc_reduce_op_t op);

/**
 * @brief Exclusive prefix reduction: group rank r's `recvbuf` gets the reduction of the
 * `sendbuf`s of group ranks 0 .. r-1; group rank 0's gets the identity of `op` (0 for
 * UTC_OP_SUM; for UTC_OP_MIN the type's largest value, for UTC_OP_MAX its smallest, and
 * +-infinity for float and double), where MPI leaves it undefined. So an exclusive scan
 * of counts with UTC_OP_SUM gives every rank its offset. `sendbuf == recvbuf` is allowed
 * (in place). Blocks.
 * @return as utc_task_scan.
 */
utc_status_t utc_task_exscan(utc_ctx_t *ctx, const void *sendbuf, void *recvbuf, size_t count,
                             utc_datatype_t type, utc_reduce_op_t op);

/**
 * @brief utc_task_bcast made by local thread `thread` only (see the file's description).
 * @return as utc_task_bcast; UTC_ERR_OUT_OF_RANGE if `thread` is not a local thread id.
 */
utc_status_t utc_task_bcast_by(utc_ctx_t *ctx, int thread, void *buf, size_t count,
                               utc_datatype_t type, int root);

/** @brief utc_task_gather made by local thread `thread` only. @return as utc_task_bcast_by. */
utc_status_t utc_task_gather_by(utc_ctx_t *ctx, int thread, const void *sendbuf, void *recvbuf,
                                size_t count, utc_datatype_t type, int root);

/** @brief utc_task_scatter made by local thread `thread` only. @return as utc_task_bcast_by. */
utc_status_t utc_task_scatter_by(utc_ctx_t *ctx, int thread, const void *sendbuf, void *recvbuf,
                                 size_t count, utc_datatype_t type, int root);

/** @brief utc_task_reduce made by local thread `thread` only. @return as utc_task_bcast_by. */
utc_status_t utc_task_reduce_by(utc_ctx_t *ctx, int thread, const void *sendbuf, void *recvbuf,
                                size_t count, utc_datatype_t type, utc_reduce_op_t op, int root);

/** @brief utc_task_allreduce made by local thread `thread` only. @return as utc_task_bcast_by. */
utc_status_t utc_task_allreduce_by(utc_ctx_t *ctx, int thread, const void *sendbuf, void *recvbuf,
                                   size_t count, utc_datatype_t type, utc_reduce_op_t op);

/** @brief utc_task_allgather made by local thread `thread` only. @return as utc_task_bcast_by. */
utc_status_t utc_task_allgather_by(utc_ctx_t *ctx, int thread, const void *sendbuf, void *recvbuf,
                                   size_t count, utc_datatype_t type);

/** @brief utc_task_allgatherv made by local thread `thread` only. @return as utc_task_bcast_by. */
utc_status_t utc_task_allgatherv_by(utc_ctx_t *ctx, int thread, const void *sendbuf,
                                    size_t sendcount, void *recvbuf, const size_t *recvcounts,
                                    const size_t *displs, utc_datatype_t type);

/** @brief utc_task_alltoall made by local thread `thread` only. @return as utc_task_bcast_by. */
utc_status_t utc_task_alltoall_by(utc_ctx_t *ctx, int thread, const void *sendbuf, void *recvbuf,
                                  size_t count, utc_datatype_t type);

/** @brief utc_task_alltoallv made by local thread `thread` only. @return as utc_task_bcast_by. */
utc_status_t utc_task_alltoallv_by(utc_ctx_t *ctx, int thread, const void *sendbuf,
                                   const size_t *sendcounts, const size_t *sdispls, void *recvbuf,
                                   const size_t *recvcounts, const size_t *rdispls,
                                   utc_datatype_t type);

/** @brief utc_task_scan made by local thread `thread` only. @return as utc_task_bcast_by. */
utc_status_t utc_task_scan_by(utc_ctx_t *ctx, int thread, const void *sendbuf, void *recvbuf,
                              size_t count, utc_datatype_t type, utc_reduce_op_t op);

/** @brief utc_task_exscan made by local thread `thread` only. @return as utc_task_bcast_by. */
utc_status_t utc_task_exscan_by(utc_ctx_t *ctx, int thread, const void *sendbuf, void *recvbuf,
                                size_t count, utc_datatype_t type, utc_reduce_op_t op);

#ifdef __cplusplus
}
#endif
#endif /* UTC_COLLECTIVES_H */
