/* User-given text made safe for logs, tables and JSON (text.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"

/*
 * The UTF-8 character at s (n > 0 bytes left): its length (1 to 4) and code point, or 0
 * when s[0] does not start one. *cut says whether those bytes are a valid beginning that
 * the end of the input cut short (RFC 3629's table: the second byte's range depends on
 * the first, which rules out overlong forms, surrogates and values above U+10FFFF).
 */
static size_t utf8_char(const unsigned char *s, size_t n, uint32_t *cp, bool *cut)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xbf;
    size_t len;
    uint32_t v;
    *cut = false;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c < 0xc2)
        return 0; /* a continuation byte, or an overlong two-byte form */
    if (c < 0xe0) {
        len = 2;
        v = c & 0x1fu;
    } else if (c < 0xf0) {
        len = 3;
        v = c & 0x0fu;
        lo = c == 0xe0 ? 0xa0 : 0x80;
        hi = c == 0xed ? 0x9f : 0xbf; /* not a surrogate */
    } else if (c < 0xf5) {
        len = 4;
        v = c & 0x07u;
        lo = c == 0xf0 ? 0x90 : 0x80;
        hi = c == 0xf4 ? 0x8f : 0xbf; /* not above U+10FFFF */
    } else {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if (i == n) {
            *cut = true;
            return 0;
        }
        unsigned char d = s[i];
        if (d < (i == 1 ? lo : 0x80) || d > (i == 1 ? hi : 0xbf))
            return 0;
        v = v << 6 | (d & 0x3fu);
    }
    *cp = v;
    return len;
}

/*
 * The output for the character or invalid byte at s (n > 0 bytes left): written to tok,
 * its length returned; *used is the input it takes, *cols the characters it shows as.
 */
static size_t token(const unsigned char *s, size_t n, utc__text_mode_t mode, char tok[16],
                    size_t *used, size_t *cols)
{
    uint32_t cp;
    bool cut;
    size_t len = utf8_char(s, n, &cp, &cut);
    int w;
    if (len == 0) { /* not UTF-8: this byte alone */
        *used = 1;
        w = mode == UTC__TEXT_JSON ? snprintf(tok, 16, "\\ufffd")
                                   : snprintf(tok, 16, "\\x%02x", (unsigned)s[0]);
        *cols = (size_t)w;
        return (size_t)w;
    }
    *used = len;
    const char *esc = NULL;
    switch (cp) {
    case '\n':
        esc = "\\n";
        break;
    case '\r':
        esc = "\\r";
        break;
    case '\t':
        esc = "\\t";
        break;
    case '\b':
        esc = mode == UTC__TEXT_JSON ? "\\b" : NULL;
        break;
    case '\f':
        esc = mode == UTC__TEXT_JSON ? "\\f" : NULL;
        break;
    case '"':
        esc = mode == UTC__TEXT_JSON ? "\\\"" : NULL;
        break;
    case '\\':
        esc = mode == UTC__TEXT_JSON ? "\\\\" : NULL;
        break;
    default:
        break;
    }
    bool control = cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
    if (esc)
        w = snprintf(tok, 16, "%s", esc);
    else if (control && mode == UTC__TEXT_LINE && cp < 0x80)
        w = snprintf(tok, 16, "\\x%02x", (unsigned)cp);
    else if (control || (mode == UTC__TEXT_JSON && cp < 0x10000 && cp >= 0x80))
        w = snprintf(tok, 16, "\\u%04x", (unsigned)cp);
    else if (mode == UTC__TEXT_JSON && cp >= 0x10000) /* a UTF-16 surrogate pair */
        w = snprintf(tok, 16, "\\u%04x\\u%04x", 0xd800u + ((cp - 0x10000u) >> 10),
                     0xdc00u + ((cp - 0x10000u) & 0x3ffu));
    else { /* printable: as it is */
        memcpy(tok, s, len);
        *cols = 1;
        return len;
    }
    *cols = (size_t)w;
    return (size_t)w;
}

/* Escape into dst while the output fits in cap - 1 bytes and max_cols characters; returns
 * the whole output's length. *written and *wcols: what was written. */
static size_t escape(char *dst, size_t cap, const char *src, size_t len, utc__text_mode_t mode,
                     size_t max_cols, size_t *written, size_t *wcols)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t out = 0, cols = 0;
    bool full = cap == 0;
    *written = *wcols = 0;
    for (size_t i = 0; i < len;) {
        char tok[16];
        size_t used, c;
        size_t t = token(s + i, len - i, mode, tok, &used, &c);
        i += used;
        if (!full && out + t < cap && cols + c <= max_cols) {
            memcpy(dst + out, tok, t);
            *written = out + t;
            *wcols = cols + c;
        } else {
            full = true; /* nothing after a cut: the output is a prefix */
        }
        out += t;
        cols += c;
    }
    if (cap > 0)
        dst[*written] = '\0';
    return out;
}

size_t utc__text_escape(char *dst, size_t cap, const char *src, size_t len, utc__text_mode_t mode)
{
    size_t written, wcols;
    return escape(dst, cap, src, len, mode, SIZE_MAX, &written, &wcols);
}

size_t utc__text_column(char *dst, size_t cap, const char *src, size_t width)
{
    if (cap == 0)
        return 0;
    size_t written, wcols;
    escape(dst, cap, src, strlen(src), UTC__TEXT_LINE, width, &written, &wcols);
    while (wcols < width && written + 1 < cap) {
        dst[written++] = ' ';
        wcols++;
    }
    dst[written] = '\0';
    return written;
}

size_t utc__text_cut(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        bool cut;
        size_t k = utf8_char(u + i, len - i, &cp, &cut);
        if (cut)
            return i;
        i += k ? k : 1;
    }
    return len;
}

size_t utc__text_copy(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap)
        n = utc__text_cut(src, cap - 1);
    memmove(dst, src, n);
    dst[n] = '\0';
    return n;
}
