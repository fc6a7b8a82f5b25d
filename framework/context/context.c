/* The process context: MPI and hwloc start-up and shut-down, ranks, the world barrier.
 * utc_init and utc_finalize (runtime/runtime.c) call its start and stop. */
#define _GNU_SOURCE
#include <hwloc.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/coll_check.h"
#include "base/errors.h"
#include "base/mpi_wait.h"
#include "base/wait_hook.h"
#include "context/binding.h"
#include "context/context_internal.h"
#include "observe/trace.h"

enum { STATE_NEW = 0, STATE_RUNNING = 1, STATE_FINALIZED = 2 };

static atomic_int state = STATE_NEW;
static int world_rank = -1, world_size = 0, local_rank = 0;
/* host of each world rank: the world rank of the first rank of its node (NULL: unknown, every
 * rank on a host of its own) */
static int *host_of;
static MPI_Comm world = MPI_COMM_NULL;
static hwloc_topology_t topology;
static int we_initialized_mpi;

bool utc__initialized(void) { return atomic_load(&state) == STATE_RUNNING; }
int utc_is_initialized(void) { return utc__initialized(); }
MPI_Comm utc__world_comm(void) { return world; }
void *utc__topology(void) { return topology; }
int utc__node_local_rank(void) { return local_rank; }

int utc__rank_host(int rank)
{
    if (rank < 0 || rank >= world_size)
        return -1;
    return host_of ? host_of[rank] : rank;
}

bool utc__same_host(int a, int b)
{
    int ha = utc__rank_host(a);
    return ha >= 0 && ha == utc__rank_host(b);
}

/* Learn every rank's host: the world rank of its node's first rank, gathered from all. */
static void host_map_start(MPI_Comm node)
{
    int leader = world_rank;
    if (node != MPI_COMM_NULL)
        MPI_Allreduce(&world_rank, &leader, 1, MPI_INT, MPI_MIN, node);
    int *map = malloc((size_t)world_size * sizeof *map);
    if (map && MPI_Allgather(&leader, 1, MPI_INT, map, 1, MPI_INT, world) == MPI_SUCCESS) {
        host_of = map;
        return;
    }
    free(map); /* unknown: every rank counts as a host of its own (MPI between all) */
}

utc_status_t utc__check_init(const char *fn)
{
    if (utc__initialized())
        return UTC_OK;
    return utc__error(UTC_ERR_NOT_INITIALIZED, "%s: UTC is %s", fn,
                      atomic_load(&state) == STATE_NEW ? "not initialized (call utc_init first)"
                                                       : "finalized");
}

utc_status_t utc__context_start(int *argc, char ***argv)
{
    if (atomic_load(&state) != STATE_NEW)
        return utc__error(UTC_ERR_STATE, "utc_init: UTC was already %s",
                          atomic_load(&state) == STATE_RUNNING ? "initialized" : "finalized");
    utc_status_t rc;
    int err, provided = 0, already = 0;
    MPI_Initialized(&already);
    if (already) {
        MPI_Query_thread(&provided);
    } else {
        err = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
        if (err != MPI_SUCCESS)
            return utc__mpi_error(err, "MPI_Init_thread");
        we_initialized_mpi = 1;
    }
    if (provided < MPI_THREAD_MULTIPLE) {
        rc = utc__error(UTC_ERR_MPI,
                        "utc_init: MPI provides thread level %d, UTC needs MPI_THREAD_MULTIPLE (%d)",
                        provided, MPI_THREAD_MULTIPLE);
        goto fail_mpi;
    }
    if ((err = MPI_Comm_dup(MPI_COMM_WORLD, &world)) != MPI_SUCCESS) {
        rc = utc__mpi_error(err, "MPI_Comm_dup");
        goto fail_mpi;
    }
    MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
    MPI_Comm_rank(world, &world_rank);
    MPI_Comm_size(world, &world_size);

    MPI_Comm node = MPI_COMM_NULL;
    if (MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS)
        MPI_Comm_rank(node, &local_rank);
    else
        node = MPI_COMM_NULL;
    host_map_start(node);

    if (hwloc_topology_init(&topology) != 0 || hwloc_topology_load(topology) != 0) {
        rc = utc__error(UTC_ERR_HWLOC, "utc_init: cannot load the hwloc topology");
        goto fail_node;
    }
    /* after MPI_Init: Open MPI may bind the process there (mpirun --bind-to core) */
    if ((rc = utc__binding_start(node)) != UTC_OK)
        goto fail_topology;
    if (node != MPI_COMM_NULL)
        MPI_Comm_free(&node);
    atomic_store(&state, STATE_RUNNING);
    utc__log_set_rank(world_rank);
    return UTC_OK;

fail_topology:
    utc__binding_stop();
    hwloc_topology_destroy(topology);
fail_node:
    free(host_of);
    host_of = NULL;
    if (node != MPI_COMM_NULL)
        MPI_Comm_free(&node);
    MPI_Comm_free(&world);
fail_mpi:
    if (we_initialized_mpi)
        MPI_Finalize();
    atomic_store(&state, STATE_FINALIZED);
    return rc;
}

void utc__context_stop(void)
{
    atomic_store(&state, STATE_FINALIZED);
    utc__log_set_rank(-1);
    utc__binding_stop();
    hwloc_topology_destroy(topology);
    free(host_of);
    host_of = NULL;
    utc__coll_check_fini();
    MPI_Comm_free(&world);
    if (we_initialized_mpi)
        MPI_Finalize();
}

int utc_rank(void)
{
    utc_status_t rc = utc__check_init("utc_rank");
    return rc == UTC_OK ? world_rank : rc;
}

int utc_nranks(void)
{
    utc_status_t rc = utc__check_init("utc_nranks");
    return rc == UTC_OK ? world_size : rc;
}

utc_status_t utc_barrier(void)
{
    utc_status_t rc = utc__check_init("utc_barrier");
    if (rc != UTC_OK)
        return rc;
    MPI_Request req;
    int err = MPI_Ibarrier(world, &req);
    if (err != MPI_SUCCESS)
        return utc__mpi_error(err, "MPI_Ibarrier");
    return UTC__PROF_CALL(UTC__EV_WORLD_BARRIER, -1, -1, -1, -1,
                          UTC__WAIT_CALL(UTC__WAIT_WORLD_BARRIER, -1, -1, -1, NULL,
                                       utc__mpi_wait(&req, MPI_STATUS_IGNORE, -1)));
}

void utc_abort(int code, const char *fmt, ...)
{
    if (code <= 0 || code > 255)
        code = 1;
    char prefix[64];
    snprintf(prefix, sizeof prefix, "utc[%d] abort: ", world_rank);
    va_list ap;
    va_start(ap, fmt);
    utc__log_vwrite(prefix, fmt ? fmt : "(no message)", ap);
    va_end(ap);
    fflush(stderr);
    if (utc__initialized())
        MPI_Abort(world, code);
    exit(code);
}
