/* cudahost: kernel launches. nvcc's stubs register each kernel of a binary when it loads
 * (__cudaRegisterFatBinary, __cudaRegisterFunction) and launch through
 * __cudaPushCallConfiguration / __cudaPopCallConfiguration and __cudaLaunchKernel (or
 * cudaLaunchKernel). A kernel that has a host version (kernels_*.c) runs it on its stream
 * with the arguments copied at the launch; any other launch fails with
 * cudaErrorInvalidDeviceFunction, named on stderr once per kernel. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cudahost.h"

/* ---- what the binaries registered ----------------------------------------------------- */

typedef struct ch_function {
    const void *host_fun; /* the stub's address: what launches name */
    char *mangled;
    const ch_kernel_t *impl; /* NULL: no host version */
    _Atomic bool told;       /* its missing host version was reported */
    struct ch_function *next;
} ch_function_t;

static pthread_mutex_t functions_mu = PTHREAD_MUTEX_INITIALIZER;
static ch_function_t *functions;

/* Reads "<length><identifier>" at *p: the identifier's start and length, *p moved past it;
 * false when *p holds no such name. */
static bool source_name(const char **p, const char **name, size_t *len)
{
    char *end;
    unsigned long n = strtoul(*p, &end, 10);
    if (end == *p || n == 0 || strnlen(end, n) < n)
        return false;
    *name = end;
    *len = n;
    *p = end + n;
    return true;
}

/* The kernel's own name and the mangled parameters after it, from an Itanium-mangled name:
 * "_Z[L]<len><name><params>" or "_Z[L]N<len><scope>...<len><name>E<params>". */
static bool split_mangled(const char *m, const char **name, size_t *len, const char **params)
{
    if (strncmp(m, "_Z", 2) != 0)
        return false;
    const char *p = m + 2;
    if (*p == 'L')
        p++;
    if (*p != 'N')
        return source_name(&p, name, len) && (*params = p, true);
    p++;
    while (*p && *p != 'E')
        if (!source_name(&p, name, len))
            return false;
    if (*p != 'E')
        return false;
    *params = p + 1;
    return true;
}

static const ch_kernel_t *host_version(const char *mangled)
{
    static const ch_kernel_t *const tables[] = {ch_kernels_tests, ch_kernels_ryr, ch_kernels_apps,
                                                ch_kernels_examples};
    const char *name, *params;
    size_t len;
    if (!split_mangled(mangled, &name, &len, &params))
        return NULL;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (const ch_kernel_t *k = tables[t]; k->name; k++)
            if (strlen(k->name) == len && strncmp(k->name, name, len) == 0 &&
                strcmp(k->params, params) == 0)
                return k;
    return NULL;
}

static ch_function_t *function_of(const void *host_fun)
{
    pthread_mutex_lock(&functions_mu);
    ch_function_t *f = functions;
    while (f && f->host_fun != host_fun)
        f = f->next;
    pthread_mutex_unlock(&functions_mu);
    return f;
}

CH_EXPORT void **__cudaRegisterFatBinary(void *fat_cubin)
{
    /* one handle per binary: its address is all the stubs keep */
    void **h = malloc(sizeof *h);
    if (!h) {
        fprintf(stderr, "cudahost: out of memory registering a binary's kernels\n");
        abort();
    }
    *h = fat_cubin;
    return h;
}

CH_EXPORT void __cudaRegisterFatBinaryEnd(void **handle)
{
    (void)handle;
}

CH_EXPORT void __cudaUnregisterFatBinary(void **handle)
{
    free(handle); /* the functions stay listed: a stub's address is never reused */
}

