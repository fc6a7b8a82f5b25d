/*
 * What each task owns on a rank (core/window.h): its own communicator and one RMA window,
 * locked for the task's whole life, with the window's allocator; the thread checks; and the
 * "team" steps in which one thread per rank works while the task's other threads on that
 * rank wait. The task extension (gshared_module.c) opens and closes it.
 */
#include <stdio.h>
#include <sys/sysinfo.h>
#include <stdlib.h>
#include <string.h>

#include "base/coll_check.h"
#include "base/wait_hook.h"
#include "core/progress.h"
#include "core/wake.h"
#include "core/window.h"

UTC__GS_TLS const utc_task_t *utc__gs_thread_task;

bool utc__gs_in_task_slow(const utc_task_t *task)
{
    if (task && utc__ctx_of(task)) {
        utc__gs_thread_task = task;
        return true;
    }
    return false;
}

utc_status_t utc__gs_ctx_state(utc_ctx_t *ctx, const char *fn, utc__gs_task_t **gs)
{
    if (!ctx)
        return utc__error(UTC_ERR_NOT_MEMBER,
                          "%s: ctx is NULL: global shared data and task collectives are used "
                          "from the threads of a task, with their own ctx",
                          fn);
    utc_status_t rc = utc__ctx_check(ctx, fn);
    if (rc != UTC_OK)
        return rc;
    utc__gs_task_t *state = utc__gs_of(ctx->task);
    if (!state)
        return utc__error(UTC_ERR_INTERNAL, "%s: task '%s' has no gshared state on this rank", fn,
                          utc_task_name(ctx->task));
    *gs = state;
    return UTC_OK;
}

/* ---- team steps ---- */

bool utc__gs_team_enter(utc__gs_task_t *gs)
{
    return UTC__WAIT_CALL(UTC__WAIT_RMA_BARRIER, gs->task->impl->id, -1, -1,
                          gs->task->impl->ops->name, utc__barrier_wait(&gs->barrier)) != 0;
}

utc_status_t utc__gs_team_leave(utc__gs_task_t *gs, bool leader, utc_status_t rc)
{
    if (leader) {
        gs->team_rc = rc;
        if (rc != UTC_OK)
            utc__text_copy(gs->team_msg, sizeof gs->team_msg, utc_last_error());
    }
    UTC__WAIT_CALL(UTC__WAIT_RMA_BARRIER, gs->task->impl->id, -1, -1, gs->task->impl->ops->name,
                   utc__barrier_wait(&gs->barrier));
    /* No thread can write team_rc again before every thread has passed the next enter,
     * i.e. after this read. */
    rc = gs->team_rc;
    if (!leader && rc != UTC_OK)
        utc__error(rc, "%s", gs->team_msg);
    return rc;
}

/* ---- open / close ---- */

void utc__gs_task_close(utc__gs_task_t *gs)
{
    utc__gs_board_fini(&gs->board); /* first: it may live in the window */
    free(gs->coll_ints);
    free(gs->coll_reqs);
    if (gs->win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(gs->win);
        MPI_Win_free(&gs->win);
    }
    if (gs->progress)
        utc__gs_progress_release();
    free(gs->peer_base);
    utc__gs_alloc_fini(&gs->alloc);
    if (gs->comm != MPI_COMM_NULL)
        MPI_Comm_free(&gs->comm);
    free(gs);
}

/* Whether every rank of comm shares this rank's node (the same answer on every rank). */
static bool gs_one_node(MPI_Comm comm, int nranks)
{
    MPI_Comm node;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return false;
    int n = 0;
    MPI_Comm_size(node, &n);
    MPI_Comm_free(&node);
    return n == nranks;
}

/* This node's memory and swap in bytes (0: unknown). */
static unsigned long long node_memory(void)
{
    struct sysinfo si;
    if (sysinfo(&si) != 0)
        return 0;
    return ((unsigned long long)si.totalram + si.totalswap) * si.mem_unit;
}

