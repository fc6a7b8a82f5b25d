/**
 * @file app_compare.h
 * @brief Exact comparison of a result with seq's, for --verify.
 */
#ifndef APP_COMPARE_H
#define APP_COMPARE_H

#include <stddef.h>

/** @brief Index of the first byte where a and b differ, or -1 when equal. */
long long app_compare_bytes(const void *a, const void *b, size_t n);

#endif /* APP_COMPARE_H */
