/* Device conduits: the staged pipeline's bookkeeping (see chunk_plan.h). */
#include "chunk_plan.h"

#include <assert.h>

void utc__chunk_plan_init(utc__chunk_plan_t *p, size_t size, size_t chunk, unsigned depth)
{
    assert(chunk >= 1 && depth >= 1);
    *p = (utc__chunk_plan_t){.size = size, .chunk = chunk, .depth = depth};
    p->nchunks = size / chunk + (size % chunk != 0);
}

bool utc__chunk_plan_may(const utc__chunk_plan_t *p, utc__chunk_step_t step)
{
    if (step == UTC__CHUNK_IN_START) {
        uint64_t k = p->n[UTC__CHUNK_IN_START];
        /* the slot's previous chunk, depth places earlier, must have left it */
        return k < p->nchunks && (k < p->depth || p->n[UTC__CHUNK_OUT_DONE] > k - p->depth);
    }
    if (step > UTC__CHUNK_IN_START && step < UTC__CHUNK_STEPS)
        return p->n[step - 1] > p->n[step];
    return false;
}

uint64_t utc__chunk_plan_take(utc__chunk_plan_t *p, utc__chunk_step_t step)
{
    assert(utc__chunk_plan_may(p, step));
    return p->n[step]++;
}

bool utc__chunk_plan_done(const utc__chunk_plan_t *p, bool need_out_done)
{
    return p->n[need_out_done ? UTC__CHUNK_OUT_DONE : UTC__CHUNK_OUT_START] == p->nchunks;
}

utc__chunk_step_t utc__chunk_plan_next(const utc__chunk_plan_t *p, bool need_out_done)
{
    if (utc__chunk_plan_done(p, need_out_done))
        return UTC__CHUNK_NONE;
    if (utc__chunk_plan_may(p, UTC__CHUNK_IN_START))
        return UTC__CHUNK_IN_START;
    if (utc__chunk_plan_may(p, UTC__CHUNK_OUT_START))
        return UTC__CHUNK_OUT_START;
    uint64_t in_copy = p->n[UTC__CHUNK_IN_START] - p->n[UTC__CHUNK_IN_DONE];
    uint64_t in_out = p->n[UTC__CHUNK_OUT_START] - p->n[UTC__CHUNK_OUT_DONE];
    /* Keep depth - 1 chunks (at least one) in their out steps, so that the next transfer
     * is posted while the one before it runs; past that, free the oldest slot. */
    uint64_t keep_out = p->depth > 1 ? p->depth - 1 : 1;
    if (in_copy > 0 && in_out < keep_out)
        return UTC__CHUNK_IN_DONE;
    if (in_out > 0)
        return UTC__CHUNK_OUT_DONE;
    /* unreachable while the counters obey the guards: nothing in out, nothing startable
     * and a chunk left means one is in copy */
    return in_copy > 0 ? UTC__CHUNK_IN_DONE : UTC__CHUNK_NONE;
}

void utc__chunk_plan_span(const utc__chunk_plan_t *p, uint64_t index, size_t *offset, size_t *len)
{
    assert(index < p->nchunks);
    size_t off = (size_t)index * p->chunk;
    size_t left = p->size - off;
    *offset = off;
    *len = left < p->chunk ? left : p->chunk;
}