static utc_status_t window_no_memory(size_t size, const char *name, const char *where)
{
    return utc__error(UTC_ERR_NO_MEMORY,
                      "utc_task_create: task '%s': out of memory for its window of %zu bytes "
                      "(%.1f GiB) per rank%s (this node has %.1f GiB of memory and swap); ask "
                      "for a smaller window_size", name, size, (double)size / (1 << 30), where,
                      (double)node_memory() / (1 << 30));
}

/*
 * Whether every rank's node can hold the window at all: a size beyond memory and swap is
 * refused as out of memory, on every rank alike (one small allreduce), before MPI is
 * asked. Asked, Open MPI either reports MPI_ERR_WIN ("invalid window") or, for the
 * shared flavour, warns that /dev/shm is too small and hangs.
 */
static utc_status_t window_fits(utc__gs_task_t *gs, size_t size, bool one_node, const char *name)
{
    unsigned long long have = node_memory();
    /* on one node every rank's part is on this node */
    unsigned long long need = one_node ? (unsigned long long)size * (unsigned)gs->nranks : size;
    if (one_node && need / (unsigned)gs->nranks != size)
        need = ~0ull;
    int fits = !have || need <= have, all_fit = 0;
    int err = MPI_Allreduce(&fits, &all_fit, 1, MPI_INT, MPI_MIN, gs->comm);
    if (err != MPI_SUCCESS)
        return utc__mpi_error(err, "utc_task_create: MPI_Allreduce (whether the window fits)");
    if (all_fit)
        return UTC_OK;
    return window_no_memory(size, name, !fits ? (one_node && gs->nranks > 1 ? ", on each of "
                                                 "this node's ranks" : "")
                                              : ", on another rank's node");
}

/* Why a window could not be allocated: out of memory when MPI says so, with the size. */
static utc_status_t window_failed(int err, size_t size, const char *name)
{
    int cls = MPI_ERR_OTHER;
    MPI_Error_class(err, &cls);
    if (cls == MPI_ERR_NO_MEM)
        return window_no_memory(size, name, "");
    char what[160];
    snprintf(what, sizeof what, "utc_task_create: task '%s': MPI_Win_allocate of %zu bytes "
             "(task window)", name, size);
    return utc__mpi_error(err, what);
}

/*
 * A window of `bytes` on each rank, into *win with this rank's memory at *base. When all
 * the ranks share a node it is allocated with MPI_Win_allocate_shared, otherwise with
 * MPI_Win_allocate; both give MPI-allocated memory (never MPI_Win_create on malloc'd
 * memory, 10-50x slower here). Why shared on one node: Open MPI 4.1's default one-sided
 * component there (osc/rdma over btl/vader) crashes in 64-bit MPI_Compare_and_swap
 * (open-mpi/ompi#7967, #11349); the shared-memory component does not, and its RMA latency
 * is as low or lower (doc/PERFORMANCE.md). Where the shared flavour is not available (e.g.
 * `--mca osc ucx`), every rank fails alike and falls back. Returns MPI's error code.
 */
static int gs_win_allocate(utc__gs_task_t *gs, size_t bytes, bool one_node, const char *name,
                           void **base, MPI_Win *win, bool *shared)
{
    MPI_Info info;
    int err = MPI_Info_create(&info);
    if (err != MPI_SUCCESS)
        return err;
    /* Every rank exposes the same size with unit 1: lets the one-sided component skip
     * exchanging and looking up per-target sizes and units. Non-contiguous shared
     * segments keep each rank's part on its own pages. */
    MPI_Info_set(info, "same_size", "true");
    MPI_Info_set(info, "same_disp_unit", "true");
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    err = MPI_ERR_OTHER;
    *shared = false;
    if (one_node) {
        err = MPI_Win_allocate_shared((MPI_Aint)bytes, 1, info, gs->comm, base, win);
        *shared = err == MPI_SUCCESS;
        if (err != MPI_SUCCESS)
            utc_log(UTC_LOG_DEBUG,
                    "task '%s': no shared window (error %d), using "
                    "MPI_Win_allocate",
                    name, err);
    }
    if (err != MPI_SUCCESS)
        err = MPI_Win_allocate((MPI_Aint)bytes, 1, info, gs->comm, base, win);
    MPI_Info_free(&info);
    if (err != MPI_SUCCESS)
        *win = MPI_WIN_NULL;
    return err;
}

