/*
 * The bookkeeping of an overlapped GPU pipeline (utc_gpu_pipeline_t), apart from CUDA so
 * that it can be tested without a device.
 *
 * Every item goes through the same steps, in this order, each counted by a monotonic
 * counter (n[step] items have taken it; item j lives in slot j % depth):
 *
 *   POST     the conduit read into the slot's pinned input staging is started
 *   ARRIVE   that read has completed
 *   LOAD     the host-to-device copy into the slot's device input is queued
 *   FREE_IN  that copy has completed: the input staging may take the next read
 *   HAND     the item is given to the caller's kernel (utc_gpu_pipeline_next)
 *   COMPUTE  the kernel is queued (utc_gpu_pipeline_done) and so is the copy back
 *   COPY_OUT the copy back (or, without results, the kernel) has completed
 *   DELIVER  the result is written to the output conduit or given to the callback
 *   RELEASE  that write has completed: the output staging may take the next result
 *
 * utc__pring_may() says whether the next item may take a step: the step before it is
 * done for that item, and the slot's buffer the step fills is no longer used by the item
 * depth places earlier. These guards are the whole safety argument of the ring:
 * - POST j:    j < limit; FREE_IN of j - depth (input staging free); and at most depth
 *              items read beyond those passed to COMPUTE (depth 1: none before the
 *              last result is released, so nothing overlaps);
 * - LOAD j:    COMPUTE of j - depth happened, so the copy can be queued after that
 *              kernel's event (the device input is then free on the GPU's timeline);
 * - HAND j:    loaded, and the previous item passed COMPUTE (one item out at a time);
 *              its kernel waits on the copy-back event of j - depth (device output free),
 *              which COMPUTE of j - depth recorded;
 * - COMPUTE j: RELEASE of j - depth (the output staging that the copy back fills is free).
 * Each step is taken for items in order. Not thread-safe: one thread owns a pipeline.
 */
#ifndef UTC_GPU_PIPELINE_RING_H
#define UTC_GPU_PIPELINE_RING_H

#include <stdbool.h>
#include <stdint.h>

typedef enum utc__pring_step {
    UTC__PRING_POST,
    UTC__PRING_ARRIVE,
    UTC__PRING_LOAD,
    UTC__PRING_FREE_IN,
    UTC__PRING_HAND,
    UTC__PRING_COMPUTE,
    UTC__PRING_COPY_OUT,
    UTC__PRING_DELIVER,
    UTC__PRING_RELEASE,
    UTC__PRING_STEPS
} utc__pring_step_t;

typedef struct utc__pring {
    unsigned depth;
    uint64_t limit;               /* items in the stream; UINT64_MAX while unknown */
    uint64_t n[UTC__PRING_STEPS]; /* items that have taken each step */
} utc__pring_t;

/* A ring of `depth` (>= 1) slots for `count` items (0: until utc__pring_end). */
void utc__pring_init(utc__pring_t *r, unsigned depth, uint64_t count);

/* Whether the next item may take `step` now. */
bool utc__pring_may(const utc__pring_t *r, utc__pring_step_t step);

/* The index of the next item to take `step` (n[step]). */
static inline uint64_t utc__pring_next(const utc__pring_t *r, utc__pring_step_t step)
{
    return r->n[step];
}

/* The slot of item `index`. */
static inline unsigned utc__pring_slot(const utc__pring_t *r, uint64_t index)
{
    return (unsigned)(index % r->depth);
}

/* The next item takes `step` (utc__pring_may must be true); returns that item's index. */
uint64_t utc__pring_take(utc__pring_t *r, utc__pring_step_t step);

/*
 * The stream ends before item `index` (the read of item `index`, the next to arrive,
 * found the stream closed): the limit becomes `index`. Reads posted beyond it stay counted
 * in n[POST]; the owner cancels them.
 */
void utc__pring_end(utc__pring_t *r, uint64_t index);

/* Every item of the stream was handed out (the limit is known and reached). */
bool utc__pring_exhausted(const utc__pring_t *r);

/* Every result of the items handed out so far was delivered and released. */
bool utc__pring_drained(const utc__pring_t *r);

#endif /* UTC_GPU_PIPELINE_RING_H */
