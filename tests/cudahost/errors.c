/* cudahost: the last error of each thread, and the names CUDA gives its errors. */
#include "cudahost.h"

static __thread cudaError_t last_error = cudaSuccess;

cudaError_t ch_fail(cudaError_t err)
{
    if (err != cudaSuccess && err != cudaErrorNotReady)
        last_error = err;
    return err;
}

CH_EXPORT cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

CH_EXPORT cudaError_t cudaPeekAtLastError(void)
{
    return last_error;
}

static const struct {
    cudaError_t err;
    const char *name, *text;
} names[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMissingConfiguration, "cudaErrorMissingConfiguration",
     "__global__ function call is not configured"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration",
     "invalid configuration argument"},
    {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection",
     "invalid copy direction for memcpy"},
    {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources",
     "too many resources requested for launch"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorDeviceUninitialized, "cudaErrorDeviceUninitialized", "invalid device context"},
    {cudaErrorMapBufferObjectFailed, "cudaErrorMapBufferObjectFailed",
     "mapping of buffer object failed"},
    {cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

CH_EXPORT const char *cudaGetErrorName(cudaError_t err)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].err == err)
            return names[i].name;
    return "cudaErrorUnknown";
}

CH_EXPORT const char *cudaGetErrorString(cudaError_t err)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].err == err)
            return names[i].text;
    return "unrecognized error code";
}
