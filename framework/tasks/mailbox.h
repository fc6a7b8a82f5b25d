/* The command queue of a task's threads on one rank (task layer, private). */
#ifndef UTC_TASKS_MAILBOX_H
#define UTC_TASKS_MAILBOX_H

#include <stdbool.h>
#include <stdint.h>

#include <utc/status.h>

typedef struct utc__mailbox utc__mailbox_t;
typedef enum { UTC__CMD_INIT, UTC__CMD_RUN, UTC__CMD_EXIT } utc__cmd_kind_t;

utc_status_t utc__mailbox_create(int nthreads, utc__mailbox_t **out);
void utc__mailbox_destroy(utc__mailbox_t *mb);
/* Before any command is posted: only `nthreads` threads will take commands. */
void utc__mailbox_shrink(utc__mailbox_t *mb, int nthreads);
/* Post a command (owner thread only). Blocks while the queue is full. Returns its number. */
uint64_t utc__mailbox_post(utc__mailbox_t *mb, utc__cmd_kind_t kind, void *arg);
/* Owner of a one-thread mailbox, for a run it waits for at once: post a RUN whose share
 * is the owner's, claimed before the command is out, so the thread is not woken for it.
 * False, posting nothing, with more threads or while other commands are in flight.
 * *seq: the command's number. */
bool utc__mailbox_post_owned(utc__mailbox_t *mb, void *arg, uint64_t *seq);
/* Task thread: wait until command number `seq` is out (sleeps while there is none; first
 * spins a little when `spin`). Then claim its share (utc__mailbox_claim) before reading
 * it: a share the owner took may be a slot since reused. */
void utc__mailbox_take(utc__mailbox_t *mb, uint64_t seq, bool spin);
/* Command `seq`, once its share is claimed. */
void utc__mailbox_command(utc__mailbox_t *mb, uint64_t seq, utc__cmd_kind_t *kind, void **arg);
/* Task thread, before utc__mailbox_done: a task function returned `raw` (the user's own
 * value), reported as status rc != UTC_OK, on global thread `thread`, with `msg` the
 * thread's last error message of that call ("" for none; a CUDA error's text, say).
 * Recorded with the first error, so utc__mailbox_first_user can name it. */
void utc__mailbox_note_user(utc__mailbox_t *mb, utc_status_t rc, int raw, int thread,
                            const char *msg);
/* Owner, after utc__mailbox_wait_all returned an error: what the task function that gave
 * it returned, on which global thread, and its thread's message (valid until the next
 * wait_all). False when that error came from elsewhere. */
bool utc__mailbox_first_user(utc__mailbox_t *mb, int *raw, int *thread, const char **msg);
/* Task thread: report command `seq` done with status rc. */
void utc__mailbox_done(utc__mailbox_t *mb, uint64_t seq, utc_status_t rc);
/* Take thread `thread`'s share of command `seq` (the thread itself, or the owner lending
 * its core). True for exactly one caller. */
bool utc__mailbox_claim(utc__mailbox_t *mb, int thread, uint64_t seq);
/* Owner: the one command in flight, when it is a RUN whose shares the owner may take. */
bool utc__mailbox_lendable(utc__mailbox_t *mb, uint64_t *seq, void **arg);
/* Owner: wait until every posted command is done; returns and clears the first error.
 * `spin`: poll for a while before sleeping (false: where cores are scarce, a poller would
 * keep the threads it waits for off a core). */
utc_status_t utc__mailbox_wait_all(utc__mailbox_t *mb, bool spin);

/* Owner: whether commands posted are not all completed yet. */
bool utc__mailbox_busy(utc__mailbox_t *mb);

/* Owner: wait at most `timeout_s` for every posted command to complete (asleep). True when
 * they all have; the first error stays for utc__mailbox_wait_all. */
bool utc__mailbox_wait_for(utc__mailbox_t *mb, double timeout_s);

#endif /* UTC_TASKS_MAILBOX_H */
