/* The bookkeeping of an overlapped GPU pipeline: see pipeline_ring.h. */
#include "pipeline_ring.h"

#include <assert.h>
#include <string.h>

void utc__pring_init(utc__pring_t *r, unsigned depth, uint64_t count)
{
    memset(r, 0, sizeof *r);
    r->depth = depth;
    r->limit = count ? count : UINT64_MAX;
}

/* n + depth without wrapping (n is a count of items, far below the maximum). */
static uint64_t plus_depth(const utc__pring_t *r, uint64_t n)
{
    return n + r->depth;
}

bool utc__pring_may(const utc__pring_t *r, utc__pring_step_t step)
{
    const uint64_t *n = r->n;
    uint64_t j = n[step];
    switch (step) {
    case UTC__PRING_POST:
        /* depth 1 overlaps nothing: the next read waits for the last result's delivery */
        if (r->depth == 1 && j > n[UTC__PRING_RELEASE])
            return false;
        return j < r->limit && j < plus_depth(r, n[UTC__PRING_FREE_IN]) &&
               j < plus_depth(r, n[UTC__PRING_COMPUTE]);
    case UTC__PRING_ARRIVE:
        return j < n[UTC__PRING_POST] && j < r->limit;
    case UTC__PRING_LOAD:
        return j < n[UTC__PRING_ARRIVE] && j < plus_depth(r, n[UTC__PRING_COMPUTE]);
    case UTC__PRING_FREE_IN:
        return j < n[UTC__PRING_LOAD];
    case UTC__PRING_HAND:
        return j < n[UTC__PRING_LOAD] && j == n[UTC__PRING_COMPUTE];
    case UTC__PRING_COMPUTE:
        return j < n[UTC__PRING_HAND] && j < plus_depth(r, n[UTC__PRING_RELEASE]);
    case UTC__PRING_COPY_OUT:
        return j < n[UTC__PRING_COMPUTE];
    case UTC__PRING_DELIVER:
        return j < n[UTC__PRING_COPY_OUT];
    case UTC__PRING_RELEASE:
        return j < n[UTC__PRING_DELIVER];
    default:
        return false;
    }
}

uint64_t utc__pring_take(utc__pring_t *r, utc__pring_step_t step)
{
    assert(utc__pring_may(r, step));
    return r->n[step]++;
}

void utc__pring_end(utc__pring_t *r, uint64_t index)
{
    assert(index == r->n[UTC__PRING_ARRIVE]);
    if (index < r->limit)
        r->limit = index;
}

bool utc__pring_exhausted(const utc__pring_t *r)
{
    return r->n[UTC__PRING_HAND] >= r->limit;
}

bool utc__pring_drained(const utc__pring_t *r)
{
    return r->n[UTC__PRING_RELEASE] == r->n[UTC__PRING_HAND];
}
