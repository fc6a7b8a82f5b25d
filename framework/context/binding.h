/* Pinning task threads with hwloc; one cursor per rank spreads the threads of all tasks. */
#ifndef UTC_CONTEXT_BINDING_H
#define UTC_CONTEXT_BINDING_H

#include <utc/status.h>
#include <utc/task.h>

/* Bind the calling thread as the options say; `slot` is its place on the cursor. */
utc_status_t utc__bind_self(const utc_task_options_t *opts, int local_id, int slot);
/* Reserve `n` consecutive slots of this rank's binding cursor; returns the first. */
int utc__binding_reserve(int n);
/* How many CPUs this process may run on (its affinity mask when first asked). */
int utc__cpus_allowed(void);
/* Check the options' binding fields; UTC_ERR_INVALID_ARG with a message if wrong. */
utc_status_t utc__binding_check(const utc_task_options_t *opts);

#endif /* UTC_CONTEXT_BINDING_H */
