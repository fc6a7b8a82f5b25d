/*
 * gshared data: global shared data objects (data/gdata.c owns them): the object, its
 * collective create and destroy in the task's window, the handle checks every access makes,
 * and local access to this rank's part. Built on core/ (the task's window and allocator);
 * ops/ builds on it.
 */
#ifndef UTC_GSHARED_DATA_GDATA_H
#define UTC_GSHARED_DATA_GDATA_H

#include <stddef.h>
#include <stdint.h>

#include <utc/gshared.h>

#include "core/window.h"

#define UTC__GDATA_MAGIC 0x67646174u /* "gdat" */

struct utc_gdata {
    uint32_t magic; /* UTC__GDATA_MAGIC while alive */
    utc_task_t *task;
    utc__gs_task_t *gs;
    MPI_Win win;
    char *local;   /* this rank's part: gs->base + offset */
    size_t offset; /* byte displacement of the part in every rank's window */
    size_t elem_size, count;
    size_t bytes; /* space taken in the window (rounded) */
    int nranks, rank;
    int world_rank; /* this process's rank in the world (what waits name, base/wait_hook.h) */
    struct utc_gdata *next;  /* in gs->objects */
    utc__gs_extent_t *spare; /* free-list node for when the space is given back */
};

/* Out-of-line half of utc__gdata_check: says what is wrong (last error) and returns it. */
utc_status_t utc__gdata_check_fail(const utc_gdata_t *gd, const char *fn);

/* Validate a handle and the calling thread; on failure sets the last error naming `fn`.
 * Inline: it runs before every access. */
static inline utc_status_t utc__gdata_check(const utc_gdata_t *gd, const char *fn)
{
    if (gd && gd->magic == UTC__GDATA_MAGIC && utc__gs_in_task(gd->task))
        return UTC_OK;
    return utc__gdata_check_fail(gd, fn);
}

/* Check that elements start .. start+n-1 exist (n >= 1 for single elements). */
static inline utc_status_t utc__gdata_check_range(const utc_gdata_t *gd, size_t start, size_t n,
                                                  const char *fn)
{
    if (start < gd->count && n <= gd->count - start)
        return UTC_OK;
    return utc__error(UTC_ERR_OUT_OF_RANGE,
                      "%s: elements %zu .. %zu (n = %zu) out of range: the object has %zu "
                      "elements on each rank",
                      fn, start, start + n - 1, n, gd->count);
}

/* Check a block access of n elements from `start` with buffer `buf` (the handle checked
 * already): an empty block within the object is fine with any buffer; otherwise the
 * elements must exist and buf must not be NULL. Local and remote access share it. */
static inline utc_status_t utc__gdata_check_block(const utc_gdata_t *gd, size_t start, size_t n,
                                                  const void *buf, const char *fn)
{
    if (n == 0 && start <= gd->count)
        return UTC_OK;
    utc_status_t rc = utc__gdata_check_range(gd, start, n, fn);
    if (rc != UTC_OK)
        return rc;
    if (!buf)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: the buffer is NULL", fn);
    return UTC_OK;
}

/* Free every object still alive in gs (at task destroy, from one thread). */
void utc__gdata_free_all(utc__gs_task_t *gs);

#endif /* UTC_GSHARED_DATA_GDATA_H */
