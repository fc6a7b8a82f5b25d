/*
 * Device conduits: the bookkeeping of the staged pipeline (staged.c), apart from CUDA so
 * that it is tested without a device (tests/conduits/test_chunk_plan.c).
 *
 * A message of `size` bytes goes in chunks of `chunk` bytes (the last one shorter; none
 * for size 0) through a ring of `depth` slots (chunk k lives in slot k % depth). Every
 * chunk takes four steps, in this order, each counted by a monotonic counter (n[step]
 * chunks have taken it; each step is taken for chunks in order):
 *
 *                  send (device source)          receive (device destination)
 *   IN_START       D2H into the slot queued      irecv into the slot posted
 *   IN_DONE        that D2H completed            that irecv completed
 *   OUT_START      isend from the slot posted    H2D from the slot queued
 *   OUT_DONE       that isend completed          that H2D completed: the slot is free
 *
 * (A host side has no copy: its "slot" is the user's buffer; the copy steps are taken at
 * once and the plan is the same.)
 *
 * Guards (utc__chunk_plan_may): IN_START of chunk k needs k < nchunks and OUT_DONE of
 * chunk k - depth (its slot free); each other step needs the step before it taken for
 * that chunk. utc__chunk_plan_next picks the step to take next so that the transport
 * always has a transfer posted while the copy engine fills or drains the next slot.
 * Not thread-safe: one thread owns a plan.
 */
#ifndef UTC_CONDUITS_DEVICE_CHUNK_PLAN_H
#define UTC_CONDUITS_DEVICE_CHUNK_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum utc__chunk_step {
    UTC__CHUNK_IN_START,
    UTC__CHUNK_IN_DONE,
    UTC__CHUNK_OUT_START,
    UTC__CHUNK_OUT_DONE,
    UTC__CHUNK_STEPS,
    UTC__CHUNK_NONE = UTC__CHUNK_STEPS /* utc__chunk_plan_next: nothing left to take */
} utc__chunk_step_t;

typedef struct utc__chunk_plan {
    size_t size;                  /* the message's bytes */
    size_t chunk;                 /* bytes per chunk (>= 1) */
    unsigned depth;               /* slots (>= 1) */
    uint64_t nchunks;             /* ceil(size / chunk) */
    uint64_t n[UTC__CHUNK_STEPS]; /* chunks that have taken each step */
} utc__chunk_plan_t;

/* A plan for `size` bytes in chunks of `chunk` (>= 1) through `depth` (>= 1) slots. */
void utc__chunk_plan_init(utc__chunk_plan_t *p, size_t size, size_t chunk, unsigned depth);

/* Whether the next chunk may take `step` now. */
bool utc__chunk_plan_may(const utc__chunk_plan_t *p, utc__chunk_step_t step);

/* The next chunk takes `step` (utc__chunk_plan_may must be true); returns its index. */
uint64_t utc__chunk_plan_take(utc__chunk_plan_t *p, utc__chunk_step_t step);

/*
 * The step to take next, or UTC__CHUNK_NONE when utc__chunk_plan_done(p, need_out_done).
 * Starts first (they do not block): every IN_START the slots allow, then the OUT_START of
 * a chunk whose IN_DONE is taken. Then the one blocking step: IN_DONE of the oldest chunk
 * in copy while fewer than depth - 1 chunks (at least one) are in their OUT steps, else
 * OUT_DONE of the oldest one. need_out_done false (the receive): the trailing OUT_DONE
 * steps are left (the last H2Ds stay queued; the slot's event is waited on at its next
 * use), so NONE once every chunk took OUT_START.
 */
utc__chunk_step_t utc__chunk_plan_next(const utc__chunk_plan_t *p, bool need_out_done);

/* Every chunk took OUT_DONE (need_out_done), or OUT_START (not). */
bool utc__chunk_plan_done(const utc__chunk_plan_t *p, bool need_out_done);

/* The slot of chunk `index`. */
static inline unsigned utc__chunk_plan_slot(const utc__chunk_plan_t *p, uint64_t index)
{
    return (unsigned)(index % p->depth);
}

/* The byte offset and length of chunk `index` (< nchunks) in the message. */
void utc__chunk_plan_span(const utc__chunk_plan_t *p, uint64_t index, size_t *offset, size_t *len);

#endif /* UTC_CONDUITS_DEVICE_CHUNK_PLAN_H */
