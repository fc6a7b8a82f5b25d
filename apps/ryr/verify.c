#include "verify.h"

#include <string.h>

#include "output.h"

long ryr_first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
    if (memcmp(a, b, n) == 0)
        return -1;
    size_t i = 0;
    while (a[i] == b[i])
        i++;
    return (long)i;
}

int ryr_verify_plane(int frame, int plane, const uint8_t *ref, const uint8_t *got, int w,
                     int h, int channels, ryr_err_t *err)
{
    size_t n = (size_t)w * (size_t)h * (size_t)channels;
    long i = ryr_first_diff(ref, got, n);
    if (i < 0)
        return 0;
    long px = i / channels;
    return ryr_err_set(err, "frame %d, plane %s: first difference at pixel (%ld, %ld)%s%s: "
                       "expected %d, got %d", frame, ryr_plane_name(plane), px % w, px / w,
                       channels == 3 ? ", channel " : "",
                       channels == 3 ? (const char *[]){"r", "g", "b"}[i % 3] : "", ref[i],
                       got[i]);
}
