#include "video.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "output.h"

struct ryr_video {
    FILE *f;
    int to_stdout;        /* "-": flushed, never closed */
    int renamed;          /* a regular file: written as tmp, renamed to path at close */
    int slot;             /* tmp's slot in files.h's table (-1: none) */
    char path[4096];
    char tmp[4200];
    int w, h, frames;
    size_t plane_bytes;
    pthread_mutex_t lock; /* the fields below, and the stream */
    int next;             /* the next frame to write */
    int failed;
    ryr_err_t error;      /* the first write error */
    uint8_t **pending;    /* [frame * 3 + plane]: copies of planes that came early */
    uint8_t *count;       /* [frame]: planes in */
};

/* DIR/.NAME.part-PID beside PATH: the same file system, so rename() is atomic. */
static int temp_name(char *buf, size_t len, const char *path)
{
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path) + 1 : 0;
    int n = snprintf(buf, len, "%.*s.%s.part-%ld", dirlen, path, slash ? slash + 1 : path,
                     (long)getpid());
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int ryr_video_open(const char *path, int w, int h, int frames, int fps_num, int fps_den,
                   ryr_video_t **out, ryr_err_t *err)
{
    if (w <= 0 || h <= 0 || frames <= 0 || fps_num <= 0 || fps_den <= 0)
        return ryr_err_set(err, "--video '%s': cannot write %d frames of %dx%d at %d/%d fps",
                           path, frames, w, h, fps_num, fps_den);
    if (strlen(path) >= sizeof((ryr_video_t *)0)->path)
        return ryr_err_set(err, "--video '%s': the path is too long", path);
    ryr_video_t *v = calloc(1, sizeof *v);
    if (!v)
        return ryr_err_set(err, "--video '%s': out of memory", path);
    v->slot = -1;
    strcpy(v->path, path);
    v->w = w;
    v->h = h;
    v->frames = frames;
    v->plane_bytes = (size_t)w * (size_t)h;
    v->pending = calloc((size_t)frames * RYR_NPLANES, sizeof *v->pending);
    v->count = calloc((size_t)frames, 1);
    if (!v->pending || !v->count) {
        ryr_err_set(err, "--video '%s': out of memory", path);
        goto fail_alloc;
    }
    struct stat st;
    if (strcmp(path, "-") == 0) {
        v->f = stdout;
        v->to_stdout = 1;
    } else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        ryr_err_set(err, "--video '%s': is a folder (give a file name, e.g. ryr.y4m)", path);
        goto fail_alloc;
    } else if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* a device or a pipe: there is nothing to rename or remove */
        v->f = fopen(path, "wb");
    } else {
        if (temp_name(v->tmp, sizeof v->tmp, path)) {
            ryr_err_set(err, "--video '%s': the path is too long", path);
            goto fail_alloc;
        }
        v->renamed = 1;
        /* remembered, so that an interrupted run removes it (interrupt.h) */
        v->f = ryr_files_open(v->tmp, &v->slot);
    }
    if (!v->f) {
        ryr_err_set(err, "--video '%s': cannot write: %s", path, strerror(errno));
        goto fail_alloc;
    }
    if (fprintf(v->f, "YUV4MPEG2 W%d H%d F%d:%d Ip A1:1 C444\n", w, h, fps_num, fps_den) < 0) {
        ryr_err_set(err, "--video '%s': write failed: %s", path, strerror(errno));
        goto fail_open;
    }
    pthread_mutex_init(&v->lock, NULL);
    *out = v;
    return 0;

fail_open:
    if (!v->to_stdout)
        fclose(v->f);
    ryr_files_release(v->slot, 1);
fail_alloc:
    free(v->count);
    free(v->pending);
    free(v);
    return -1;
}

/* One frame: "FRAME\n", then the Y, U and V planes. Called with the lock held. */
static int write_frame(ryr_video_t *v, const uint8_t *const planes[RYR_NPLANES])
{
    errno = 0;
    int ok = fputs("FRAME\n", v->f) >= 0;
    for (int p = 0; p < RYR_NPLANES && ok; p++)
        ok = fwrite(planes[p], 1, v->plane_bytes, v->f) == v->plane_bytes;
    if (!ok) {
        ryr_err_set(&v->error, "--video '%s': write failed: %s", v->path,
                    errno ? strerror(errno) : "unknown error");
        v->failed = 1;
        return -1;
    }
    v->next++;
    return 0;
}

