/* cudahost: devices, versions, attributes, the default memory pools and the one driver
 * entry point UTC asks for (cuPointerGetAttributes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudahost.h"

#define MAX_DEVICES 8

static __thread int current = 0;

int ch_device_count(void)
{
    const char *s = getenv("UTC_CUDAHOST_DEVICES");
    int n = s ? atoi(s) : 1;
    return n < 0 ? 0 : n > MAX_DEVICES ? MAX_DEVICES : n;
}

int ch_current_device(void)
{
    return current;
}

CH_EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count)
        return ch_fail(cudaErrorInvalidValue);
    *count = ch_device_count();
    return *count ? cudaSuccess : ch_fail(cudaErrorNoDevice);
}

CH_EXPORT cudaError_t cudaGetDevice(int *device)
{
    if (!device)
        return ch_fail(cudaErrorInvalidValue);
    *device = current;
    return cudaSuccess;
}

CH_EXPORT cudaError_t cudaSetDevice(int device)
{
    if (device < 0 || device >= ch_device_count())
        return ch_fail(cudaErrorInvalidDevice);
    current = device;
    return cudaSuccess;
}

CH_EXPORT cudaError_t cudaDriverGetVersion(int *v)
{
    if (!v)
        return ch_fail(cudaErrorInvalidValue);
    *v = CUDART_VERSION;
    return cudaSuccess;
}

CH_EXPORT cudaError_t cudaRuntimeGetVersion(int *v)
{
    if (!v)
        return ch_fail(cudaErrorInvalidValue);
    *v = CUDART_VERSION;
    return cudaSuccess;
}

/* Named so that no figure printed beside it passes for a GPU's. */
CH_EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (!prop)
        return ch_fail(cudaErrorInvalidValue);
    if (device < 0 || device >= ch_device_count())
        return ch_fail(cudaErrorInvalidDevice);
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "cudahost %d (no GPU: host stand-in)", device);
    prop->multiProcessorCount = 1;
    prop->major = 9;
    prop->unifiedAddressing = 1;
    prop->concurrentManagedAccess = 1;
    prop->managedMemory = 1;
    return cudaSuccess;
}

CH_EXPORT cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    if (!value)
        return ch_fail(cudaErrorInvalidValue);
    if (device < 0 || device >= ch_device_count())
        return ch_fail(cudaErrorInvalidDevice);
    *value = attr == cudaDevAttrConcurrentManagedAccess || attr == cudaDevAttrUnifiedAddressing;
    return cudaSuccess;
}

CH_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
    ch_sync_all(false);
    return cudaSuccess;
}

/* ---- the default pools: one handle per device; what they hold is counted in memory.c -- */

static char pools[MAX_DEVICES];

CH_EXPORT cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int device)
{
    if (!pool)
        return ch_fail(cudaErrorInvalidValue);
    if (device < 0 || device >= ch_device_count())
        return ch_fail(cudaErrorInvalidDevice);
    *pool = (cudaMemPool_t)(void *)&pools[device];
    return cudaSuccess;
}

static bool is_pool(cudaMemPool_t pool)
{
    char *p = (char *)(void *)pool;
    return p >= pools && p < pools + MAX_DEVICES;
}

CH_EXPORT cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr,
                                              void *value)
{
    if (!is_pool(pool) || !value)
        return ch_fail(cudaErrorInvalidValue);
    switch (attr) {
    case cudaMemPoolAttrUsedMemCurrent:
    case cudaMemPoolAttrReservedMemCurrent:
        *(unsigned long long *)value = ch_pool_used();
        return cudaSuccess;
    default:
        return ch_fail(cudaErrorInvalidValue);
    }
}

CH_EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep)
{
    (void)keep;
    return is_pool(pool) ? cudaSuccess : ch_fail(cudaErrorInvalidValue);
}

/* ---- the driver's pointer attributes ------------------------------------------------- */

static CUresult pointer_attributes(unsigned int n, CUpointer_attribute *what, void **data,
                                   CUdeviceptr ptr)
{
    ch_alloc_t a;
    if (!what || !data)
        return CUDA_ERROR_INVALID_VALUE;
    if (!ch_lookup((const void *)(uintptr_t)ptr, &a))
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned int i = 0; i < n; i++) {
        switch (what[i]) {
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
            *(CUdeviceptr *)data[i] = (CUdeviceptr)(uintptr_t)a.base;
            break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
            *(size_t *)data[i] = a.size;
            break;
        case CU_POINTER_ATTRIBUTE_BUFFER_ID:
            *(unsigned long long *)data[i] = a.id;
            break;
        case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
            *(int *)data[i] = a.kind == CH_DEVICE;
            break;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
            *(int *)data[i] = a.device;
            break;
        default:
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return CUDA_SUCCESS;
}

CH_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn,
                                                       unsigned int version,
                                                       unsigned long long flags,
                                                       enum cudaDriverEntryPointQueryResult *q)
{
    (void)version;
    (void)flags;
    if (!symbol || !fn)
        return ch_fail(cudaErrorInvalidValue);
    bool known = strcmp(symbol, "cuPointerGetAttributes") == 0;
    *fn = known ? (void *)pointer_attributes : NULL;
    if (q)
        *q = known ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
    return cudaSuccess;
}
