#include "app_memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int app_memory_check(double bytes, char *err, size_t errlen)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double have = pages > 0 && page > 0 ? (double)pages * (double)page : 0.0;
    if (have > 0.0 && bytes > have) {
        snprintf(err, errlen, "needs %.1f GiB of memory, this machine has %.1f GiB",
                 bytes / 1073741824.0, have / 1073741824.0);
        return -1;
    }
    return 0;
}

void *app_alloc(size_t bytes)
{
    return malloc(bytes ? bytes : 1);
}

long app_rss_bytes(void)
{
    long pages = 0, res = -1;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return -1;
    if (fscanf(f, "%ld %ld", &pages, &res) != 2)
        res = -1;
    fclose(f);
    return res < 0 ? -1 : res * sysconf(_SC_PAGESIZE);
}
