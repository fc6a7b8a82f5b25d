/*
 * The command mailbox of a task's threads on one rank: a ring of commands posted by the
 * owner (the thread calling utc_task_init/run/destroy) and taken by every task thread.
 * Threads and owner sleep on futex words when there is nothing to do.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/errors.h"
#include "base/sync.h"
#include "base/text.h"
#include "tasks/mailbox.h"

#define MAILBOX_SLOTS 64
/* How long an idle task thread spins for its next command before it sleeps. */
#define TAKE_SPIN_NS 30000
/* The failing thread's message kept for the owner: as long as utc_last_error's. */
#define MAILBOX_MSG 512

typedef struct {
    utc__cmd_kind_t kind;
    void *arg;
    atomic_int remaining; /* threads that have not finished this command */
} slot_t;

struct utc__mailbox {
    int nthreads;
    uint64_t nposted;        /* owner only */
    atomic_uint posted;      /* futex word: commands posted (mod 2^32) */
    atomic_uint completed;   /* futex word: commands completed by every thread */
    atomic_uint sleepers;    /* task threads asleep (or about to be) on `posted` */
    atomic_uint owner_waits; /* the owner is asleep (or about to be) on `completed` */
    atomic_int first_error;  /* first error since the last wait_all */
    /* the task function's own value behind first_error (utc__mailbox_note_user): written
     * by the thread that set first_error, before its mailbox_done (seq_cst), read by the
     * owner after wait_all saw the command completed */
    bool user_set;
    int user_raw, user_thread;
    char user_msg[MAILBOX_MSG];
    /* the owner's copy, taken by wait_all (which clears user_set) */
    bool last_user_set;
    int last_user_raw, last_user_thread;
    char last_user_msg[MAILBOX_MSG];
    slot_t slots[MAILBOX_SLOTS];
    /* per thread: commands taken (mod 2^32). A thread takes its share of a command by
     * moving its counter from the command's number to the next; the owner may take a
     * thread's share of a RUN the same way (utc__mailbox_claim), whoever comes first. */
    atomic_uint claimed[];
};

utc_status_t utc__mailbox_create(int nthreads, utc__mailbox_t **out)
{
    utc__mailbox_t *mb = calloc(1, sizeof *mb + sizeof(atomic_uint) * (size_t)nthreads);
    if (!mb)
        return utc__error(UTC_ERR_NO_MEMORY, "cannot allocate a task mailbox");
    mb->nthreads = nthreads;
    *out = mb;
    return UTC_OK;
}

void utc__mailbox_shrink(utc__mailbox_t *mb, int nthreads) { mb->nthreads = nthreads; }

void utc__mailbox_destroy(utc__mailbox_t *mb) { free(mb); }

/* Owner sleeps until `completed` changes from c. The seq_cst flag store and the seq_cst
 * increment in utc__mailbox_done form a Dekker pair: either the owner sees the new count
 * or the completer sees the flag and wakes it. */
static void owner_sleep(utc__mailbox_t *mb, unsigned c)
{
    atomic_store(&mb->owner_waits, 1);
    if (atomic_load(&mb->completed) == c)
        utc__futex_wait(&mb->completed, c);
    atomic_store(&mb->owner_waits, 0);
}

/* Post a command; wake the sleeping threads when `wake`. Returns its number. */
static uint64_t post(utc__mailbox_t *mb, utc__cmd_kind_t kind, void *arg, bool wake)
{
    uint64_t seq = mb->nposted;
    unsigned c;
    /* a full ring: wait for the oldest command to be completed by every thread */
    while ((unsigned)seq - (c = atomic_load(&mb->completed)) >= MAILBOX_SLOTS)
        owner_sleep(mb, c);
    slot_t *s = &mb->slots[seq % MAILBOX_SLOTS];
    s->kind = kind;
    s->arg = arg;
    atomic_store_explicit(&s->remaining, mb->nthreads, memory_order_relaxed); /* published below */
    mb->nposted = seq + 1;
    /* seq_cst: publishes the slot (release) and pairs with the sleepers flag (Dekker) */
    atomic_fetch_add(&mb->posted, 1);
    if (wake && atomic_load(&mb->sleepers) > 0)
        utc__futex_wake(&mb->posted, INT_MAX);
    return seq;
}

uint64_t utc__mailbox_post(utc__mailbox_t *mb, utc__cmd_kind_t kind, void *arg)
{
    return post(mb, kind, arg, true);
}

bool utc__mailbox_post_owned(utc__mailbox_t *mb, void *arg, uint64_t *seq)
{
    /* with nothing in flight every earlier command has been claimed by the thread (or
     * the owner): its counter is at this one, and the claim, before the command is out,
     * cannot lose to it */
    if (mb->nthreads != 1 || atomic_load(&mb->completed) != (unsigned)mb->nposted ||
        !utc__mailbox_claim(mb, 0, mb->nposted))
        return false;
    /* nobody to wake: the thread finds the share taken at its next wake-up */
    *seq = post(mb, UTC__CMD_RUN, arg, false);
    return true;
}

