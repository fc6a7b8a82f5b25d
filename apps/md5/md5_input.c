#include "md5_input.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app_cli.h"
#include "app_memory.h"
#include "app_rand.h"
#include "md5.h"

int md5_input_generate(size_t count, size_t len, uint64_t seed, md5_input_t *in, char *err,
                       size_t errlen)
{
    if (count == 0 || len == 0 || count > SIZE_MAX / len) {
        snprintf(err, errlen, "%zu buffers of %zu bytes: not a size this machine can hold",
                 count, len);
        return APP_EXIT_USAGE;
    }
    if (app_memory_check((double)count * (double)len, err, errlen))
        return APP_EXIT_USAGE;
    uint8_t *data = malloc(count * len);
    if (!data) {
        snprintf(err, errlen, "out of memory for %zu buffers of %zu bytes", count, len);
        return APP_EXIT_FAIL;
    }
    for (size_t i = 0; i < count; i++)
        app_rand_fill(data + i * len, len, seed, i);
    *in = (md5_input_t){.data = data, .total = count * len, .len = len, .count = count};
    return 0;
}

int md5_input_read(const char *path, size_t len, md5_input_t *in, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return APP_EXIT_USAGE;
    }
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        fclose(f);
        return APP_EXIT_USAGE;
    }
    if (sb.st_size == 0) {
        snprintf(err, errlen, "%s: the file is empty: nothing to digest", path);
        fclose(f);
        return APP_EXIT_USAGE;
    }
    size_t total = (size_t)sb.st_size;
    char why[256];
    if (app_memory_check((double)total, why, sizeof why)) {
        snprintf(err, errlen, "%s: %s", path, why);
        fclose(f);
        return APP_EXIT_USAGE;
    }
    uint8_t *data = malloc(total);
    if (!data) {
        snprintf(err, errlen, "%s: out of memory for %zu bytes", path, total);
        fclose(f);
        return APP_EXIT_FAIL;
    }
    size_t got = fread(data, 1, total, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || got != total) {
        snprintf(err, errlen, "%s: read error (%zu of %zu bytes)", path, got, total);
        free(data);
        return APP_EXIT_USAGE;
    }
    *in = (md5_input_t){.data = data, .total = total, .len = len,
                        .count = (total + len - 1) / len};
    return 0;
}

/* Write one file; every error reported, close included. */
static int write_file(const char *path, const void *data, size_t n, char *err, size_t errlen)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        return APP_EXIT_FAIL;
    }
    size_t put = fwrite(data, 1, n, f);
    int bad = put != n || ferror(f);
    if (fclose(f) != 0)
        bad = 1;
    if (bad) {
        snprintf(err, errlen, "%s: write error: %s", path, strerror(errno));
        return APP_EXIT_FAIL;
    }
    return 0;
}

static int write_sums(FILE *f, const md5_input_t *in, const uint8_t *digests)
{
    char hex[33];
    for (size_t i = 0; i < in->count; i++) {
        md5_hex(digests + MD5_DIGEST_BYTES * i, hex);
        if (fprintf(f, "%s  buf_%06zu.bin\n", hex, i) < 0)
            return -1;
    }
    return 0;
}

int md5_digests_write(const md5_input_t *in, const uint8_t *digests, const char *path,
                      char *err, size_t errlen)
{
    int to_stdout = strcmp(path, "-") == 0;
    FILE *f = to_stdout ? stdout : fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        return APP_EXIT_FAIL;
    }
    int bad = write_sums(f, in, digests) != 0 || ferror(f);
    if ((to_stdout ? fflush(f) : fclose(f)) != 0 || bad) {
        snprintf(err, errlen, "%s: write error: %s", path, strerror(errno));
        return APP_EXIT_FAIL;
    }
    return 0;
}

int md5_input_dump(const md5_input_t *in, const uint8_t *digests, const char *dir, char *err,
                   size_t errlen)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: cannot make the folder: %s", dir, strerror(errno));
        return APP_EXIT_FAIL;
    }
    size_t plen = strlen(dir) + 32;
    char *path = malloc(plen);
    if (!path) {
        snprintf(err, errlen, "out of memory");
        return APP_EXIT_FAIL;
    }
    int rc = 0;
    for (size_t i = 0; i < in->count && rc == 0; i++) {
        snprintf(path, plen, "%s/buf_%06zu.bin", dir, i);
        rc = write_file(path, md5_input_buf(in, i), md5_input_buf_len(in, i), err, errlen);
    }
    if (rc == 0) {
        snprintf(path, plen, "%s/md5sums.txt", dir);
        rc = md5_digests_write(in, digests, path, err, errlen);
    }
    free(path);
    return rc;
}

void md5_input_fini(md5_input_t *in)
{
    free(in->data);
    in->data = NULL;
}
