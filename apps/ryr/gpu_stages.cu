// CUDA for the GPU-resident stages of the RYR sample (gpu_stages.h).
#include <cuda_runtime.h>
#include <stdlib.h>

#include <utc/gpu.h>
#include <utc/status.h>

#include "gpu_stages.h"

// The event pairs of a timer: enough that the GPU may run this many timed spans behind
// the host thread before a start waits.
#define TIMER_PAIRS 8

struct ryr_gpu_timer {
    cudaEvent_t start[TIMER_PAIRS], stop[TIMER_PAIRS];
    int next;       // the pair the next start records
    int pending;    // pairs recorded and not yet added, the oldest at next - pending
    double seconds; // time of the pairs added
};

static int check(cudaError_t err, const char *what)
{
    if (err == cudaSuccess)
        return UTC_OK;
    // CUDA's message (utc_gpu_check reads the error the call left); a failure all the same
    // should CUDA not have kept it as the last error
    int rc = utc_gpu_check(what);
    return rc != UTC_OK ? rc : UTC_ERR_GPU;
}

extern "C" int ryr_gpu_alloc(size_t bytes, void **out)
{
    *out = NULL;
    return check(cudaMalloc(out, bytes ? bytes : 1), "ryr: cudaMalloc of a stage's buffer");
}

extern "C" void ryr_gpu_free(void *dev)
{
    if (dev)
        (void)cudaFree(dev);
}

extern "C" int ryr_gpu_host_alloc(size_t bytes, void **out)
{
    *out = NULL;
    return check(cudaMallocHost(out, bytes ? bytes : 1),
                 "ryr: cudaMallocHost of the output's buffer");
}

extern "C" void ryr_gpu_host_free(void *host)
{
    if (host)
        (void)cudaFreeHost(host);
}

extern "C" int ryr_gpu_copy(void *dst, const void *src, size_t bytes, void *stream)
{
    return check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, (cudaStream_t)stream),
                 "ryr: cudaMemcpyAsync");
}

extern "C" int ryr_gpu_fill(void *dev, int byte, size_t bytes, void *stream)
{
    return check(cudaMemsetAsync(dev, byte, bytes, (cudaStream_t)stream), "ryr: cudaMemsetAsync");
}

extern "C" int ryr_gpu_timer_create(ryr_gpu_timer_t **out)
{
    ryr_gpu_timer_t *t = (ryr_gpu_timer_t *)calloc(1, sizeof *t);
    if (!t)
        return UTC_ERR_NO_MEMORY;
    int made = 0, rc = UTC_OK; // pairs made
    for (; made < TIMER_PAIRS; made++) {
        if ((rc = check(cudaEventCreate(&t->start[made]), "ryr: cudaEventCreate")) != UTC_OK)
            goto undo;
        if ((rc = check(cudaEventCreate(&t->stop[made]), "ryr: cudaEventCreate")) != UTC_OK) {
            (void)cudaEventDestroy(t->start[made]);
            goto undo;
        }
    }
    *out = t;
    return UTC_OK;
undo:
    while (made-- > 0) {
        (void)cudaEventDestroy(t->start[made]);
        (void)cudaEventDestroy(t->stop[made]);
    }
    free(t);
    return rc;
}

// Add the oldest recorded pair's time (waits for its stop event).
static int add_oldest(ryr_gpu_timer_t *t)
{
    int i = (t->next - t->pending + TIMER_PAIRS) % TIMER_PAIRS;
    float ms = 0;
    int rc = check(cudaEventSynchronize(t->stop[i]), "ryr: cudaEventSynchronize");
    if (rc == UTC_OK)
        rc = check(cudaEventElapsedTime(&ms, t->start[i], t->stop[i]), "ryr: cudaEventElapsedTime");
    t->pending--;
    t->seconds += ms * 1e-3;
    return rc;
}

extern "C" int ryr_gpu_timer_start(ryr_gpu_timer_t *t, void *stream)
{
    int rc;
    if (t->pending == TIMER_PAIRS && (rc = add_oldest(t)) != UTC_OK)
        return rc;
    return check(cudaEventRecord(t->start[t->next], (cudaStream_t)stream), "ryr: cudaEventRecord");
}

extern "C" int ryr_gpu_timer_stop(ryr_gpu_timer_t *t, void *stream)
{
    int rc = check(cudaEventRecord(t->stop[t->next], (cudaStream_t)stream), "ryr: cudaEventRecord");
    if (rc == UTC_OK) {
        t->next = (t->next + 1) % TIMER_PAIRS;
        t->pending++;
    }
    return rc;
}

extern "C" int ryr_gpu_timer_seconds(ryr_gpu_timer_t *t, double *seconds)
{
    int rc = UTC_OK;
    while (t->pending > 0 && rc == UTC_OK)
        rc = add_oldest(t);
    *seconds = t->seconds;
    return rc;
}

extern "C" void ryr_gpu_timer_destroy(ryr_gpu_timer_t *t)
{
    if (!t)
        return;
    for (int i = 0; i < TIMER_PAIRS; i++) {
        (void)cudaEventDestroy(t->start[i]);
        (void)cudaEventDestroy(t->stop[i]);
    }
    free(t);
}
