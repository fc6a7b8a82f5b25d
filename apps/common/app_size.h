/**
 * @file app_size.h
 * @brief Problem sizes: the presets S, M, L (dissertation appendix A, tables A.5-A.7) and
 * custom sizes written as two counts, `AxB`, each with an optional K (1024), M (1024^2)
 * or G (1024^3) suffix: `640x480`, `2Kx1K`, `32Kx8K`.
 *
 * What A and B mean is the app's business (width x height, buffers x bytes,
 * vertices x edges).
 */
#ifndef APP_SIZE_H
#define APP_SIZE_H

#include <stddef.h>

/** A size: its label (as printed in reports) and its two counts. */
typedef struct app_size {
    char label[32]; /**< "S", "M", "L", or the custom text as given */
    long long a, b; /**< both > 0 */
} app_size_t;

/**
 * @brief Parse one count: decimal digits and an optional K, M or G suffix (any case).
 * @param[out] out the value, set only on success
 * @return 0, or -1 when the text is not such a count, is 0, or exceeds 2^62
 */
int app_count_parse(const char *text, long long *out);

/**
 * @brief Parse a size: a preset name (S, M, L; any case) or a custom `AxB`.
 * @param text     what the user wrote
 * @param presets  the app's S, M and L, in that order
 * @param[out] out set only on success
 * @param err      receives a message on failure
 * @return 0 or -1
 */
int app_size_parse(const char *text, const app_size_t presets[3], app_size_t *out, char *err,
                   size_t errlen);

#endif /* APP_SIZE_H */