/* Where every rank's part of a shared window is mapped here (calloc'd), or NULL (not
 * shared, no memory, a query refused). */
static char **gs_peer_bases(MPI_Win win, int nranks)
{
    char **peer = calloc((size_t)nranks, sizeof *peer);
    for (int r = 0; peer && r < nranks; r++) {
        MPI_Aint qsize;
        int unit;
        if (MPI_Win_shared_query(win, r, &qsize, &unit, &peer[r]) != MPI_SUCCESS || !peer[r]) {
            free(peer);
            peer = NULL;
        }
    }
    return peer;
}

/* Errors return, and one passive-target epoch for the window's whole life. */
static int gs_win_lock(MPI_Win win)
{
    int err = MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    return err == MPI_SUCCESS ? MPI_Win_lock_all(MPI_MODE_NOCHECK, win) : err;
}

/* The task's window (see gs_win_allocate). Past its `size` data bytes, from the next 64:
 * the rank's wake record for signal waiters (core/wake.h; used when the window is in
 * shared memory), then the collective board's word (core/board.h) when the task has
 * other ranks. */
static utc_status_t gs_window_open(utc__gs_task_t *gs, size_t size, const char *name)
{
    if (size > (size_t)(((MPI_Aint)1 << (8 * sizeof(MPI_Aint) - 2)) - 1))
        return utc__error(UTC_ERR_INVALID_ARG,
                          "task '%s': window_size %zu bytes is larger than MPI can address", name,
                          size);
    bool one_node = gs_one_node(gs->comm, gs->nranks);
    utc_status_t rc = window_fits(gs, size, one_node, name);
    if (rc != UTC_OK)
        return rc;
    size_t wake_off = (size + 63) / 64 * 64, board_off = wake_off + UTC__GS_WAKE_BYTES;
    bool board = gs->nranks > 1;
    void *base = NULL;
    int err = gs_win_allocate(gs, board_off + (board ? UTC__GS_BOARD_BYTES : 0), one_node, name,
                              &base, &gs->win, &gs->shared);
    if (err != MPI_SUCCESS)
        return window_failed(err, size, name);
    gs->base = base;
    gs->size = size;
    /* shared: where every rank's part is mapped here, for direct stores (ops/signal.c);
     * without it (no memory, a query refused) those take MPI's path */
    if (gs->shared)
        gs->peer_base = gs_peer_bases(gs->win, gs->nranks);
    if (gs->peer_base) {
        /* ours, zeroed before any object exists (creating one meets every rank); wakers
         * of this process use the fences that need it registered */
        memset((char *)base + wake_off, 0, UTC__GS_WAKE_BYTES);
        gs->wake_off = wake_off;
        utc__fence_global_init();
    }
    if ((err = gs_win_lock(gs->win)) != MPI_SUCCESS) {
        MPI_Win_free(&gs->win);
        gs->win = MPI_WIN_NULL;
        return utc__mpi_error(err, "MPI_Win_lock_all (task window)");
    }
    if (board)
        utc__gs_board_attach(&gs->board, gs->win, false, (MPI_Aint)board_off, gs->base,
                             gs->peer_base);
    /* the progress thread for passive targets starts with the first object (gdata.c), so
     * a task that never uses global shared data costs nothing while it waits */
    if (utc__gs_alloc_init(&gs->alloc, size) != UTC_OK)
        return utc__error(UTC_ERR_NO_MEMORY, "task '%s': no memory for the window allocator", name);
    utc_log(UTC_LOG_DEBUG, "task '%s': window of %zu bytes per rank (%s)", name, size,
            gs->shared ? "MPI_Win_allocate_shared" : "MPI_Win_allocate");
    return UTC_OK;
}

