#include "error.h"

#include <stdarg.h>
#include <stdio.h>

int ryr_err_set(ryr_err_t *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

void ryr_err_clear(ryr_err_t *err)
{
    if (err)
        err->msg[0] = '\0';
}
