/*
 * Helpers shared by the fuzz harnesses: readers that take a path get the input through
 * an in-memory file, command-line parsers get it split into argv.
 */
#ifndef UTC_FUZZ_UTIL_H
#define UTC_FUZZ_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A broken invariant: print it and abort, so libFuzzer (or ctest) reports the input. */
#define FUZZ_CHECK(cond)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__,      \
                    #cond);                                                                \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

/* An error message must be set, NUL-terminated within its buffer and one line. */
static inline void fuzz_check_message(const char *msg, size_t cap)
{
    size_t n = strnlen(msg, cap);
    FUZZ_CHECK(n > 0 && n < cap);
    FUZZ_CHECK(memchr(msg, '\n', n) == NULL);
}

/*
 * Put data in an in-memory file (one per process, reused) and write its path to path,
 * a /proc/self/fd name any reader can fopen (a fresh open starts at offset 0).
 * Returns 0, or -1 when the file cannot be made (the harness then skips the input).
 */
static inline int fuzz_memfile(const uint8_t *data, size_t size, char *path, size_t cap)
{
    static int fd = -1;
    if (fd < 0) {
        fd = memfd_create("utc-fuzz", 0);
        if (fd < 0)
            return -1;
    }
    if (ftruncate(fd, 0) != 0)
        return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t n = pwrite(fd, data + done, size - done, (off_t)done);
        if (n <= 0)
            return -1;
        done += (size_t)n;
    }
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return 0;
}

/* Most arguments a command-line harness passes, program name included; argv needs one
 * more entry for its NULL. */
#define FUZZ_MAX_ARGS 64

/*
 * Split data into argv: arguments are separated by '\n' or NUL bytes (a seed file has one
 * argument per line; one '\n' at the very end is dropped). argv[0] is prog. *buf receives the heap copy argv points into (free
 * it after the parse). Returns argc.
 */
static inline int fuzz_argv(const uint8_t *data, size_t size, char *prog, char **argv,
                            char **buf)
{
    char *copy = malloc(size + 1);
    if (!copy)
        abort();
    memcpy(copy, data, size);
    copy[size] = '\0';
    int argc = 0;
    argv[argc++] = prog;
    if (size > 0 && copy[size - 1] == '\n')
        copy[--size] = '\0';
    if (size > 0) {
        char *p = copy;
        char *end = copy + size;
        while (argc < FUZZ_MAX_ARGS) {
            char *q = p;
            while (q < end && *q != '\n' && *q != '\0')
                q++;
            *q = '\0';
            argv[argc++] = p;
            if (q >= end)
                break;
            p = q + 1;
        }
    }
    argv[argc] = NULL;
    *buf = copy;
    return argc;
}

#endif /* UTC_FUZZ_UTIL_H */
