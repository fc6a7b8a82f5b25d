/* Tasks: collective creation, placement from the proc list, the command API, the registry. */
#include <limits.h>
#include <unistd.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/coll_check.h"
#include "base/errors.h"
#include "base/text.h"
#include "base/sync.h"
#include "base/wait_hook.h"
#include "context/binding.h"
#include "context/context_internal.h"
#include "observe/trace.h"
#include "tasks/mailbox.h"
#include "tasks/task_internal.h"
#include "tasks/thread.h"

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct utc__task *registry; /* live tasks by rank instance, in creation order */
static int next_task_id;

/* The modules' extensions, plugged in by the runtime layer at utc_init. */
static const utc__task_ext_t no_ext = {.name = "(none)"};
static const utc__task_ext_t *exts[UTC__EXT_COUNT] = {&no_ext, &no_ext};

void utc__task_ext_register(int slot, const utc__task_ext_t *ext)
{
    if (slot >= 0 && slot < UTC__EXT_COUNT)
        exts[slot] = ext ? ext : &no_ext;
}

const utc__task_ext_t *utc__task_ext(int slot) { return exts[slot]; }

static const utc__task_hooks_t no_hooks;
const utc__task_hooks_t *utc__task_hooks = &no_hooks;

void utc__task_hooks_install(const utc__task_hooks_t *hooks)
{
    utc__task_hooks = hooks ? hooks : &no_hooks;
}

utc_status_t utc__task_check(const utc_task_t *task, const char *fn)
{
    utc_status_t rc = utc__check_init(fn);
    if (rc != UTC_OK)
        return rc;
    if (!task)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: task is NULL", fn);
    struct utc__task *found;
    pthread_mutex_lock(&registry_lock);
    HASH_FIND_PTR(registry, &task, found);
    pthread_mutex_unlock(&registry_lock);
    if (!found)
        return utc__error(UTC_ERR_INVALID_HANDLE,
                          "%s: %p is not a live task (destroyed, or never created)", fn,
                          (const void *)task);
    return UTC_OK;
}

static const char *kind_name(utc_task_kind_t kind)
{
    return kind == UTC_TASK_GPU ? "UTC_TASK_GPU" : kind == UTC_TASK_MIXED ? "UTC_TASK_MIXED"
                                                                         : "UTC_TASK_CPU";
}

/* The ops table alone, read as far as its layout goes (UTC_TASK_OPS_VERSION in task.h). */
static utc_status_t check_ops_layout(const utc_task_ops_t *ops)
{
    const char *name = utc__text_name(ops->name);
    if (ops->version > UTC_TASK_OPS_VERSION)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_task_create: task '%s': ops->version is %u, a layout of "
                          "utc_task_ops_t this library does not know (it reads 0 .. %d): set "
                          ".version = UTC_TASK_OPS_VERSION from the <utc/task.h> of the UTC "
                          "you link, or leave it out (0) for a table without run_gpu",
                          name, ops->version, UTC_TASK_OPS_VERSION);
    if (ops->version == 0 && ops->run_gpu)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_task_create: task '%s' sets ops->run_gpu but leaves ops->version "
                          "0, the layout without it: set .version = UTC_TASK_OPS_VERSION (then "
                          ".run is the CPU body and .run_gpu the GPU body)", name);
    if (ops->version == 0 && !ops->run)
        return utc__error(UTC_ERR_INVALID_ARG, "utc_task_create: task '%s' has no run function",
                          name);
    if (!ops->run && !ops->run_gpu)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_task_create: task '%s' has neither ops->run (CPU body) nor "
                          "ops->run_gpu (GPU body): give at least one", name);
    if (ops->size < sizeof(utc_task_t))
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_task_create: ops->size %zu is smaller than utc_task_t (%zu): "
                          "set .size = sizeof(your task struct)", ops->size, sizeof(utc_task_t));
    return UTC_OK;
}

/* The kinds of thread the task will have, against the bodies of its ops table. The proc
 * list is valid; the answer is the same on every rank. */
