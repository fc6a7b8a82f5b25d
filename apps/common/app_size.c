#include "app_size.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define COUNT_MAX (1LL << 62)

enum { COUNT_OK = 0, COUNT_MALFORMED = -1, COUNT_NOT_POSITIVE = -2, COUNT_TOO_LARGE = -3 };

/* Parse a count from text[0..len). */
static int count_parse_n(const char *text, size_t len, long long *out)
{
    size_t i = 0;
    long long v = 0;
    if (len > 0 && text[0] == '-')
        return COUNT_NOT_POSITIVE;
    if (len == 0 || !isdigit((unsigned char)text[0]))
        return COUNT_MALFORMED;
    for (; i < len && isdigit((unsigned char)text[i]); i++) {
        if (v > (COUNT_MAX - 9) / 10)
            return COUNT_TOO_LARGE;
        v = v * 10 + (text[i] - '0');
    }
    long long mul = 1;
    if (i < len) {
        switch (toupper((unsigned char)text[i])) {
        case 'K': mul = 1LL << 10; break;
        case 'M': mul = 1LL << 20; break;
        case 'G': mul = 1LL << 30; break;
        default: return COUNT_MALFORMED;
        }
        if (++i != len)
            return COUNT_MALFORMED;
    }
    if (v == 0)
        return COUNT_NOT_POSITIVE;
    if (v > COUNT_MAX / mul)
        return COUNT_TOO_LARGE;
    *out = v * mul;
    return COUNT_OK;
}

int app_count_parse(const char *text, long long *out)
{
    return text && count_parse_n(text, strlen(text), out) == COUNT_OK ? 0 : -1;
}

int app_size_parse(const char *text, const app_size_t presets[3], app_size_t *out, char *err,
                   size_t errlen)
{
    for (int i = 0; i < 3; i++) {
        if (strcasecmp(text, presets[i].label) == 0) {
            *out = presets[i];
            return 0;
        }
    }
    const char *x = strpbrk(text, "xX");
    long long a = 0, b = 0;
    int ra = x ? count_parse_n(text, (size_t)(x - text), &a) : COUNT_MALFORMED;
    int rb = x ? count_parse_n(x + 1, strlen(x + 1), &b) : COUNT_MALFORMED;
    if (ra == COUNT_MALFORMED || rb == COUNT_MALFORMED) {
        snprintf(err, errlen,
                 "unknown size '%s': use S, M, L or AxB with positive counts (K, M, G "
                 "suffixes allowed, e.g. 640x480 or 2Kx1K)",
                 text);
        return -1;
    }
    if (ra == COUNT_NOT_POSITIVE || rb == COUNT_NOT_POSITIVE) {
        snprintf(err, errlen, "size '%s': both counts must be positive", text);
        return -1;
    }
    if (ra != COUNT_OK || rb != COUNT_OK) {
        snprintf(err, errlen, "size '%s': a count is too large", text);
        return -1;
    }
    if (strlen(text) >= sizeof out->label) {
        snprintf(err, errlen, "size '%.40s...' is too long", text);
        return -1;
    }
    snprintf(out->label, sizeof out->label, "%s", text);
    out->a = a;
    out->b = b;
    return 0;
}
