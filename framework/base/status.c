/* Status strings and the per-thread last-error message. */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>

#include "base/errors.h"
#include "base/text.h"

static _Thread_local char last_error[512];
static _Thread_local utc_status_t last_status; /* the status last_error came with */

const char *utc_status_string(int status)
{
    switch (status) {
#define UTC_STATUS_CASE_(name, value, msg)                                              \
    case value:                                                                          \
        return msg;
        UTC_STATUS_LIST(UTC_STATUS_CASE_)
#undef UTC_STATUS_CASE_
    default:
        return "unknown status";
    }
}

const char *utc_last_error(void) { return last_error; }

void utc__error_clear(void)
{
    last_error[0] = '\0';
    last_status = UTC_OK;
}

utc_status_t utc__error_status(void)
{
    return last_status;
}

utc_status_t utc__error(utc_status_t status, const char *fmt, ...)
{
    char msg[sizeof last_error];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n;
    if (len >= sizeof msg) /* cut: not inside a character */
        len = utc__text_cut(msg, sizeof msg - 1);
    utc__text_escape(last_error, sizeof last_error, msg, len, UTC__TEXT_LINE);
    last_status = status;
    utc_log(UTC_LOG_DEBUG, "%s: %s", utc_status_string(status), last_error);
    return status;
}

utc_status_t utc__mpi_error(int mpi_err, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(mpi_err, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "MPI error code %d", mpi_err);
    return utc__error(UTC_ERR_MPI, "%s failed: %s", what, msg);
}

utc_status_t utc__user_status(int rc)
{
    if (rc == 0)
        return UTC_OK;
    if (rc < 0 && utc_status_string(rc)[0] != 'u') /* a known status code */
        return (utc_status_t)rc;
    return UTC_ERR_TASK_FAILED;
}
