/*
 * What the global shared data module gives the runtime layer (runtime/runtime.c): the task
 * extension, defined in gshared_module.c, the top of the module. The layers below it,
 * lowest first (each header says which file owns what):
 *   core/  what each task owns: its window and allocator (window.h, alloc.h), and the
 *          rank's progress thread for passive targets (progress.h)
 *   data/  global shared data objects carved out of the window, and local access (gdata.h)
 *   ops/   remote access, atomics, quiet and barrier (rma.h); task collectives
 *          (collectives.c, public API only)
 */
#ifndef UTC_GSHARED_MODULE_H
#define UTC_GSHARED_MODULE_H

#include "utc_internal.h"

/* The task extension that gives every task its RMA window (slot UTC__EXT_GSHARED). */
extern const utc__task_ext_t utc__gshared_ext;

#endif /* UTC_GSHARED_MODULE_H */