static utc_status_t check_kinds(const utc_task_ops_t *ops, const int *procs, int nthreads,
                                const utc_task_options_t *opts)
{
    const char *name = utc__text_name(ops->name);
    utc_task_kind_t kind = opts->kind;
    if (kind != UTC_TASK_CPU && kind != UTC_TASK_GPU && kind != UTC_TASK_MIXED)
        return utc__error(UTC_ERR_INVALID_ARG, "utc_task_create: unknown task kind %d",
                          (int)kind);
    if (kind != UTC_TASK_MIXED && opts->gpu_threads != 0)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_task_create: task '%s': opts.gpu_threads is %d, but its kind is "
                          "%s: gpu_threads is for kind UTC_TASK_MIXED (set that kind, or leave "
                          "gpu_threads 0)", name, opts->gpu_threads, kind_name(kind));
    if (kind == UTC_TASK_MIXED &&
        (opts->gpu_threads < 1 || opts->gpu_threads > UTC_TASK_MAX_THREADS))
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_task_create: task '%s': opts.gpu_threads is %d, but a "
                          "UTC_TASK_MIXED task needs 1 .. %d GPU threads per rank (for none, "
                          "use kind UTC_TASK_CPU)", name, opts->gpu_threads, UTC_TASK_MAX_THREADS);
    if (kind == UTC_TASK_MIXED && ops->version == 0)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_task_create: task '%s' is UTC_TASK_MIXED, which needs a versioned "
                          "ops table: set .version = UTC_TASK_OPS_VERSION, with .run (CPU body) "
                          "and .run_gpu (GPU body)", name);
    if (ops->version == 0)
        return UTC_OK; /* one body, run, for threads of either kind */
    if (kind != UTC_TASK_CPU && !ops->run_gpu)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_task_create: task '%s' has GPU threads (kind %s) but no GPU "
                          "body: set ops->run_gpu, or create it with kind UTC_TASK_CPU", name,
                          kind_name(kind));
    if (kind == UTC_TASK_CPU && !ops->run)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_task_create: task '%s' has CPU threads (kind UTC_TASK_CPU) but no "
                          "CPU body: set ops->run, or create it with kind UTC_TASK_GPU", name);
    if (kind == UTC_TASK_MIXED && !ops->run) {
        /* CPU threads are those beyond gpu_threads on a rank */
        int nranks = utc_nranks();
        int *count = calloc((size_t)nranks, sizeof *count);
        if (!count)
            return utc__error(UTC_ERR_NO_MEMORY, "utc_task_create: out of memory");
        int rank = -1;
        for (int i = 0; i < nthreads && rank < 0; i++)
            if (++count[procs[i]] > opts->gpu_threads)
                rank = procs[i];
        free(count);
        if (rank >= 0)
            return utc__error(UTC_ERR_INVALID_ARG,
                              "utc_task_create: task '%s' has CPU threads (rank %d holds more "
                              "than opts.gpu_threads = %d threads) but no CPU body: set "
                              "ops->run, or make every thread of a rank a GPU thread", name,
                              rank, opts->gpu_threads);
    }
    return UTC_OK;
}

static utc_status_t check_args(const utc_task_ops_t *ops, const int *procs, int nthreads,
                               const utc_task_options_t *opts, utc_task_t **out)
{
    int nranks = utc_nranks();
    if (!out)
        return utc__error(UTC_ERR_INVALID_ARG, "utc_task_create: out is NULL");
    if (!ops)
        return utc__error(UTC_ERR_INVALID_ARG, "utc_task_create: ops is NULL");
    utc_status_t rc = check_ops_layout(ops);
    if (rc != UTC_OK)
        return rc;
    if (!procs || nthreads <= 0)
        return utc__error(UTC_ERR_INVALID_ARG, "utc_task_create: the proc list is empty");
    if (nthreads > UTC_TASK_MAX_THREADS)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_task_create: %d threads is more than UTC_TASK_MAX_THREADS (%d)",
                          nthreads, UTC_TASK_MAX_THREADS);
    for (int i = 0; i < nthreads; i++)
        if (procs[i] < 0 || procs[i] >= nranks)
            return utc__error(UTC_ERR_OUT_OF_RANGE,
                              "utc_task_create: proc list entry %d names rank %d, but ranks "
                              "are 0..%d", i, procs[i], nranks - 1);
    if ((rc = check_kinds(ops, procs, nthreads, opts)) != UTC_OK)
        return rc;
    if (opts->mem_kind < UTC_MEM_PAGEABLE || opts->mem_kind > UTC_MEM_UNIFIED)
        return utc__error(UTC_ERR_INVALID_ARG, "utc_task_create: unknown memory kind %d",
                          (int)opts->mem_kind);
    if (opts->devices_len < 0 || (opts->devices_len > 0 && !opts->devices))
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_task_create: devices_len %d without a devices array",
                          opts->devices_len);
    return utc__binding_check(opts);
}

/* What this rank passed to utc_task_create, for the agreement check. Bad arguments are
 * described by their status alone (they may not be safe to read). Function pointers are
 * not compared: their addresses differ between processes. */
