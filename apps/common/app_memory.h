/**
 * @file app_memory.h
 * @brief Refusing sizes the machine cannot hold, before allocating them.
 */
#ifndef APP_MEMORY_H
#define APP_MEMORY_H

#include <stddef.h>

/**
 * @brief Check that @p bytes (what a run will allocate) fit in this machine's memory.
 * @return 0, or -1 with a message in @p err ("needs 96.0 GiB, this machine has 23.4 GiB")
 */
int app_memory_check(double bytes, char *err, size_t errlen);

/** @brief malloc that never returns NULL for a zero size (returns NULL only when out of memory). */
void *app_alloc(size_t bytes);

/** @brief This process's resident memory (/proc/self/statm) in bytes, or -1 when unknown. */
long app_rss_bytes(void);

#endif /* APP_MEMORY_H */
