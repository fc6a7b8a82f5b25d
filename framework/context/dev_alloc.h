/*
 * Device allocations that belong to UTC's users: the buffers of utc_gpu_malloc and the
 * ones utc_conduit_read_owned gives out on a device conduit. A registry of addresses and
 * sizes only (no CUDA here): the gpu module adds and takes them (utc_gpu_malloc/free), the
 * conduits' device layer takes one an owned write hands over and adds the one an owned
 * read gives out, so each module checks what the other made without including its
 * headers. Thread-safe (one lock; these calls are not on any hot path).
 */
#ifndef UTC_DEV_ALLOC_H
#define UTC_DEV_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

#include <utc/status.h>

/* Record allocation `ptr` of `size` bytes on `device`. UTC_ERR_NO_MEMORY (with the
 * message) when the record cannot be made. */
utc_status_t utc__dev_alloc_add(void *ptr, size_t size, int device)
    __attribute__((warn_unused_result));

/* True when `ptr` is the start of a recorded allocation: its size and device in *size
 * and *device (either may be NULL). */
bool utc__dev_alloc_find(const void *ptr, size_t *size, int *device);

/* As utc__dev_alloc_find, and the record is removed (the allocation changes hands or is
 * freed). */
bool utc__dev_alloc_take(const void *ptr, size_t *size, int *device);

/* A function called with an allocation's address when its owner frees it (the device
 * layer forgets what it cached of it: its IPC handle); one at a time, NULL for none. Set
 * at start-up, before any thread frees. */
void utc__dev_alloc_on_free(void (*fn)(const void *ptr));

/* The owner of `ptr` frees it now: the function of utc__dev_alloc_on_free, if any. */
void utc__dev_alloc_freeing(const void *ptr);

/* The process uses CUDA (a GPU task thread started, utc_gpu_malloc, a device conduit):
 * from then on, host conduits may ask CUDA whether a large buffer is device memory. */
void utc__dev_mark_in_use(void);
bool utc__dev_in_use(void);

/* How many allocations are recorded (tests). */
size_t utc__dev_alloc_count(void);

#endif /* UTC_DEV_ALLOC_H */
