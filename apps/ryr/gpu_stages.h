/*
 * What the GPU-resident stages of the RYR sample (--preset gpu: task_dev_*.c) need from
 * CUDA beyond the kernels (pixel_kernels.h, render_gpu.h): device and pinned buffers, and
 * a timer of the device time of the work a stage queues on its stream. Built with CUDA
 * (gpu_stages.cu); gpu_stages_none.c reports "no GPU support".
 *
 * Every function returns 0 or a negative utc_status_t with utc_last_error() set
 * (utc_gpu_check: CUDA's message).
 */
#ifndef RYR_GPU_STAGES_H
#define RYR_GPU_STAGES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Device memory on the calling thread's current device (cudaMalloc: memory that CUDA IPC
 * can share, so a buffer a stage writes crosses to another rank by the "ipc" path with one
 * copy). For buffers made once per run; ryr_gpu_free(NULL) does nothing. */
int ryr_gpu_alloc(size_t bytes, void **out);
void ryr_gpu_free(void *dev);

/* Pinned host memory (cudaMallocHost): where the output stage copies its planes back. */
int ryr_gpu_host_alloc(size_t bytes, void **out);
void ryr_gpu_host_free(void *host);

/* Queue on `stream` a copy of `bytes` from `src` to `dst` (device or host, either way). */
int ryr_gpu_copy(void *dst, const void *src, size_t bytes, void *stream);

/* Queue on `stream` the filling of `bytes` of device memory with `byte`. */
int ryr_gpu_fill(void *dev, int byte, size_t bytes, void *stream);

/*
 * The device time of the work a stage queues on its stream between ryr_gpu_timer_start
 * and ryr_gpu_timer_stop (CUDA events: the GPU's clock, not the host thread's, which only
 * queues the work). Pairs of events in a small ring: a start that would reuse a pair
 * first adds that pair's time (waiting for it when the GPU is that far behind), so timing
 * costs no synchronisation in the steady state. One thread per timer.
 */
typedef struct ryr_gpu_timer ryr_gpu_timer_t;
int ryr_gpu_timer_create(ryr_gpu_timer_t **out);
int ryr_gpu_timer_start(ryr_gpu_timer_t *t, void *stream);
int ryr_gpu_timer_stop(ryr_gpu_timer_t *t, void *stream);
/* All the time measured so far, in seconds (waits for the work timed). */
int ryr_gpu_timer_seconds(ryr_gpu_timer_t *t, double *seconds);
void ryr_gpu_timer_destroy(ryr_gpu_timer_t *t);

#ifdef __cplusplus
}
#endif
#endif /* RYR_GPU_STAGES_H */
