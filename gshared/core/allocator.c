/*
 * The window allocator: carves global shared data objects out of a task's RMA window.
 *
 * Offsets must agree on every rank without messages, so the allocator is deterministic:
 * first fit over a free list sorted by offset. Every rank makes the same calls in the same
 * order (objects are created and destroyed collectively), so every rank computes the same
 * offsets. Freed space is merged with its free neighbours so it can be reused whole.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/alloc.h"

utc_status_t utc__gs_alloc_init(utc__gs_alloc_t *a, size_t size)
{
    a->size = size - size % UTC__GS_ALIGN;
    a->free_bytes = 0;
    a->free = NULL;
    if (a->size == 0)
        return UTC_OK;
    a->free = malloc(sizeof *a->free);
    if (!a->free)
        return UTC_ERR_NO_MEMORY;
    *a->free = (utc__gs_extent_t){.off = 0, .len = a->size, .next = NULL};
    a->free_bytes = a->size;
    return UTC_OK;
}

void utc__gs_alloc_fini(utc__gs_alloc_t *a)
{
    utc__gs_extent_t *e = a->free;
    while (e) {
        utc__gs_extent_t *next = e->next;
        free(e);
        e = next;
    }
    a->free = NULL;
    a->free_bytes = 0;
}

size_t utc__gs_alloc_round(size_t bytes)
{
    if (bytes > SIZE_MAX - (UTC__GS_ALIGN - 1))
        return 0;
    return (bytes + UTC__GS_ALIGN - 1) / UTC__GS_ALIGN * UTC__GS_ALIGN;
}

utc_status_t utc__gs_alloc_get(utc__gs_alloc_t *a, size_t bytes, size_t *off)
{
    if (bytes == 0 || bytes % UTC__GS_ALIGN != 0)
        return UTC_ERR_INVALID_ARG;
    for (utc__gs_extent_t **link = &a->free; *link; link = &(*link)->next) {
        utc__gs_extent_t *e = *link;
        if (e->len < bytes)
            continue;
        *off = e->off;
        if (e->len == bytes) {
            *link = e->next;
            free(e);
        } else {
            e->off += bytes;
            e->len -= bytes;
        }
        a->free_bytes -= bytes;
        return UTC_OK;
    }
    return UTC_ERR_NO_MEMORY;
}

void utc__gs_alloc_put(utc__gs_alloc_t *a, size_t off, size_t bytes, utc__gs_extent_t *spare)
{
    utc__gs_extent_t *prev = NULL, *next = a->free;
    while (next && next->off < off) {
        prev = next;
        next = next->next;
    }
    bool join_prev = prev && prev->off + prev->len == off;
    bool join_next = next && off + bytes == next->off;
    if (join_prev && join_next) {
        prev->len += bytes + next->len;
        prev->next = next->next;
        free(next);
    } else if (join_prev) {
        prev->len += bytes;
    } else if (join_next) {
        next->off = off;
        next->len += bytes;
    } else {
        utc__gs_extent_t *e = spare;
        spare = NULL;
        *e = (utc__gs_extent_t){.off = off, .len = bytes, .next = next};
        if (prev)
            prev->next = e;
        else
            a->free = e;
    }
    a->free_bytes += bytes;
    free(spare);
}

size_t utc__gs_alloc_largest(const utc__gs_alloc_t *a)
{
    size_t largest = 0;
    for (const utc__gs_extent_t *e = a->free; e; e = e->next)
        if (e->len > largest)
            largest = e->len;
    return largest;
}
