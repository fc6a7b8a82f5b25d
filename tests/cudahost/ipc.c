/* cudahost: CUDA IPC handles. A memory handle names the exporter's memfd
 * (/proc/PID/fd/N, checked by its name against the allocation's id); an event handle names
 * the memfd holding the event's counts. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cudahost.h"

#define MEM_MAGIC   0x4d454d48u /* "HMEM" */
#define EVENT_MAGIC 0x54564548u /* "HEVT" */

typedef struct handle {
    uint32_t magic;
    int32_t pid, fd;
    uint32_t pad;
    uint64_t size, id;
} handle_t;

_Static_assert(sizeof(handle_t) <= sizeof(cudaIpcMemHandle_t), "handle fits");
_Static_assert(sizeof(handle_t) <= sizeof(cudaIpcEventHandle_t), "handle fits");

CH_EXPORT cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *out, void *p)
{
    ch_alloc_t a;
    if (!out || !ch_lookup(p, &a) || a.kind != CH_DEVICE)
        return ch_fail(cudaErrorInvalidValue); /* stream-ordered memory included, as CUDA */
    handle_t h = {
        .magic = MEM_MAGIC, .pid = (int32_t)getpid(), .fd = a.fd, .size = a.size, .id = a.id};
    memset(out, 0, sizeof *out);
    memcpy(out, &h, sizeof h);
    return cudaSuccess;
}

CH_EXPORT cudaError_t cudaIpcOpenMemHandle(void **p, cudaIpcMemHandle_t in, unsigned int flags)
{
    (void)flags;
    handle_t h;
    memcpy(&h, &in, sizeof h);
    if (!p || h.magic != MEM_MAGIC)
        return ch_fail(cudaErrorInvalidValue);
    if (h.pid == (int32_t)getpid())
        return ch_fail(cudaErrorDeviceUninitialized); /* CUDA opens no handle of its own process */
    return ch_import(p, h.pid, h.fd, h.id, h.size);
}

CH_EXPORT cudaError_t cudaIpcCloseMemHandle(void *p)
{
    return ch_unimport(p);
}

CH_EXPORT cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t *out, cudaEvent_t e)
{
    if (!out || !e)
        return ch_fail(cudaErrorInvalidResourceHandle);
    if (!(e->flags & cudaEventInterprocess) || e->fd < 0)
        return ch_fail(cudaErrorInvalidResourceHandle);
    handle_t h = {.magic = EVENT_MAGIC, .pid = (int32_t)getpid(), .fd = e->fd, .id = e->id};
    memset(out, 0, sizeof *out);
    memcpy(out, &h, sizeof h);
    return cudaSuccess;
}

CH_EXPORT cudaError_t cudaIpcOpenEventHandle(cudaEvent_t *e, cudaIpcEventHandle_t in)
{
    handle_t h;
    memcpy(&h, &in, sizeof h);
    if (!e || h.magic != EVENT_MAGIC)
        return ch_fail(cudaErrorInvalidValue);
    char path[64], link[128], want[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)h.pid, (int)h.fd);
    snprintf(want, sizeof want, "/memfd:cudahost-event-%llu ", (unsigned long long)h.id);
    ssize_t len = readlink(path, link, sizeof link - 1);
    if (len < 0)
        return ch_fail(cudaErrorInvalidValue);
    link[len] = '\0';
    if (strncmp(link, want, strlen(want)) != 0)
        return ch_fail(cudaErrorInvalidValue); /* destroyed since: the number names another */
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return ch_fail(cudaErrorInvalidValue);
    return ch_event_new(e, cudaEventInterprocess | cudaEventDisableTiming, fd); /* takes fd */
}
