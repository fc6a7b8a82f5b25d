/*
 * GPU tasks with CUDA: device discovery, the task extension that gives every thread of a
 * GPU task a device and a stream, and the calling thread's accessors.
 *
 * One context per device: threads use the device's primary context (the CUDA runtime's
 * default), each with a non-blocking stream of its own, so kernels of several threads
 * and tasks on one device run at once.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "../gpu_module.h"
#include "gpu_cuda.h"
#include "observe/trace.h"
#include "base/sync.h"

/* The calling thread's GPU state: set by thread_start, cleared by thread_stop. */
static _Thread_local utc__gpu_thread_t *gpu_self;

utc_status_t utc__gpu_error(cudaError_t err, const char *fn, const char *call)
{
    (void)cudaGetLastError();
    return utc__error(UTC_ERR_GPU, "%s%s%s: %s (%s)", fn ? fn : "", fn ? ": " : "", call,
                      cudaGetErrorString(err), cudaGetErrorName(err));
}

utc__gpu_thread_t *utc__gpu_self(const char *fn)
{
    if (gpu_self || !fn)
        return gpu_self;
    utc_ctx_t *ctx = utc_ctx_self();
    if (ctx && utc_task_kind(ctx->task) == UTC_TASK_MIXED)
        (void)utc__error(UTC_ERR_NOT_MEMBER,
                         "%s: the calling thread is a CPU thread (local thread %d) of task '%s', "
                         "whose GPU threads are its first opts.gpu_threads threads on each rank "
                         "(call it from run_gpu, or where ctx->kind is UTC_TASK_GPU)",
                         fn, ctx->local_id, utc_task_name(ctx->task));
    else if (ctx)
        (void)utc__error(UTC_ERR_NOT_MEMBER,
                         "%s: the calling thread belongs to task '%s', which is not a GPU task "
                         "(create it with opts.kind = UTC_TASK_GPU, or UTC_TASK_MIXED)",
                         fn, utc_task_name(ctx->task));
    else
        (void)utc__error(UTC_ERR_NOT_MEMBER,
                         "%s: the calling thread is not a thread of a GPU task (call it from "
                         "the init, run or fini of a task created with kind UTC_TASK_GPU)",
                         fn);
    return NULL;
}

/*
 * CUDA's start-up, probed once per process: the device count, or the error that stands
 * for "no usable device" (no device, a driver older than the runtime, the stub library)
 * with CUDA's own text, kept so that every "0 devices" can say why.
 */
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probe_count;
static cudaError_t probe_err;
static char probe_why[320];

/* "13.0" from CUDA's 13000; "none" for 0 (no driver). */
static void cuda_version(int v, char *buf, size_t size)
{
    if (v <= 0)
        snprintf(buf, size, "none");
    else
        snprintf(buf, size, "%d.%d", v / 1000, v % 1000 / 10);
}

static void probe(void)
{
    int n = 0, drv = 0, rt = 0;
    probe_err = cudaGetDeviceCount(&n);
    (void)cudaGetLastError();
    probe_count = probe_err == cudaSuccess ? n : 0;
    if (probe_err == cudaSuccess && n > 0)
        return;
    (void)cudaDriverGetVersion(&drv);
    (void)cudaRuntimeGetVersion(&rt);
    (void)cudaGetLastError();
    char dv[16], rv[16];
    cuda_version(drv, dv, sizeof dv);
    cuda_version(rt, rv, sizeof rv);
    if (probe_err == cudaSuccess)
        snprintf(probe_why, sizeof probe_why,
                 "cudaGetDeviceCount found no device (driver %s, runtime %s)", dv, rv);
    else
        snprintf(probe_why, sizeof probe_why, "%s (%s; driver %s, runtime %s)",
                 cudaGetErrorString(probe_err), cudaGetErrorName(probe_err), dv, rv);
    utc_log(UTC_LOG_INFO, "no usable CUDA device: %s", probe_why);
}

/*
 * Count the visible devices. "No device" and "no usable driver" are a count of 0, with
 * CUDA's reason in *why (NULL when there are devices); other failures are errors.
 */
static utc_status_t device_count(int *count, const char **why)
{
    pthread_once(&probe_once, probe);
    *why = probe_err == cudaSuccess && probe_count > 0 ? NULL : probe_why;
    switch (probe_err) {
    case cudaSuccess:
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorStubLibrary:
        *count = probe_count;
        return UTC_OK;
    default:
        return utc__error(UTC_ERR_GPU, "cudaGetDeviceCount: %s", probe_why);
    }
}

const char *utc_gpu_unavailable_reason(void)
{
    int n;
    const char *why;
    (void)device_count(&n, &why);
    return why;
}

