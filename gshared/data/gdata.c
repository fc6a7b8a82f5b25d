/*
 * Global shared data objects: their life (collective create and destroy, with one thread
 * per rank doing the work) and local access to this rank's part.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/progress.h"
#include "data/gdata.h"

utc_status_t utc__gdata_check_fail(const utc_gdata_t *gd, const char *fn)
{
    if (!gd)
        return utc__error(UTC_ERR_INVALID_HANDLE, "%s: the object is NULL", fn);
    if (gd->magic != UTC__GDATA_MAGIC)
        return utc__error(UTC_ERR_INVALID_HANDLE,
                          "%s: not a live global shared data object (destroyed?)", fn);
    return utc__error(UTC_ERR_NOT_MEMBER,
                      "%s: the calling thread is not a thread of task '%s', which owns the "
                      "object: global shared data is used from inside its task",
                      fn, utc_task_name(gd->task));
}

/* ---- create / destroy ---- */

/* Leader of the create step: carve the space, zero it, and check with the other ranks that
 * everyone got the same place (which also orders every rank's zeroing before any rank's
 * first remote access). Every rank reaches the MPI call, failed or not, so none hangs. */
static utc_status_t gdata_make(utc__gs_task_t *gs, size_t elem_size, size_t count,
                               utc_gdata_t **out)
{
    static const char fn[] = "utc_gdata_create";
    const char *name = utc_task_name(gs->task);
    size_t bytes = elem_size * count;
    size_t rounded = utc__gs_alloc_round(bytes);
    utc_gdata_t *gd = calloc(1, sizeof *gd);
    utc__gs_extent_t *spare = malloc(sizeof *spare);
    size_t off = 0;
    utc_status_t rc = UTC_OK;
    /* remote accesses to a window outside shared memory need this rank's progress from
     * now on (only this rank's leader touches gs->progress until the window goes) */
    if (!gs->shared && !gs->progress) {
        utc__gs_progress_acquire();
        gs->progress = true;
    }
    if (!gd || !spare) {
        rc = utc__error(UTC_ERR_NO_MEMORY, "%s: no memory for the object's handle", fn);
    } else if (rounded == 0 || utc__gs_alloc_get(&gs->alloc, rounded, &off) != UTC_OK) {
        rc = utc__error(UTC_ERR_NO_MEMORY,
                        "%s: %zu elements x %zu bytes = %zu bytes (%zu aligned) do not fit in "
                        "the window of task '%s': window_size %zu bytes, %zu free, largest "
                        "free block %zu (raise utc_task_options_t.window_size or destroy "
                        "objects)",
                        fn, count, elem_size, bytes, rounded, name, gs->size, gs->alloc.free_bytes,
                        utc__gs_alloc_largest(&gs->alloc));
        rounded = 0;
    } else {
        memset(gs->base + off, 0, bytes);
    }

    /* max over ranks of {failed, offset, -offset, size, -size, element size, -element size,
     * count, -count}: the ranks agree when each maximum is minus the next one */
    int64_t mine[9] = {rc != UTC_OK,        (int64_t)off,       -(int64_t)off,
                       (int64_t)rounded,    -(int64_t)rounded,  (int64_t)elem_size,
                       -(int64_t)elem_size, (int64_t)count,     -(int64_t)count};
    int64_t all[9];
    MPI_Request req;
    int err = MPI_Iallreduce(mine, all, 9, MPI_INT64_T, MPI_MAX, gs->comm, &req);
    utc_status_t mpi_rc = err == MPI_SUCCESS ? utc__mpi_wait(&req, MPI_STATUS_IGNORE, -1.0)
                                             : utc__mpi_error(err, "MPI_Iallreduce");
    if (rc == UTC_OK && mpi_rc != UTC_OK) {
        rc = mpi_rc;
    } else if (rc == UTC_OK && all[0]) {
        rc = utc__error(UTC_ERR_NO_MEMORY,
                        "%s: another rank of task '%s' could not create the object (%zu "
                        "bytes); see its error",
                        fn, name, bytes);
    } else if (rc == UTC_OK && (all[5] != -all[6] || all[7] != -all[8])) {
        rc = utc__error(UTC_ERR_MISMATCH,
                        "%s: the ranks of task '%s' disagree on the object: element size "
                        "%lld..%lld, count %lld..%lld. Every rank must make the same collective "
                        "calls, in the same order, with the same arguments",
                        fn, name, (long long)-all[6], (long long)all[5], (long long)-all[8],
                        (long long)all[7]);
    } else if (rc == UTC_OK && (all[1] != -all[2] || all[3] != -all[4])) {
        rc = utc__error(UTC_ERR_MISMATCH,
                        "%s: the ranks of task '%s' disagree on the object's place in the "
                        "window (offset %lld..%lld, size %lld..%lld): objects must be created "
                        "and destroyed in the same order with the same sizes on every rank",
                        fn, name, (long long)-all[2], (long long)all[1], (long long)-all[4],
                        (long long)all[3]);
    }
    if (rc != UTC_OK) {
        if (rounded)
            utc__gs_alloc_put(&gs->alloc, off, rounded, spare);
        else
            free(spare);
        free(gd);
        return rc;
    }

    *gd = (utc_gdata_t){
        .magic = UTC__GDATA_MAGIC,
        .task = gs->task,
        .gs = gs,
        .win = gs->win,
        .local = gs->base + off,
        .offset = off,
        .elem_size = elem_size,
        .count = count,
        .bytes = rounded,
        .nranks = gs->nranks,
        .rank = gs->rank,
        .world_rank = utc_rank(),
        .next = gs->objects,
        .spare = spare,
    };
    gs->objects = gd;
    *out = gd;
    return UTC_OK;
}

