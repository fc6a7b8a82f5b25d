/* The logger: one line per message on stderr, filtered by UTC_LOG. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>

#include "base/errors.h"

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
    fprintf(stderr, "utc: UTC_LOG='%s' is not one of debug|info|warn|error|off; using warn\n",
            env);
}

void utc_log(utc_log_level_t level, const char *fmt, ...)
{
    static const char *tags[] = {"debug", "info", "warn", "error"};
    pthread_once(&level_once, read_level);
    if (level < min_level || level >= UTC_LOG_OFF)
        return;
    char line[1024];
    int rank = atomic_load_explicit(&log_rank, memory_order_relaxed);
    int n = rank >= 0 ? snprintf(line, sizeof line, "utc[%d] %s: ", rank, tags[level])
                      : snprintf(line, sizeof line, "utc[-] %s: ", tags[level]);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    /* one fputs per line so lines of different threads do not interleave */
    size_t len = strlen(line);
    if (len < sizeof line - 1) {
        line[len] = '\n';
        line[len + 1] = '\0';
    }
    fputs(line, stderr);
}
