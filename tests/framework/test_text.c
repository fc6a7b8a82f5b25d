/*
 * User-given text made safe (base/text.h): escapes for log lines and JSON, cuts that never
 * split a UTF-8 character, the statistics' column, the spelling of a missing name, and
 * utc_log's lines (one line per message, whatever its arguments hold).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "utc_test.h"
#include "base/text.h"

/* src escaped in `mode` equals `want`, and the returned length is its length. */
static void expect_escape(const char *src, utc__text_mode_t mode, const char *want)
{
    char out[256];
    size_t n = utc__text_escape(out, sizeof out, src, strlen(src), mode);
    CU_ASSERT_STRING_EQUAL(out, want);
    CU_ASSERT_EQUAL(n, strlen(want));
    if (strcmp(out, want) != 0)
        printf("\n  escaped %s: '%s', expected '%s'\n", mode == UTC__TEXT_JSON ? "JSON" : "line",
               out, want);
}

static void test_line(void)
{
    expect_escape("plain name", UTC__TEXT_LINE, "plain name");
    expect_escape("\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", UTC__TEXT_LINE,
                  "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"); /* valid: kept */
    expect_escape("a\nutc[0] error: forged", UTC__TEXT_LINE, "a\\nutc[0] error: forged");
    expect_escape("\r\t\x1b[31m\x7f\x01", UTC__TEXT_LINE, "\\r\\t\\x1b[31m\\x7f\\x01");
    expect_escape("nel\xc2\x85", UTC__TEXT_LINE, "nel\\u0085"); /* a C1 control */
    expect_escape("q\"b\\s", UTC__TEXT_LINE, "q\"b\\s");        /* kept as they are */
    /* not UTF-8: a lone byte, a continuation byte, overlong forms, a surrogate, above
     * U+10FFFF, a character cut short by the next byte */
    expect_escape("\xff|\x80|\xc0\xaf|\xe0\x80\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xe2\x82(",
                  UTC__TEXT_LINE,
                  "\\xff|\\x80|\\xc0\\xaf|\\xe0\\x80\\xaf|\\xed\\xa0\\x80|\\xf4\\x90\\x80\\x80|"
                  "\\xe2\\x82(");
    /* the largest values that are characters */
    expect_escape("\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf", UTC__TEXT_LINE,
                  "\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf");
    /* an escaped text escaped again is unchanged */
    expect_escape("a\\nb\\x1b", UTC__TEXT_LINE, "a\\nb\\x1b");
}

static void test_json(void)
{
    expect_escape("plain", UTC__TEXT_JSON, "plain");
    expect_escape("q\"b\\s/", UTC__TEXT_JSON, "q\\\"b\\\\s/");
    expect_escape("\n\r\t\b\f\x01\x1b\x7f", UTC__TEXT_JSON, "\\n\\r\\t\\b\\f\\u0001\\u001b\\u007f");
    /* non-ASCII as \uXXXX, above U+FFFF as a surrogate pair: the output is ASCII */
    expect_escape("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xc2\x85", UTC__TEXT_JSON,
                  "\\u00e9\\u20ac\\ud83d\\ude00\\u0085");
    /* each byte that is not UTF-8 is U+FFFD */
    expect_escape("a\xff\xc0\xaf\xed\xa0\x80\xe2\x82(", UTC__TEXT_JSON,
                  "a\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd(");
}

static void test_escape_cut(void)
{
    /* measuring: the whole length, nothing written */
    CU_ASSERT_EQUAL(utc__text_escape(NULL, 0, "a\nb", 3, UTC__TEXT_LINE), 4);
    char out[8];
    memset(out, 'X', sizeof out);
    /* "ab", ESC, "cd": the escape (4 bytes) does not fit whole in 5 bytes with the NUL */
    size_t n = utc__text_escape(out, 5, "ab\033cd", 5, UTC__TEXT_LINE);
    CU_ASSERT_EQUAL(n, 8);
    CU_ASSERT_STRING_EQUAL(out, "ab");
    /* nothing after a cut, even what would fit */
    n = utc__text_escape(out, 4, "\342\202\254a", 4, UTC__TEXT_LINE);
    CU_ASSERT_EQUAL(n, 4);
    CU_ASSERT_STRING_EQUAL(out, "\xe2\x82\xac");
    n = utc__text_escape(out, 3, "\342\202\254a", 4, UTC__TEXT_LINE);
    CU_ASSERT_STRING_EQUAL(out, "");
    /* length counts bytes: a NUL inside is a control character like any other */
    n = utc__text_escape(out, sizeof out, "a\0b", 3, UTC__TEXT_LINE);
    CU_ASSERT_STRING_EQUAL(out, "a\\x00b");
}