utc_status_t utc__gpu_wait_event(cudaEvent_t ev, const char *fn)
{
    /* Poll while UTC's back-off polls (spin, then yield: 200 us), then sleep in CUDA.
     * Waking from cudaEventSynchronize costs ~50 us (measured on an H100: 1-8 MiB pinned
     * copies took 50-55 us longer than CUDA's spinning wait with a 20 us poll), so copies
     * and kernels that end within the poll are seen at once; longer waits sleep. */
    utc__backoff_t backoff = UTC__BACKOFF_INIT;
    cudaError_t err;
    while ((err = cudaEventQuery(ev)) == cudaErrorNotReady && utc__backoff_polling(&backoff))
        utc__backoff_step(&backoff);
    if (err == cudaErrorNotReady)
        err = cudaEventSynchronize(ev); /* sleeps: the event has cudaEventBlockingSync */
    return err == cudaSuccess ? UTC_OK : utc__gpu_error(err, fn, "waiting for the GPU");
}

utc_status_t utc__gpu_wait_stream(utc__gpu_thread_t *self, const char *fn)
{
    cudaError_t err = cudaEventRecord(self->idle, self->stream);
    if (err != cudaSuccess)
        return utc__gpu_error(err, fn, "cudaEventRecord");
    return UTC__PROF_CALL(UTC__EV_GPU_SYNC, self->device, -1, -1, -1,
                          utc__gpu_wait_event(self->idle, fn));
}

int utc_gpu_supported(void) { return 1; }

int utc_gpu_device_count(void)
{
    utc_status_t rc = utc__check_init("utc_gpu_device_count");
    if (rc != UTC_OK)
        return rc;
    int n;
    const char *why;
    rc = device_count(&n, &why);
    return rc != UTC_OK ? (int)rc : n;
}

int utc_gpu_device(void)
{
    utc__gpu_thread_t *self = utc__gpu_self("utc_gpu_device");
    return self ? self->device : UTC_ERR_NOT_MEMBER;
}

void *utc_gpu_stream(void)
{
    utc__gpu_thread_t *self = utc__gpu_self("utc_gpu_stream");
    return self ? (void *)self->stream : NULL;
}

utc_status_t utc_gpu_synchronize(void)
{
    utc__gpu_thread_t *self = utc__gpu_self("utc_gpu_synchronize");
    if (!self)
        return UTC_ERR_NOT_MEMBER;
    return utc__gpu_wait_stream(self, "utc_gpu_synchronize");
}

utc_status_t utc_gpu_check(const char *what)
{
    cudaError_t err = cudaGetLastError();
    return err == cudaSuccess ? UTC_OK : utc__gpu_error(err, what ? what : "utc_gpu_check", "last CUDA error");
}

/* ---- the task extension ---- */

static utc_status_t check_options(const struct utc__task *t)
{
    const utc_task_options_t *o = &t->opts;
    const char *name = utc__text_name(t->ops->name);
    if ((int)o->mem_kind < UTC_MEM_PAGEABLE || (int)o->mem_kind > UTC_MEM_UNIFIED)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_task_create: GPU task '%s': mem_kind %d is not a utc_mem_kind_t",
                          name, (int)o->mem_kind);
    if (o->devices_len < 0 || (o->devices_len > 0 && !o->devices))
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_task_create: GPU task '%s': devices_len %d with devices %s", name,
                          o->devices_len, o->devices ? "set" : "NULL");
    for (int i = 0; i < o->devices_len; i++)
        if (o->devices[i] < 0)
            return utc__error(UTC_ERR_INVALID_ARG,
                              "utc_task_create: GPU task '%s': devices[%d] = %d is negative", name,
                              i, o->devices[i]);
    return UTC_OK;
}

static utc_status_t gpu_task_create(utc_task_t *task)
{
    struct utc__task *t = task->impl;
    if (t->opts.kind == UTC_TASK_CPU)
        return UTC_OK;
    utc_status_t rc = check_options(t);
    if (rc != UTC_OK || t->ngpu_local == 0)
        return rc;

    const char *name = utc__text_name(t->ops->name);
    int ndev;
    const char *why;
    rc = device_count(&ndev, &why);
    if (rc != UTC_OK)
        return rc;
    if (ndev == 0)
        return utc__error(UTC_ERR_NO_DEVICE,
                          "utc_task_create: task '%s' has %d GPU thread(s) on rank %d, but no "
                          "CUDA device is visible to this rank (%s)",
                          name, t->ngpu_local, utc_rank(), why ? why : "no device");
    for (int i = 0; i < t->opts.devices_len; i++)
        if (t->opts.devices[i] >= ndev)
            return utc__error(UTC_ERR_OUT_OF_RANGE,
                              "utc_task_create: GPU task '%s': devices[%d] = %d, but rank %d "
                              "sees %d device(s)",
                              name, i, t->opts.devices[i], utc_rank(), ndev);

    utc__gpu_task_t *g = calloc(1, sizeof *g);
    int *dev = calloc((size_t)t->ngpu_local, sizeof *dev); /* GPU threads come first */
    if (!g || !dev) {
        free(dev);
        free(g);
        return utc__error(UTC_ERR_NO_MEMORY, "utc_task_create: GPU task '%s': out of memory", name);
    }
    for (int i = 0; i < t->ngpu_local; i++)
        dev[i] = t->opts.devices_len > 0 ? t->opts.devices[i % t->opts.devices_len] : i % ndev;
    g->nlocal = t->ngpu_local;
    g->thread_device = dev;
    t->ext[UTC__EXT_GPU] = g;
    return UTC_OK;
}