static void describe_create(utc__coll_desc_t *d, const utc_task_ops_t *ops, const int *procs,
                            int nthreads, const utc_task_options_t *o, utc_status_t args_rc)
{
    *d = (utc__coll_desc_t){.call = UTC__CALL_TASK_CREATE, .args_rc = args_rc,
                            .part_name = {"proc list", "ops table (name, size or functions)",
                                          "options"}};
    if (args_rc != UTC_OK)
        return;
    uint64_t h = utc__digest_u64(UTC__DIGEST_INIT, (uint64_t)nthreads);
    d->part[0] = utc__digest_bytes(h, procs, sizeof *procs * (size_t)nthreads);
    h = utc__digest_str(UTC__DIGEST_INIT, ops->name);
    h = utc__digest_u64(h, ops->size);
    h = utc__digest_u64(h, ops->version);
    d->part[1] = utc__digest_u64(h, (uint64_t)(ops->init != NULL) |
                                        (uint64_t)(ops->fini != NULL) << 1 |
                                        (uint64_t)(ops->run != NULL) << 2 |
                                        (uint64_t)(ops->run_gpu != NULL) << 3);
    h = utc__digest_u64(UTC__DIGEST_INIT, (uint64_t)o->kind);
    h = utc__digest_u64(h, (uint64_t)o->bind);
    h = utc__digest_u64(h, (uint64_t)o->cpu_list_len);
    if (o->cpu_list && o->cpu_list_len > 0)
        h = utc__digest_bytes(h, o->cpu_list, sizeof *o->cpu_list * (size_t)o->cpu_list_len);
    h = utc__digest_u64(h, o->window_size);
    h = utc__digest_u64(h, (uint64_t)o->mem_kind);
    h = utc__digest_u64(h, (uint64_t)o->gpu_threads);
    h = utc__digest_u64(h, (uint64_t)o->devices_len);
    if (o->devices && o->devices_len > 0)
        h = utc__digest_bytes(h, o->devices, sizeof *o->devices * (size_t)o->devices_len);
    d->part[2] = h;
}

static int *copy_ints(const int *src, int n)
{
    if (!src || n <= 0)
        return NULL;
    int *dst = malloc(sizeof *dst * (size_t)n);
    if (dst)
        memcpy(dst, src, sizeof *dst * (size_t)n);
    return dst;
}

/* Placement from the proc list: local threads, group ranks, the task communicator. */
static utc_status_t place(struct utc__task *t)
{
    int me = utc_rank(), world_size = utc_nranks();
    t->procs = copy_ints(t->procs, t->nthreads);
    t->local_gids = malloc(sizeof(int) * (size_t)t->nthreads);
    t->group_ranks = malloc(sizeof(int) * (size_t)world_size);
    int *seen = calloc((size_t)world_size, sizeof(int));
    if (!t->procs || !t->local_gids || !t->group_ranks || !seen) {
        free(seen);
        /* still take part in the collective communicator creation */
        MPI_Comm_create(utc__world_comm(), MPI_GROUP_EMPTY, &t->comm);
        return utc__error(UTC_ERR_NO_MEMORY, "utc_task_create: out of memory");
    }
    t->group_rank = -1;
    for (int g = 0; g < t->nthreads; g++) {
        int r = t->procs[g];
        if (r == me)
            t->local_gids[t->nlocal++] = g;
        if (!seen[r]) {
            seen[r] = 1;
            if (r == me)
                t->group_rank = t->ngroup;
            t->group_ranks[t->ngroup++] = r;
        }
    }
    free(seen);
    t->entry_rank = t->procs[0];
    t->ngpu_local = t->opts.kind == UTC_TASK_GPU     ? t->nlocal
                    : t->opts.kind == UTC_TASK_MIXED ? (t->nlocal < t->opts.gpu_threads
                                                            ? t->nlocal : t->opts.gpu_threads)
                                                     : 0;

    /* MPI_Comm_create is collective over the world: every rank calls it, members get the
     * task communicator, the others MPI_COMM_NULL */
    MPI_Group world_group, task_group;
    MPI_Comm_group(utc__world_comm(), &world_group);
    MPI_Group_incl(world_group, t->ngroup, t->group_ranks, &task_group);
    int err = MPI_Comm_create(utc__world_comm(), task_group, &t->comm);
    MPI_Group_free(&task_group);
    MPI_Group_free(&world_group);
    if (err != MPI_SUCCESS) {
        t->comm = MPI_COMM_NULL;
        return utc__mpi_error(err, "MPI_Comm_create (task communicator)");
    }
    if (t->comm != MPI_COMM_NULL)
        MPI_Comm_set_errhandler(t->comm, MPI_ERRORS_RETURN);
    return UTC_OK;
}

