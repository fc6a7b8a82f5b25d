/*
 * gshared core: progress for passive targets (core/progress.c owns it): one thread per
 * rank that runs MPI's progress engine while any window that may need target-side progress
 * (not in shared memory) has objects. A process-wide service; knows nothing of tasks or
 * objects.
 */
#ifndef UTC_GSHARED_CORE_PROGRESS_H
#define UTC_GSHARED_CORE_PROGRESS_H

/* Take / drop a reference on this rank's progress thread. Any thread; may block briefly
 * (the last release joins the thread). */
void utc__gs_progress_acquire(void);
void utc__gs_progress_release(void);

#endif /* UTC_GSHARED_CORE_PROGRESS_H */
