/*
 * Internals of the CUDA implementation of the gpu module: per-task and per-thread state,
 * and the CUDA error mapping shared by its files.
 */
#ifndef UTC_GPU_CUDA_H
#define UTC_GPU_CUDA_H

#include <cuda_runtime_api.h>

#include <utc/gpu.h>

#include "utc_internal.h"

/* Per-task state (task->impl->ext[UTC__EXT_GPU]) of a task with GPU threads on this rank
 * (a GPU task, or a mixed one: its GPU threads are local threads 0 .. nlocal-1). */
typedef struct utc__gpu_task {
    int nlocal;         /* GPU threads on this rank */
    int *thread_device; /* local thread id -> device ordinal */
} utc__gpu_task_t;

/* Per-thread state (thread->ext[UTC__EXT_GPU]) of a GPU task thread. */
typedef struct utc__gpu_thread {
    utc_ctx_t *ctx;
    int device;
    cudaStream_t stream; /* non-blocking, this thread's own */
    cudaEvent_t idle;    /* blocking-sync event recorded to wait for the whole stream */
} utc__gpu_thread_t;

/* Flags of the events the module waits on: the waiter can sleep, no timing. */
#define UTC__GPU_EVENT_FLAGS (cudaEventBlockingSync | cudaEventDisableTiming)

/*
 * Turn a CUDA error into UTC_ERR_GPU with CUDA's message: "fn: call: message (name)".
 * fn (the public function) may be NULL. Clears the thread's CUDA last error so that a
 * later cudaGetLastError does not report it again (sticky errors stay, as CUDA intends).
 * Not logged here: a task function that returns the error has it logged at warning
 * level, with this message, by the task layer (the caller may also handle it).
 */
utc_status_t utc__gpu_error(cudaError_t err, const char *fn, const char *call);

/*
 * The calling thread's GPU state; NULL when the caller is not a thread of a GPU task,
 * then with the last error set to UTC_ERR_NOT_MEMBER naming `fn` (none when fn is NULL).
 */
utc__gpu_thread_t *utc__gpu_self(const char *fn);

/*
 * Wait until `ev` (made with UTC__GPU_EVENT_FLAGS) has completed: poll it for up to 200 us
 * with UTC's back-off (spin 50 us, then yield), then sleep in cudaEventSynchronize. CUDA's
 * default waits spin on a core; UTC's waiting threads must not for long. Blocks.
 */
utc_status_t utc__gpu_wait_event(cudaEvent_t ev, const char *fn);

/* Wait until the work queued so far on the thread's stream is done, as utc__gpu_wait_event. */
utc_status_t utc__gpu_wait_stream(utc__gpu_thread_t *self, const char *fn);

#endif /* UTC_GPU_CUDA_H */