/* Post EXIT, wait for it and join: the threads run fini and their extensions' stop. */
static void stop_threads(struct utc__task *t, int nstarted)
{
    if (nstarted <= 0)
        return;
    utc__mailbox_post(t->mailbox, UTC__CMD_EXIT, NULL);
    utc__mailbox_wait_all(t->mailbox, true);
    for (int i = 0; i < nstarted; i++)
        pthread_join(t->threads[i].tid, NULL);
}

static utc_status_t start_threads(struct utc__task *t, int *nstarted)
{
    utc_status_t rc = utc__mailbox_create(t->nlocal, &t->mailbox);
    if (rc != UTC_OK)
        return rc;
    t->threads = calloc((size_t)t->nlocal, sizeof *t->threads);
    if (!t->threads)
        return utc__error(UTC_ERR_NO_MEMORY, "utc_task_create: out of memory");
    utc__barrier_init(&t->barrier, (unsigned)t->nlocal);
    int first_slot = t->opts.bind == UTC_BIND_NONE ? 0 : utc__binding_reserve(t->nlocal);
    for (int i = 0; i < t->nlocal; i++) {
        struct utc__thread *th = &t->threads[i];
        th->task = t;
        th->bind_slot = first_slot + i;
        th->ctx = (utc_ctx_t){
            .task = t->self, .local_id = i, .local_count = t->nlocal,
            .global_id = t->local_gids[i], .global_count = t->nthreads,
            .world_rank = utc_rank(), .world_size = utc_nranks(),
            .group_rank = t->group_rank, .group_size = t->ngroup,
            .kind = i < t->ngpu_local ? UTC_TASK_GPU : UTC_TASK_CPU, .impl = th};
        int err = pthread_create(&th->tid, NULL, utc__thread_main, th);
        if (err != 0) {
            rc = utc__error(UTC_ERR_THREAD, "utc_task_create: pthread_create failed (%s)",
                            strerror(err));
            /* commands must now be counted done by the threads that exist */
            utc__mailbox_shrink(t->mailbox, *nstarted);
            break;
        }
        (*nstarted)++;
    }
    unsigned n;
    while ((n = atomic_load(&t->started)) < (unsigned)*nstarted)
        utc__wait_change(&t->started, n);
    if (rc != UTC_OK)
        return rc;
    rc = (utc_status_t)atomic_load(&t->start_rc);
    /* a device's failure is known only to the thread that met it: its message, CUDA's
     * text. (A binding the creator checked has the creator's message already.) */
    if (rc == UTC_ERR_GPU)
        utc__error(rc, "utc_task_create: thread %d of task '%s' on rank %d could not start: %s",
                   t->start_thread, utc__text_name(t->ops->name), utc_rank(), t->start_msg);
    return rc;
}

/*
 * A destroyed task's struct (the handle users hold) is not given back to malloc before
 * utc_finalize: it keeps its address, so a stale handle can never name a task created
 * later at the same address (it is refused with UTC_ERR_INVALID_HANDLE on every rank). The
 * whole struct stays (ops->size bytes per task destroyed): shrinking it with realloc would
 * keep the address only where the allocator shrinks in place, which glibc does and the
 * sanitizers' allocators (and others) do not.
 */
static utc_task_t *tombs; /* linked through impl, under registry_lock */

static void bury(utc_task_t *self)
{
    if (!self)
        return;
    self->ops = NULL;
    pthread_mutex_lock(&registry_lock);
    self->impl = (struct utc__task *)tombs;
    tombs = self;
    pthread_mutex_unlock(&registry_lock);
}

static void free_task(struct utc__task *t)
{
    if (t->comm != MPI_COMM_NULL)
        MPI_Comm_free(&t->comm);
    if (t->mailbox)
        utc__mailbox_destroy(t->mailbox);
    pthread_mutex_destroy(&t->owner_lock);
    free(t->threads);
    free(t->procs);
    free(t->local_gids);
    free(t->group_ranks);
    free((void *)t->opts.cpu_list);
    free((void *)t->opts.devices);
    bury(t->self);
    free(t);
}

/*
 * Whether utc_task_wait may lend the calling thread's core: run one local thread's share
 * of the RUN it waits for, when that thread has not taken it yet (bound, for the run, as
 * that thread is). Only where cores are scarce (as many task threads as CPUs the process
 * may use, or more, counting those of the other ranks of this node that share them: then
 * the waiting caller and the task's threads would take turns on the cores, a context
 * switch each time), for CPU tasks. UTC_LEND=0 turns it off.
 */