CH_EXPORT void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun,
                                      const char *device_name, int thread_limit, uint3 *tid,
                                      uint3 *bid, dim3 *bdim, dim3 *gdim, int *wsize)
{
    (void)handle, (void)device_fun, (void)thread_limit, (void)tid, (void)bid, (void)bdim;
    (void)gdim, (void)wsize;
    ch_function_t *f = calloc(1, sizeof *f);
    if (!f || !(f->mangled = strdup(device_name))) {
        fprintf(stderr, "cudahost: out of memory registering kernel %s\n", device_name);
        abort();
    }
    f->host_fun = host_fun;
    f->impl = host_version(device_name);
    if (f->impl && f->impl->nargs > CH_MAX_KERNEL_ARGS) {
        fprintf(stderr, "cudahost: the host version of %s has %u arguments (at most %d)\n",
                f->impl->name, f->impl->nargs, CH_MAX_KERNEL_ARGS);
        abort();
    }
    pthread_mutex_lock(&functions_mu);
    /* Two kernels of one binary (files apart, as "start_kernel" in two anonymous namespaces)
     * that match one host version cannot both be it: neither launches. */
    for (ch_function_t *o = functions; o && f->impl; o = o->next)
        if (o->impl == f->impl && strcmp(o->mangled, f->mangled) != 0) {
            fprintf(stderr,
                    "cudahost: kernels %s and %s both match the host version of %s: "
                    "neither will launch\n",
                    o->mangled, f->mangled, f->impl->name);
            o->impl = NULL;
            f->impl = NULL;
            atomic_store(&o->told, true);
            atomic_store(&f->told, true);
        }
    f->next = functions;
    functions = f;
    pthread_mutex_unlock(&functions_mu);
}

/* ---- the <<<grid, block, shared, stream>>> of each thread ------------------------------- */

typedef struct {
    dim3 grid, block;
    size_t shared;
    void *stream;
} ch_config_t;

#define CONFIG_DEPTH 8
static __thread ch_config_t configs[CONFIG_DEPTH];
static __thread unsigned nconfigs;

CH_EXPORT unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, void *stream)
{
    if (nconfigs == CONFIG_DEPTH) { /* nvcc's code skips the launch on a non-zero answer */
        (void)ch_fail(cudaErrorLaunchOutOfResources);
        return 1;
    }
    configs[nconfigs++] = (ch_config_t){grid, block, shared, stream};
    return 0;
}

CH_EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared,
                                                 void *stream)
{
    if (nconfigs == 0)
        return ch_fail(cudaErrorMissingConfiguration);
    ch_config_t c = configs[--nconfigs];
    *grid = c.grid;
    *block = c.block;
    *shared = c.shared;
    *(void **)stream = c.stream;
    return cudaSuccess;
}

/* ---- launches ----------------------------------------------------------------------------- */

typedef struct {
    const ch_kernel_t *k;
    int device; /* the launching thread's */
    dim3 grid, block;
    void *args[CH_MAX_KERNEL_ARGS];
    max_align_t bytes[]; /* the arguments' copies */
} ch_launch_t;

/* The device of the kernel this stream thread runs (ch_kernel_mem). */
static __thread int running_device;

static void run_launch(void *arg)
{
    ch_launch_t *l = arg;
    running_device = l->device;
    l->k->run(l->grid, l->block, l->args);
    free(l);
}

/* UTC_CUDAHOST_FAIL_LAUNCH=NAME (a kernel's name, as "mm_kernel"): every launch of that
 * kernel fails as CUDA fails one that asks for more registers than a block can have
 * (cudaErrorLaunchOutOfResources), so tests can see that a failed launch is reported. */
static bool refused(const ch_kernel_t *k)
{
    const char *name = getenv("UTC_CUDAHOST_FAIL_LAUNCH");
    return name && strcmp(name, k->name) == 0;
}

/* CUDA's limits on a launch's shape (compute capability 7.0 and later): cudaSuccess, or
 * the error CUDA 13 gives (an empty grid or block: cudaErrorInvalidValue, as on an H100;
 * past a limit: cudaErrorInvalidConfiguration). */
