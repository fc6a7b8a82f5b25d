/*
 * Runtime-internal interface of the framework, for the other modules of the library
 * (conduits, gshared, gpu). Not installed; users never include it.
 */
#ifndef UTC_FRAMEWORK_INTERNAL_H
#define UTC_FRAMEWORK_INTERNAL_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <utc/context.h>
#include <utc/status.h>
#include <utc/task.h>

#include <uthash.h>

#include "sync.h"

/* ---- context ---- */

/* Non-zero between a successful utc_init and utc_finalize. */
bool utc__initialized(void);
/* Returns UTC_OK, or sets the last error and returns UTC_ERR_NOT_INITIALIZED naming `fn`. */
utc_status_t utc__check_init(const char *fn);
/* The runtime's private duplicate of MPI_COMM_WORLD (MPI_ERRORS_RETURN). */
MPI_Comm utc__world_comm(void);
/* The hwloc topology (hwloc_topology_t), loaded at utc_init. */
void *utc__topology(void);

/* ---- errors ---- */

/* Set the calling thread's last-error message and return `status`. */
utc_status_t utc__error(utc_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Turn an MPI error code into UTC_ERR_MPI with MPI's own string; `what` names the call. */
utc_status_t utc__mpi_error(int mpi_err, const char *what);
/* Map a task function's return value to a status (see utc_task_ops_t). */
utc_status_t utc__user_status(int rc);

/* ---- waiting on MPI without holding a core ---- */

/*
 * Wait for an MPI request by testing it with back-off: spin (~20 us), then yield, then
 * sleep in growing steps up to 1 ms. Blocks. timeout_s < 0 waits forever; on timeout the
 * request is left active and UTC_ERR_TIMEOUT returned.
 */
utc_status_t utc__mpi_wait(MPI_Request *req, MPI_Status *status, double timeout_s);

/* ---- tasks ---- */

/* Extensions: modules that attach state to every task (gshared window, GPU devices). */
typedef struct utc__task_ext {
    const char *name;
    /* On every rank at utc_task_create, after the task communicator exists. */
    utc_status_t (*create)(utc_task_t *task);
    /* On every rank at utc_task_destroy (after the threads have exited), or after a
     * failed create whose `create` had succeeded. */
    void (*destroy)(utc_task_t *task);
    /* In each task thread, once, before its first command. */
    utc_status_t (*thread_start)(utc_ctx_t *ctx);
    /* In each task thread, once, after fini. */
    void (*thread_stop)(utc_ctx_t *ctx);
} utc__task_ext_t;

enum { UTC__EXT_GSHARED = 0, UTC__EXT_GPU = 1, UTC__EXT_COUNT = 2 };
extern const utc__task_ext_t utc__gshared_ext; /* gshared/ */
extern const utc__task_ext_t utc__gpu_ext;     /* gpu/ */

typedef struct utc__mailbox utc__mailbox_t;

struct utc__task {
    int id;                     /* equal on all ranks */
    const utc_task_ops_t *ops;
    utc_task_options_t opts;    /* copied; cpu_list and devices copied too */
    int nthreads;               /* global thread count */
    int *procs;                 /* procs[global id] = world rank */
    int nlocal;                 /* threads on this rank */
    int *local_gids;            /* local id -> global id */
    int ngroup;                 /* ranks holding threads, in order of first appearance */
    int *group_ranks;           /* group rank -> world rank */
    int group_rank;             /* this rank in the group, -1 if not a member */
    int entry_rank;             /* world rank of procs[0] */
    MPI_Comm comm;              /* the task communicator; MPI_COMM_NULL if not a member */
    void *ext[UTC__EXT_COUNT];  /* per-extension state */
    /* thread group (only when nlocal > 0) */
    struct utc__thread *threads;
    utc__mailbox_t *mailbox;
    utc__barrier_t barrier;     /* local barrier of the task's threads on this rank */
    /* state of the "one thread does it" helper */
    atomic_int single_rc;
    /* start-up of the threads: each reports its binding and extensions' status */
    atomic_uint started;
    atomic_int start_rc;
    pthread_mutex_t owner_lock; /* serializes init/run/wait/destroy calls on this rank */
    bool initialized;           /* init has run (or there is no init) */
    bool destroying;            /* utc_task_destroy has begun */
    struct utc__task *destroy_next; /* utc_finalize's list of tasks left alive */
    utc_task_t *self;           /* the rank instance (registry key) */
    UT_hash_handle hh;          /* registry of live tasks, keyed by self */
};

struct utc__thread {
    utc_ctx_t ctx;
    pthread_t tid;
    struct utc__task *task;
    int bind_slot;         /* binding-cursor slot of this thread */
    void *ext[UTC__EXT_COUNT];  /* per-extension, per-thread state */
};

/* Conduits module: destroy every live conduit (called by utc_finalize before the tasks
 * go). The framework has a weak empty default. */
void utc__conduits_finalize(void);

/* Look up a live task; UTC_ERR_INVALID_HANDLE (with message) if it is not one. */
utc_status_t utc__task_check(const utc_task_t *task, const char *fn);
/* The calling thread's ctx if it is a thread of `task`, else NULL. */
utc_ctx_t *utc__ctx_of(const utc_task_t *task);
/* Check that ctx is the calling thread's own context. */
utc_status_t utc__ctx_check(utc_ctx_t *ctx, const char *fn);

#endif /* UTC_FRAMEWORK_INTERNAL_H */