static bool lend_allowed(const struct utc__task *t)
{
    static int env = -1;
    if (env < 0) {
        const char *v = getenv("UTC_LEND");
        env = !(v && strcmp(v, "0") == 0);
    }
    /* the task's threads with those of the other ranks that share these CPUs (each as
     * many: the common case of one program on every rank) */
    return env && t->opts.kind == UTC_TASK_CPU &&
           (long)t->nlocal * utc__cpu_sharers() >= utc__cpus_allowed();
}

utc_status_t utc_task_create(const utc_task_ops_t *ops, const int *procs, int nthreads,
                             const utc_task_options_t *opts, utc_task_t **out)
{
    utc_status_t rc = utc__check_init("utc_task_create");
    if (rc != UTC_OK)
        return rc;
    static const utc_task_options_t defaults = UTC_TASK_OPTIONS_INIT;
    if (!opts)
        opts = &defaults;
    /* every rank compares what it passed before anything collective: ranks that disagree
     * all return UTC_ERR_MISMATCH; ranks that agree on bad arguments all return their
     * error */
    utc_status_t args_rc = check_args(ops, procs, nthreads, opts, out);
    utc__coll_desc_t desc;
    describe_create(&desc, ops, procs, nthreads, opts, args_rc);
    if ((rc = utc__coll_check(utc__world_comm(), utc__coll_world_seq(), NULL, "utc_task_create",
                              &desc)) != UTC_OK)
        return rc;
    if (args_rc != UTC_OK)
        return args_rc;

    struct utc__task *t = calloc(1, sizeof *t);
    if (!t)
        return utc__error(UTC_ERR_NO_MEMORY, "utc_task_create: out of memory");
    pthread_mutex_init(&t->owner_lock, NULL);
    t->comm = MPI_COMM_NULL;
    t->ops = ops;
    t->opts = *opts;
    t->opts.cpu_list = copy_ints(opts->cpu_list, opts->cpu_list_len);
    t->opts.devices = copy_ints(opts->devices, opts->devices_len);
    t->nthreads = nthreads;
    t->procs = (int *)procs; /* copied by place() */
    t->initialized = ops->init == NULL;
    /* a layout-0 table has one body for both kinds (check_ops_layout) */
    t->body[UTC_TASK_CPU] = ops->run;
    t->body[UTC_TASK_GPU] = ops->version >= 1 ? ops->run_gpu : ops->run;
    t->id = next_task_id++;
    t->self = calloc(1, ops->size);
    int nstarted = 0, next = 0;
    /* place() is collective (it creates the communicator), so it runs on every rank even
     * after a local failure; the failure is carried to the agreement below */
    rc = place(t);
    if (!t->self)
        rc = utc__error(UTC_ERR_NO_MEMORY, "utc_task_create: cannot allocate %zu bytes for '%s'",
                        ops->size, utc__text_name(ops->name));
    else {
        t->self->ops = ops;
        t->self->impl = t;
    }
    /* Every rank learns whether any failed; the extensions' create (collective on the
     * task communicator) runs only when all agree that placement went well. */
    int local_rc = rc, any_rc;
    MPI_Allreduce(&local_rc, &any_rc, 1, MPI_INT, MPI_MIN, utc__world_comm());
    if (any_rc == UTC_OK) {
        for (; next < UTC__EXT_COUNT; next++) {
            if (exts[next]->create && (rc = exts[next]->create(t->self)) != UTC_OK)
                break;
        }
        t->lend = lend_allowed(t); /* before the threads read it */
        if (rc == UTC_OK && t->nlocal > 0)
            rc = start_threads(t, &nstarted);
        local_rc = rc;
        MPI_Allreduce(&local_rc, &any_rc, 1, MPI_INT, MPI_MIN, utc__world_comm());
    }
    if (any_rc != UTC_OK) {
        if (rc == UTC_OK)
            rc = utc__error((utc_status_t)any_rc,
                            "utc_task_create: creating task '%s' failed on another rank (%s)",
                            utc__text_name(ops->name), utc_status_string(any_rc));
        t->initialized = false; /* no fini for a task that never was */
        stop_threads(t, nstarted);
        for (int i = next - 1; i >= 0; i--)
            if (exts[i]->destroy)
                exts[i]->destroy(t->self);
        free_task(t);
        return rc;
    }

    pthread_mutex_lock(&registry_lock);
    HASH_ADD_PTR(registry, self, t);
    pthread_mutex_unlock(&registry_lock);
    utc_log(UTC_LOG_DEBUG, "task '%s' id %d: %d threads, %d here, entry rank %d",
            utc__text_name(ops->name), t->id, nthreads, t->nlocal, t->entry_rank);
    *out = t->self;
    return UTC_OK;
}

