/**
 * @file context.h
 * @brief The UTC context: MPI and hwloc start-up, ranks, world barrier, logging.
 */
#ifndef UTC_CONTEXT_H
#define UTC_CONTEXT_H

#include <utc/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Start UTC on this rank: MPI with MPI_THREAD_MULTIPLE and the hwloc topology.
 *
 * Collective: every rank calls it once, from its main thread, before any other UTC call.
 * @param argc pointer to main's argc (may be NULL)
 * @param argv pointer to main's argv (may be NULL)
 * @return UTC_OK; UTC_ERR_STATE if already initialized or finalized;
 *         UTC_ERR_MPI if MPI cannot give MPI_THREAD_MULTIPLE; UTC_ERR_HWLOC.
 */
utc_status_t utc_init(int *argc, char ***argv) __attribute__((warn_unused_result));

/**
 * @brief Stop UTC on this rank: destroys the conduits and tasks still alive, finalizes MPI.
 *
 * Collective. Runs still going are not interrupted, but every UTC call blocked on a
 * conduit returns UTC_ERR_CANCELED (and later conduit calls UTC_ERR_INVALID_HANDLE), so a
 * run that stops on an error returns; utc_finalize waits for each run to return, saying
 * in the log which task it waits for every 5 s. After it every UTC call returns
 * UTC_ERR_NOT_INITIALIZED.
 * With UTC_TRACE set, the trace is written here (by rank 0). If it cannot be written
 * whole (a full disk, a write, sync or rename error, a symbolic link at the path), no
 * partial file is left, the reason is logged, and utc_finalize returns UTC_ERR_IO on every
 * rank once it has finished all the rest (UTC is finalized all the same): check its status
 * so that a run whose trace was lost exits non-zero.
 * @return UTC_OK; UTC_ERR_IO if the trace could not be written (utc_last_error() says
 *         why); UTC_ERR_NOT_INITIALIZED if UTC is not running; UTC_ERR_DEADLOCK when
 *         called from a task's thread.
 */
utc_status_t utc_finalize(void);

/** @brief Whether utc_init has succeeded and utc_finalize has not been called. */
int utc_is_initialized(void);

/** @brief This process's rank in the world, or UTC_ERR_NOT_INITIALIZED (negative). */
int utc_rank(void);

/** @brief Number of ranks in the world, or UTC_ERR_NOT_INITIALIZED (negative). */
int utc_nranks(void);

/**
 * @brief Barrier over all ranks. Blocks; the caller sleeps while it waits.
 * @return UTC_OK, UTC_ERR_NOT_INITIALIZED or UTC_ERR_MPI.
 */
utc_status_t utc_barrier(void);

/** @brief Wall-clock seconds from a monotonic clock (for timing). */
double utc_wtime(void);

/** Log levels, from UTC_LOG=debug|info|warn|error|off (default warn). */
typedef enum utc_log_level {
    UTC_LOG_DEBUG = 0,
    UTC_LOG_INFO = 1,
    UTC_LOG_WARN = 2,
    UTC_LOG_ERROR = 3,
    UTC_LOG_OFF = 4
} utc_log_level_t;

/**
 * @brief Write a log line to stderr, prefixed with the level and the rank, if the level
 * is at least UTC_LOG's. Thread-safe. Usable before utc_init (rank shown as "-").
 *
 * One message is one line: control characters in it (a newline, a terminal escape) are
 * written as escapes (\\n, \\t, \\x1b), and so are bytes that are not UTF-8 (\\xNN); a
 * message longer than about 1000 bytes is cut, between characters.
 */
void utc_log(utc_log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * @brief End the whole job, on every rank, as MPI_Abort does: print
 * "utc[RANK] abort: MESSAGE" once (on the calling rank) and abort with `code`.
 *
 * For an error no rank can recover from, from any thread (a task's or main). Does not
 * return. Before utc_init or after utc_finalize it prints the message and exits this
 * process with `code`.
 * @param code the job's exit status (1 .. 255; 0 and out-of-range values become 1)
 * @param fmt  printf format of the message
 */
void utc_abort(int code, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif
#endif /* UTC_CONTEXT_H */
