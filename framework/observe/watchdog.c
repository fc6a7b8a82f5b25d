/*
 * The watchdog: per-thread "what I wait on" records and the monitor thread that reports
 * long waits (UTC_WATCHDOG=SECONDS; on by default at 60 s, UTC_WATCHDOG=0 turns it off).
 * See watchdog.h.
 *
 * Records live in a list that only grows (a record is reused once its thread has exited);
 * the monitor walks it without a lock. Each record is written by its own thread only and
 * read by the monitor as a seqlock: the owner writes the fields, then publishes `serial`;
 * the monitor reads `serial`, the fields, and `serial` again, and skips the record if it
 * changed meanwhile.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <utc/context.h>

#include "base/clock.h"
#include "base/errors.h"
#include "base/sync.h"
#include "base/text.h"
#include "base/wait_hook.h"
#include "observe/watchdog.h"

typedef struct wd_rec {
    /* written by the owner thread, read by the monitor */
    atomic_uint serial;      /* odd while the owner waits; +1 at each start and end of a
                              * wait, so a new wait has a new value. No clock is read on the
                              * owner's side: the monitor times a wait from when it first
                              * saw it (so it may report it up to one scan late) */
    atomic_int kind, obj, tag, peer;
    _Atomic(const char *) name;
    /* the wait's detail (may be NULL): set with the fields above; cleared before the wait
     * ends, and the owner then waits while `describing` says the monitor is inside it, so
     * the monitor calls it only while it lives (wd_clear_detail) */
    _Atomic(const utc__wait_detail_t *) detail;
    atomic_int describing; /* the monitor is in more_detail */
    atomic_int task_id, thread_id;   /* the waiting thread's task and global id; -1: none */
    _Atomic(const char *) task_name;
    atomic_int tid;          /* the owner's kernel thread id */
    atomic_bool in_use;      /* owned by a live thread */
    struct wd_rec *next;     /* set before the record is published; never changes */
    /* the owner's alone */
    int depth;
    bool has_detail;         /* the outermost wait has a detail to clear at its end */
    /* the monitor's alone */
    unsigned mon_serial;
    uint64_t mon_first_ns;   /* when the monitor first saw the wait of mon_serial */
    double mon_next;         /* report again once the wait is this long (seconds) */
} wd_rec_t;

static _Atomic(wd_rec_t *) wd_head;
static _Thread_local wd_rec_t *wd_self;
static pthread_key_t wd_key;

/* The threshold when UTC_WATCHDOG is not set, in seconds. */
#define UTC__WD_DEFAULT_S "60"

static double wd_threshold;
static int wd_rank = -1;
static pthread_t wd_thread;
static bool wd_running;
static bool wd_stop_flag;
static pthread_mutex_t wd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wd_cond;

/* Who the calling thread is, told by the task layer when a task thread starts
 * (utc__wd_thread_identity); threads that are not task threads keep task_id -1. */
static _Thread_local struct {
    int task_id, thread_id;
    const char *task_name;
} wd_ident = {-1, -1, NULL};

void utc__wd_thread_identity(int task_id, const char *task_name, int global_id)
{
    wd_ident.task_id = task_id;
    wd_ident.thread_id = global_id;
    wd_ident.task_name = task_name;
}

/*
 * The owner is done with its wait's detail: once this returns, the monitor does not use it.
 * A Dekker pair with more_detail, seq_cst on both sides: either the monitor's load of the
 * detail comes after this store (it finds NULL, or a later wait's detail, which its serial
 * check refuses), or the load of `describing` below comes after the monitor's increment
 * and the owner waits for it to leave (rare: only while a long wait is being reported).
 * One atomic exchange instead of a mutex's lock and unlock: ~10 ns of every task
 * collective (doc/PERFORMANCE.md).
 */
static void wd_clear_detail(wd_rec_t *r)
{
    atomic_store(&r->detail, NULL);
    utc__backoff_t b = UTC__BACKOFF_INIT;
    while (atomic_load(&r->describing))
        utc__backoff_step(&b);
    r->has_detail = false;
}

