/* cudahost: the allocations CUDA knows (device, stream-ordered, imported, pinned, managed),
 * their bounds and attributes. Device kinds are a memfd mapped twice: no access where the
 * user looks, read-write where the copies work. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cudahost.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ch_alloc_t *allocs;
static unsigned long long next_id = 1;
static unsigned long long pool_used;
static unsigned long long device_used[64]; /* the device kinds' bytes made here, per device */

/* The bytes a device holds for this process (UTC_CUDAHOST_MEMORY, suffix M or G; default
 * 4G): an allocation past it fails as on a full GPU. */
static unsigned long long capacity(void)
{
    static unsigned long long v;
    if (!v) {
        const char *s = getenv("UTC_CUDAHOST_MEMORY");
        char *end = NULL;
        unsigned long long n = s ? strtoull(s, &end, 10) : 4;
        char unit = s && end ? *end : 'G';
        v = n << (unit == 'G' || unit == 'g' ? 30 : unit == 'M' || unit == 'm' ? 20 : 0);
        if (!v)
            v = 4ull << 30;
    }
    return v;
}

/* Every device allocation holds a descriptor: allow as many as the hard limit. */
__attribute__((constructor)) static void raise_fd_limit(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
        r.rlim_cur = r.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &r);
    }
}

static bool device_kind(ch_kind_t k)
{
    return k == CH_DEVICE || k == CH_POOL || k == CH_IMPORTED;
}

/* The allocation holding p (lock held). */
static ch_alloc_t *find(const void *p)
{
    const char *c = p;
    for (ch_alloc_t *a = allocs; a; a = a->next)
        if (c >= a->base && c < a->base + (a->size ? a->size : 1))
            return a;
    return NULL;
}

static size_t page_round(size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    return (n + pg - 1) / pg * pg;
}

/* Maps fd twice (no access; read-write) into a; false on failure (nothing left mapped). */
static bool map_twice(ch_alloc_t *a)
{
    a->base = mmap(NULL, a->mapped, PROT_NONE, MAP_SHARED, a->fd, 0);
    if (a->base == MAP_FAILED)
        return false;
    a->shadow = mmap(NULL, a->mapped, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd, 0);
    if (a->shadow == MAP_FAILED) {
        munmap(a->base, a->mapped);
        return false;
    }
    return true;
}

static void unmap(ch_alloc_t *a)
{
    munmap(a->base, a->mapped);
    if (device_kind(a->kind)) {
        munmap(a->shadow, a->mapped);
        close(a->fd);
    }
}

/* A record of `size` bytes of `kind` on the current device, with its id; not listed yet
 * (NULL: no memory). */
static ch_alloc_t *record_new(size_t size, ch_kind_t kind)
{
    ch_alloc_t *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->size = size;
    a->mapped = page_round(size);
    a->kind = kind;
    a->device = ch_current_device();
    a->fd = -1;
    pthread_mutex_lock(&lock);
    a->id = next_id++;
    pthread_mutex_unlock(&lock);
    return a;
}

/* a, mapped, joins the allocations CUDA knows. */
static void record_list(ch_alloc_t *a)
{
    pthread_mutex_lock(&lock);
    a->next = allocs;
    allocs = a;
    if (a->kind == CH_POOL)
        pool_used += a->size;
    pthread_mutex_unlock(&lock);
}

cudaError_t ch_alloc_device(void **out, size_t size, ch_kind_t kind)
{
    if (!out)
        return ch_fail(cudaErrorInvalidValue);
    *out = NULL;
    if (size == 0)
        return cudaSuccess;
    ch_alloc_t *a = record_new(size, kind);
    if (!a)
        return ch_fail(cudaErrorMemoryAllocation);
    pthread_mutex_lock(&lock);
    bool fits = device_used[a->device] + a->mapped <= capacity();
    if (fits)
        device_used[a->device] += a->mapped;
    pthread_mutex_unlock(&lock);
    if (!fits) {
        free(a);
        return ch_fail(cudaErrorMemoryAllocation);
    }
    char name[64];
    snprintf(name, sizeof name, "cudahost-%llu", a->id);
    a->fd = memfd_create(name, MFD_CLOEXEC);
    if (a->fd < 0 || ftruncate(a->fd, (off_t)a->mapped) != 0 || !map_twice(a)) {
        if (a->fd >= 0)
            close(a->fd);
        pthread_mutex_lock(&lock);
        device_used[a->device] -= a->mapped;
        pthread_mutex_unlock(&lock);
        free(a);
        return ch_fail(cudaErrorMemoryAllocation);
    }
    record_list(a);
    *out = a->base;
    return cudaSuccess;
}