/* A call that waits for `task`'s threads, made by one of them, would wait for itself. */
static utc_status_t refuse_own(utc_task_t *task, const char *fn, const char *what)
{
    if (!utc__ctx_of(task))
        return UTC_OK;
    const char *name = task->impl->ops->name;
    return utc__error(UTC_ERR_DEADLOCK,
                      "%s: called from a thread of task '%s' itself, it would wait for %s "
                      "(call it from the main thread, or from another task)",
                      fn, utc__text_name(name), what);
}

/* The message of a failed init or run, after utc__mailbox_wait_all returned rc: the value
 * the task function itself returned (a user's 7 is reported as UTC_ERR_TASK_FAILED, so
 * say both), and on which thread. */
static void user_failed(struct utc__task *t, utc_status_t rc, const char *what)
{
    const char *name = utc__text_name(t->ops->name);
    int raw = 0, thread = -1;
    const char *msg = "";
    if (!utc__mailbox_first_user(t->mailbox, &raw, &thread, &msg))
        utc__error(rc, "%s of task '%s' failed: %d (%s)", what, name, (int)rc,
                   utc_status_string(rc));
    else if (raw == (int)rc) /* with the thread's own message: a CUDA error's text, say */
        utc__error(rc, "%s of task '%s' returned %d (%s) on thread %d%s%s", what, name, raw,
                   utc_status_string(rc), thread, *msg ? ": " : "", msg);
    else
        utc__error(rc, "%s of task '%s' returned %d on thread %d (not a UTC status: reported "
                   "as %d, %s)%s%s", what, name, raw, thread, (int)rc, utc_status_string(rc),
                   *msg ? ": " : "", msg);
}

utc_status_t utc_task_init(utc_task_t *task, void *arg)
{
    utc_status_t rc = utc__task_check(task, "utc_task_init");
    if (rc != UTC_OK)
        return rc;
    if ((rc = refuse_own(task, "utc_task_init", "its own init")) != UTC_OK)
        return rc;
    struct utc__task *t = task->impl;
    if (t->nlocal == 0)
        return UTC_OK;
    pthread_mutex_lock(&t->owner_lock);
    if (t->ops->init && t->initialized) {
        rc = utc__error(UTC_ERR_STATE, "utc_task_init: task '%s' is already initialized",
                        utc__text_name(t->ops->name));
    } else {
        if ((rc = utc__mailbox_wait_all(t->mailbox, true)) == UTC_OK) {
            utc__mailbox_post(t->mailbox, UTC__CMD_INIT, arg);
            rc = UTC__WAIT_CALL(UTC__WAIT_TASK, t->id, -1, -1, t->ops->name,
                              utc__mailbox_wait_all(t->mailbox, true));
        }
        if (rc == UTC_OK)
            t->initialized = true;
        else
            user_failed(t, rc, "utc_task_init: init");
    }
    pthread_mutex_unlock(&t->owner_lock);
    return rc;
}

/* The start of utc_task_run and utc_task_run_wait (fn): the hooks, then, where the task
 * has local threads (*here), the owner lock, held on return when UTC_OK. */
static utc_status_t run_start(utc_task_t *task, const char *fn, bool *here)
{
    struct utc__task *t = task->impl;
    /* on every rank that queues it, also those without its threads: the conduits forget
     * an earlier failure of this task here */
    if (utc__task_hooks->run_queued)
        utc__task_hooks->run_queued(task);
    if (!(*here = t->nlocal > 0))
        return UTC_OK;
    pthread_mutex_lock(&t->owner_lock);
    if (t->initialized)
        return UTC_OK;
    pthread_mutex_unlock(&t->owner_lock);
    return utc__error(UTC_ERR_STATE,
                      "%s: task '%s' has an init function: call utc_task_init first", fn,
                      utc__text_name(t->ops->name));
}

/* The end of utc_task_wait and utc_task_run_wait, with the owner lock held (released
 * here): lend the caller's core to the run in flight where allowed, wait for every queued
 * command, report a failed run as `what`. */
