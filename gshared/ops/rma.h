/*
 * gshared ops: remote access (ops/rma.c owns it): loads and stores on any rank, atomics,
 * quiet and barrier, on data/'s objects. Its public calls are in <utc/gshared.h>; what the
 * module's top needs of it is below. The task collectives (ops/collectives.c) sit beside it
 * and share nothing with it.
 */
#ifndef UTC_GSHARED_OPS_RMA_H
#define UTC_GSHARED_OPS_RMA_H

/* Complete and free the calling thread's staging buffer for small remote stores (when the
 * thread stops; its task's window is still open). */
void utc__gs_stage_release(void);

#endif /* UTC_GSHARED_OPS_RMA_H */
