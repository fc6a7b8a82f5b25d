/* What the global shared data module gives the runtime layer (runtime/runtime.c). */
#ifndef UTC_GSHARED_MODULE_H
#define UTC_GSHARED_MODULE_H

#include "utc_internal.h"

/* The task extension that gives every task its RMA window (slot UTC__EXT_GSHARED). */
extern const utc__task_ext_t utc__gshared_ext;

#endif /* UTC_GSHARED_MODULE_H */
