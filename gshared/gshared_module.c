/*
 * The gshared task extension: the framework's hooks, which open each task's window and
 * state when the task is created (core/), free the objects still alive and close it all
 * when the task is destroyed (data/, core/), and set up and tear down each task thread's
 * per-thread state (core/'s thread check, ops/rma.c's staging buffer). The only file that
 * sees every layer of the module.
 */
#include "gshared_module.h"
#include "core/window.h"
#include "data/gdata.h"
#include "ops/rma.h"

static utc_status_t gs_task_create(utc_task_t *task)
{
    task->impl->ext[UTC__EXT_GSHARED] = NULL;
    utc__gs_task_t *gs;
    utc_status_t rc = utc__gs_task_open(task, &gs);
    if (rc == UTC_OK)
        task->impl->ext[UTC__EXT_GSHARED] = gs; /* NULL on ranks outside the task */
    return rc;
}

static void gs_task_destroy(utc_task_t *task)
{
    utc__gs_task_t *gs = utc__gs_of(task);
    if (!gs)
        return;
    task->impl->ext[UTC__EXT_GSHARED] = NULL;
    utc__gdata_free_all(gs);
    utc__gs_task_close(gs);
}

static utc_status_t gs_thread_start(utc_ctx_t *ctx)
{
    utc__gs_thread_task = ctx->task;
    return UTC_OK;
}

static void gs_thread_stop(utc_ctx_t *ctx)
{
    (void)ctx;
    utc__gs_stage_release();
    utc__gs_thread_task = NULL;
}

const utc__task_ext_t utc__gshared_ext = {
    .name = "gshared",
    .create = gs_task_create,
    .destroy = gs_task_destroy,
    .thread_start = gs_thread_start,
    .thread_stop = gs_thread_stop,
};
