/**
 * @file md5_input.h
 * @brief The buffers the md5 app digests: generated from a seed, or a file cut into
 * buffers; and writing them out for an independent check with `md5sum`.
 */
#ifndef APP_MD5_INPUT_H
#define APP_MD5_INPUT_H

#include <stddef.h>
#include <stdint.h>

/** Buffers laid end to end: buffer i is bytes [i * len, min((i + 1) * len, total)). */
typedef struct md5_input {
    uint8_t *data; /**< total bytes */
    size_t total;  /**< bytes in all (> 0) */
    size_t len;    /**< bytes per buffer; the last one may be shorter */
    size_t count;  /**< number of buffers: ceil(total / len) */
} md5_input_t;

/** @brief Start of buffer i. */
static inline const uint8_t *md5_input_buf(const md5_input_t *in, size_t i)
{
    return in->data + i * in->len;
}

/** @brief Length of buffer i. */
static inline size_t md5_input_buf_len(const md5_input_t *in, size_t i)
{
    size_t start = i * in->len;
    return in->total - start < in->len ? in->total - start : in->len;
}

/**
 * @brief @p count buffers of @p len bytes each, from @p seed (buffer i is stream i).
 * @return 0; APP_EXIT_USAGE (too large for this machine) or APP_EXIT_FAIL (out of
 *         memory), with a message
 */
int md5_input_generate(size_t count, size_t len, uint64_t seed, md5_input_t *in, char *err,
                       size_t errlen);

/**
 * @brief The file at @p path, cut into buffers of @p len bytes (the last may be shorter).
 * @return 0; APP_EXIT_USAGE with "PATH: problem" (unreadable, empty, too large) or
 *         APP_EXIT_FAIL (out of memory)
 */
int md5_input_read(const char *path, size_t len, md5_input_t *in, char *err, size_t errlen);

/**
 * @brief Write each buffer to DIR/buf_NNNNNN.bin and the digests to DIR/md5sums.txt in
 * md5sum's format, so `cd DIR && md5sum -c md5sums.txt` checks them. Makes DIR if needed.
 * @return 0, or APP_EXIT_FAIL with a message
 */
int md5_input_dump(const md5_input_t *in, const uint8_t *digests, const char *dir, char *err,
                   size_t errlen);

/**
 * @brief Write the digests to @p path ("-": stdout), one md5sum-style line per buffer
 * ("HEX  buf_NNNNNN.bin").
 * @return 0, or APP_EXIT_FAIL with a message
 */
int md5_digests_write(const md5_input_t *in, const uint8_t *digests, const char *path,
                      char *err, size_t errlen);

/** @brief Free the buffers (safe on a zeroed input). */
void md5_input_fini(md5_input_t *in);

#endif /* APP_MD5_INPUT_H */
