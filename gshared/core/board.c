/* The collective board (core/board.h): one word per rank, read by the others on demand. */
#include <stdlib.h>
#include <time.h>

#include "base/clock.h"
#include "base/errors.h"
#include "core/board.h"

utc_status_t utc__gs_board_init(utc__gs_board_t *b, int nranks, int rank)
{
    *b = (utc__gs_board_t){.win = MPI_WIN_NULL, .nranks = nranks, .rank = rank};
    atomic_init(&b->alone, 0);
    atomic_init(&b->mine, &b->alone);
    b->req = malloc(sizeof *b->req * (size_t)nranks);
    b->got = calloc((size_t)nranks, sizeof *b->got);
    b->last = calloc((size_t)nranks, sizeof *b->last);
    b->known = calloc((size_t)nranks, sizeof *b->known);
    if (!b->req || !b->got || !b->last || !b->known) {
        free(b->req), free(b->got), free(b->last), free(b->known);
        return utc__error(UTC_ERR_NO_MEMORY, "no memory for the collective board of %d ranks",
                          nranks);
    }
    for (int r = 0; r < nranks; r++)
        b->req[r] = MPI_REQUEST_NULL;
    pthread_mutex_init(&b->lock, NULL);
    return UTC_OK;
}

void utc__gs_board_attach(utc__gs_board_t *b, MPI_Win win, bool own, MPI_Aint disp, char *base,
                          char *const *peer_base)
{
    _Atomic uint64_t **peer = peer_base ? malloc(sizeof *peer * (size_t)b->nranks) : NULL;
    for (int r = 0; peer && r < b->nranks; r++)
        peer[r] = (_Atomic uint64_t *)(peer_base[r] + disp);
    _Atomic uint64_t *word = (_Atomic uint64_t *)(base + disp);
    /* relaxed: only this thread stores the word; the release below publishes it */
    atomic_init(word, atomic_load_explicit(&b->alone, memory_order_relaxed));
    pthread_mutex_lock(&b->lock); /* the readers' fields */
    b->win = win;
    b->own = own;
    b->disp = disp;
    b->peer = peer;
    /* release: pairs with utc__gs_board_get_mine's acquire */
    atomic_store_explicit(&b->mine, word, memory_order_release);
    pthread_mutex_unlock(&b->lock);
}

void utc__gs_board_fini(utc__gs_board_t *b)
{
    if (!b->req)
        return; /* never made */
    /* a read the watchdog gave up on: complete it while the window is still locked */
    for (int r = 0; r < b->nranks; r++)
        if (b->req[r] != MPI_REQUEST_NULL)
            MPI_Wait(&b->req[r], MPI_STATUS_IGNORE);
    if (b->own && b->win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(b->win);
        MPI_Win_free(&b->win);
    }
    free(b->peer), free(b->req), free(b->got), free(b->last), free(b->known);
    b->req = NULL;
    pthread_mutex_destroy(&b->lock);
}

/* Start a fresh read of rank r's word (none is in flight). */
static void board_get(utc__gs_board_t *b, int r)
{
    if (MPI_Rget(&b->got[r], 1, MPI_UINT64_T, r, b->disp, 1, MPI_UINT64_T, b->win, &b->req[r]) !=
        MPI_SUCCESS)
        b->req[r] = MPI_REQUEST_NULL;
}

/* Read every word into b->last / b->known: the ones at hand at once, the others with
 * MPI_Rget, testing until each answers or timeout_s passes. */
static void board_refresh(utc__gs_board_t *b, double timeout_s)
{
    bool *fresh = calloc((size_t)b->nranks, sizeof *fresh); /* read issued in this call */
    int pending = 0;
    for (int r = 0; r < b->nranks; r++) {
        b->known[r] = false;
        if (r == b->rank || b->peer) {
            /* relaxed: as utc__gs_board_set */
            b->last[r] = r == b->rank ? utc__gs_board_get_mine(b)
                                      : atomic_load_explicit(b->peer[r], memory_order_relaxed);
            b->known[r] = true;
        } else if (b->win != MPI_WIN_NULL && fresh) {
            if (b->req[r] == MPI_REQUEST_NULL) { /* else: an older read, taken up below */
                board_get(b, r);
                fresh[r] = true;
            }
            pending += b->req[r] != MPI_REQUEST_NULL;
        }
    }
    uint64_t deadline = utc__clock_ns() + (uint64_t)(timeout_s * 1e9);
    while (pending > 0) {
        for (int r = 0; r < b->nranks; r++) {
            int done = 0;
            if (b->req[r] == MPI_REQUEST_NULL ||
                MPI_Test(&b->req[r], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || !done)
                continue;
            if (!fresh[r]) { /* an older read's answer may be stale: ask again */
                board_get(b, r);
                fresh[r] = true;
                if (b->req[r] != MPI_REQUEST_NULL)
                    continue;
            } else {
                b->last[r] = b->got[r];
                b->known[r] = true;
            }
            pending--;
        }
        if (pending == 0 || utc__clock_ns() > deadline)
            break;
        struct timespec ts = {0, 1000000}; /* 1 ms: a report, not a fast path */
        nanosleep(&ts, NULL);
    }
    free(fresh);
}

bool utc__gs_board_read(utc__gs_board_t *b, uint64_t key, double timeout_s, uint64_t *vals,
                        bool *known)
{
    pthread_mutex_lock(&b->lock);
    bool readable = b->win != MPI_WIN_NULL;
    uint64_t now = utc__clock_ns();
    if (b->last_ns == 0 || b->last_key != key || now - b->last_ns > 1000000000ull) {
        board_refresh(b, timeout_s);
        b->last_ns = utc__clock_ns();
        b->last_key = key;
    }
    for (int r = 0; r < b->nranks; r++) {
        vals[r] = b->last[r];
        known[r] = b->known[r];
    }
    pthread_mutex_unlock(&b->lock);
    return readable;
}
