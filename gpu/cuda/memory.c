/*
 * Stream-ordered device memory for users (utc_gpu_malloc, utc_gpu_free): cudaMallocAsync
 * and cudaFreeAsync from the current device's default pool, on the calling GPU task
 * thread's stream. Each buffer is recorded in the framework's registry of users' device
 * allocations (context/dev_alloc.h), so a device conduit can check what an owned write
 * hands over and give its reader a buffer utc_gpu_free takes.
 */
#include <utc/gpu.h>

#include "gpu_cuda.h"

/* The stream and device of the caller: its own on a GPU task thread; a CPU thread works on
 * its per-thread stream and waits (*sync). */
static utc_status_t caller_stream(const char *fn, cudaStream_t *s, int *device, bool *sync)
{
    utc__gpu_thread_t *self = utc__gpu_self(NULL);
    if (self) {
        *s = self->stream;
        *device = self->device;
        *sync = false;
        return UTC_OK;
    }
    cudaError_t err = cudaGetDevice(device);
    if (err != cudaSuccess)
        return err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver
                   ? utc__error(UTC_ERR_NO_DEVICE, "%s: no CUDA device is usable here: %s", fn,
                                cudaGetErrorString(err))
                   : utc__gpu_error(err, fn, "cudaGetDevice");
    *s = cudaStreamPerThread;
    *sync = true;
    return UTC_OK;
}

utc_status_t utc_gpu_malloc(size_t size, void **out)
{
    static const char fn[] = "utc_gpu_malloc";
    if (!out)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: out (the output) is NULL", fn);
    if (size == 0) {
        *out = NULL;
        return UTC_OK;
    }
    cudaStream_t s;
    int device;
    bool sync;
    utc_status_t rc = caller_stream(fn, &s, &device, &sync);
    if (rc != UTC_OK)
        return rc;
    utc__dev_mark_in_use();
    void *p = NULL;
    cudaError_t err = cudaMallocAsync(&p, size, s);
    if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        return utc__error(UTC_ERR_NO_MEMORY, "%s: device %d is out of memory for %zu bytes", fn,
                          device, size);
    }
    if (err != cudaSuccess)
        return utc__gpu_error(err, fn, "cudaMallocAsync");
    if (sync && (err = cudaStreamSynchronize(s)) != cudaSuccess) {
        (void)cudaFreeAsync(p, s);
        return utc__gpu_error(err, fn, "cudaStreamSynchronize");
    }
    if ((rc = utc__dev_alloc_add(p, size, device)) != UTC_OK) {
        (void)cudaFreeAsync(p, s);
        return rc;
    }
    *out = p;
    return UTC_OK;
}

utc_status_t utc_gpu_free(void *ptr)
{
    static const char fn[] = "utc_gpu_free";
    if (!ptr)
        return UTC_OK;
    if (!utc__dev_alloc_find(ptr, NULL, NULL))
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s: %p is not a buffer of utc_gpu_malloc or "
                          "of utc_conduit_read_owned on a device conduit (or it was freed or "
                          "handed over already)",
                          fn, ptr);
    cudaStream_t s;
    int device;
    bool sync;
    utc_status_t rc = caller_stream(fn, &s, &device, &sync);
    if (rc != UTC_OK)
        return rc;
    if (!utc__dev_alloc_take(ptr, NULL, NULL))
        return utc__error(UTC_ERR_INVALID_ARG, "%s: %p was freed or handed over meanwhile", fn,
                          ptr);
    utc__dev_alloc_freeing(ptr);
    cudaError_t err = cudaFreeAsync(ptr, s);
    if (err == cudaSuccess && sync)
        err = cudaStreamSynchronize(s);
    return err == cudaSuccess ? UTC_OK : utc__gpu_error(err, fn, "cudaFreeAsync");
}
