/**
 * @file error.h
 * @brief Error messages of the RYR core: a fixed buffer filled by the failing call.
 *
 * The RYR core does not depend on the UTC framework, so it carries its own small error
 * type instead of utc_status_t. Functions that can fail return 0 on success and -1 on
 * failure, and describe the failure in a caller's ryr_err_t (which may be NULL).
 */
#ifndef RYR_ERROR_H
#define RYR_ERROR_H

#include <stddef.h>

/** Length of an error message buffer, terminating NUL included. */
#define RYR_ERR_LEN 512

/** A human-readable error message; "" when nothing failed. */
typedef struct ryr_err {
    char msg[RYR_ERR_LEN];
} ryr_err_t;

/**
 * @brief Format a message into @p err (printf-style); does nothing when @p err is NULL.
 * @return always -1, so a caller can write `return ryr_err_set(err, ...);`.
 */
int ryr_err_set(ryr_err_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** @brief Clear @p err (may be NULL). */
void ryr_err_clear(ryr_err_t *err);

#endif /* RYR_ERROR_H */
