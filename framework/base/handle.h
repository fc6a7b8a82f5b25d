/*
 * Base layer: handles that know when they are stale.
 *
 * An opaque handle (utc_conduit_t *, utc_request_t *) is the object's address with a
 * generation in its top 16 bits, which user-space addresses on x86-64 and AArch64 (48-bit
 * virtual addresses) leave zero. An object whose memory is reused for a new one gets a
 * new generation, so an old handle to the same address no longer matches it: the call
 * refuses it with UTC_ERR_INVALID_HANDLE instead of acting on the new object (as file
 * descriptor tables and Vulkan's validation layers do). A handle is never dereferenced as
 * it is: utc__handle_ptr first. The generation wraps after 65,536 reuses of one address.
 */
#ifndef UTC_BASE_HANDLE_H
#define UTC_BASE_HANDLE_H

#include <stdbool.h>
#include <stdint.h>

#define UTC__HANDLE_SHIFT 48
#define UTC__HANDLE_ADDR_MASK (((uintptr_t)1 << UTC__HANDLE_SHIFT) - 1)

/* The handle of the object at `p` in generation `gen`. */
static inline void *utc__handle_make(const void *p, uint16_t gen)
{
    return (void *)((uintptr_t)p | (uintptr_t)gen << UTC__HANDLE_SHIFT);
}

/* The object's address. */
static inline void *utc__handle_ptr(const void *h)
{
    return (void *)((uintptr_t)h & UTC__HANDLE_ADDR_MASK);
}

static inline uint16_t utc__handle_gen(const void *h)
{
    return (uint16_t)((uintptr_t)h >> UTC__HANDLE_SHIFT);
}

/* Whether an address can carry a generation (its top bits are free). */
static inline bool utc__handle_taggable(const void *p)
{
    return ((uintptr_t)p & ~UTC__HANDLE_ADDR_MASK) == 0;
}

#endif /* UTC_BASE_HANDLE_H */