cudaError_t ch_alloc_host(void **out, size_t size, ch_kind_t kind)
{
    if (!out)
        return ch_fail(cudaErrorInvalidValue);
    *out = NULL;
    if (size == 0)
        return cudaSuccess;
    /* mapped, not from the heap: a copy still queued when it is freed faults */
    ch_alloc_t *a = record_new(size, kind);
    void *p = a ? mmap(NULL, a->mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                : MAP_FAILED;
    if (p == MAP_FAILED) {
        free(a);
        return ch_fail(cudaErrorMemoryAllocation);
    }
    a->base = a->shadow = p;
    record_list(a);
    *out = p;
    return cudaSuccess;
}

/* Unlinks and returns the allocation starting at p whose kind `ok` accepts (lock held). */
static ch_alloc_t *unlink_at(const void *p, bool (*ok)(ch_kind_t))
{
    for (ch_alloc_t **l = &allocs; *l; l = &(*l)->next)
        if ((*l)->base == p) {
            ch_alloc_t *a = *l;
            if (!ok(a->kind))
                return NULL;
            *l = a->next;
            if (a->kind == CH_POOL)
                pool_used -= a->size;
            if (a->kind == CH_POOL || a->kind == CH_DEVICE)
                device_used[a->device] -= a->mapped;
            return a;
        }
    return NULL;
}

static bool freeable(ch_kind_t k)
{
    return k == CH_DEVICE || k == CH_POOL || k == CH_MANAGED;
}

static bool pinned(ch_kind_t k)
{
    return k == CH_PINNED;
}

cudaError_t ch_free_device(void *p)
{
    if (!p)
        return cudaSuccess;
    pthread_mutex_lock(&lock);
    ch_alloc_t *a = unlink_at(p, freeable);
    pthread_mutex_unlock(&lock);
    if (!a)
        return ch_fail(cudaErrorInvalidValue);
    unmap(a);
    free(a);
    return cudaSuccess;
}

bool ch_mark_freeing(void *p)
{
    pthread_mutex_lock(&lock);
    ch_alloc_t *a = find(p);
    bool ok =
        a && a->base == (char *)p && !a->freeing && (a->kind == CH_POOL || a->kind == CH_DEVICE);
    if (ok)
        a->freeing = true;
    pthread_mutex_unlock(&lock);
    return ok;
}

cudaError_t ch_resolve(const void *p, size_t n, void **where, int *kind)
{
    pthread_mutex_lock(&lock);
    ch_alloc_t *a = find(p);
    if (a && a->freeing) { /* cudaFreeAsync was called: any use after it is an error */
        pthread_mutex_unlock(&lock);
        return ch_fail(cudaErrorInvalidValue);
    }
    if (!a) {
        pthread_mutex_unlock(&lock);
        /* Pageable memory: CUDA cannot know its bounds (a range that runs into device
         * memory faults when the copy runs) */
        *where = (void *)p;
        *kind = -1;
        return p || !n ? cudaSuccess : ch_fail(cudaErrorInvalidValue);
    }
    size_t off = (size_t)((const char *)p - a->base);
    bool fits = n <= a->size - off;
    *where = a->shadow + off;
    *kind = (int)a->kind;
    pthread_mutex_unlock(&lock);
    return fits ? cudaSuccess : ch_fail(cudaErrorInvalidValue);
}

void *ch_kernel_view(const void *p, size_t n, int device)
{
    pthread_mutex_lock(&lock);
    ch_alloc_t *a = find(p);
    void *where = NULL;
    /* an allocation whose cudaFreeAsync is queued is still there for the work before it;
     * device memory is its device's alone (no peer access is ever enabled here) */
    bool reach = a && (a->kind == CH_PINNED || a->kind == CH_MANAGED || a->device == device);
    if (reach && n <= a->size - (size_t)((const char *)p - a->base))
        where = a->shadow + ((const char *)p - a->base);
    pthread_mutex_unlock(&lock);
    return where;
}

bool ch_lookup(const void *p, ch_alloc_t *out)
{
    pthread_mutex_lock(&lock);
    ch_alloc_t *a = find(p);
    if (a && a->freeing)
        a = NULL; /* freed as far as the caller may know */
    if (a)
        *out = *a;
    pthread_mutex_unlock(&lock);
    return a != NULL;
}

unsigned long long ch_pool_used(void)
{
    pthread_mutex_lock(&lock);
    unsigned long long u = pool_used;
    pthread_mutex_unlock(&lock);
    return u;
}

/* ---- IPC opens ----------------------------------------------------------------------- */

cudaError_t ch_import(void **out, pid_t pid, int fd, unsigned long long id, size_t size)
{
    pthread_mutex_lock(&lock);
    for (ch_alloc_t *a = allocs; a; a = a->next)
        if (a->kind == CH_IMPORTED && a->owner == pid && a->owner_id == id) {
            a->opens++;
            *out = a->base;
            pthread_mutex_unlock(&lock);
            return cudaSuccess;
        }
    pthread_mutex_unlock(&lock);

    char path[64], link[128], want[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fd);
    snprintf(want, sizeof want, "/memfd:cudahost-%llu ", id);
    ssize_t len = readlink(path, link, sizeof link - 1);
    if (len < 0)
        return ch_fail(cudaErrorInvalidValue); /* the exporter is gone, or never was */
    link[len] = '\0';
    if (strncmp(link, want, strlen(want)) != 0)
        return ch_fail(cudaErrorInvalidValue); /* freed since: the number names another */
    ch_alloc_t *a = record_new(size, CH_IMPORTED);
    if (!a)
        return ch_fail(cudaErrorMemoryAllocation);
    struct stat st;
    a->fd = open(path, O_RDWR | O_CLOEXEC);
    if (a->fd < 0 || fstat(a->fd, &st) != 0 || (size_t)st.st_size < a->mapped || !map_twice(a)) {
        if (a->fd >= 0)
            close(a->fd);
        free(a);
        return ch_fail(cudaErrorMapBufferObjectFailed);
    }
    a->owner = pid;
    a->owner_id = id;
    a->opens = 1;
    record_list(a);
    *out = a->base;
    return cudaSuccess;
}

static bool imported(ch_kind_t k)
{
    return k == CH_IMPORTED;
}

cudaError_t ch_unimport(void *p)
{
    pthread_mutex_lock(&lock);
    ch_alloc_t *a = NULL;
    for (ch_alloc_t *b = allocs; b; b = b->next)
        if (b->base == p && b->kind == CH_IMPORTED)
            a = b;
    if (!a) {
        pthread_mutex_unlock(&lock);
        return ch_fail(cudaErrorInvalidValue);
    }
    if (--a->opens > 0) {
        pthread_mutex_unlock(&lock);
        return cudaSuccess;
    }
    a = unlink_at(p, imported);
    pthread_mutex_unlock(&lock);
    unmap(a);
    free(a);
    return cudaSuccess;
}

/* ---- the runtime's allocation calls -------------------------------------------------- */

CH_EXPORT cudaError_t cudaMalloc(void **p, size_t size)
{
    return ch_alloc_device(p, size, CH_DEVICE);
}

CH_EXPORT cudaError_t cudaFree(void *p)
{
    if (!p)
        return cudaSuccess;
    ch_sync_all(false); /* cudaFree waits for the device */
    return ch_free_device(p);
}

CH_EXPORT cudaError_t cudaMallocHost(void **p, size_t size)
{
    return ch_alloc_host(p, size, CH_PINNED);
}

CH_EXPORT cudaError_t cudaHostAlloc(void **p, size_t size, unsigned int flags)
{
    (void)flags;
    return ch_alloc_host(p, size, CH_PINNED);
}

CH_EXPORT cudaError_t cudaFreeHost(void *p)
{
    if (!p)
        return cudaSuccess;
    ch_sync_all(false); /* as cudaFree: the device's work is over first */
    pthread_mutex_lock(&lock);
    ch_alloc_t *a = unlink_at(p, pinned);
    pthread_mutex_unlock(&lock);
    if (!a)
        return ch_fail(cudaErrorInvalidValue);
    unmap(a);
    free(a);
    return cudaSuccess;
}

CH_EXPORT cudaError_t cudaMallocManaged(void **p, size_t size, unsigned int flags)
{
    (void)flags;
    return ch_alloc_host(p, size, CH_MANAGED);
}

CH_EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attr, const void *p)
{
    if (!attr)
        return ch_fail(cudaErrorInvalidValue);
    memset(attr, 0, sizeof *attr);
    ch_alloc_t a;
    if (!ch_lookup(p, &a)) {
        attr->type = cudaMemoryTypeUnregistered;
        attr->device = -2;
        return cudaSuccess;
    }
    attr->device = a.device;
    switch (a.kind) {
    case CH_PINNED:
        attr->type = cudaMemoryTypeHost;
        attr->hostPointer = (void *)p;
        attr->devicePointer = (void *)p;
        break;
    case CH_MANAGED:
        attr->type = cudaMemoryTypeManaged;
        attr->hostPointer = (void *)p;
        attr->devicePointer = (void *)p;
        break;
    default:
        attr->type = cudaMemoryTypeDevice;
        attr->devicePointer = (void *)p;
        break;
    }
    return cudaSuccess;
}
