/**
 * @file status.h
 * @brief Status codes returned by every UTC function that can fail.
 *
 * The codes and their messages come from one list (UTC_STATUS_LIST), so the enum
 * and utc_status_string() can never disagree. Success is 0; errors are negative.
 */
#ifndef UTC_STATUS_H
#define UTC_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/** X-macro list of (name, value, message): the single source of truth. */
#define UTC_STATUS_LIST(X)                                                              \
    X(UTC_OK, 0, "success")                                                             \
    X(UTC_ERR_INVALID_ARG, -1, "invalid argument")                                      \
    X(UTC_ERR_NOT_INITIALIZED, -2, "UTC is not initialized (call utc_init first) or was finalized") \
    X(UTC_ERR_NO_MEMORY, -3, "out of memory")                                           \
    X(UTC_ERR_MPI, -4, "MPI error")                                                     \
    X(UTC_ERR_HWLOC, -5, "hwloc error")                                                 \
    X(UTC_ERR_STATE, -6, "operation not allowed in the object's current state")         \
    X(UTC_ERR_INVALID_HANDLE, -7, "handle is not a live object (destroyed or never created)") \
    X(UTC_ERR_NOT_MEMBER, -8, "calling thread is not a thread of the task this needs")  \
    X(UTC_ERR_OUT_OF_RANGE, -9, "index, rank or thread id out of range")                \
    X(UTC_ERR_TRUNCATE, -10, "message larger than the receive buffer")                  \
    X(UTC_ERR_TIMEOUT, -11, "timed out")                                                \
    X(UTC_ERR_TASK_FAILED, -12, "a task function returned an error")                    \
    X(UTC_ERR_THREAD, -13, "thread creation or binding failed")                         \
    X(UTC_ERR_IO, -14, "input/output error")                                            \
    X(UTC_ERR_PARSE, -15, "malformed input")                                            \
    X(UTC_ERR_GPU, -16, "CUDA error")                                                   \
    X(UTC_ERR_NO_GPU_SUPPORT, -17, "UTC was built without GPU support")                 \
    X(UTC_ERR_NO_DEVICE, -18, "no GPU device is visible to this rank")                  \
    X(UTC_ERR_UNSUPPORTED, -19, "operation not supported")                              \
    X(UTC_ERR_INTERNAL, -20, "internal error")                                          \
    X(UTC_ERR_CANCELED, -21, "operation canceled (its object was destroyed, or it was canceled)") \
    X(UTC_ERR_DEADLOCK, -22, "the call would wait for the calling thread itself")      \
    X(UTC_ERR_PEER_FAILED, -23, "the task at the other end failed (its run returned an error)") \
    X(UTC_ERR_MISMATCH, -24, "the ranks of a collective call disagree on the call or its arguments") \
    X(UTC_ERR_CLOSED, -25, "end of stream: the writer closed its side and every message was read")

/** Status of a UTC call: UTC_OK (0) or a negative error. */
typedef enum utc_status {
#define UTC_STATUS_ENUM_(name, value, msg) name = value,
    UTC_STATUS_LIST(UTC_STATUS_ENUM_)
#undef UTC_STATUS_ENUM_
} utc_status_t;

/**
 * @brief Short English description of a status code.
 * @param status any value; unknown values get "unknown status".
 * @return a static string, never NULL.
 */
const char *utc_status_string(int status);

/**
 * @brief Detailed message of the calling thread's last error.
 *
 * Set by the failing call (which argument, which file and line, MPI's or CUDA's own
 * message). Not cleared by successful calls. Thread-local; valid until the thread's
 * next failing call. One line: control characters and bytes that are not UTF-8 in the
 * names it quotes are written as escapes (\\n, \\x1b, \\xNN), as in the log.
 * @return a string, "" when this thread has had no error.
 */
const char *utc_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* UTC_STATUS_H */