void utc__mailbox_take(utc__mailbox_t *mb, uint64_t seq, bool spin)
{
    unsigned want = (unsigned)seq;
    /* `posted` counts commands: it equals `want` exactly while command `seq` is not out */
    while (atomic_load_explicit(&mb->posted, memory_order_acquire) == want)
        utc__wait_change_spin(&mb->posted, want, &mb->sleepers, spin ? TAKE_SPIN_NS : 0);
}

void utc__mailbox_command(utc__mailbox_t *mb, uint64_t seq, utc__cmd_kind_t *kind, void **arg)
{
    const slot_t *s = &mb->slots[seq % MAILBOX_SLOTS];
    *kind = s->kind;
    *arg = s->arg;
}

void utc__mailbox_note_user(utc__mailbox_t *mb, utc_status_t rc, int raw, int thread,
                            const char *msg)
{
    int expected = 0;
    if (rc != UTC_OK && atomic_compare_exchange_strong(&mb->first_error, &expected, (int)rc)) {
        mb->user_set = true;
        mb->user_raw = raw;
        mb->user_thread = thread;
        utc__text_copy(mb->user_msg, sizeof mb->user_msg, msg ? msg : "");
    }
}

bool utc__mailbox_first_user(utc__mailbox_t *mb, int *raw, int *thread, const char **msg)
{
    if (!mb->last_user_set)
        return false;
    *raw = mb->last_user_raw;
    *thread = mb->last_user_thread;
    *msg = mb->last_user_msg;
    return true;
}

void utc__mailbox_done(utc__mailbox_t *mb, uint64_t seq, utc_status_t rc)
{
    if (rc != UTC_OK) {
        int expected = 0;
        atomic_compare_exchange_strong(&mb->first_error, &expected, (int)rc);
    }
    slot_t *s = &mb->slots[seq % MAILBOX_SLOTS];
    /* the last thread of a command counts it completed (seq_cst: Dekker with owner_sleep) */
    if (atomic_fetch_sub(&s->remaining, 1) == 1) {
        atomic_fetch_add(&mb->completed, 1);
        if (atomic_load(&mb->owner_waits))
            utc__futex_wake(&mb->completed, INT_MAX);
    }
}

bool utc__mailbox_claim(utc__mailbox_t *mb, int thread, uint64_t seq)
{
    unsigned expected = (unsigned)seq;
    /* seq_cst: one of the thread and the owner wins; the winner's later writes (the run's
     * effects, mailbox_done) are ordered by mailbox_done's own atomics */
    return atomic_compare_exchange_strong(&mb->claimed[thread], &expected, expected + 1);
}

bool utc__mailbox_lendable(utc__mailbox_t *mb, uint64_t *seq, void **arg)
{
    uint64_t last = mb->nposted - 1;
    /* only the one command in flight, and only a RUN: commands of a thread stay in order */
    if (mb->nposted == 0 || atomic_load(&mb->completed) != (unsigned)last)
        return false;
    slot_t *s = &mb->slots[last % MAILBOX_SLOTS];
    if (s->kind != UTC__CMD_RUN)
        return false;
    *seq = last;
    *arg = s->arg;
    return true;
}

utc_status_t utc__mailbox_wait_all(utc__mailbox_t *mb, bool spin)
{
    unsigned target = (unsigned)mb->nposted, c;
    /* spin briefly first: short commands finish within microseconds */
    if (spin)
        utc__spin_while_eq(&mb->completed, target - 1, 30000);
    while ((c = atomic_load(&mb->completed)) != target)
        owner_sleep(mb, c);
    /* nothing is in flight now: take the user's value behind the error for
     * utc__mailbox_first_user, and start afresh */
    utc_status_t rc = (utc_status_t)atomic_exchange(&mb->first_error, 0);
    mb->last_user_set = rc != UTC_OK && mb->user_set;
    mb->last_user_raw = mb->user_raw;
    mb->last_user_thread = mb->user_thread;
    if (mb->last_user_set)
        memcpy(mb->last_user_msg, mb->user_msg, sizeof mb->last_user_msg);
    mb->user_set = false;
    return rc;
}

bool utc__mailbox_busy(utc__mailbox_t *mb)
{
    return atomic_load(&mb->completed) != (unsigned)mb->nposted;
}

bool utc__mailbox_wait_for(utc__mailbox_t *mb, double timeout_s)
{
    unsigned target = (unsigned)mb->nposted, c;
    uint64_t end = utc__clock_ns() + (uint64_t)(timeout_s * 1e9);
    while ((c = atomic_load(&mb->completed)) != target) {
        uint64_t now = utc__clock_ns();
        if (now >= end)
            return false;
        /* as owner_sleep, with a limit */
        atomic_store(&mb->owner_waits, 1);
        if (atomic_load(&mb->completed) == c)
            utc__futex_wait_timeout(&mb->completed, c, (double)(end - now) * 1e-9);
        atomic_store(&mb->owner_waits, 0);
    }
    return true;
}
