/* Base layer: waiting on MPI without holding a core (Open MPI's MPI_Wait busy-polls). */
#ifndef UTC_BASE_MPI_WAIT_H
#define UTC_BASE_MPI_WAIT_H

#include <mpi.h>

#include <utc/status.h>

/*
 * Wait for an MPI request by testing it with back-off: spin (~20 us), then yield, then
 * sleep in growing steps up to 1 ms. Blocks. timeout_s < 0 waits forever; on timeout the
 * request is left active and UTC_ERR_TIMEOUT returned. Reported to the wait hook
 * (base/wait_hook.h) as UTC__WAIT_MPI.
 */
utc_status_t utc__mpi_wait(MPI_Request *req, MPI_Status *status, double timeout_s);

#endif /* UTC_BASE_MPI_WAIT_H */
