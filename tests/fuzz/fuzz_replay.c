/*
 * Replay driver: runs a fuzz harness's LLVMFuzzerTestOneInput over files, so the same
 * harness checks its seed corpus and its saved crash inputs in an ordinary build (any
 * compiler, any sanitizer or none) under ctest. A broken invariant or a crash aborts.
 *
 *   fuzz_replay_NAME FILE_OR_DIR...
 *
 * Directories are read one level deep, files in name order. Exits 0 when every input
 * ran, 2 when a path could not be read or no input was found.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz_replay: cannot open %s\n", path);
        return -1;
    }
    size_t len = 0, cap = 4096;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            uint8_t *p = realloc(buf, cap *= 2);
            if (!p)
                free(buf);
            buf = p;
        }
    }
    int bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "fuzz_replay: cannot read %s\n", path);
        free(buf);
        return -1;
    }
    fprintf(stderr, "fuzz_replay: %s (%zu bytes)\n", path, len);
    /* an exact-size copy, so ASan sees a read one past the input */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    int inputs = 0, failed = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "fuzz_replay: no such file or folder: %s\n", argv[i]);
            failed = 1;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            failed |= run_file(argv[i]) != 0;
            inputs++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d) {
            fprintf(stderr, "fuzz_replay: cannot read folder %s\n", argv[i]);
            failed = 1;
            continue;
        }
        char **names = NULL;
        size_t n = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char **p = realloc(names, (n + 1) * sizeof *names);
            if (!p)
                abort();
            names = p;
            size_t len = strlen(argv[i]) + strlen(e->d_name) + 2;
            names[n] = malloc(len);
            if (!names[n])
                abort();
            snprintf(names[n], len, "%s/%s", argv[i], e->d_name);
            n++;
        }
        closedir(d);
        if (n > 0)
            qsort(names, n, sizeof *names, by_name);
        for (size_t k = 0; k < n; k++) {
            if (stat(names[k], &st) == 0 && S_ISREG(st.st_mode)) {
                failed |= run_file(names[k]) != 0;
                inputs++;
            }
            free(names[k]);
        }
        free(names);
    }
    if (inputs == 0) {
        fprintf(stderr, "fuzz_replay: no inputs\n");
        return 2;
    }
    fprintf(stderr, "fuzz_replay: %d inputs, %s\n", inputs, failed ? "some unreadable" : "all ran");
    return failed ? 2 : 0;
}
