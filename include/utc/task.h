/**
 * @file task.h
 * @brief Tasks: a user's computation, run by a group of threads spread over ranks.
 *
 * A user "subclasses" a task by writing a struct whose first member is utc_task_t and
 * an ops table:
 * @code
 * typedef struct { utc_task_t base; int width; } my_task_t;
 * static utc_status_t my_run(utc_task_t *self, utc_ctx_t *ctx, void *arg);
 * static const utc_task_ops_t my_ops = {
 *     .name = "mine", .size = sizeof(my_task_t), .run = my_run };
 * @endcode
 * The runtime allocates `ops->size` zeroed bytes per rank (the rank instance: its fields
 * are shared by that rank's threads) and starts the task's threads once, at creation.
 *
 * Creating and destroying a task is collective: every rank calls utc_task_create in the
 * same order with the same arguments, so task ids agree with no messages. A rank that
 * holds none of the task's threads keeps a handle; init, run and wait on it return at once.
 */
#ifndef UTC_TASK_H
#define UTC_TASK_H

#include <stddef.h>
#include <utc/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A task: the runtime's part, first member of every user task struct (struct utc_task). */
typedef struct utc_task utc_task_t;
/** What a task thread knows about itself (struct utc_ctx). */
typedef struct utc_ctx utc_ctx_t;
struct utc__task;
struct utc__thread;

/** Kind of a task's threads (of a task: utc_task_options_t.kind; of a thread: ctx->kind). */
typedef enum utc_task_kind {
    UTC_TASK_CPU = 0,  /**< plain CPU threads */
    UTC_TASK_GPU = 1,  /**< each thread gets a GPU device and a CUDA stream (utc/gpu.h) */
    /** both kinds (a task's kind only): on every rank, the first `opts.gpu_threads` local
     *  threads are GPU threads (device and stream as in a GPU task), the others CPU
     *  threads; needs a layout-1 ops table with the bodies of the kinds it has */
    UTC_TASK_MIXED = 2
} utc_task_kind_t;

/**
 * @brief The layout of utc_task_ops_t this header describes: put it in `.version` to use
 * the fields after `fini` (`run_gpu`).
 *
 * The table grows at its end only, and each layout has a number. A table that leaves
 * `.version` out (0, as every table written before it existed) is layout 0: `name` to
 * `fini`, with `run` the body of every thread whatever the task's kind, exactly as
 * before; the fields after `fini` must then be left out (NULL). A table with
 * `.version = UTC_TASK_OPS_VERSION` is read up to the last field of that layout. A
 * version this library does not know (from a newer header, or garbage) is refused by
 * utc_task_create with UTC_ERR_INVALID_ARG. Tables are checked once, at utc_task_create.
 *
 * Layouts: 0: name, size, init, run, fini. 1: adds version and run_gpu (run is then the
 * CPU body only).
 *
 * The compatibility is of source: a table written for an older layout compiles unchanged
 * against this header (the new fields are zero) and behaves as before. A program is
 * compiled against the <utc/task.h> of the UTC it links.
 */
#define UTC_TASK_OPS_VERSION 1

/**
 * @brief A task's functions: a CPU body (`run`), a GPU body (`run_gpu`, layout 1), or both.
 *
 * Each function is called by every thread of the task on this rank, each with its own
 * ctx. A non-zero return is an error: negative values are taken as utc_status_t, positive
 * ones become UTC_ERR_TASK_FAILED. The first error of a command surfaces at
 * utc_task_init / utc_task_wait.
 *
 * Which body a thread runs: in a layout-0 table (no `.version`), `run`, on threads of
 * either kind. In a layout-1 table (`.version = UTC_TASK_OPS_VERSION`), `run` on CPU
 * threads and `run_gpu` on GPU threads (`ctx->kind` says which the thread is); at least
 * one is required, and utc_task_create refuses a task with threads of a kind whose body
 * is missing. `init` and `fini` are shared by both kinds (they may look at `ctx->kind`).
 * @code
 * static const utc_task_ops_t scale_ops = {
 *     .name = "scale", .size = sizeof(scale_task_t), .version = UTC_TASK_OPS_VERSION,
 *     .run = scale_cpu, .run_gpu = scale_gpu};
 * @endcode
 * New fields are only ever added at the end, so positional initializers of an older
 * layout stay valid too.
 */
