/*
 * gshared core: the collective board (core/board.c owns it). Each rank of a task exposes
 * one 64-bit word: the number of the last task collective it entered (ops/collectives.c
 * stores it, a plain local store). Another rank reads it only when the watchdog reports a
 * collective that waits (to name the ranks that have not arrived): directly where the
 * ranks share memory, else with MPI_Rget and a bounded wait. The word lives just past the
 * task window's data (core/window.c sizes the window for it); a task with no window gets
 * a window of its own for it at its first collective (so a task that makes none pays
 * nothing); until then, and in a one-rank task, the word is in the board itself.
 */
#ifndef UTC_GSHARED_CORE_BOARD_H
#define UTC_GSHARED_CORE_BOARD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <mpi.h>

#include <utc/status.h>

/* Bytes a window gives the board (one word, and padding to its own cache line). */
#define UTC__GS_BOARD_BYTES 64

typedef struct utc__gs_board {
    /* this rank's word: `alone`, then in the window once there is one (published with a
     * release store: the word is set before) */
    _Atomic(_Atomic uint64_t *) mine;
    _Atomic uint64_t alone;  /* the word when there is no window to put it in */
    MPI_Win win;             /* where the others' words are; MPI_WIN_NULL: unreadable */
    bool own;                /* win is the board's own (the task has no window) */
    MPI_Aint disp;           /* the word's displacement in win, on every rank */
    _Atomic uint64_t **peer; /* shared memory: every rank's word, read directly; or NULL */
    int nranks, rank;
    /* the readers' (the watchdog's monitor) state, under lock */
    pthread_mutex_t lock;
    MPI_Request *req;  /* per rank: an MPI_Rget in flight, or MPI_REQUEST_NULL */
    uint64_t *got;     /* per rank: where that read lands */
    uint64_t *last;    /* per rank: the last value read; cached for a second */
    bool *known;       /* per rank: whether `last` is an answer */
    uint64_t last_ns;  /* when `last` was read (0: never) */
    uint64_t last_key; /* and for which wait (the caller's key) */
} utc__gs_board_t;

/* Make the board of `nranks` ranks with no window yet: every word is `alone`. */
utc_status_t utc__gs_board_init(utc__gs_board_t *b, int nranks, int rank)
    __attribute__((warn_unused_result));

/* Put this rank's word at `disp` of `win` (locked for the board's life by the caller,
 * `own`: freed by utc__gs_board_fini), whose memory here is `base`; `peer_base` (may be
 * NULL) maps every rank's part of a shared window. The word keeps its value. By the
 * thread that sets the word (at the task's creation, or the leader of a collective). */
void utc__gs_board_attach(utc__gs_board_t *b, MPI_Win win, bool own, MPI_Aint disp, char *base,
                          char *const *peer_base);

/* Complete reads still in flight, free the own window, free the rest. Before the window
 * that holds the board is unlocked or freed. Collective when the board has its own window. */
void utc__gs_board_fini(utc__gs_board_t *b);

/* This rank's word: the number of the task collective it entered last. */
static inline void utc__gs_board_set(utc__gs_board_t *b, uint64_t v)
{
    /* relaxed: the word is a readout for the watchdog, ordered with nothing (another rank
     * may read an older value for a moment); the pointer is only changed by this thread,
     * the leader of a collective (utc__gs_board_attach) */
    atomic_store_explicit(atomic_load_explicit(&b->mine, memory_order_relaxed), v,
                          memory_order_relaxed);
}

/* Any thread (the watchdog). */
static inline uint64_t utc__gs_board_get_mine(utc__gs_board_t *b)
{
    /* acquire: pairs with utc__gs_board_attach's release, which set the word first */
    return atomic_load_explicit(atomic_load_explicit(&b->mine, memory_order_acquire),
                                memory_order_relaxed);
}

/*
 * Every rank's word into vals[0 .. nranks-1]; known[r] false for a rank that gave no
 * answer within timeout_s (its read stays in flight; the next call takes it up). A read
 * for the same `key` (the collective's number) made less than a second ago is given again:
 * the waiting threads of one rank are described one after the other. Returns false when
 * the others' words cannot be read at all (no window yet). Any thread; slow (for the
 * watchdog's reports only).
 */
bool utc__gs_board_read(utc__gs_board_t *b, uint64_t key, double timeout_s, uint64_t *vals,
                        bool *known);

#endif /* UTC_GSHARED_CORE_BOARD_H */
