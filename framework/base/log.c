/* The logger: one line per message on stderr, filtered by UTC_LOG. A message is escaped as
 * a log line (base/text.h): a name with a newline or a terminal escape in it stays inside
 * its line. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>

#include "base/errors.h"
#include "base/text.h"

/* -1: not initialized (or finalized). */
static atomic_int log_rank = -1;

/* relaxed: a lone value; a line printed around utc_init may show either */
void utc__log_set_rank(int rank) { atomic_store_explicit(&log_rank, rank, memory_order_relaxed); }

static pthread_once_t level_once = PTHREAD_ONCE_INIT;
static utc_log_level_t min_level = UTC_LOG_WARN;

static void read_level(void)
{
    const char *env = getenv("UTC_LOG");
    static const char *names[] = {"debug", "info", "warn", "error", "off"};
    if (!env || !*env)
        return;
    for (int i = 0; i < 5; i++) {
        if (strcmp(env, names[i]) == 0) {
            min_level = (utc_log_level_t)i;
            return;
        }
    }
    utc__log_write("utc: ", "UTC_LOG='%s' is not one of debug|info|warn|error|off; using warn",
                   env);
}

void utc__log_vwrite(const char *prefix, const char *fmt, va_list ap)
{
    char msg[1024], line[2048];
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    size_t len = n < 0 ? 0 : (size_t)n;
    if (len >= sizeof msg) /* cut: not inside a character */
        len = utc__text_cut(msg, sizeof msg - 1);
    size_t p = utc__text_copy(line, sizeof line / 4, prefix);
    /* room for the newline; a message too long for the line is cut at an escape */
    size_t room = sizeof line - p - 1;
    size_t m = utc__text_escape(line + p, room, msg, len, UTC__TEXT_LINE);
    p += m < room ? m : strlen(line + p);
    line[p] = '\n';
    line[p + 1] = '\0';
    /* one fputs per line so lines of different threads do not interleave */
    fputs(line, stderr);
}

void utc__log_write(const char *prefix, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    utc__log_vwrite(prefix, fmt, ap);
    va_end(ap);
}

void utc_log(utc_log_level_t level, const char *fmt, ...)
{
    static const char *tags[] = {"debug", "info", "warn", "error"};
    pthread_once(&level_once, read_level);
    if (level < min_level || level >= UTC_LOG_OFF)
        return;
    char prefix[64];
    int rank = atomic_load_explicit(&log_rank, memory_order_relaxed);
    if (rank >= 0)
        snprintf(prefix, sizeof prefix, "utc[%d] %s: ", rank, tags[level]);
    else
        snprintf(prefix, sizeof prefix, "utc[-] %s: ", tags[level]);
    va_list ap;
    va_start(ap, fmt);
    utc__log_vwrite(prefix, fmt, ap);
    va_end(ap);
}