utc_status_t utc_gdata_create(utc_ctx_t *ctx, size_t elem_size, size_t count, utc_gdata_t **gd)
{
    static const char fn[] = "utc_gdata_create";
    utc__gs_task_t *gs;
    utc_status_t rc = utc__gs_ctx_state(ctx, fn, &gs);
    if (rc != UTC_OK)
        return rc;
    if (!gd)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: gd (the output) is NULL", fn);
    if (elem_size == 0 || count == 0)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: elem_size (%zu) and count (%zu) must be > 0",
                          fn, elem_size, count);
    if (count > SIZE_MAX / elem_size)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: %zu elements x %zu bytes overflows size_t", fn,
                          count, elem_size);
    if (gs->win == MPI_WIN_NULL)
        return utc__error(UTC_ERR_STATE,
                          "%s: task '%s' was created with window_size 0, so it has no window "
                          "for global shared data (set utc_task_options_t.window_size)",
                          fn, utc_task_name(ctx->task));

    bool leader = utc__gs_team_enter(gs);
    utc_gdata_t *made = NULL;
    if (leader) {
        rc = gdata_make(gs, elem_size, count, &made);
        gs->team_ptr = made;
    }
    rc = utc__gs_team_leave(gs, leader, rc);
    if (rc == UTC_OK)
        *gd = gs->team_ptr; /* read before this thread can enter the next team step */
    return rc;
}

/*
 * A destroyed object's handle is not given back to malloc at once: with its magic word
 * cleared it waits among the last TOMBS destroyed objects, so an old handle is refused
 * (UTC_ERR_INVALID_HANDLE) instead of naming a newer object that took its address. Best
 * effort after TOMBS newer destroys (the owned buffers' quarantine works the same way);
 * the memory is bounded (TOMBS objects of ~100 bytes).
 */
#define TOMBS 4096
static pthread_mutex_t tomb_lock = PTHREAD_MUTEX_INITIALIZER;
static utc_gdata_t *tombs[TOMBS]; /* a ring, oldest at tomb_next once full */
static unsigned tomb_next;

static void bury(utc_gdata_t *gd)
{
    gd->magic = 0;
    pthread_mutex_lock(&tomb_lock);
    utc_gdata_t *oldest = tombs[tomb_next];
    tombs[tomb_next] = gd;
    tomb_next = (tomb_next + 1) % TOMBS;
    pthread_mutex_unlock(&tomb_lock);
    free(oldest);
}

static void gdata_release(utc__gs_task_t *gs, utc_gdata_t *gd)
{
    for (utc_gdata_t **link = &gs->objects; *link; link = &(*link)->next) {
        if (*link == gd) {
            *link = gd->next;
            break;
        }
    }
    utc__gs_alloc_put(&gs->alloc, gd->offset, gd->bytes, gd->spare);
    bury(gd);
}

