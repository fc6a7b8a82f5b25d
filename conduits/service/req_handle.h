/*
 * Conduit service: the handles of asynchronous requests (utc_conduit_iwrite / iread).
 *
 * A handle is the address of a small cell, with the cell's generation in its top bits
 * (base/handle.h). The cell points at the request while it is live; when the request is
 * waited for, the cell's generation moves on and the cell goes back to a free list (cells
 * are never returned to the system, so reading one through an old handle is always safe).
 * So a handle used again after its request completed (a copy kept by mistake) is refused,
 * even when its cell already serves a new request.
 *
 * A call on a request claims the cell first (one compare-and-swap of generation and a busy
 * bit): two threads waiting on or testing the same request at once cannot both complete
 * it; the second gets a clear error instead of a double free.
 */
#ifndef UTC_CONDUITS_REQ_HANDLE_H
#define UTC_CONDUITS_REQ_HANDLE_H

#include "service/request.h"

typedef enum {
    UTC__CLAIM_OK = 0,
    UTC__CLAIM_STALE, /* not a live request's handle (completed, or never one) */
    UTC__CLAIM_BUSY,  /* another thread is in a call on it */
    UTC__CLAIM_NOT_HANDLE, /* not a request handle at all */
} utc__claim_t;

/* A handle for `req`, or NULL when out of memory. */
utc_request_t *utc__req_handle_new(utc_request_t *req);

/* A handle for `req` owned by the calling thread (utc__olock_self()): its claims by that
 * thread take no locked instruction, those by any other thread a heavy fence
 * (base/sync.h). For the requests of a task's only thread on its rank (the express
 * paths). NULL when out of memory. */
utc_request_t *utc__req_handle_new_owned(utc_request_t *req);

/* A handle for an operation that completed as it started (a write its transport sent at
 * once, send_now), owned by the calling thread: no request stands behind it; `size`
 * bytes, status UTC_OK. Its claim
 * returns &utc__req_done. NULL when out of memory. */
utc_request_t *utc__req_handle_new_done(size_t size);

/* What a completed-at-start handle's claim returns (never started or freed). */
extern utc_request_t utc__req_done;

/* The size of claimed handle h's completed-at-start operation. */
size_t utc__req_handle_done_size(utc_request_t *h);

/* Claim handle `h` for the calling thread: the request, or NULL with *why set. */
utc_request_t *utc__req_handle_claim(utc_request_t *h, utc__claim_t *why);

/* Give a claim back: the request stays live (a test that found it pending). */
void utc__req_handle_unclaim(utc_request_t *h);

/* End a claimed handle: its request is done; the handle is stale from now on. Also for a
 * handle made but never given out (no claim needed then). */
void utc__req_handle_retire(utc_request_t *h);

#endif /* UTC_CONDUITS_REQ_HANDLE_H */
