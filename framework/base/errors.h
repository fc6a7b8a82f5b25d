/*
 * Base layer: status codes, the per-thread last-error message and the logger's rank.
 * Knows nothing of the layers above (context, tasks, modules).
 */
#ifndef UTC_BASE_ERRORS_H
#define UTC_BASE_ERRORS_H

#include <utc/context.h>
#include <utc/status.h>

/* Set the calling thread's last-error message and return `status`. */
utc_status_t utc__error(utc_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Empty the calling thread's last-error message. */
void utc__error_clear(void);
/* Turn an MPI error code into UTC_ERR_MPI with MPI's own string; `what` names the call. */
utc_status_t utc__mpi_error(int mpi_err, const char *what);
/* Map a task function's return value to a status (see utc_task_ops_t). */
utc_status_t utc__user_status(int rc);

/* The rank the logger prefixes its lines with; -1 (before utc_init, after utc_finalize)
 * prints "utc[-]". Set by the process context. */
void utc__log_set_rank(int rank);

#endif /* UTC_BASE_ERRORS_H */