static utc_status_t wait_end(struct utc__task *t, const char *what)
{
    /* profiling off: a lent run would be counted as the caller's, not the task's */
    if (t->lend && !UTC__PROF_ON())
        (void)utc__thread_lend(t);
    /* where cores are scarce (lending allowed) the caller sleeps at once for what is left:
     * polling, it would keep a core from the threads it waits for (the thread whose share
     * it did not take, woken by the run's post, runs on the caller's core when the caller
     * is bound where that thread is: measured in Task Bench, 15-90 us a run) */
    utc_status_t rc = UTC__PROF_CALL(
        UTC__EV_TASK_WAIT, t->id, -1, -1, -1,
        UTC__WAIT_CALL(UTC__WAIT_TASK, t->id, -1, -1, t->ops->name,
                       utc__mailbox_wait_all(t->mailbox, !t->lend)));
    pthread_mutex_unlock(&t->owner_lock);
    if (rc != UTC_OK)
        user_failed(t, rc, what);
    return rc;
}

utc_status_t utc_task_run(utc_task_t *task, void *arg)
{
    utc_status_t rc = utc__task_check(task, "utc_task_run");
    bool here;
    if (rc != UTC_OK || (rc = run_start(task, "utc_task_run", &here)) != UTC_OK || !here)
        return rc;
    struct utc__task *t = task->impl;
    utc__mailbox_post(t->mailbox, UTC__CMD_RUN, arg);
    pthread_mutex_unlock(&t->owner_lock);
    return UTC_OK;
}

utc_status_t utc_task_wait(utc_task_t *task)
{
    utc_status_t rc = utc__task_check(task, "utc_task_wait");
    if (rc != UTC_OK)
        return rc;
    if ((rc = refuse_own(task, "utc_task_wait", "the run it is in")) != UTC_OK)
        return rc;
    struct utc__task *t = task->impl;
    if (t->nlocal == 0)
        return UTC_OK;
    pthread_mutex_lock(&t->owner_lock);
    return wait_end(t, "utc_task_wait: a run");
}

utc_status_t utc_task_run_wait(utc_task_t *task, void *arg)
{
    utc_status_t rc = utc__task_check(task, "utc_task_run_wait");
    bool here;
    if (rc != UTC_OK ||
        (rc = refuse_own(task, "utc_task_run_wait", "the run it queues")) != UTC_OK ||
        (rc = run_start(task, "utc_task_run_wait", &here)) != UTC_OK || !here)
        return rc;
    struct utc__task *t = task->impl;
    uint64_t seq;
    /* where wait_end would lend (it then finds nothing left to lend) */
    if (t->lend && !UTC__PROF_ON() && utc__mailbox_post_owned(t->mailbox, arg, &seq))
        /* the one thread's share is the caller's from the start: that thread is not woken
         * for this run (a wake-up, and on a shared core two switches, a run) */
        utc__thread_run_share(t, 0, seq, arg);
    else /* as utc_task_run: other threads to wake (the one whose share the caller takes
          * would be woken with them), or commands in flight */
        utc__mailbox_post(t->mailbox, UTC__CMD_RUN, arg);
    return wait_end(t, "utc_task_run_wait: a run");
}

static void destroy_locked(struct utc__task *t)
{
    if (t->nlocal > 0) {
        (void)utc__mailbox_wait_all(t->mailbox, true);
        stop_threads(t, t->nlocal);
    }
    for (int i = UTC__EXT_COUNT - 1; i >= 0; i--)
        if (exts[i]->destroy)
            exts[i]->destroy(t->self);
    pthread_mutex_lock(&registry_lock);
    struct utc__task *found;
    HASH_FIND_PTR(registry, &t->self, found);
    if (found)
        HASH_DEL(registry, t);
    pthread_mutex_unlock(&registry_lock);
    free_task(t);
}

utc_status_t utc_task_destroy(utc_task_t *task)
{
    utc_status_t rc = utc__task_check(task, "utc_task_destroy");
    if (rc != UTC_OK)
        return rc;
    if ((rc = refuse_own(task, "utc_task_destroy", "the run it is in")) != UTC_OK)
        return rc;
    struct utc__task *t = task->impl;
    pthread_mutex_lock(&t->owner_lock);
    if (t->destroying) {
        pthread_mutex_unlock(&t->owner_lock);
        return utc__error(UTC_ERR_INVALID_HANDLE, "utc_task_destroy: task '%s' is already being "
                          "destroyed", utc__text_name(t->ops->name));
    }
    t->destroying = true;
    pthread_mutex_unlock(&t->owner_lock);
    /* runs still going: their calls blocked on the task's conduits end (UTC_ERR_CANCELED),
     * so that they can return */
    if (utc__task_hooks->destroying)
        utc__task_hooks->destroying(task);
    /* the task stays registered while its threads run fini, so the accessors (name, memory
     * kind, ...) still answer there; it leaves the registry just before it is freed */
    destroy_locked(t);
    return UTC_OK;
}

