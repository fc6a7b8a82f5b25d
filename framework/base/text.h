/*
 * Base layer: user-given text (task names, a log message's arguments) made safe for the
 * places it goes: log lines, the statistics table and the trace's JSON. One set of rules,
 * used by the logger (log.c), the last-error message (status.c), the watchdog, the
 * statistics and the tracer:
 *
 * - a cut never splits a UTF-8 character (utc__text_cut, utc__text_copy);
 * - UTC__TEXT_LINE (logs, last-error messages, the statistics): control characters become
 *   escapes, so a name cannot end a line or drive a terminal: \n \r \t, \xNN for the other
 *   C0 controls and DEL, \u00NN for the C1 controls (U+0080-U+009F); a byte that is not
 *   part of valid UTF-8 becomes \xNN. Valid UTF-8 and backslashes are kept as they are
 *   (so an escaped message escaped again is unchanged).
 * - UTC__TEXT_JSON (the body of a JSON string, in the trace): " and \ as \" and \\,
 *   \b \f \n \r \t, other controls as \u00NN, every other non-ASCII character as \uXXXX
 *   (a surrogate pair above U+FFFF), and each byte that is not valid UTF-8 as \ufffd
 *   (U+FFFD, the replacement character). The output is ASCII: any JSON reader decodes it
 *   the same way whatever its own encoding setting.
 *
 * UTF-8 is read strictly (RFC 3629): overlong forms, surrogates (U+D800-U+DFFF) and values
 * above U+10FFFF are not characters; each of their bytes counts as one invalid byte.
 */
#ifndef UTC_BASE_TEXT_H
#define UTC_BASE_TEXT_H

#include <stddef.h>

/* How a task without a name (NULL or "") is spelled in messages, statistics and traces. */
#define UTC__UNNAMED "(unnamed)"

/* `name`, or UTC__UNNAMED when it is NULL or empty. */
static inline const char *utc__text_name(const char *name)
{
    return name && *name ? name : UTC__UNNAMED;
}

/* Where escaped text goes (see the top of this file). */
typedef enum utc__text_mode {
    UTC__TEXT_LINE = 0, /* a log line, a message, a table cell */
    UTC__TEXT_JSON = 1  /* the body of a JSON string (between the quotes) */
} utc__text_mode_t;

/*
 * Escape `len` bytes of `src` into `dst` (`cap` bytes; NUL-terminated when cap > 0), as
 * `mode` says. An escape or a character is written whole or not at all.
 * Returns the length of the whole escaped text (as snprintf does): the output was cut
 * when the value is cap or more. dst may be NULL when cap is 0 (to measure).
 */
size_t utc__text_escape(char *dst, size_t cap, const char *src, size_t len, utc__text_mode_t mode);

/*
 * `src` escaped as a log line (UTC__TEXT_LINE) in a column `width` characters wide: cut
 * (whole characters and escapes only) to at most `width` characters and padded with
 * spaces to `width`. Characters are counted, not terminal cells (a wide character counts
 * one). dst holds cap bytes (4 * width + 1 is always enough); NUL-terminated when
 * cap > 0. Returns the bytes written, without the NUL.
 */
size_t utc__text_column(char *dst, size_t cap, const char *src, size_t width);

/* The longest length <= len at which s[0..len) does not end inside a UTF-8 character:
 * len less the bytes of a character cut short at the end (0 to 3). */
size_t utc__text_cut(const char *s, size_t len);

/* Copy the NUL-terminated `src` into dst (cap > 0 bytes, NUL-terminated), cut if it does
 * not fit, at a character boundary. Returns the bytes copied, without the NUL. */
size_t utc__text_copy(char *dst, size_t cap, const char *src);

#endif /* UTC_BASE_TEXT_H */
