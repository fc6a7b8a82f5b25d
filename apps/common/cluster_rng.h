/*
 * Counter-based random numbers for the cluster apps: value i of stream `key` is a hash of
 * (key, i) (SplitMix64's output function over its counter), so any thread can draw any
 * sample with no state and the data does not depend on how the work is split.
 */
#ifndef UTC_APPS_CLUSTER_RNG_H
#define UTC_APPS_CLUSTER_RNG_H

#include <stdint.h>

#include "capp_hd.h"

#define CAPP_GOLDEN UINT64_C(0x9E3779B97F4A7C15)

/* SplitMix64's finalizer: a bijective 64-bit mix. */
static inline CAPP_HD uint64_t capp_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Key of stream `stream` for a run seeded with `seed` (streams: one per kind of data). */
static inline CAPP_HD uint64_t capp_stream(uint64_t seed, uint64_t stream)
{
    return capp_mix64(seed ^ capp_mix64(stream + CAPP_GOLDEN));
}

/* Value i of the stream with key `key`: SplitMix64's i-th output. */
static inline CAPP_HD uint64_t capp_rand(uint64_t key, uint64_t i)
{
    return capp_mix64(key + (i + 1) * CAPP_GOLDEN);
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline CAPP_HD double capp_unit(uint64_t key, uint64_t i)
{
    return (double)(capp_rand(key, i) >> 11) * 0x1p-53;
}

/* Uniform float in [0, 1) with 24 random bits. */
static inline CAPP_HD float capp_unitf(uint64_t key, uint64_t i)
{
    return (float)(capp_rand(key, i) >> 40) * 0x1p-24f;
}

#endif /* UTC_APPS_CLUSTER_RNG_H */
