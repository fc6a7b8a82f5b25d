/* Waiting for MPI requests without holding a core (Open MPI's MPI_Wait busy-polls). */
#include "base/errors.h"
#include "base/mpi_wait.h"
#include "base/sync.h"
#include "base/wait_hook.h"

static utc_status_t test_with_backoff(MPI_Request *req, MPI_Status *status, double timeout_s)
{
    utc__backoff_t b = UTC__BACKOFF_INIT;
    double start = timeout_s >= 0 ? MPI_Wtime() : 0;
    MPI_Status ignored;
    for (;;) {
        int done = 0;
        int err = MPI_Test(req, &done, status ? status : &ignored);
        if (err != MPI_SUCCESS)
            return utc__mpi_error(err, "MPI_Test");
        if (done)
            return UTC_OK;
        if (timeout_s >= 0 && (b.iter & 63) == 0 && MPI_Wtime() - start > timeout_s)
            return utc__error(UTC_ERR_TIMEOUT, "MPI request not complete after %.3f s", timeout_s);
        utc__backoff_step(&b);
    }
}

utc_status_t utc__mpi_wait(MPI_Request *req, MPI_Status *status, double timeout_s)
{
    /* an observer sees the caller's own description when it has one (outermost wait) */
    return UTC__WAIT_CALL(UTC__WAIT_MPI, -1, -1, -1, NULL,
                        test_with_backoff(req, status, timeout_s));
}