/* Thread exit (pthread key destructor): the record may serve another thread. */
static void wd_release(void *p)
{
    wd_rec_t *r = p;
    unsigned s = atomic_load_explicit(&r->serial, memory_order_relaxed);
    if (r->has_detail)
        wd_clear_detail(r);
    if (s & 1)
        atomic_store_explicit(&r->serial, s + 1, memory_order_relaxed);
    r->depth = 0;
    /* release: the next owner's writes come after ours */
    atomic_store_explicit(&r->in_use, false, memory_order_release);
}

static wd_rec_t *wd_acquire(void)
{
    wd_rec_t *r;
    /* acquire: pairs with the release CAS that published each record */
    for (r = atomic_load_explicit(&wd_head, memory_order_acquire); r; r = r->next) {
        bool expected = false;
        if (!atomic_load_explicit(&r->in_use, memory_order_relaxed) &&
            atomic_compare_exchange_strong(&r->in_use, &expected, true))
            break;
    }
    if (!r) {
        if (!(r = calloc(1, sizeof *r)))
            return NULL; /* this thread goes unwatched */
        atomic_init(&r->in_use, true);
        wd_rec_t *old = atomic_load_explicit(&wd_head, memory_order_relaxed);
        do
            r->next = old;
        /* release: the record's initial state is visible to whoever finds it */
        while (!atomic_compare_exchange_weak_explicit(&wd_head, &old, r, memory_order_release,
                                                      memory_order_relaxed));
    }
    atomic_store_explicit(&r->tid, (int)syscall(SYS_gettid), memory_order_relaxed);
    r->depth = 0;
    wd_self = r;
    pthread_setspecific(wd_key, r);
    return r;
}

static void wd_begin(utc__wait_kind_t kind, int obj, int tag, int peer, const char *name,
                     const utc__wait_detail_t *detail)
{
    wd_rec_t *r = wd_self ? wd_self : wd_acquire();
    if (!r || r->depth++ > 0)
        return; /* only the outermost wait is recorded */
    /* relaxed stores: published by the release store of serial below */
    atomic_store_explicit(&r->kind, (int)kind, memory_order_relaxed);
    atomic_store_explicit(&r->obj, obj, memory_order_relaxed);
    atomic_store_explicit(&r->tag, tag, memory_order_relaxed);
    atomic_store_explicit(&r->peer, peer, memory_order_relaxed);
    atomic_store_explicit(&r->name, name, memory_order_relaxed);
    /* release: pairs with more_detail's acquire load; a monitor that sees this detail sees
     * the serial of the wait before it has moved on (and refuses the detail) */
    atomic_store_explicit(&r->detail, detail, memory_order_release);
    r->has_detail = detail != NULL;
    atomic_store_explicit(&r->task_id, wd_ident.task_id, memory_order_relaxed);
    atomic_store_explicit(&r->thread_id, wd_ident.thread_id, memory_order_relaxed);
    atomic_store_explicit(&r->task_name, wd_ident.task_name, memory_order_relaxed);
    /* the owner alone writes serial: a plain increment, published with release */
    unsigned s = atomic_load_explicit(&r->serial, memory_order_relaxed);
    atomic_store_explicit(&r->serial, s + 1, memory_order_release);
}

static void wd_end(void)
{
    wd_rec_t *r = wd_self;
    if (!r || r->depth == 0)
        return;
    if (--r->depth == 0) {
        if (r->has_detail) /* the monitor may be inside describe: it cannot start one after */
            wd_clear_detail(r);
        /* release: the monitor's second read of serial sees the wait is over before it
         * could see the next wait's fields */
        unsigned s = atomic_load_explicit(&r->serial, memory_order_relaxed);
        atomic_store_explicit(&r->serial, s + 1, memory_order_release);
    }
}

static const char *str_or(const char *s, const char *dflt) { return s ? s : dflt; }

