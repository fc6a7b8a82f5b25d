#include "files.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The names of the files being written; NULL: a free slot. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *names[RYR_FILES_MAX];

FILE *ryr_files_open(const char *path, int *slot)
{
    *slot = -1;
    pthread_mutex_lock(&lock);
    int free_slot = 0;
    while (free_slot < RYR_FILES_MAX && names[free_slot])
        free_slot++;
    char *name = free_slot < RYR_FILES_MAX ? strdup(path) : NULL;
    FILE *f = NULL;
    if (!name) {
        errno = free_slot < RYR_FILES_MAX ? ENOMEM : EMFILE;
        goto out;
    }
    f = fopen(path, "wb");
    struct stat st;
    /* only a regular file is ours to remove; fstat fails only for a bad descriptor */
    if (f && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode)) {
        names[free_slot] = name;
        *slot = free_slot;
        name = NULL;
    }
out:
    pthread_mutex_unlock(&lock);
    free(name);
    return f;
}

/* Forget slot (the lock held). */
static void forget(int slot)
{
    if (slot >= 0 && slot < RYR_FILES_MAX) {
        free(names[slot]);
        names[slot] = NULL;
    }
}

int ryr_files_rename(int slot, const char *from, const char *to)
{
    pthread_mutex_lock(&lock);
    int rc = rename(from, to);
    int saved = errno;
    forget(slot);
    pthread_mutex_unlock(&lock);
    errno = saved;
    return rc;
}

void ryr_files_release(int slot, int remove)
{
    if (slot < 0)
        return;
    pthread_mutex_lock(&lock);
    if (remove && slot < RYR_FILES_MAX && names[slot])
        unlink(names[slot]);
    forget(slot);
    pthread_mutex_unlock(&lock);
}

int ryr_files_abandon(void)
{
    pthread_mutex_lock(&lock); /* kept: nothing is created or renamed from now on */
    int n = 0;
    for (int i = 0; i < RYR_FILES_MAX; i++)
        n += names[i] && unlink(names[i]) == 0;
    return n;
}
