/*
 * Base layer: the wait hook. Every blocking wait of the runtime says what it waits on
 * (utc__wait_begin before, utc__wait_end after); an observer above (the watchdog,
 * framework/observe/watchdog.c) plugs its functions in with utc__wait_hook_install.
 * Nothing here knows who listens.
 *
 * Cost with no observer: one relaxed load and a branch per wait. Only the outermost wait
 * of a thread matters to the observer (a task barrier that waits on an MPI request shows
 * as the barrier); nesting is the observer's to count.
 */
#ifndef UTC_BASE_WAIT_HOOK_H
#define UTC_BASE_WAIT_HOOK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* What a blocked thread waits on; obj, tag, peer and name are read as the kind says. */
typedef enum utc__wait_kind {
    UTC__WAIT_NONE = 0,
    UTC__WAIT_TASK,          /* utc_task_init/wait: obj = task id, name = task name */
    UTC__WAIT_BARRIER_LOCAL, /* a task's threads on this rank: obj = task id */
    UTC__WAIT_BARRIER,       /* all threads of a task, across ranks: obj = task id */
    UTC__WAIT_WORLD_BARRIER, /* utc_barrier */
    UTC__WAIT_MPI,           /* an MPI request (utc__mpi_wait) */
    UTC__WAIT_CONDUIT_READ,  /* obj = conduit id, tag, peer = world rank of the writer */
    UTC__WAIT_CONDUIT_WRITE, /* obj = conduit id, tag, peer = world rank of the reader */
    UTC__WAIT_CONDUIT_REQ,   /* utc_request_wait: as read/write, tag < 0 unknown */
    UTC__WAIT_CONDUIT_SETUP, /* utc_conduit_create meeting the other ranks: obj = id */
    UTC__WAIT_RMA,           /* remote access: obj = task id, peer = target world rank */
    UTC__WAIT_RMA_BARRIER,   /* global shared data barrier / create / destroy: obj = task id */
    UTC__WAIT_COLLECTIVE     /* a task collective: obj = task id */
} utc__wait_kind_t;

/* What kind, obj, tag and peer cannot say (the element and value a wait_until waits for,
 * the ranks a collective still waits on, the other rank of a shared-conduit pair), told on
 * demand. The waiter embeds this record first in a struct of its own that lives until its
 * utc__wait_end. An observer calls describe (from its own thread, while the wait lasts;
 * utc__wait_end does not return during a call) only when it reports the wait, so the
 * waiter pays nothing for it until then. describe writes one line without a newline into
 * buf (n bytes); it may take a moment (a remote read) but must not block indefinitely. */
typedef struct utc__wait_detail {
    void (*describe)(const struct utc__wait_detail *self, char *buf, size_t n);
} utc__wait_detail_t;

typedef struct utc__wait_hook {
    /* `name` (may be NULL) outlives the wait (a task's ops name, a string literal);
     * `detail` (may be NULL) lives until the matching end */
    void (*begin)(utc__wait_kind_t kind, int obj, int tag, int peer, const char *name,
                  const utc__wait_detail_t *detail);
    void (*end)(void);
} utc__wait_hook_t;

/* Set once, by utc__wait_hook_install, before any task thread exists; never cleared. */
extern atomic_bool utc__wait_hook_on;
extern utc__wait_hook_t utc__wait_hook;

/* Plug an observer in (main thread, in utc_init, before any task thread exists). */
void utc__wait_hook_install(const utc__wait_hook_t *hook);

/* Before a blocking wait, with more to say on demand (see utc__wait_detail_t). Pair every
 * begin with one end on the same thread. */
static inline void utc__wait_begin_detail(utc__wait_kind_t kind, int obj, int tag, int peer,
                                          const char *name, const utc__wait_detail_t *detail)
{
    /* relaxed: set before any task thread exists (pthread_create orders it) */
    if (atomic_load_explicit(&utc__wait_hook_on, memory_order_relaxed))
        utc__wait_hook.begin(kind, obj, tag, peer, name, detail);
}

/* Before a blocking wait. Pair every begin with one end on the same thread. */
static inline void utc__wait_begin(utc__wait_kind_t kind, int obj, int tag, int peer,
                                   const char *name)
{
    utc__wait_begin_detail(kind, obj, tag, peer, name, NULL);
}

/* After the wait. */
static inline void utc__wait_end(void)
{
    /* relaxed: as in utc__wait_begin */
    if (atomic_load_explicit(&utc__wait_hook_on, memory_order_relaxed))
        utc__wait_hook.end();
}

/* Evaluate `call` (not void) between utc__wait_begin_detail and utc__wait_end; yields its
 * value. `detail` (may be NULL) must live until the call returns. */
#define UTC__WAIT_CALL_DETAIL(kind, obj, tag, peer, name, detail, call)                    \
    __extension__({                                                                        \
        utc__wait_begin_detail(kind, obj, tag, peer, name, detail);                        \
        __typeof__(call) utc__wait_rv_ = (call);                                           \
        utc__wait_end();                                                                   \
        utc__wait_rv_;                                                                     \
    })

/* The same without a detail. */
#define UTC__WAIT_CALL(kind, obj, tag, peer, name, call)                                   \
    UTC__WAIT_CALL_DETAIL(kind, obj, tag, peer, name, NULL, call)

#endif /* UTC_BASE_WAIT_HOOK_H */