static void drop_pending(ryr_video_t *v, int frame)
{
    for (int p = 0; p < RYR_NPLANES; p++) {
        free(v->pending[(size_t)frame * RYR_NPLANES + p]);
        v->pending[(size_t)frame * RYR_NPLANES + p] = NULL;
    }
    v->count[frame] = 0;
}

/* Write every frame whose three planes are in, in order. Called with the lock held. */
static int drain(ryr_video_t *v)
{
    while (!v->failed && v->next < v->frames && v->count[v->next] == RYR_NPLANES) {
        int f = v->next;
        const uint8_t *planes[RYR_NPLANES];
        for (int p = 0; p < RYR_NPLANES; p++)
            planes[p] = v->pending[(size_t)f * RYR_NPLANES + p];
        int rc = write_frame(v, planes);
        drop_pending(v, f);
        if (rc)
            return -1;
    }
    return 0;
}

int ryr_video_put(ryr_video_t *v, int frame, int plane, const uint8_t *data, ryr_err_t *err)
{
    if (frame < 0 || frame >= v->frames || plane < 0 || plane >= RYR_NPLANES)
        return ryr_err_set(err, "--video: no plane %d of frame %d (%d frames)", plane, frame,
                           v->frames);
    pthread_mutex_lock(&v->lock);
    int rc = 0;
    uint8_t **slot = &v->pending[(size_t)frame * RYR_NPLANES + plane];
    if (v->failed) {
        goto out;
    } else if (frame < v->next || *slot) {
        rc = ryr_err_set(err, "--video: plane %d of frame %d given twice", plane, frame);
        goto out;
    }
    if (frame == v->next && v->count[frame] == RYR_NPLANES - 1) {
        /* the frame is complete with this plane: write it without a copy */
        const uint8_t *planes[RYR_NPLANES];
        for (int p = 0; p < RYR_NPLANES; p++)
            planes[p] = p == plane ? data : v->pending[(size_t)frame * RYR_NPLANES + p];
        rc = write_frame(v, planes);
        drop_pending(v, frame);
        if (rc == 0)
            rc = drain(v);
    } else {
        *slot = malloc(v->plane_bytes);
        if (!*slot) {
            ryr_err_set(&v->error, "--video '%s': out of memory", v->path);
            v->failed = 1;
            rc = -1;
        } else {
            memcpy(*slot, data, v->plane_bytes);
            v->count[frame]++;
        }
    }
    if (rc && v->failed) {
        ryr_err_set(err, "%s", v->error.msg);
        /* nothing more will be written: free what waits */
        for (int f = 0; f < v->frames; f++)
            drop_pending(v, f);
    }
out:
    pthread_mutex_unlock(&v->lock);
    return rc;
}

int ryr_video_frames_written(const ryr_video_t *v)
{
    return v ? v->next : 0;
}

int ryr_video_close(ryr_video_t *v, int keep, ryr_err_t *err)
{
    if (!v)
        return 0;
    int rc = 0;
    if (keep && v->failed)
        rc = ryr_err_set(err, "%s", v->error.msg);
    else if (keep && v->next != v->frames)
        rc = ryr_err_set(err, "--video '%s': only %d of %d frames arrived", v->path, v->next,
                         v->frames);
    errno = 0;
    if (fflush(v->f) != 0 && keep && rc == 0)
        rc = ryr_err_set(err, "--video '%s': write failed: %s", v->path, strerror(errno));
    if (!v->to_stdout && fclose(v->f) != 0 && keep && rc == 0)
        rc = ryr_err_set(err, "--video '%s': write failed: %s", v->path, strerror(errno));
    if (v->renamed) {
        if (keep && rc == 0 && ryr_files_rename(v->slot, v->tmp, v->path) != 0)
            rc = ryr_err_set(err, "--video '%s': cannot rename '%s' to it: %s", v->path, v->tmp,
                             strerror(errno));
        if (!keep || rc != 0) {
            ryr_files_release(v->slot, 1);
            unlink(v->tmp); /* after a failed rename it is forgotten, and still there */
        }
    }
    for (int f = 0; f < v->frames; f++)
        drop_pending(v, f);
    pthread_mutex_destroy(&v->lock);
    free(v->count);
    free(v->pending);
    free(v);
    return rc;
}
