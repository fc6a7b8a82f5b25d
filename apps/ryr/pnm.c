#include "pnm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"

int ryr_pnm_write(const char *path, int channels, int w, int h, const uint8_t *data,
                  ryr_err_t *err)
{
    if ((channels != 1 && channels != 3) || w <= 0 || h <= 0)
        return ryr_err_set(err, "%s: cannot write a %dx%d image with %d channels", path, w, h,
                           channels);
    /* remembered while it is written: an interrupted run removes it (interrupt.h) */
    int slot;
    FILE *f = ryr_files_open(path, &slot);
    if (!f)
        return ryr_err_set(err, "%s: cannot create: %s", path, strerror(errno));
    size_t n = (size_t)w * (size_t)h * (size_t)channels;
    errno = 0;
    int ok = fprintf(f, "P%c\n%d %d\n255\n", channels == 1 ? '5' : '6', w, h) > 0 &&
             fwrite(data, 1, n, f) == n && fflush(f) == 0;
    int saved = errno;
    if (fclose(f) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    /* leave no truncated image behind (files.h never removes what is not a plain file,
     * such as a link to a device) */
    ryr_files_release(slot, !ok);
    if (!ok)
        return ryr_err_set(err, "%s: write failed: %s", path,
                           saved ? strerror(saved) : "unknown error");
    return 0;
}

/* Skip whitespace and '#' comments (to the end of the line) in a header. */
static void skip_space(const uint8_t *buf, size_t len, size_t *pos)
{
    while (*pos < len) {
        uint8_t c = buf[*pos];
        if (c == '#') {
            while (*pos < len && buf[*pos] != '\n' && buf[*pos] != '\r')
                (*pos)++;
        } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
                   c == '\f') {
            (*pos)++;
        } else {
            return;
        }
    }
}

static int is_space(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* A decimal header number in 1..max, followed by whitespace. */
static int header_number(const uint8_t *buf, size_t len, size_t *pos, long max, long *out)
{
    skip_space(buf, len, pos);
    long v = 0;
    size_t start = *pos;
    while (*pos < len && buf[*pos] >= '0' && buf[*pos] <= '9') {
        v = v * 10 + (buf[*pos] - '0');
        if (v > max)
            return -1;
        (*pos)++;
    }
    if (*pos == start || *pos >= len || !is_space(buf[*pos]) || v < 1)
        return -1;
    *out = v;
    return 0;
}

int ryr_pnm_read(const char *path, int *channels, int *w, int *h, uint8_t **data,
                 ryr_err_t *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return ryr_err_set(err, "%s: cannot open: %s", path, strerror(errno));
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = -1;
    for (;;) {
        /* stop early on what cannot be an image: a wrong magic number (say /dev/zero), or
         * more bytes than any image this reader takes (say an endless pipe) */
        if (len >= 2 && (buf[0] != 'P' || (buf[1] != '5' && buf[1] != '6')))
            break;
        if (len > RYR_PNM_MAX_BYTES) {
            ryr_err_set(err, "%s: larger than %llu bytes: not an image this reader takes", path,
                        (unsigned long long)RYR_PNM_MAX_BYTES);
            goto done;
        }
        if (len == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            uint8_t *p = realloc(buf, cap);
            if (!p) {
                ryr_err_set(err, "%s: out of memory", path);
                goto done;
            }
            buf = p;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) {
                ryr_err_set(err, "%s: read failed: %s", path, strerror(errno));
                goto done;
            }
            break;
        }
    }
    if (len < 2 || buf[0] != 'P' || (buf[1] != '5' && buf[1] != '6')) {
        ryr_err_set(err, "%s: not a binary PGM (P5) or PPM (P6) file", path);
        goto done;
    }
    int ch = buf[1] == '5' ? 1 : 3;
    size_t pos = 2;
    long wv, hv, maxval;
    if (pos >= len || !is_space(buf[pos]) ||
        header_number(buf, len, &pos, RYR_PNM_MAX_SIDE, &wv) ||
        header_number(buf, len, &pos, RYR_PNM_MAX_SIDE, &hv) ||
        header_number(buf, len, &pos, 65535, &maxval)) {
        ryr_err_set(err, "%s: malformed header", path);
        goto done;
    }
    if (maxval != 255) {
        ryr_err_set(err, "%s: maxval %ld (only 255 is supported)", path, maxval);
        goto done;
    }
    pos++; /* the single whitespace byte before the pixels */
    size_t n = (size_t)wv * (size_t)hv * (size_t)ch;
    if (len - pos != n) {
        ryr_err_set(err, "%s: %zu bytes of pixels, expected %zu for %ldx%ld", path, len - pos,
                    n, wv, hv);
        goto done;
    }
    uint8_t *px = malloc(n);
    if (!px) {
        ryr_err_set(err, "%s: out of memory", path);
        goto done;
    }
    memcpy(px, buf + pos, n);
    *channels = ch;
    *w = (int)wv;
    *h = (int)hv;
    *data = px;
    rc = 0;
done:
    free(buf);
    fclose(f);
    return rc;
}