void utc__gs_board_window(utc__gs_task_t *gs)
{
    gs->board_tried = true;
    const char *name = utc_task_name(gs->task);
    /* MPI_Win_allocate busy-polls while it waits: meet first, asleep (when the argument
     * check is on, the collective's ranks have met in it already) */
    if (!utc__coll_check_on()) {
        MPI_Request bar;
        int err = MPI_Ibarrier(gs->comm, &bar);
        if (err != MPI_SUCCESS || utc__mpi_wait(&bar, MPI_STATUS_IGNORE, -1.0) != UTC_OK) {
            utc_log(UTC_LOG_DEBUG,
                    "task '%s': no window for the collective board (a barrier "
                    "failed)",
                    name);
            return;
        }
    }
    void *base = NULL;
    MPI_Win win = MPI_WIN_NULL;
    bool shared = false;
    int err = gs_win_allocate(gs, UTC__GS_BOARD_BYTES, gs_one_node(gs->comm, gs->nranks), name,
                              &base, &win, &shared);
    if (err == MPI_SUCCESS && (err = gs_win_lock(win)) != MPI_SUCCESS)
        MPI_Win_free(&win);
    if (err != MPI_SUCCESS) { /* alike on every rank: the task works, the watchdog cannot tell */
        utc_log(UTC_LOG_DEBUG, "task '%s': no window for the collective board (error %d)", name,
                err);
        return;
    }
    char **peer = shared ? gs_peer_bases(win, gs->nranks) : NULL;
    utc__gs_board_attach(&gs->board, win, true, 0, base, peer);
    free(peer);
}

utc_status_t utc__gs_task_open(utc_task_t *task, utc__gs_task_t **out)
{
    struct utc__task *t = task->impl;
    if (t->comm == MPI_COMM_NULL) {
        *out = NULL; /* this rank holds none of the task's threads */
        return UTC_OK;
    }

    const char *name = utc__text_name(t->ops ? t->ops->name : NULL);
    utc__gs_task_t *gs = calloc(1, sizeof *gs);
    if (!gs)
        return utc__error(UTC_ERR_NO_MEMORY, "task '%s': no memory for gshared state", name);
    gs->task = task;
    gs->comm = MPI_COMM_NULL;
    gs->win = MPI_WIN_NULL;
    gs->nlocal = t->nlocal;
    utc__barrier_init(&gs->barrier, (unsigned)(t->nlocal > 0 ? t->nlocal : 1));

    /* A communicator of our own: collectives and window traffic never meet the framework's
     * own use of the task communicator, and the key makes our rank the group rank. */
    utc_status_t rc;
    int err = MPI_Comm_split(t->comm, 0, t->group_rank, &gs->comm);
    if (err != MPI_SUCCESS) {
        gs->comm = MPI_COMM_NULL;
        rc = utc__mpi_error(err, "MPI_Comm_split (gshared communicator)");
        goto fail;
    }
    MPI_Comm_set_errhandler(gs->comm, MPI_ERRORS_RETURN);
    MPI_Comm_size(gs->comm, &gs->nranks);
    MPI_Comm_rank(gs->comm, &gs->rank);
    if (gs->nranks != t->ngroup || gs->rank != t->group_rank) {
        rc = utc__error(UTC_ERR_INTERNAL,
                        "task '%s': gshared communicator has rank %d of %d, group says %d of %d",
                        name, gs->rank, gs->nranks, t->group_rank, t->ngroup);
        goto fail;
    }
    if ((rc = utc__gs_board_init(&gs->board, gs->nranks, gs->rank)) != UTC_OK)
        goto fail;
    gs->coll_ints = malloc(sizeof *gs->coll_ints * 4 * (size_t)gs->nranks);
    gs->coll_reqs = malloc(sizeof *gs->coll_reqs * 2 * (size_t)gs->nranks);
    if (!gs->coll_ints || !gs->coll_reqs) {
        rc = utc__error(UTC_ERR_NO_MEMORY, "task '%s': no memory for collective counts", name);
        goto fail;
    }
    if (t->opts.window_size > 0) {
        rc = gs_window_open(gs, t->opts.window_size, name);
        if (rc != UTC_OK)
            goto fail;
    }
    /* else the board gets a window at the first collective, if there is one */
    gs->board_tried = gs->nranks == 1 || t->opts.window_size > 0;
    *out = gs;
    return UTC_OK;

fail:
    utc__gs_task_close(gs);
    return rc;
}