typedef struct utc_task_ops {
    /** short name, for logs, statistics and traces; NULL or "" is shown as "(unnamed)".
     *  Any bytes: logs show control characters and bytes that are not UTF-8 as escapes
     *  (\\n, \\x1b), traces as JSON escapes; cut to 47 bytes (whole characters) there. */
    const char *name;
    size_t size;      /**< size of the user's struct (>= sizeof(utc_task_t)) */
    /** Called by every local thread at utc_task_init, with utc_task_init's arg. */
    int (*init)(utc_task_t *self, utc_ctx_t *ctx, void *arg);
    /** Called by every local thread per utc_task_run, with utc_task_run's arg: every thread
     *  in a layout-0 table, CPU threads in a layout-1 table (may be NULL there when the
     *  task has no CPU threads). */
    int (*run)(utc_task_t *self, utc_ctx_t *ctx, void *arg);
    /** Called by every local thread at utc_task_destroy, before the threads exit. */
    void (*fini)(utc_task_t *self, utc_ctx_t *ctx);
    /* ---- layout 1 ---- */
    /** Layout of this table: 0 (left out: layout 0, the fields below unused) or
     *  UTC_TASK_OPS_VERSION. */
    unsigned version;
    /** GPU body (layout 1): called instead of `run` on GPU threads, with the thread's
     *  device current and its stream in utc_gpu_stream(). NULL when the task has no GPU
     *  threads. */
    int (*run_gpu)(utc_task_t *self, utc_ctx_t *ctx, void *arg);
} utc_task_ops_t;

/** The runtime's part of a task: the first member of every user task struct. */
struct utc_task {
    const utc_task_ops_t *ops; /**< the task's ops table */
    struct utc__task *impl;    /**< runtime-private state; do not touch */
};

/** What a thread knows about itself: passed to every task function. */
struct utc_ctx {
    utc_task_t *task;          /**< the rank instance of the task */
    int local_id;              /**< 0 .. local_count-1: index among this rank's threads */
    int local_count;           /**< threads of this task on this rank */
    int global_id;             /**< 0 .. global_count-1: index in the proc list */
    int global_count;          /**< threads of this task on all ranks */
    int world_rank;            /**< this rank in the world */
    int world_size;            /**< ranks in the world */
    int group_rank;            /**< this rank in the task's group (its communicator) */
    int group_size;            /**< ranks that hold threads of this task */
    /** this thread's kind, UTC_TASK_CPU or UTC_TASK_GPU (in a UTC_TASK_MIXED task, the
     *  first opts.gpu_threads local threads are GPU threads) */
    utc_task_kind_t kind;
    struct utc__thread *impl;  /**< runtime-private state; do not touch */
};

/**
 * How a task's threads are pinned (with hwloc). Every mode keeps to the CPUs the process
 * may use, its affinity mask when utc_init ran (as Slurm, cgroups, taskset or
 * `mpirun --bind-to` left it): objects are counted among those with an allowed CPU, a
 * thread gets only the allowed part of one, and an explicit CPU outside the mask fails
 * utc_task_create with UTC_ERR_INVALID_ARG. Ranks of one node whose masks overlap start
 * at different objects. More threads than allowed cores (or PUs) share them round robin,
 * with one warning per process.
 */
typedef enum utc_bind_mode {
    UTC_BIND_NONE = 0,    /**< not pinned: the OS schedules them (default) */
    UTC_BIND_PACKAGE = 1, /**< each thread to one package (socket), spread round robin */
    UTC_BIND_CORE = 2,    /**< each thread to one core, spread round robin */
    UTC_BIND_PU = 3,      /**< each thread to one hardware thread, spread round robin */
    UTC_BIND_EXPLICIT = 4 /**< local thread i to OS CPU cpu_list[i % cpu_list_len] */
} utc_bind_mode_t;

/** Memory kind of GPU buffers (utc/gpu.h); a task option so task code need not change. */
typedef enum utc_mem_kind {
    UTC_MEM_PAGEABLE = 0, /**< host memory from malloc, device memory from cudaMalloc */
    UTC_MEM_PINNED = 1,   /**< page-locked host memory (cudaMallocHost) */
    UTC_MEM_UNIFIED = 2   /**< one managed allocation (cudaMallocManaged) */
} utc_mem_kind_t;

/** Default size of a task's global-shared-data window, in bytes (16 MiB). */
#define UTC_WINDOW_DEFAULT ((size_t)16 << 20)

/** Largest number of threads in one task. */
#define UTC_TASK_MAX_THREADS 4096