/* How often utc_finalize says which task it is still waiting for. */
#define FINALIZE_NOTE_S 5.0

void utc__task_destroy_all(void)
{
    struct utc__task *t, *tmp, *rev = NULL;
    pthread_mutex_lock(&registry_lock);
    HASH_ITER(hh, registry, t, tmp) { t->destroy_next = rev; rev = t; }
    pthread_mutex_unlock(&registry_lock);
    /* newest first: later tasks may use earlier ones */
    while (rev) {
        t = rev;
        rev = t->destroy_next;
        const char *name = utc__text_name(t->ops->name);
        utc_log(UTC_LOG_DEBUG, "utc_finalize: destroying task '%s' (id %d) left alive", name,
                t->id);
        if (t->nlocal > 0 && utc__mailbox_busy(t->mailbox)) {
            /* a run still going: its blocked conduit calls were canceled just before */
            uint64_t t0 = utc__clock_ns();
            utc_log(UTC_LOG_WARN, "utc_finalize: task '%s' (id %d) is still running on this "
                    "rank; waiting for its run to return", name, t->id);
            while (!utc__mailbox_wait_for(t->mailbox, FINALIZE_NOTE_S))
                utc_log(UTC_LOG_WARN, "utc_finalize: still waiting for task '%s' (id %d) after "
                        "%.0f s: its run has not returned (a loop that makes no UTC call is "
                        "not interrupted)", name, t->id, (utc__clock_ns() - t0) * 1e-9);
            utc_log(UTC_LOG_WARN, "utc_finalize: task '%s' returned after %.3f s", name,
                    (utc__clock_ns() - t0) * 1e-9);
        }
        destroy_locked(t);
    }
    /* no handle is valid after finalize: the tombs go */
    pthread_mutex_lock(&registry_lock);
    while (tombs) {
        utc_task_t *next = (utc_task_t *)tombs->impl;
        free(tombs);
        tombs = next;
    }
    pthread_mutex_unlock(&registry_lock);
}

/* ---- accessors ---- */

#define TASK_GETTER(fn, expr)                                                             \
    int fn(const utc_task_t *task)                                                        \
    {                                                                                     \
        utc_status_t rc = utc__task_check(task, #fn);                                     \
        return rc != UTC_OK ? (int)rc : (expr);                                           \
    }
TASK_GETTER(utc_task_id, task->impl->id)
TASK_GETTER(utc_task_nthreads, task->impl->nthreads)
TASK_GETTER(utc_task_local_nthreads, task->impl->nlocal)
TASK_GETTER(utc_task_entry_rank, task->impl->entry_rank)
TASK_GETTER(utc_task_is_local, task->impl->nlocal > 0)
#undef TASK_GETTER

utc_task_kind_t utc_task_kind(const utc_task_t *task)
{
    return utc__task_check(task, "utc_task_kind") == UTC_OK ? task->impl->opts.kind
                                                            : UTC_TASK_CPU;
}

utc_mem_kind_t utc_task_mem_kind(const utc_task_t *task)
{
    return utc__task_check(task, "utc_task_mem_kind") == UTC_OK ? task->impl->opts.mem_kind
                                                                : UTC_MEM_PAGEABLE;
}

const char *utc_task_name(const utc_task_t *task)
{
    if (utc__task_check(task, "utc_task_name") != UTC_OK)
        return "(invalid task)";
    return utc__text_name(task->impl->ops->name);
}

/* Wait until no thread of `task` has its call mark at `lo` or `hi`. */
static void wait_marks_left(utc_task_t *task, const void *lo, const void *hi)
{
    struct utc__task *t = task->impl;
    for (int i = 0; i < t->nlocal; i++) {
        for (unsigned n = 0;; n++) {
            /* acquire: pairs with the release in utc__call_leave and utc__call_started */
            const void *m = atomic_load_explicit(&t->threads[i].in_call, memory_order_acquire);
            if (m != lo && m != hi)
                break;
            if (n < 1000)
                utc__cpu_relax();
            else if (n < 2000)
                sched_yield();
            else
                usleep(100);
        }
    }
}

void utc__task_wait_calls_left(utc_task_t *task, const void *obj)
{
    wait_marks_left(task, obj, (const char *)obj + 1);
}

void utc__task_wait_starts_left(utc_task_t *task, const void *obj)
{
    const void *starting = (const char *)obj + 1;
    wait_marks_left(task, starting, starting);
}
