/* Device conduits: helpers of the device layer's files (see device_util.h). */
#include "device_util.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/errors.h"

utc_status_t utc__device_cuda_error(cudaError_t err, const char *call)
{
    (void)cudaGetLastError();
    const char *name = cudaGetErrorName(err);
    return utc__error(UTC_ERR_GPU, "device conduit: %s: %s (%s)", call, cudaGetErrorString(err),
                      name ? name : "unknown CUDA error");
}

utc_status_t utc__device_env_size(const char *name, size_t min, size_t max, size_t dflt,
                                  size_t *out)
{
    const char *v = getenv(name);
    if (!v || !*v) {
        *out = dflt;
        return UTC_OK;
    }
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10;
    else if (*end == 'M' || *end == 'm')
        shift = 20;
    else if (*end == 'G' || *end == 'g')
        shift = 30;
    if (shift)
        end++;
    /* strtoull takes a sign: "-1" would wrap to a huge count */
    bool ok =
        end != v && !*end && errno == 0 && v[0] >= '0' && v[0] <= '9' && n <= (SIZE_MAX >> shift);
    if (ok)
        n <<= shift;
    if (!ok || n < min || n > max)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "%s=\"%s\": expected a count from %zu to %zu (K, M and G suffixes "
                          "allowed, powers of 1024), or unset for %zu",
                          name, v, min, max, dflt);
    *out = (size_t)n;
    return UTC_OK;
}