utc_status_t utc_gdata_destroy(utc_ctx_t *ctx, utc_gdata_t *gd)
{
    static const char fn[] = "utc_gdata_destroy";
    utc__gs_task_t *gs;
    utc_status_t rc = utc__gs_ctx_state(ctx, fn, &gs);
    if (rc != UTC_OK)
        return rc;
    rc = utc__gdata_check(gd, fn);
    if (rc != UTC_OK)
        return rc;
    if (gd->gs != gs)
        return utc__error(UTC_ERR_NOT_MEMBER, "%s: the object belongs to task '%s', not '%s'", fn,
                          utc_task_name(gd->task), utc_task_name(ctx->task));

    bool leader = utc__gs_team_enter(gs);
    if (leader) {
        /* No rank may still have a store in flight to this space when it is reused. */
        int err = MPI_Win_flush_all(gs->win);
        if (err != MPI_SUCCESS) {
            rc = utc__mpi_error(err, "MPI_Win_flush_all");
        } else {
            MPI_Request req;
            err = MPI_Ibarrier(gs->comm, &req);
            rc = err == MPI_SUCCESS ? utc__mpi_wait(&req, MPI_STATUS_IGNORE, -1.0)
                                    : utc__mpi_error(err, "MPI_Ibarrier");
        }
        /* Freed even when MPI failed: the object is gone for every thread either way. */
        gdata_release(gs, gd);
    }
    return utc__gs_team_leave(gs, leader, rc);
}

void utc__gdata_free_all(utc__gs_task_t *gs)
{
    while (gs->objects)
        gdata_release(gs, gs->objects);
}

/* ---- properties ---- */

size_t utc_gdata_count(const utc_gdata_t *gd)
{
    return gd && gd->magic == UTC__GDATA_MAGIC ? gd->count : 0;
}

size_t utc_gdata_elem_size(const utc_gdata_t *gd)
{
    return gd && gd->magic == UTC__GDATA_MAGIC ? gd->elem_size : 0;
}

int utc_gdata_nranks(const utc_gdata_t *gd)
{
    if (!gd || gd->magic != UTC__GDATA_MAGIC)
        return utc__gdata_check_fail(gd, "utc_gdata_nranks");
    return gd->nranks;
}

int utc_gdata_rank(const utc_gdata_t *gd)
{
    if (!gd || gd->magic != UTC__GDATA_MAGIC)
        return utc__gdata_check_fail(gd, "utc_gdata_rank");
    return gd->rank;
}

void *utc_gdata_ptr(utc_gdata_t *gd)
{
    return utc__gdata_check(gd, "utc_gdata_ptr") == UTC_OK ? gd->local : NULL;
}

/* ---- local access ---- */

static utc_status_t local_check(const utc_gdata_t *gd, size_t start, size_t n, const void *buf,
                                const char *fn)
{
    utc_status_t rc = utc__gdata_check(gd, fn);
    return rc != UTC_OK ? rc : utc__gdata_check_block(gd, start, n, buf, fn);
}

static utc_status_t local_load(utc_gdata_t *gd, size_t start, size_t n, void *dst, const char *fn)
{
    utc_status_t rc = local_check(gd, start, n, dst, fn);
    if (rc == UTC_OK && n > 0)
        memcpy(dst, gd->local + start * gd->elem_size, n * gd->elem_size);
    return rc;
}

static utc_status_t local_store(utc_gdata_t *gd, size_t start, size_t n, const void *src,
                                const char *fn)
{
    utc_status_t rc = local_check(gd, start, n, src, fn);
    if (rc == UTC_OK && n > 0)
        memcpy(gd->local + start * gd->elem_size, src, n * gd->elem_size);
    return rc;
}

utc_status_t utc_gdata_load(utc_gdata_t *gd, size_t index, void *dst)
{
    return local_load(gd, index, 1, dst, "utc_gdata_load");
}

utc_status_t utc_gdata_store(utc_gdata_t *gd, size_t index, const void *src)
{
    return local_store(gd, index, 1, src, "utc_gdata_store");
}

utc_status_t utc_gdata_load_block(utc_gdata_t *gd, size_t start, size_t n, void *dst)
{
    return local_load(gd, start, n, dst, "utc_gdata_load_block");
}

utc_status_t utc_gdata_store_block(utc_gdata_t *gd, size_t start, size_t n, const void *src)
{
    return local_store(gd, start, n, src, "utc_gdata_store_block");
}
