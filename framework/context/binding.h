/* Pinning task threads with hwloc; one cursor per rank spreads the threads of all tasks,
 * over the CPUs this process may use (its affinity mask at utc_init) and no others. */
#ifndef UTC_CONTEXT_BINDING_H
#define UTC_CONTEXT_BINDING_H

#include <mpi.h>

#include <utc/status.h>
#include <utc/task.h>

/* utc_init, main thread, after the topology is loaded: take the process's affinity mask
 * (within hwloc's allowed set) as the CPUs threads may be bound to, and learn from the
 * other ranks of this node (`node`, collective over it) where this rank's cursor starts:
 * after the ranks before it whose masks overlap its own. */
utc_status_t utc__binding_start(MPI_Comm node) __attribute__((warn_unused_result));
/* utc_finalize: frees what utc__binding_start made. */
void utc__binding_stop(void);
/* Bind the calling thread as the options say; `slot` is its place on the cursor. Fails
 * with UTC_ERR_INVALID_ARG when an explicit CPU for it is outside the allowed set. */
utc_status_t utc__bind_self(const utc_task_options_t *opts, int local_id, int slot);
/* Reserve `n` consecutive slots of this rank's binding cursor for a task with `n` threads
 * here; returns the first. Called by the creating thread after utc__binding_check of the
 * same options: when those name, for one of the n threads, a CPU this process may not
 * use, it sets that thread's last error (the threads' utc__bind_self then fail). */
int utc__binding_reserve(int n);
/* How many CPUs this process may run on (the allowed set; before utc_init, its mask). */
int utc__cpus_allowed(void);
/* How many ranks of this node (this one too) may run on CPUs this rank may use (their
 * masks overlap): 1 before utc_init or without a node communicator. */
int utc__cpu_sharers(void);
/* Bind the calling thread as thread `local_id` at `slot` is under opts (utc__bind_self)
 * for a while: returns what utc__bind_restore needs to undo it, or NULL when there is
 * nothing to undo (UTC_BIND_NONE, bound so already, or the binding cannot be read or
 * changed: the thread then runs where it is). */
void *utc__bind_as(const utc_task_options_t *opts, int local_id, int slot);
/* Bind the calling thread as `saved` says, and free it (NULL: nothing). */
void utc__bind_restore(void *saved);
/* Check the options' binding fields; UTC_ERR_INVALID_ARG with a message if wrong. The
 * same on every rank (a CPU outside one rank's mask is found by utc__binding_reserve). */
utc_status_t utc__binding_check(const utc_task_options_t *opts);

#endif /* UTC_CONTEXT_BINDING_H */
