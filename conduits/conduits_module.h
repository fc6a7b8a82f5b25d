/* What the conduits module gives the runtime layer (runtime/runtime.c). */
#ifndef UTC_CONDUITS_MODULE_H
#define UTC_CONDUITS_MODULE_H

/* utc_finalize, before the tasks go: destroy every live conduit (operations blocked on one
 * end with UTC_ERR_CANCELED). Main thread. */
void utc__conduits_finalize(void);

/* utc_finalize, after the tasks are gone: free the destroyed conduits that requests never
 * waited for still hold, and the pool of conduit objects. Main thread. */
void utc__conduits_release(void);

/* The tasks layer's hooks (utc__task_hooks_install): a run of `task` failed on this rank
 * (its conduits' operations end with UTC_ERR_PEER_FAILED, here and, through a notice, on
 * the other ranks), and a run of `task` is queued here (a mark of its failure is
 * cleared). */
#include <utc/task.h>
void utc__conduits_run_failed(utc_task_t *task, utc_status_t rc, int global_thread);
void utc__conduits_run_queued(utc_task_t *task);
/* utc_task_destroy of `task` begins: operations on its conduits end with
 * UTC_ERR_CANCELED here (a run blocked on one returns, so the destroy can wait for it). */
void utc__conduits_task_destroyed(utc_task_t *task);

/* utc_init: the pinned host allocator behind utc_buf_alloc_pinned (the gpu module's). */
#include "service/buffer.h"

#endif /* UTC_CONDUITS_MODULE_H */
