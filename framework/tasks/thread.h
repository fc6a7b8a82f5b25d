/* A task thread's life (task layer, private): start-up, the command loop, the context. */
#ifndef UTC_TASKS_THREAD_H
#define UTC_TASKS_THREAD_H

#include <utc/task.h>

#include "tasks/task_internal.h"

/* pthread entry of a task thread; arg is its struct utc__thread. */
void *utc__thread_main(void *arg);
void utc__thread_set_self(utc_ctx_t *ctx);
/* The extension in `slot` (an empty one when none is registered). */
const utc__task_ext_t *utc__task_ext(int slot);

#endif /* UTC_TASKS_THREAD_H */
