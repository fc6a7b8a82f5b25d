/* What the GPU module (cuda/ or the stub) gives the runtime layer (runtime/runtime.c). */
#ifndef UTC_GPU_MODULE_H
#define UTC_GPU_MODULE_H

#include "utc_internal.h"

/* The task extension that binds GPU task threads to a device and stream (slot
 * UTC__EXT_GPU). */
extern const utc__task_ext_t utc__gpu_ext;

/* Page-locked host memory for utc_buf_alloc_pinned (the runtime layer hands these to the
 * conduits' buffers at utc_init): NULL when there is no usable GPU or no memory; free takes
 * the size alloc was given. Blocks are kept in a pool for reuse (pinning is slow).
 * Thread-safe. */
void *utc__gpu_pinned_alloc(size_t size);
void utc__gpu_pinned_free(void *p, size_t size);

#endif /* UTC_GPU_MODULE_H */
