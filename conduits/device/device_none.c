/*
 * Device conduits in a build without CUDA: creation refuses them (UTC_ERR_NO_GPU_SUPPORT,
 * on every rank alike), and the checks the conduit makes of buffers find no device
 * memory.
 */
#include "utc_internal.h"
#include "service/transport.h"

utc_status_t utc__device_available(void)
{
    return utc__error(UTC_ERR_NO_GPU_SUPPORT,
                      "utc_conduit_create: a device conduit "
                      "(.memory = UTC_CONDUIT_MEM_DEVICE) needs UTC built with CUDA, and this "
                      "build has no GPU support (configure with a CUDA toolkit and "
                      "UTC_WITH_CUDA=ON)");
}

utc_status_t utc__device_transport_create(utc__transport_t *inner,
                                          const utc__transport_args_t *args, utc__transport_t **out)
{
    (void)inner;
    (void)out;
    return utc__error(UTC_ERR_NO_GPU_SUPPORT, "conduit %d: no GPU support in this build",
                      args->conduit_id);
}

const char *utc__device_path(utc__transport_t *tp, int peer)
{
    (void)tp;
    (void)peer;
    return "none";
}

utc_status_t utc__device_check_buffer(const char *fn, int conduit_id, const void *buf, size_t size,
                                      bool send, bool owned)
{
    (void)fn;
    (void)conduit_id;
    (void)buf;
    (void)size;
    (void)send;
    (void)owned;
    return UTC_OK;
}

bool utc__device_pointer(const void *p)
{
    (void)p;
    return false;
}

utc_status_t utc__device_fence_take(int conduit_id, void **fence)
{
    (void)conduit_id;
    *fence = NULL;
    return UTC_OK;
}

utc_status_t utc__device_fence_wait(int conduit_id, void *fence)
{
    (void)conduit_id;
    (void)fence;
    return UTC_OK;
}

void utc__device_fence_drop(void *fence)
{
    (void)fence;
}

void utc__device_finalize(void) {}
