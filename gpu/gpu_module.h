/* What the GPU module (cuda/ or the stub) gives the runtime layer (runtime/runtime.c). */
#ifndef UTC_GPU_MODULE_H
#define UTC_GPU_MODULE_H

#include "utc_internal.h"

/* The task extension that binds GPU task threads to a device and stream (slot
 * UTC__EXT_GPU). */
extern const utc__task_ext_t utc__gpu_ext;

#endif /* UTC_GPU_MODULE_H */
