/* Conduit service: owned buffers (utc_buf_alloc), for the ownership-passing path. */
#ifndef UTC_CONDUITS_BUFFER_H
#define UTC_CONDUITS_BUFFER_H

#include <stdbool.h>
#include <stddef.h>

/* Header-checked buffers of utc_buf_alloc: the usable size, or false if not one. */
bool utc__buf_size(const void *buf, size_t *size);

#endif /* UTC_CONDUITS_BUFFER_H */
