/* Device conduits: helpers of the device layer's files (compiled only with UTC_WITH_CUDA):
 * CUDA errors as statuses, and the layer's size settings from the environment. */
#ifndef UTC_CONDUITS_DEVICE_UTIL_H
#define UTC_CONDUITS_DEVICE_UTIL_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include <utc/status.h>

/* UTC_ERR_GPU with the message "device conduit: CALL: CUDA's string (its name)"; clears
 * the thread's CUDA last error (a sticky error stays, as CUDA intends). */
utc_status_t utc__device_cuda_error(cudaError_t err, const char *call);

/*
 * *out = env `name` (a decimal count, or bytes with an optional K, M or G suffix: powers
 * of 1024), which must lie in [min, max]; `dflt` when unset or empty.
 * @return UTC_OK; UTC_ERR_INVALID_ARG naming the variable, its value and the bounds.
 */
utc_status_t utc__device_env_size(const char *name, size_t min, size_t max, size_t dflt,
                                  size_t *out) __attribute__((warn_unused_result));

#endif /* UTC_CONDUITS_DEVICE_UTIL_H */