/** Options of utc_task_create. Start from UTC_TASK_OPTIONS_INIT. */
typedef struct utc_task_options {
    utc_task_kind_t kind;   /**< CPU (default) or GPU */
    utc_bind_mode_t bind;   /**< pinning of the threads (default none) */
    const int *cpu_list;    /**< OS CPU numbers for UTC_BIND_EXPLICIT */
    int cpu_list_len;       /**< length of cpu_list */
    size_t window_size;     /**< bytes of the task's RMA window on each rank; 0: no window */
    utc_mem_kind_t mem_kind;/**< memory kind of the task's GPU buffers */
    const int *devices;     /**< GPU threads: device per local GPU thread, round robin; NULL: all */
    int devices_len;        /**< length of devices */
    /** UTC_TASK_MIXED only (0 otherwise): how many of each rank's local threads, the
     *  first ones, are GPU threads (1 .. UTC_TASK_MAX_THREADS; a rank with fewer threads
     *  has only GPU threads) */
    int gpu_threads;
} utc_task_options_t;

/** Default options: CPU task, no binding, a UTC_WINDOW_DEFAULT window, pageable memory. */
#define UTC_TASK_OPTIONS_INIT                                                           \
    { .kind = UTC_TASK_CPU, .bind = UTC_BIND_NONE, .cpu_list = NULL, .cpu_list_len = 0,  \
      .window_size = UTC_WINDOW_DEFAULT, .mem_kind = UTC_MEM_PAGEABLE, .devices = NULL,   \
      .devices_len = 0, .gpu_threads = 0 }

/**
 * @brief Create a task: its rank instance, communicator, window and threads.
 *
 * Collective over all ranks, in the same order with the same arguments.
 * @param ops      the task's functions (must outlive the task): `run` in a layout-0
 *                 table; in a layout-1 table the body of each kind the task has threads of
 * @param procs    proc list: procs[i] is the rank of global thread i
 * @param nthreads length of procs (1 .. UTC_TASK_MAX_THREADS)
 * @param opts     options, or NULL for UTC_TASK_OPTIONS_INIT
 * @param[out] out the task (rank instance), set only on success
 * @return UTC_OK; UTC_ERR_INVALID_ARG (NULL ops, size too small, empty proc list, an
 *         ops->version this library does not know, layout-1 fields in a layout-0 table,
 *         a body missing for a kind of thread the task has, gpu_threads out of range or
 *         given without UTC_TASK_MIXED, UTC_TASK_MIXED with a layout-0 table);
 *         UTC_ERR_OUT_OF_RANGE (a rank that does not exist); UTC_ERR_NOT_INITIALIZED;
 *         UTC_ERR_NO_DEVICE (GPU threads on a rank with no device);
 *         UTC_ERR_NO_GPU_SUPPORT (GPU threads in a build without GPU support);
 *         UTC_ERR_MPI; UTC_ERR_THREAD;
 *         UTC_ERR_MISMATCH on every rank when the ranks passed different proc lists, ops
 *         tables or options, or are in different collective calls (checked before anything
 *         collective; the message names the ranks and what differs); UTC_ERR_NO_MEMORY
 *         on every rank when a node cannot hold the window (`window_size` beyond its
 *         memory and swap; the message names the size).
 */
utc_status_t utc_task_create(const utc_task_ops_t *ops, const int *procs, int nthreads,
                             const utc_task_options_t *opts, utc_task_t **out)
    __attribute__((warn_unused_result));

/**
 * @brief Run `ops->init` on every local thread and wait for it. Blocks.
 * @return UTC_OK or the first error an init returned (a value that is not a UTC status is
 *         UTC_ERR_TASK_FAILED; the message names the value itself and the thread);
 *         UTC_ERR_STATE if already initialized;
 *         UTC_ERR_DEADLOCK when called from one of the task's own threads.
 */
utc_status_t utc_task_init(utc_task_t *task, void *arg);

/**
 * @brief Queue `ops->run` on every local thread and return at once.
 *
 * `arg` must stay valid until utc_task_wait returns. May be issued again, before or
 * after wait; runs of a task execute in order.
 * @return UTC_OK; UTC_ERR_STATE if the task has an init that has not been run.
 */
utc_status_t utc_task_run(utc_task_t *task, void *arg);

