/*
 * The runtime layer: utc_init and utc_finalize. The only file that knows every module; it
 * starts them bottom up and stops them top down, so no module below calls up into
 * another (doc/guide/architecture.md).
 */
#include <utc/context.h>

#include "utc_internal.h"
#include "observe/trace.h"
#include "observe/watchdog.h"

#include "conduits/conduits_module.h"
#include "gpu/gpu_module.h"
#include "gshared/gshared_module.h"

utc_status_t utc_init(int *argc, char ***argv)
{
    utc_status_t rc = utc__context_start(argc, argv);
    if (rc != UTC_OK)
        return rc;
    utc__fences_init(); /* before any task thread: conduits' calls use the light fence */
    static const utc__task_hooks_t conduit_hooks = {
        .run_failed = utc__conduits_run_failed,
        .run_queued = utc__conduits_run_queued,
        .destroying = utc__conduits_task_destroyed};
    utc__task_hooks_install(&conduit_hooks);
    utc__task_ext_register(UTC__EXT_GSHARED, &utc__gshared_ext);
    utc__task_ext_register(UTC__EXT_GPU, &utc__gpu_ext);
    utc__buf_set_pinned(utc__gpu_pinned_alloc, utc__gpu_pinned_free);
    utc__prof_init(utc__world_comm()); /* UTC_TRACE, UTC_STATS: collective */
    utc__wd_start(utc_rank());         /* UTC_WATCHDOG */
    utc_log(UTC_LOG_DEBUG, "initialized: %d ranks, node-local rank %d", utc_nranks(),
            utc__node_local_rank());
    return UTC_OK;
}

utc_status_t utc_finalize(void)
{
    utc_status_t rc = utc__check_init("utc_finalize");
    if (rc != UTC_OK)
        return rc;
    utc_ctx_t *ctx = utc_ctx_self();
    if (ctx)
        return utc__error(UTC_ERR_DEADLOCK, "utc_finalize: called from a thread of task '%s', "
                          "it would wait for the run it is in (call it from the main thread)",
                          utc_task_name(ctx->task));
    /* conduits use tasks: they go first; operations blocked on them end with
     * UTC_ERR_CANCELED, so that runs still going can return */
    utc__conduits_finalize();
    utc__task_destroy_all();
    utc__conduits_release();
    /* statistics and trace: collective; a trace that could not be written is this call's
     * error, on every rank, once the rest is done */
    rc = utc__prof_finalize(utc__world_comm());
    /* every rank must be done with the runtime's communicators before they go */
    MPI_Barrier(utc__world_comm());
    utc__wd_stop();
    utc__context_stop();
    return rc;
}
