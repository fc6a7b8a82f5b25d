/*
 * The task layer: task objects, their thread groups, the thread context, extensions that
 * modules above attach to every task. Above the process context, observe and base.
 */
#ifndef UTC_TASKS_TASK_INTERNAL_H
#define UTC_TASKS_TASK_INTERNAL_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <utc/context.h>
#include <utc/status.h>
#include <utc/task.h>

#include <uthash.h>

#include "base/sync.h"

/* Extensions: modules that attach state to every task (gshared window, GPU devices). */
typedef struct utc__task_ext {
    const char *name;
    /* On every rank at utc_task_create, after the task communicator exists. */
    utc_status_t (*create)(utc_task_t *task);
    /* On every rank at utc_task_destroy (after the threads have exited), or after a
     * failed create whose `create` had succeeded. */
    void (*destroy)(utc_task_t *task);
    /* In each task thread, once, before its first command. */
    utc_status_t (*thread_start)(utc_ctx_t *ctx);
    /* In each task thread, once, after fini. */
    void (*thread_stop)(utc_ctx_t *ctx);
} utc__task_ext_t;

/* The extension slots; the runtime layer (runtime/runtime.c) plugs the modules in. */
enum { UTC__EXT_GSHARED = 0, UTC__EXT_GPU = 1, UTC__EXT_COUNT = 2 };

/* Plug a module's extension into `slot` (utc_init, before any task exists). A slot left
 * empty does nothing. */
void utc__task_ext_register(int slot, const utc__task_ext_t *ext);

typedef struct utc__mailbox utc__mailbox_t;

struct utc__task {
    int id;                     /* equal on all ranks */
    const utc_task_ops_t *ops;
    utc_task_options_t opts;    /* copied; cpu_list and devices copied too */
    int nthreads;               /* global thread count */
    int *procs;                 /* procs[global id] = world rank */
    int nlocal;                 /* threads on this rank */
    int ngpu_local;             /* of which GPU threads: local ids 0 .. ngpu_local-1 */
    /* the body each kind of thread runs (by utc_task_kind_t, CPU and GPU), from the ops
     * table as its layout says (checked at creation; NULL where the task has no such
     * threads) */
    int (*body[2])(utc_task_t *self, utc_ctx_t *ctx, void *arg);
    int *local_gids;            /* local id -> global id */
    int ngroup;                 /* ranks holding threads, in order of first appearance */
    int *group_ranks;           /* group rank -> world rank */
    int group_rank;             /* this rank in the group, -1 if not a member */
    int entry_rank;             /* world rank of procs[0] */
    MPI_Comm comm;              /* the task communicator; MPI_COMM_NULL if not a member */
    void *ext[UTC__EXT_COUNT];  /* per-extension state */
    /* thread group (only when nlocal > 0) */
    struct utc__thread *threads;
    utc__mailbox_t *mailbox;
    utc__barrier_t barrier;     /* local barrier of the task's threads on this rank */
    /* state of the "one thread does it" helper */
    atomic_int single_rc;
    /* start-up of the threads: each reports its binding and extensions' status */
    atomic_uint started;
    atomic_int start_rc;
    /* the message of the thread whose failure set start_rc (written by that thread
     * before its seq_cst count in `started`, read by the creator after) */
    char start_msg[256];
    int start_thread;
    pthread_mutex_t owner_lock; /* serializes init/run/wait/destroy calls on this rank */
    bool initialized;           /* init has run (or there is no init) */
    bool destroying;            /* utc_task_destroy has begun */
    bool lend;                  /* utc_task_wait may run a thread's share (task.c) */
    struct utc__task *destroy_next; /* utc_finalize's list of tasks left alive */
    utc_task_t *self;           /* the rank instance (registry key) */
    UT_hash_handle hh;          /* registry of live tasks, keyed by self */
};

struct utc__thread {
    utc_ctx_t ctx;               /* ctx.kind: CPU or GPU */
    pthread_t tid;
    struct utc__task *task;
    int bind_slot;         /* binding-cursor slot of this thread */
    void *ext[UTC__EXT_COUNT];  /* per-extension, per-thread state */
    /* a GPU task thread's device and stream (a cudaStream_t), set by the gpu module when
     * the thread starts (gpu_stream NULL on any other thread): what modules that may not
     * include the gpu module's headers (the conduits' device layer) need of it */
    int gpu_device;
    void *gpu_stream;
    /* the object whose call this thread is in (utc__call_enter), or NULL: written by this
     * thread only, so a call costs no shared write */
    _Atomic(const void *) in_call;
    /* commands: the one this thread's share is running (valid while it runs), and how
     * many it has finished (seq + 1 of the last) */
    uint64_t cur_seq;
    _Atomic uint64_t done_seq;
};

