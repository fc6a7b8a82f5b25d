/*
 * gshared core: the window allocator (core/allocator.c owns it). First fit over [0, size),
 * coalescing on free; deterministic, so every rank computes the same offsets. Knows nothing
 * of windows, tasks or objects. Not installed; tests/gshared uses it alone.
 */
#ifndef UTC_GSHARED_CORE_ALLOC_H
#define UTC_GSHARED_CORE_ALLOC_H

#include <stddef.h>

#include <utc/status.h>

/* Alignment of every object in the window: a cache line, so objects never share one and
 * 8-byte atomics are always aligned. */
#define UTC__GS_ALIGN ((size_t)64)

typedef struct utc__gs_extent {
    size_t off, len;
    struct utc__gs_extent *next;
} utc__gs_extent_t;

typedef struct utc__gs_alloc {
    size_t size;            /* bytes managed */
    size_t free_bytes;      /* sum of the free list */
    utc__gs_extent_t *free; /* free extents, sorted by offset, never adjacent */
} utc__gs_alloc_t;

/* Manage [0, size) rounded down to UTC__GS_ALIGN. UTC_ERR_NO_MEMORY (no message set). */
utc_status_t utc__gs_alloc_init(utc__gs_alloc_t *a, size_t size)
    __attribute__((warn_unused_result));
void utc__gs_alloc_fini(utc__gs_alloc_t *a);
/* Round a request up to the allocator's granule; 0 if it would overflow. */
size_t utc__gs_alloc_round(size_t bytes);
/* First fit: *off is the lowest free offset that fits `bytes` (a multiple of UTC__GS_ALIGN,
 * from utc__gs_alloc_round). Deterministic: the same sequence of calls gives the same
 * offsets on every rank. UTC_ERR_NO_MEMORY (no message set) when nothing fits. */
utc_status_t utc__gs_alloc_get(utc__gs_alloc_t *a, size_t bytes, size_t *off)
    __attribute__((warn_unused_result));
/* Give [off, off+bytes) back, merging with free neighbours. `spare` is a list node the
 * caller allocated with the object (so freeing never fails and ranks never diverge): it is
 * used or freed. */
void utc__gs_alloc_put(utc__gs_alloc_t *a, size_t off, size_t bytes, utc__gs_extent_t *spare);
/* Largest free extent, for error messages. */
size_t utc__gs_alloc_largest(const utc__gs_alloc_t *a);

#endif /* UTC_GSHARED_CORE_ALLOC_H */
