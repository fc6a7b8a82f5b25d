/*
 * Base layer: status codes, the per-thread last-error message and the logger's rank.
 * Knows nothing of the layers above (context, tasks, modules).
 */
#ifndef UTC_BASE_ERRORS_H
#define UTC_BASE_ERRORS_H

#include <stdarg.h>

#include <utc/context.h>
#include <utc/status.h>

/* Set the calling thread's last-error message and return `status`. The message is escaped
 * as a log line (base/text.h): names in it cannot break the line of whoever prints it. */
utc_status_t utc__error(utc_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Empty the calling thread's last-error message. */
void utc__error_clear(void);
/* The status the calling thread's last-error message came with (UTC_OK when empty). */
utc_status_t utc__error_status(void);
/* Turn an MPI error code into UTC_ERR_MPI with MPI's own string; `what` names the call. */
utc_status_t utc__mpi_error(int mpi_err, const char *what);
/* Map a task function's return value to a status (see utc_task_ops_t). */
utc_status_t utc__user_status(int rc);

/* Write "PREFIX MESSAGE\n" to stderr in one call: MESSAGE formatted from fmt and escaped as
 * a log line (base/text.h), so whatever names it holds it stays one line; PREFIX is the
 * caller's own text ("utc[3] watchdog: "), written as it is. Thread-safe. utc_log's lines,
 * the watchdog's and utc_abort's go through it. */
void utc__log_write(const char *prefix, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void utc__log_vwrite(const char *prefix, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/* The rank the logger prefixes its lines with; -1 (before utc_init, after utc_finalize)
 * prints "utc[-]". Set by the process context. */
void utc__log_set_rank(int rank);

#endif /* UTC_BASE_ERRORS_H */
