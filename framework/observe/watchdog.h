/*
 * The watchdog (UTC_WATCHDOG=SECONDS, default 60; 0 turns it off): it plugs into the base
 * layer's wait hook (base/wait_hook.h), keeps a record of what each thread waits on, and a
 * monitor thread (waking every SECONDS / 4) prints one line for each thread that has waited
 * longer than SECONDS (rank, task, thread, what, how long).
 *
 * Cost with UTC_WATCHDOG=0: the wait hook's one relaxed load and a branch per wait. When
 * on: a few relaxed stores to the thread's own record before the wait and one after, no
 * clock read (the monitor times a wait from when it first sees it).
 */
#ifndef UTC_OBSERVE_WATCHDOG_H
#define UTC_OBSERVE_WATCHDOG_H

/* utc_init (main thread, after MPI is up, before any task thread): reads UTC_WATCHDOG;
 * when it is a positive number of seconds, installs the wait hook and starts the monitor
 * thread. A bad value gets a warning, no watchdog. `rank` prefixes its lines. */
void utc__wd_start(int rank);
/* utc_finalize: stops and joins the monitor thread (if any). */
void utc__wd_stop(void);

/* A task thread starts: the watchdog's lines name its task and global thread id. */
void utc__wd_thread_identity(int task_id, const char *task_name, int global_id);

#endif /* UTC_OBSERVE_WATCHDOG_H */
