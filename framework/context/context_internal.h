/*
 * The process context: MPI (with MPI_THREAD_MULTIPLE), the runtime's world communicator,
 * ranks, the hwloc topology. Below the task layer; above base and observe.
 */
#ifndef UTC_CONTEXT_INTERNAL_H
#define UTC_CONTEXT_INTERNAL_H

#include <mpi.h>
#include <stdbool.h>

#include <utc/context.h>
#include <utc/status.h>

/* Non-zero between a successful utc_init and utc_finalize. */
bool utc__initialized(void);
/* Returns UTC_OK, or sets the last error and returns UTC_ERR_NOT_INITIALIZED naming `fn`. */
utc_status_t utc__check_init(const char *fn);
/* The runtime's private duplicate of MPI_COMM_WORLD (MPI_ERRORS_RETURN). */
MPI_Comm utc__world_comm(void);
/* The hwloc topology (hwloc_topology_t), loaded at utc_init. */
void *utc__topology(void);
/* This rank's index among the ranks of its node. */
int utc__node_local_rank(void);
/* The host of world rank `rank`, as a number every rank agrees on (the world rank of the
 * first rank on that host), or -1 for a rank out of range. */
int utc__rank_host(int rank);
/* World ranks `a` and `b` run on the same host (they can map each other's memory). */
bool utc__same_host(int a, int b);

/* utc_init's first step (main thread): MPI, the world communicator, the topology. On
 * success the context is running; on failure it is finalized (utc_init cannot be retried). */
utc_status_t utc__context_start(int *argc, char ***argv);
/* utc_finalize's last step: every rank has left the runtime's communicators. */
void utc__context_stop(void);

#endif /* UTC_CONTEXT_INTERNAL_H */