/* The device and stream of `ctx` when it is a GPU task thread (true); false, with nothing
 * set, for any other thread (a CPU thread, or no task thread: ctx NULL). */
static inline bool utc__ctx_gpu(const utc_ctx_t *ctx, int *device, void **stream)
{
    if (!ctx || !ctx->impl || !ctx->impl->gpu_stream)
        return false;
    *device = ctx->impl->gpu_device;
    *stream = ctx->impl->gpu_stream;
    return true;
}

/* Whether a sibling of the calling thread (another local thread of its task) has already
 * finished the command the caller is running, so cannot join an all-threads call any
 * more; *who gets its local id. */
static inline bool utc__sibling_gone(utc_ctx_t *ctx, int *who)
{
    struct utc__thread *me = ctx->impl;
    struct utc__thread *all = me - ctx->local_id; /* the task's array of local threads */
    for (int j = 0; j < ctx->local_count; j++) {
        if (j != ctx->local_id &&
            atomic_load_explicit(&all[j].done_seq, memory_order_acquire) > me->cur_seq) {
            *who = j;
            return true;
        }
    }
    return false;
}

/* A thread of a task enters a call on `obj` (a conduit), then the caller looks at the
 * object's "destroyed" flag. With the destroyer's store of that flag, its heavy fence and
 * its look at every thread (utc__task_wait_calls_left), either the thread sees the flag or
 * the destroyer waits for it to leave (an asymmetric Dekker pair: base/sync.h). */
static inline void utc__call_enter(utc_ctx_t *ctx, const void *obj)
{
    atomic_store_explicit(&ctx->impl->in_call, obj, memory_order_relaxed);
    utc__fence_light();
}

static inline void utc__call_leave(utc_ctx_t *ctx)
{
    /* release: the call's last use of the object comes before */
    atomic_store_explicit(&ctx->impl->in_call, NULL, memory_order_release);
}

/* Within a call on `obj`: the thread hands an operation to a transport. While it does,
 * its mark reads obj + 1, and the caller looks at the "destroyed" flag after
 * utc__call_starting: the same Dekker pair as above, so a destroyer that has raised the flag
 * can wait for the starts already past their look (utc__task_wait_starts_left) before it
 * shuts the transport down; nothing enters a transport after its shutdown began. */
static inline void utc__call_starting(utc_ctx_t *ctx, const void *obj)
{
    atomic_store_explicit(&ctx->impl->in_call, (const char *)obj + 1, memory_order_relaxed);
    utc__fence_light();
}

static inline void utc__call_started(utc_ctx_t *ctx, const void *obj)
{
    /* release: the start's last use of the transport comes before */
    atomic_store_explicit(&ctx->impl->in_call, obj, memory_order_release);
}

/* Wait (spinning, then yielding, then sleeping briefly) until no thread of `task` on this
 * rank is in a call on `obj` (starting or not). */
void utc__task_wait_calls_left(utc_task_t *task, const void *obj);

/* The same, for the threads of `task` starting an operation on `obj`. */
void utc__task_wait_starts_left(utc_task_t *task, const void *obj);

/* Listeners above the tasks layer (the conduits): told when a run of a task fails on a
 * thread of this rank, and when a run of a task is queued on this rank. Installed once by
 * utc_init, before any task exists. */
typedef struct utc__task_hooks {
    void (*run_failed)(utc_task_t *task, utc_status_t rc, int global_thread);
    void (*run_queued)(utc_task_t *task);
    void (*destroying)(utc_task_t *task);
} utc__task_hooks_t;
void utc__task_hooks_install(const utc__task_hooks_t *hooks);
extern const utc__task_hooks_t *utc__task_hooks;

/* Look up a live task; UTC_ERR_INVALID_HANDLE (with message) if it is not one. */
utc_status_t utc__task_check(const utc_task_t *task, const char *fn);
/* The calling thread's ctx if it is a thread of `task`, else NULL. */
utc_ctx_t *utc__ctx_of(const utc_task_t *task);
/* Check that ctx is the calling thread's own context. */
utc_status_t utc__ctx_check(utc_ctx_t *ctx, const char *fn);

/* utc_finalize: destroy every live task, newest first. */
void utc__task_destroy_all(void);

#endif /* UTC_TASKS_TASK_INTERNAL_H */