/**
 * @brief Wait until every command queued on this rank's threads of the task is done.
 * Blocks; the caller sleeps while it waits. Where the rank has no more CPUs than the task
 * has local threads, the caller may first run one thread's share of the run in flight
 * itself, as that thread (same ctx, and bound as that thread when it is pinned), if that
 * thread has not taken it yet; never for GPU or mixed tasks, while UTC_TRACE or UTC_STATS
 * is on, nor with UTC_LEND=0.
 * @return UTC_OK or the first error a run returned since the last wait (then cleared; a
 *         value that is not a UTC status is UTC_ERR_TASK_FAILED, and the message names the
 *         value itself and the thread, "returned 7 on thread 0");
 *         UTC_ERR_DEADLOCK when called from one of the task's own threads (a run of the
 *         task itself with utc_task_run is legal: it queues).
 */
utc_status_t utc_task_wait(utc_task_t *task);

/**
 * @brief Run `ops->run` on every local thread and wait for it: utc_task_run, then
 * utc_task_wait, in one call, for a caller that would only wait meanwhile.
 *
 * Where utc_task_wait would lend the caller's core (see there), the task has one thread on
 * this rank and nothing else is queued, the caller takes that thread's share before the
 * run is queued and runs it: the thread is not woken, and the run costs no thread wake-up
 * or switch. Otherwise the same as the two calls.
 * @return as utc_task_run, then as utc_task_wait.
 */
utc_status_t utc_task_run_wait(utc_task_t *task, void *arg);

/**
 * @brief Finish a task: `fini` on every local thread, threads exit, resources freed.
 * Collective. Waits for queued commands first.
 * @return UTC_OK; UTC_ERR_INVALID_HANDLE if `task` is not a live task (e.g. destroyed);
 *         UTC_ERR_DEADLOCK when called from one of the task's own threads.
 */
utc_status_t utc_task_destroy(utc_task_t *task);

/** @brief The task's id (equal on all ranks), or a negative status. */
int utc_task_id(const utc_task_t *task);
/** @brief Threads of the task on all ranks, or a negative status. */
int utc_task_nthreads(const utc_task_t *task);
/** @brief Threads of the task on this rank (0 when the rank holds none), or a negative status. */
int utc_task_local_nthreads(const utc_task_t *task);
/** @brief The task's entry rank (rank of its first proc-list entry), or a negative status. */
int utc_task_entry_rank(const utc_task_t *task);
/** @brief Whether this rank holds threads of the task (1/0), or a negative status. */
int utc_task_is_local(const utc_task_t *task);
/** @brief The task's kind: CPU, GPU, or MIXED (threads of both kinds). */
utc_task_kind_t utc_task_kind(const utc_task_t *task);
/** @brief The memory kind GPU buffers of this task should use (a creation option). */
utc_mem_kind_t utc_task_mem_kind(const utc_task_t *task);
/** @brief The name from the task's ops, as it is; "(unnamed)" when it is NULL or empty,
 *  "(invalid task)" for a handle that is not a live task. */
const char *utc_task_name(const utc_task_t *task);

/* ---- inside a task: thread context ---- */

/** @brief The calling thread's context, or NULL when it is not a task thread. */
utc_ctx_t *utc_ctx_self(void);

/**
 * @brief Barrier among this rank's threads of the task. Blocks (sleeps after a short spin).
 * @return UTC_OK; UTC_ERR_NOT_MEMBER if ctx is not the caller's.
 */
utc_status_t utc_ctx_barrier_local(utc_ctx_t *ctx);

/**
 * @brief Barrier among all threads of the task on all its ranks. Blocks.
 * @return UTC_OK, UTC_ERR_NOT_MEMBER or UTC_ERR_MPI.
 */
utc_status_t utc_ctx_barrier(utc_ctx_t *ctx);

/**
 * @brief "One thread does it, the others wait": local thread `thread` calls fn(arg) while
 * the other local threads wait; all return fn's status. Every local thread must call it.
 * @return fn's return, or UTC_ERR_OUT_OF_RANGE / UTC_ERR_NOT_MEMBER.
 */
int utc_ctx_single(utc_ctx_t *ctx, int thread, int (*fn)(utc_ctx_t *ctx, void *arg), void *arg);

/* ---- proc-list helpers ---- */

/**
 * @brief Fill procs with `per_rank` threads on each of ranks first..first+nranks-1,
 * rank by rank: {first x per_rank, first+1 x per_rank, ...}.
 * @return number of entries written (nranks * per_rank), or UTC_ERR_INVALID_ARG if
 *         it would exceed cap.
 */
int utc_procs_spread(int *procs, int cap, int first, int nranks, int per_rank);

#ifdef __cplusplus
}
#endif
#endif /* UTC_TASK_H */
