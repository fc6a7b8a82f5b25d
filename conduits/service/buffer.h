/* Conduit service: owned buffers (utc_buf_alloc), for the ownership-passing path. */
#ifndef UTC_CONDUITS_BUFFER_H
#define UTC_CONDUITS_BUFFER_H

#include <stdbool.h>
#include <stddef.h>

/* The pinned host allocator behind utc_buf_alloc_pinned (the gpu module's, given by the
 * runtime layer at utc_init): alloc returns NULL when it cannot (no GPU, no memory); free
 * gets the size alloc was given. */
typedef void *(*utc__buf_pinned_alloc_fn)(size_t size);
typedef void (*utc__buf_pinned_free_fn)(void *p, size_t size);
void utc__buf_set_pinned(utc__buf_pinned_alloc_fn alloc, utc__buf_pinned_free_fn free_fn);

/* Buffers of utc_buf_alloc that the caller owns now: the usable size, or false if not one
 * (never one, freed, or handed over and not yet read). */
bool utc__buf_size(const void *buf, size_t *size);

/* What utc__buf_hand_over found. */
typedef enum utc__buf_check {
    UTC__BUF_OK,           /* the caller's: now marked handed over */
    UTC__BUF_UNKNOWN,      /* not from utc_buf_alloc (or freed long ago) */
    UTC__BUF_HANDED,       /* handed over already, not yet read by the other end */
    UTC__BUF_FREED,        /* freed (in quarantine) */
    UTC__BUF_FREED_HANDED, /* handed over, then freed by the runtime or its reader */
} utc__buf_check_t;

/* Mark buf handed over (utc_conduit_write_owned), with its size in *size, when it is the
 * caller's; else say what it is. Thread-safe. */
utc__buf_check_t utc__buf_hand_over(const void *buf, size_t *size);
/* The hand-over failed: buf is the caller's again (no-op when the transport freed it). */
void utc__buf_hand_back(const void *buf);
/* An owned read returned buf (the very buffer the writer handed over, in-process): it is
 * the reader's now, to free or hand over again. */
void utc__buf_received(const void *buf);

/* Free buf, a buffer of utc_buf_alloc that the runtime made for itself (a transport's copy
 * of a message that came before its read) and never gave anyone: its memory goes back to
 * the allocator at once. utc_buf_free's quarantine is there to catch a user's use of a
 * buffer after its free or hand-over; nobody else ever held this one, so holding it there
 * would only keep its memory (1,024 buffers, up to 64 MiB) for nothing. */
void utc__buf_discard(void *buf);
/* Buffers freed and held in the quarantine now, and their bytes (the small ones': a large
 * one's pages are given back). Thread-safe. */
void utc__buf_quarantined(size_t *count, size_t *bytes);

#endif /* UTC_CONDUITS_BUFFER_H */
