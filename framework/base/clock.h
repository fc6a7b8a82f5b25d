/* The runtime's one clock: CLOCK_MONOTONIC in nanoseconds (utc_wtime reads the same). */
#ifndef UTC_BASE_CLOCK_H
#define UTC_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t utc__clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif /* UTC_BASE_CLOCK_H */