static cudaError_t shape_check(dim3 g, dim3 b, size_t shared)
{
    if (!g.x || !g.y || !g.z || !b.x || !b.y || !b.z)
        return cudaErrorInvalidValue;
    unsigned long long threads = (unsigned long long)b.x * b.y * b.z;
    bool ok = threads <= 1024 && b.x <= 1024 && b.y <= 1024 && b.z <= 64 && g.x <= 2147483647u &&
              g.y <= 65535 && g.z <= 65535 && shared <= 48 * 1024;
    return ok ? cudaSuccess : cudaErrorInvalidConfiguration;
}

static cudaError_t launch(ch_function_t *f, dim3 grid, dim3 block, void **args, size_t shared,
                          cudaStream_t stream)
{
    if (!f)
        return ch_fail(cudaErrorInvalidDeviceFunction);
    const ch_kernel_t *k = f->impl;
    if (!k) {
        if (!atomic_exchange(&f->told, true))
            fprintf(stderr,
                    "cudahost: kernel %s has no host version (tests/cudahost/kernels_*.c)\n",
                    f->mangled);
        return ch_fail(cudaErrorInvalidDeviceFunction);
    }
    cudaError_t shape = shape_check(grid, block, shared);
    if (shape != cudaSuccess)
        return ch_fail(shape);
    if (refused(k))
        return ch_fail(cudaErrorLaunchOutOfResources);
    if (k->nargs && !args)
        return ch_fail(cudaErrorInvalidValue);
    size_t total = 0, align = sizeof(max_align_t);
    for (unsigned i = 0; i < k->nargs; i++)
        total += (k->arg_size[i] + align - 1) / align * align;
    ch_launch_t *l = malloc(sizeof *l + total);
    if (!l)
        return ch_fail(cudaErrorMemoryAllocation);
    l->k = k;
    l->device = ch_current_device();
    l->grid = grid;
    l->block = block;
    char *at = (char *)l->bytes;
    for (unsigned i = 0; i < k->nargs; i++) {
        memcpy(at, args[i], k->arg_size[i]);
        l->args[i] = at;
        at += (k->arg_size[i] + align - 1) / align * align;
    }
    cudaError_t err = cudaLaunchHostFunc(stream, run_launch, l);
    if (err != cudaSuccess)
        free(l);
    return err;
}

CH_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *out, const void *host_fun)
{
    ch_function_t *f = function_of(host_fun);
    if (!out || !f)
        return ch_fail(cudaErrorInvalidDeviceFunction);
    *out = (cudaKernel_t)f;
    return cudaSuccess;
}

CH_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                                         size_t shared, cudaStream_t stream)
{
    return launch((ch_function_t *)kernel, grid, block, args, shared, stream);
}

/* Built with per-thread default streams: stream 0 is the thread's own. */
CH_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block,
                                              void **args, size_t shared, cudaStream_t stream)
{
    return launch((ch_function_t *)kernel, grid, block, args, shared,
                  stream ? stream : cudaStreamPerThread);
}

CH_EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
                                       size_t shared, cudaStream_t stream)
{
    return launch(function_of(func), grid, block, args, shared, stream);
}

/* ---- for the host versions ---------------------------------------------------------------- */

void *ch_kernel_mem(const void *p, size_t n)
{
    void *where = ch_kernel_view(p, n, running_device);
    if (!where && n) {
        fprintf(stderr,
                "cudahost: a kernel on device %d touched [%p, +%zu), which is not device "
                "memory of its device, pinned or managed memory it may reach (an illegal "
                "address on a GPU)\n",
                running_device, p, n);
        abort();
    }
    return where;
}

unsigned long long ch_kernel_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* system-wide: events shared by processes agree */
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

void ch_kernel_sleep_ns(unsigned long long ns)
{
    unsigned long long until = ch_kernel_clock_ns() + ns;
    for (unsigned long long now; (now = ch_kernel_clock_ns()) < until;) {
        unsigned long long left = until - now;
        struct timespec ts = {(time_t)(left / 1000000000ull), (long)(left % 1000000000ull)};
        nanosleep(&ts, NULL);
    }
}
