/*
 * Internals of the CUDA implementation of the gpu module: per-task and per-thread state,
 * and the CUDA error mapping shared by its files.
 */
#ifndef UTC_GPU_CUDA_H
#define UTC_GPU_CUDA_H

#include <cuda_runtime_api.h>

#include <utc/gpu.h>

#include "utc_internal.h"

/* Per-task state (task->impl->ext[UTC__EXT_GPU]) of a GPU task on a rank holding threads. */
typedef struct utc__gpu_task {
    int nlocal;
    int *thread_device; /* local thread id -> device ordinal */
} utc__gpu_task_t;

/* Per-thread state (thread->ext[UTC__EXT_GPU]) of a GPU task thread. */
typedef struct utc__gpu_thread {
    utc_ctx_t *ctx;
    int device;
    cudaStream_t stream; /* non-blocking, this thread's own */
} utc__gpu_thread_t;

/*
 * Turn a CUDA error into UTC_ERR_GPU with CUDA's message: "fn: call: message (name)".
 * fn (the public function) may be NULL. Clears the thread's CUDA last error so that a
 * later cudaGetLastError does not report it again (sticky errors stay, as CUDA intends).
 */
utc_status_t utc__gpu_error(cudaError_t err, const char *fn, const char *call);

/*
 * The calling thread's GPU state; NULL when the caller is not a thread of a GPU task,
 * then with the last error set to UTC_ERR_NOT_MEMBER naming `fn` (none when fn is NULL).
 */
utc__gpu_thread_t *utc__gpu_self(const char *fn);

#endif /* UTC_GPU_CUDA_H */
