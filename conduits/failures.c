/*
 * Conduits: failed and destroyed tasks (hooks of the tasks layer, installed by utc_init).
 * A failure marks the transports of the task's conduits (their failure records,
 * service/transport.h), ends what is pending there, and tells the other ranks; the
 * error messages name the task, its rank and its status.
 */
#define _GNU_SOURCE
#include "conduit_internal.h"
#include "conduits_module.h"

/* UTC_ERR_PEER_FAILED, naming the task that failed, its rank and its error; or
 * UTC_ERR_CANCELED, naming the task being destroyed. */
utc_status_t utc__conduit_peer_failed(const utc_conduit_t *c, utc__transport_t *tp,
                                       const char *fn)
{
    utc__fail_info_t f;
    /* a device conduit's failure may be known to its host transport only, until the device
     * layer's next operation copies it (it came as a notice from the failed task's rank) */
    if (!utc__transport_fail_info(tp, &f) &&
        !(tp->inner && utc__transport_fail_info(tp->inner, &f)))
        /* not published: a record being written */
        return utc__error(UTC_ERR_PEER_FAILED, "%s: a task at an end of conduit %d failed",
                          fn, c->id);
    int end = f.end, rank = f.rank, rc = f.rc;
    if (f.why == UTC_ERR_CANCELED)
        return utc__error(UTC_ERR_CANCELED,
                          "%s: task '%s', an end of conduit %d, is destroyed (utc_task_destroy "
                          "on rank %d) with this operation in flight", fn,
                          utc__conduit_label(utc__conduit_end_at(c, end)), c->id, rank);
    if (rc == UTC__FAIL_RC_GONE)
        return utc__error(UTC_ERR_PEER_FAILED,
                          "%s: rank %d, where task '%s' holds the other end of conduit %d, can "
                          "no longer be reached: its process ended, or what it sent could not "
                          "be received (see the log); what it had not delivered is lost",
                          fn, rank, utc__conduit_label(utc__conduit_end_at(c, end)), c->id);
    return utc__error(UTC_ERR_PEER_FAILED,
                      "%s: task '%s' at the other end of conduit %d failed on rank %d (its run "
                      "returned %d, %s); operations on the conduit fail until a run of that "
                      "task is queued on this rank", fn,
                      utc__conduit_label(utc__conduit_end_at(c, end)), c->id, rank, rc,
                      utc_status_string(rc));
}

/* ---- failed tasks (hooks of the tasks layer, installed by utc_init) ---- */

/* What a failure of `task` does (mark_failed). */
typedef struct failure {
    utc_task_t *task;
    utc_status_t rc, status;
    int global_thread;
} failure_t;

/* One conduit (under the registry's lock): if `task` is an end of c, mark c's transports
 * failed, end what is pending there and, for a run that failed, tell the other ranks. */
static void mark_failed(utc_conduit_t *c, void *arg)
{
    const failure_t *f = arg;
    for (int e = 0; e < c->nends; e++) {
        if (c->ends[e].task != f->task)
            continue;
        bool told = false;
        for (int i = 0; i <= UTC__CONDUIT_SHARED_TP; i++) {
            utc__transport_t *tp = c->tp[i];
            if (!tp || !utc__transport_mark_failed(tp, e, utc_rank(), (int)f->rc, f->status))
                continue;
            tp->ops->fail(tp, f->status);
            if (f->global_thread >= 0)
                tp->ops->notify_failed(tp, e, utc_rank(), f->rc);
            told = true;
        }
        if (told && f->global_thread >= 0)
            utc_log(UTC_LOG_INFO, "conduit %d: task '%s' failed here (thread %d: %s); "
                    "operations on the conduit end with UTC_ERR_PEER_FAILED", c->id,
                    utc__conduit_label(&c->ends[e]), f->global_thread,
                    utc_status_string(f->rc));
    }
}

/* Mark the conduits that have `task` as an end failed here (its error `rc`; operations end
 * with `status`) and end their pending reads. A run that failed (global_thread >= 0) also
 * tells the conduits' other ranks, and says so in the log. */
static void mark_task_failed(utc_task_t *task, utc_status_t rc, utc_status_t status,
                             int global_thread)
{
    failure_t f = {task, rc, status, global_thread};
    utc__conduits_each(mark_failed, &f);
}

void utc__conduits_run_failed(utc_task_t *task, utc_status_t rc, int global_thread)
{
    mark_task_failed(task, rc, UTC_ERR_PEER_FAILED, global_thread);
}

/* A transport's mark of `task`'s failure is cleared. */
static void clear_mark(utc_conduit_t *c, utc__transport_t *tp, utc_task_t *task)
{
    utc__fail_info_t f;
    if (utc__fail_record_get(&tp->fail, &f) && utc__conduit_end_at(c, f.end)->task == task)
        utc__fail_record_clear(&tp->fail); /* the failed task runs again */
}

/* One conduit: a mark of `task`'s failure is cleared (its run is queued here again). A
 * device transport's host transport is cleared on its own: a failure told by another rank
 * marks it first, and the device transport only when one of its operations sees it. */
static void clear_failed(utc_conduit_t *c, void *task)
{
    for (int i = 0; i <= UTC__CONDUIT_SHARED_TP; i++) {
        utc__transport_t *tp = c->tp[i];
        if (!tp)
            continue;
        clear_mark(c, tp, task);
        if (tp->inner)
            clear_mark(c, tp->inner, task);
    }
}

void utc__conduits_run_queued(utc_task_t *task)
{
    utc__conduits_each(clear_failed, task);
}

void utc__conduits_task_destroyed(utc_task_t *task)
{
    /* the conduits joined to it end the operations pending on them (a run blocked on one
     * returns), here; every rank destroys the task, so no notice is sent */
    mark_task_failed(task, UTC_OK, UTC_ERR_CANCELED, -1);
}