static void describe(char *buf, size_t n, int kind, int obj, int tag, int peer,
                     const char *name)
{
    switch ((utc__wait_kind_t)kind) {
    case UTC__WAIT_TASK:
        snprintf(buf, n, "utc_task_init/wait of task '%s' (id %d): its threads are still busy",
                 utc__text_name(name), obj);
        break;
    case UTC__WAIT_BARRIER_LOCAL:
        snprintf(buf, n, "the local barrier of task '%s' (id %d)", utc__text_name(name), obj);
        break;
    case UTC__WAIT_BARRIER:
        snprintf(buf, n, "the task barrier of task '%s' (id %d), across its ranks",
                 utc__text_name(name), obj);
        break;
    case UTC__WAIT_WORLD_BARRIER:
        snprintf(buf, n, "utc_barrier (all ranks)");
        break;
    case UTC__WAIT_MPI:
        snprintf(buf, n, "an MPI request%s%s", name ? " of " : "", str_or(name, ""));
        break;
    case UTC__WAIT_CONDUIT_READ:
        snprintf(buf, n, "conduit %d: a read of tag %d from rank %d", obj, tag, peer);
        break;
    case UTC__WAIT_CONDUIT_WRITE:
        snprintf(buf, n, "conduit %d: a write of tag %d to rank %d (the reader has not taken "
                 "it)", obj, tag, peer);
        break;
    case UTC__WAIT_CONDUIT_REQ:
        snprintf(buf, n, "conduit %d: utc_request_wait on a %s of tag %d, peer rank %d", obj,
                 str_or(name, "transfer"), tag, peer);
        break;
    case UTC__WAIT_CONDUIT_SETUP:
        snprintf(buf, n, "conduit %d: utc_conduit_create, waiting for the other ranks to "
                 "create it too", obj);
        break;
    case UTC__WAIT_RMA:
        snprintf(buf, n, "RMA: global shared data of task '%s' (id %d) on rank %d",
                 utc__text_name(name), obj, peer);
        break;
    case UTC__WAIT_RMA_BARRIER:
        snprintf(buf, n, "RMA: a global shared data team step of task '%s' (id %d) "
                 "(utc_gdata_barrier, a collective, utc_gdata_create/destroy)",
                 utc__text_name(name), obj);
        break;
    case UTC__WAIT_COLLECTIVE:
        snprintf(buf, n, "a task collective of task '%s' (id %d)", utc__text_name(name), obj);
        break;
    default:
        snprintf(buf, n, "(unknown wait %d)", kind);
        break;
    }
}

/* The wait's own account (utc__wait_detail_t), if it gave one and the wait of `serial` is
 * still on; "" otherwise. While `describing` is up the owner cannot finish ending the wait
 * (wd_clear_detail), so the detail record it points to is alive for the call. */
static void more_detail(wd_rec_t *r, unsigned serial, char *buf, size_t n)
{
    buf[0] = '\0';
    /* seq_cst increment, then load: the monitor's half of wd_clear_detail's Dekker pair. The
     * load also acquires wd_begin's release store of the detail; a later wait's detail brings
     * the serial past `serial`, which the check below refuses. */
    atomic_fetch_add(&r->describing, 1);
    const utc__wait_detail_t *d = atomic_load(&r->detail);
    if (d && atomic_load_explicit(&r->serial, memory_order_acquire) == serial)
        d->describe(d, buf, n);
    /* release: describe's reads of the detail come before the owner sees 0 and ends it */
    atomic_fetch_sub_explicit(&r->describing, 1, memory_order_release);
}

static void scan(void)
{
    uint64_t now = utc__clock_ns();
    /* acquire: pairs with the release CAS publishing records */
    for (wd_rec_t *r = atomic_load_explicit(&wd_head, memory_order_acquire); r; r = r->next) {
        /* acquire: pairs with the owner's release store; the fields are then current */
        unsigned serial = atomic_load_explicit(&r->serial, memory_order_acquire);
        if (!(serial & 1))
            continue; /* not waiting */
        int kind = atomic_load_explicit(&r->kind, memory_order_relaxed);
        int obj = atomic_load_explicit(&r->obj, memory_order_relaxed);
        int tag = atomic_load_explicit(&r->tag, memory_order_relaxed);
        int peer = atomic_load_explicit(&r->peer, memory_order_relaxed);
        const char *name = atomic_load_explicit(&r->name, memory_order_relaxed);
        int task_id = atomic_load_explicit(&r->task_id, memory_order_relaxed);
        int thread_id = atomic_load_explicit(&r->thread_id, memory_order_relaxed);
        const char *task_name = atomic_load_explicit(&r->task_name, memory_order_relaxed);
        int tid = atomic_load_explicit(&r->tid, memory_order_relaxed);
        /* the seqlock's second read: ordered after the field reads */
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&r->serial, memory_order_relaxed) != serial)
            continue; /* that wait ended (or another began) while we looked */
        if (serial != r->mon_serial || r->mon_next <= 0) {
            /* a wait we have not seen: time it from now */
            r->mon_serial = serial;
            r->mon_first_ns = now;
            r->mon_next = wd_threshold;
        }
        double waited = (double)(now - r->mon_first_ns) * 1e-9;
        if (waited < r->mon_next)
            continue;
        /* report again each time the wait doubles: a hang stays visible, but quietly */
        while (r->mon_next <= waited)
            r->mon_next *= 2;
        char who[192], what[256], prefix[48];
        if (task_id >= 0)
            snprintf(who, sizeof who, "task '%s' (id %d) thread %d (tid %d)",
                     utc__text_name(task_name), task_id, thread_id, tid);
        else
            snprintf(who, sizeof who, "%s (tid %d)",
                     tid == (int)getpid() ? "the main thread" : "a non-task thread", tid);
        describe(what, sizeof what, kind, obj, tag, peer, name);
        char more[256];
        more_detail(r, serial, more, sizeof more);
        snprintf(prefix, sizeof prefix, "utc[%d] watchdog: ", wd_rank);
        /* one call per line: lines of ranks and threads stay whole; names escaped */
        utc__log_write(prefix, "%s has waited %.1f s on %s%s%s", who, waited, what,
                       more[0] ? ": " : "", more);
    }
    fflush(stderr);
}

