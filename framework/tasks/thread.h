/* A task thread's life (task layer, private): start-up, the command loop, the context. */
#ifndef UTC_TASKS_THREAD_H
#define UTC_TASKS_THREAD_H

#include <utc/task.h>

#include "tasks/task_internal.h"

/* pthread entry of a task thread; arg is its struct utc__thread. */
void *utc__thread_main(void *arg);
void utc__thread_set_self(utc_ctx_t *ctx);
/* Owner, in utc_task_wait: when the one command in flight is a RUN and some local thread
 * has not taken its share yet, run that share on the calling thread (as that thread:
 * its ctx, its extensions' per-thread state) and report it done. True if it did. */
bool utc__thread_lend(struct utc__task *t);
/* Owner: run thread i's share of RUN command `seq` (claimed by the owner) on the calling
 * thread, as utc__thread_lend does, and report it done. */
void utc__thread_run_share(struct utc__task *t, int i, uint64_t seq, void *cmd_arg);
/* The extension in `slot` (an empty one when none is registered). */
const utc__task_ext_t *utc__task_ext(int slot);

#endif /* UTC_TASKS_THREAD_H */