static void gpu_task_destroy(utc_task_t *task)
{
    struct utc__task *t = task->impl;
    utc__gpu_task_t *g = t->ext[UTC__EXT_GPU];
    if (!g)
        return;
    free(g->thread_device);
    free(g);
    t->ext[UTC__EXT_GPU] = NULL;
}

static utc_status_t gpu_thread_start(utc_ctx_t *ctx)
{
    struct utc__task *t = ctx->task->impl;
    if (ctx->kind != UTC_TASK_GPU) /* CPU threads, of a mixed task too, get nothing GPU */
        return UTC_OK;
    utc__gpu_task_t *g = t->ext[UTC__EXT_GPU];
    if (!g || ctx->local_id < 0 || ctx->local_id >= g->nlocal)
        return utc__error(UTC_ERR_INTERNAL, "GPU task thread %d started without its device",
                          ctx->local_id);
    int device = g->thread_device[ctx->local_id];

    /* Makes the device's primary context current in this thread (creating it once). */
    cudaError_t err = cudaSetDevice(device);
    if (err != cudaSuccess)
        return utc__gpu_error(err, "GPU task thread start", "cudaSetDevice");
    utc__gpu_thread_t *self = calloc(1, sizeof *self);
    if (!self)
        return utc__error(UTC_ERR_NO_MEMORY, "GPU task thread start: out of memory");
    err = cudaStreamCreateWithFlags(&self->stream, cudaStreamNonBlocking);
    if (err != cudaSuccess) {
        free(self);
        return utc__gpu_error(err, "GPU task thread start", "cudaStreamCreateWithFlags");
    }
    err = cudaEventCreateWithFlags(&self->idle, UTC__GPU_EVENT_FLAGS);
    if (err != cudaSuccess) {
        (void)cudaStreamDestroy(self->stream);
        free(self);
        return utc__gpu_error(err, "GPU task thread start", "cudaEventCreateWithFlags");
    }
    self->ctx = ctx;
    self->device = device;
    ctx->impl->ext[UTC__EXT_GPU] = self;
    ctx->impl->gpu_device = device; /* for the conduits' device layer (utc__ctx_gpu) */
    utc__dev_mark_in_use();
    ctx->impl->gpu_stream = (void *)self->stream;
    gpu_self = self;
    return UTC_OK;
}

static void gpu_thread_stop(utc_ctx_t *ctx)
{
    if (ctx->kind != UTC_TASK_GPU)
        return;
    utc__gpu_thread_t *self = ctx->impl->ext[UTC__EXT_GPU];
    if (!self)
        return;
    /* Let queued work finish and report its error, which would otherwise be lost. */
    if (utc__gpu_wait_stream(self, "GPU task thread stop") != UTC_OK)
        utc_log(UTC_LOG_WARN, "GPU task '%s' thread %d: work left on its stream failed: %s",
                utc_task_name(ctx->task), ctx->local_id, utc_last_error());
    cudaError_t err = cudaEventDestroy(self->idle);
    if (err != cudaSuccess)
        utc_log(UTC_LOG_WARN, "GPU task '%s' thread %d: cudaEventDestroy: %s",
                utc_task_name(ctx->task), ctx->local_id, cudaGetErrorString(err));
    err = cudaStreamDestroy(self->stream);
    if (err != cudaSuccess)
        utc_log(UTC_LOG_WARN, "GPU task '%s' thread %d: cudaStreamDestroy: %s",
                utc_task_name(ctx->task), ctx->local_id, cudaGetErrorString(err));
    (void)cudaGetLastError();
    ctx->impl->ext[UTC__EXT_GPU] = NULL;
    ctx->impl->gpu_stream = NULL;
    if (gpu_self == self)
        gpu_self = NULL;
    free(self);
}

const utc__task_ext_t utc__gpu_ext = {
    .name = "gpu",
    .create = gpu_task_create,
    .destroy = gpu_task_destroy,
    .thread_start = gpu_thread_start,
    .thread_stop = gpu_thread_stop,
};