static void *monitor_main(void *arg)
{
    (void)arg;
    double interval = wd_threshold / 4;
    if (interval < 0.01)
        interval = 0.01;
    pthread_mutex_lock(&wd_lock);
    while (!wd_stop_flag) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        long long ns = (long long)ts.tv_nsec + (long long)(interval * 1e9);
        ts.tv_sec += (time_t)(ns / 1000000000);
        ts.tv_nsec = (long)(ns % 1000000000);
        while (!wd_stop_flag && pthread_cond_timedwait(&wd_cond, &wd_lock, &ts) != ETIMEDOUT)
            ;
        if (wd_stop_flag)
            break;
        pthread_mutex_unlock(&wd_lock);
        scan();
        pthread_mutex_lock(&wd_lock);
    }
    pthread_mutex_unlock(&wd_lock);
    return NULL;
}

void utc__wd_start(int rank)
{
    const char *env = getenv("UTC_WATCHDOG");
    if (!env || !*env)
        env = UTC__WD_DEFAULT_S; /* on by default; UTC_WATCHDOG=0 turns it off */
    char *end;
    errno = 0;
    double s = strtod(env, &end);
    if (end == env || *end || errno || !isfinite(s) || s < 0 || s > 1e6) {
        utc_log(UTC_LOG_WARN, "UTC_WATCHDOG='%s' is not a number of seconds (0 .. 1000000); "
                "no watchdog", env);
        return;
    }
    if (s == 0)
        return; /* UTC_WATCHDOG=0: off */
    static bool key_made;
    if (!key_made) {
        if (pthread_key_create(&wd_key, wd_release) != 0) {
            utc_log(UTC_LOG_WARN, "UTC_WATCHDOG: no thread-specific key; no watchdog");
            return;
        }
        key_made = true;
    }
    wd_threshold = s;
    wd_rank = rank;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&wd_cond, &ca);
    pthread_condattr_destroy(&ca);
    wd_stop_flag = false;
    utc__wait_hook_install(&(utc__wait_hook_t){.begin = wd_begin, .end = wd_end});
    int err = pthread_create(&wd_thread, NULL, monitor_main, NULL);
    if (err != 0) {
        utc_log(UTC_LOG_WARN, "UTC_WATCHDOG: cannot start the monitor thread (%s)",
                strerror(err));
        pthread_cond_destroy(&wd_cond);
        return; /* records are still kept: cheap, and nothing reads them */
    }
    wd_running = true;
    utc_log(UTC_LOG_DEBUG, "watchdog: reporting waits longer than %g s", s);
}

void utc__wd_stop(void)
{
    if (!wd_running)
        return;
    pthread_mutex_lock(&wd_lock);
    wd_stop_flag = true;
    pthread_cond_signal(&wd_cond);
    pthread_mutex_unlock(&wd_lock);
    pthread_join(wd_thread, NULL);
    pthread_cond_destroy(&wd_cond);
    wd_running = false;
}