static void test_cut_copy(void)
{
    const char *s = "ab\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"; /* a b é € 😀: 2+2+3+4 bytes */
    size_t want[] = {0, 1, 2, 2, 4, 4, 4, 7, 7, 7, 7, 11};
    for (size_t len = 0; len <= 11; len++)
        CU_ASSERT_EQUAL(utc__text_cut(s, len), want[len]);
    /* invalid bytes are not characters to protect: a cut may fall after any of them */
    CU_ASSERT_EQUAL(utc__text_cut("a\xff\xff", 2), 2);
    CU_ASSERT_EQUAL(utc__text_cut("a\xed\xa0\x80", 3), 3); /* \xed\xa0 begins no character */
    char buf[6];
    CU_ASSERT_EQUAL(utc__text_copy(buf, sizeof buf, s), 4); /* "abé" and one byte of € */
    CU_ASSERT_STRING_EQUAL(buf, "ab\xc3\xa9");
    CU_ASSERT_EQUAL(utc__text_copy(buf, sizeof buf, "short"), 5);
    CU_ASSERT_STRING_EQUAL(buf, "short");
    CU_ASSERT_EQUAL(utc__text_copy(buf, 1, s), 0);
    CU_ASSERT_STRING_EQUAL(buf, "");
}

static void test_column(void)
{
    char out[4 * 6 + 1];
    CU_ASSERT_EQUAL(utc__text_column(out, sizeof out, "ab", 6), 6);
    CU_ASSERT_STRING_EQUAL(out, "ab    ");
    /* characters are counted, not bytes */
    utc__text_column(out, sizeof out, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
                     6);
    CU_ASSERT_STRING_EQUAL(out, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
    /* an escape is cut whole: "ab" + "\x1b" (4) would be 6 ... "abc" + 4 is not */
    utc__text_column(out, sizeof out, "abc\x1bz", 6);
    CU_ASSERT_STRING_EQUAL(out, "abc   ");
    utc__text_column(out, sizeof out, "ab\x1bz", 6);
    CU_ASSERT_STRING_EQUAL(out, "ab\\x1b");
}

static void test_name(void)
{
    CU_ASSERT_STRING_EQUAL(utc__text_name(NULL), "(unnamed)");
    CU_ASSERT_STRING_EQUAL(utc__text_name(""), "(unnamed)");
    CU_ASSERT_STRING_EQUAL(utc__text_name("x"), "x");
}

/* utc_log with a forging argument, a C1 control, invalid bytes and a message longer than
 * a line holds: read back from stderr (a file for the call), one line each, whole
 * characters, each starting with the utc[RANK] prefix. */
static void test_log_lines(void)
{
    char path[] = "/tmp/utc_test_text_XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    CU_ASSERT_FATAL(saved >= 0);
    dup2(fd, 2);
    char *longname = malloc(3000);
    CU_ASSERT_FATAL(longname != NULL);
    for (int i = 0; i < 999; i++) /* 999 "é": the line is cut, between characters */
        memcpy(longname + 2 * i, "\xc3\xa9", 2);
    longname[1998] = '\0';
    utc_log(UTC_LOG_ERROR, "task '%s' failed", "evil\nutc[0] error: forged");
    utc_log(UTC_LOG_ERROR, "bytes '%s'", "\xff\xc2\x85\x1b[2J");
    utc_log(UTC_LOG_ERROR, "long '%s'", longname);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    free(longname);

    char text[8192];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    close(fd);
    unlink(path);
    CU_ASSERT_FATAL(n > 0);
    text[n] = '\0';
    char prefix[32];
    snprintf(prefix, sizeof prefix, "utc[%d] error: ", utc_test_rank());
    int lines = 0;
    for (char *l = text, *nl; *l; l = nl + 1) {
        nl = strchr(l, '\n');
        CU_ASSERT_FATAL(nl != NULL); /* every line ends with a newline */
        *nl = '\0';
        CU_ASSERT(strncmp(l, prefix, strlen(prefix)) == 0);
        if (lines == 0)
            CU_ASSERT_STRING_EQUAL(l + strlen(prefix), "task 'evil\\nutc[0] error: forged' failed");
        if (lines == 1)
            CU_ASSERT_STRING_EQUAL(l + strlen(prefix), "bytes '\\xff\\u0085\\x1b[2J'");
        if (lines == 2) { /* cut: only whole "é" after "long '" */
            const char *body = l + strlen(prefix) + strlen("long '");
            size_t len = strlen(body);
            CU_ASSERT(len > 500 && len % 2 == 0);
            CU_ASSERT_EQUAL(utc__text_cut(body, len), len);
            CU_ASSERT(strstr(body, "\\x") == NULL);
        }
        lines++;
    }
    CU_ASSERT_EQUAL(lines, 3);
}

static const utc_test_case_t cases[] = {
    {"log-line escapes: controls and invalid bytes, UTF-8 kept", test_line},
    {"JSON escapes: ASCII output, U+FFFD for invalid bytes", test_json},
    {"an escape or a character is written whole or not at all", test_escape_cut},
    {"cuts never split a character", test_cut_copy},
    {"the statistics' column counts characters and cuts escapes whole", test_column},
    {"a missing or empty name is (unnamed)", test_name},
    {"utc_log writes one line per message, whatever its arguments", test_log_lines},
    UTC_TEST_END};

int main(int argc, char **argv)
{
    return utc_test_main(argc, argv, "text", cases);
}
