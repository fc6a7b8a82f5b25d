/* Framework-only internals shared by the framework's own files. */
#ifndef UTC_FRAMEWORK_PRIVATE_H
#define UTC_FRAMEWORK_PRIVATE_H

#include "utc_internal.h"

/* context.c */
int utc__node_local_rank(void);

/* task.c: destroy every live task (utc_finalize), in creation order. */
void utc__task_destroy_all(void);

/* binding.c: bind the calling thread as the task's options say; the cursor spreads the
 * threads of all tasks of this rank over the machine. */
utc_status_t utc__bind_self(const utc_task_options_t *opts, int local_id, int slot);
/* Reserve `n` consecutive slots of this rank's binding cursor; returns the first. */
int utc__binding_reserve(int n);
/* Check the options' binding fields; UTC_ERR_INVALID_ARG with a message if wrong. */
utc_status_t utc__binding_check(const utc_task_options_t *opts);

/* mailbox.c: the command queue of a task's threads on one rank. */
typedef enum { UTC__CMD_INIT, UTC__CMD_RUN, UTC__CMD_EXIT } utc__cmd_kind_t;

utc_status_t utc__mailbox_create(int nthreads, utc__mailbox_t **out);
void utc__mailbox_destroy(utc__mailbox_t *mb);
/* Before any command is posted: only `nthreads` threads will take commands. */
void utc__mailbox_shrink(utc__mailbox_t *mb, int nthreads);
/* Post a command (owner thread only). Blocks while the queue is full. Returns its number. */
uint64_t utc__mailbox_post(utc__mailbox_t *mb, utc__cmd_kind_t kind, void *arg);
/* Task thread: wait for command number `seq` (sleeps while there is none). */
void utc__mailbox_take(utc__mailbox_t *mb, uint64_t seq, utc__cmd_kind_t *kind, void **arg);
/* Task thread: report command `seq` done with status rc. */
void utc__mailbox_done(utc__mailbox_t *mb, uint64_t seq, utc_status_t rc);
/* Owner: wait until every posted command is done; returns and clears the first error. */
utc_status_t utc__mailbox_wait_all(utc__mailbox_t *mb);

/* thread.c */
void *utc__thread_main(void *arg);
void utc__thread_set_self(utc_ctx_t *ctx);

#endif /* UTC_FRAMEWORK_PRIVATE_H */
