#include "app_compare.h"

#include <string.h>

long long app_compare_bytes(const void *a, const void *b, size_t n)
{
    if (memcmp(a, b, n) == 0)
        return -1;
    const unsigned char *x = a, *y = b;
    size_t i = 0;
    while (x[i] == y[i])
        i++;
    return (long long)i;
}
