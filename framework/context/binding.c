/* Pinning task threads with hwloc. One cursor per rank spreads the threads of all tasks
 * over the CPUs this process may use: its affinity mask when utc_init ran (as Slurm,
 * cgroups, taskset or mpirun --bind-to left it), within hwloc's allowed set. A thread is
 * never bound to a CPU outside it: on a shared node those belong to another job. */
#define _GNU_SOURCE
#include <sched.h>

#include <hwloc.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "base/errors.h"
#include "context/binding.h"
#include "context/context_internal.h"

static atomic_int cursor;
static atomic_int cursor_started;
/* Set by utc__binding_start (main thread, before any task thread exists), read-only after:
 * the allowed CPUs, as a set and as hwloc's list text, and where this rank's cursor starts. */
static hwloc_bitmap_t allowed;
static char allowed_text[256];
static int node_offset;
static int node_sharers = 1; /* ranks of this node whose masks overlap this one's, itself too */
/* utc__binding_check's verdict on an explicit list, for utc__binding_reserve on the same
 * (creating) thread: the first entry outside the allowed set, or -1 */
static _Thread_local int bad_entry = -1;
static _Thread_local int bad_cpu;

int utc__cpus_allowed(void)
{
    if (allowed)
        return hwloc_bitmap_weight(allowed);
    cpu_set_t set;
    int v = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    return v < 1 ? 1 : v;
}

/* Where this rank's cursor starts: one place after each rank before it on this node
 * whose mask overlaps its own (ranks with disjoint masks each start on their own). */
static utc_status_t learn_offset(MPI_Comm node, hwloc_const_bitmap_t complete)
{
    int me, n;
    MPI_Comm_rank(node, &me);
    MPI_Comm_size(node, &n);
    node_offset = me; /* as if every mask overlapped, until learnt otherwise */
    /* the same machine for all of them: the same number of words */
    int last = hwloc_bitmap_last(complete);
    unsigned nwords = (unsigned)(last < 0 ? 0 : last) / (8 * sizeof(unsigned long)) + 1;
    unsigned long *mine = calloc(nwords, sizeof *mine);
    unsigned long *all = calloc((size_t)n * nwords, sizeof *all);
    /* all ranks take part in the exchange or none (one without memory would leave the
     * others waiting in it) */
    int ok = mine && all, all_ok = 0;
    int err = MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node);
    if (err != MPI_SUCCESS || !all_ok) {
        free(mine);
        free(all);
        return err != MPI_SUCCESS ? utc__mpi_error(err, "utc_init: MPI_Allreduce") : UTC_OK;
    }
    hwloc_bitmap_to_ulongs(allowed, nwords, mine);
    err = MPI_Allgather(mine, (int)nwords, MPI_UNSIGNED_LONG, all, (int)nwords, MPI_UNSIGNED_LONG,
                        node);
    if (err == MPI_SUCCESS) {
        node_offset = 0;
        node_sharers = 1;
        for (int r = 0; r < n; r++)
            for (unsigned w = 0; w < nwords && r != me; w++)
                if (all[(size_t)r * nwords + w] & mine[w]) {
                    node_offset += r < me;
                    node_sharers++;
                    break;
                }
    }
    free(mine);
    free(all);
    return err == MPI_SUCCESS ? UTC_OK : utc__mpi_error(err, "utc_init: MPI_Allgather");
}

utc_status_t utc__binding_start(MPI_Comm node)
{
    hwloc_topology_t topo = utc__topology();
    allowed = hwloc_bitmap_alloc();
    if (!allowed)
        return utc__error(UTC_ERR_NO_MEMORY, "utc_init: cannot allocate a cpuset");
    /* the process's mask (hwloc: the union of its threads' masks on Linux) */
    if (hwloc_get_cpubind(topo, allowed, HWLOC_CPUBIND_PROCESS) != 0 &&
        hwloc_get_cpubind(topo, allowed, HWLOC_CPUBIND_THREAD) != 0)
        hwloc_bitmap_copy(allowed, hwloc_topology_get_allowed_cpuset(topo));
    hwloc_bitmap_and(allowed, allowed, hwloc_topology_get_allowed_cpuset(topo));
    if (hwloc_bitmap_iszero(allowed)) /* a mask hwloc does not know: trust hwloc's set */
        hwloc_bitmap_copy(allowed, hwloc_topology_get_allowed_cpuset(topo));
    hwloc_bitmap_list_snprintf(allowed_text, sizeof allowed_text, allowed);
    utc_status_t rc = UTC_OK;
    if (node != MPI_COMM_NULL)
        rc = learn_offset(node, hwloc_topology_get_complete_cpuset(topo));
    utc_log(UTC_LOG_DEBUG, "binding: CPUs %s allowed, this rank's cursor starts at %d",
            allowed_text, node_offset);
    return rc;
}

void utc__binding_stop(void)
{
    hwloc_bitmap_free(allowed);
    allowed = NULL;
}

int utc__cpu_sharers(void) { return node_sharers; }

/* The calling thread's binding (NULL when it cannot be read). */
static hwloc_bitmap_t bind_save(void)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set && hwloc_get_cpubind(utc__topology(), set, HWLOC_CPUBIND_THREAD) != 0) {
        hwloc_bitmap_free(set);
        set = NULL;
    }
    return set;
}

void utc__bind_restore(void *saved)
{
    if (!saved)
        return;
    (void)hwloc_set_cpubind(utc__topology(), saved, HWLOC_CPUBIND_THREAD);
    hwloc_bitmap_free(saved);
}

int utc__binding_reserve(int n)
{
    /* ranks sharing CPUs start at different places so their threads interleave */
    int expected = 0;
    if (atomic_compare_exchange_strong(&cursor_started, &expected, 1))
        atomic_fetch_add(&cursor, node_offset);
    if (bad_entry >= 0 && bad_entry < n) /* an entry that one of these n threads uses */
        utc__error(UTC_ERR_INVALID_ARG,
                   "utc_task_create: cpu_list[%d] = %d is not one of the CPUs this process "
                   "may use (%s: its affinity mask at utc_init)",
                   bad_entry, bad_cpu, allowed_text);
    bad_entry = -1;
    return atomic_fetch_add(&cursor, n);
}

utc_status_t utc__binding_check(const utc_task_options_t *opts)
{
    hwloc_topology_t topo = utc__topology();
    bad_entry = -1;
    switch (opts->bind) {
    case UTC_BIND_NONE:
    case UTC_BIND_PACKAGE:
    case UTC_BIND_CORE:
    case UTC_BIND_PU:
        return UTC_OK;
    case UTC_BIND_EXPLICIT: {
        if (!opts->cpu_list || opts->cpu_list_len <= 0)
            return utc__error(UTC_ERR_INVALID_ARG,
                              "utc_task_create: UTC_BIND_EXPLICIT needs a non-empty cpu_list");
        hwloc_const_cpuset_t all = hwloc_topology_get_complete_cpuset(topo);
        for (int i = 0; i < opts->cpu_list_len; i++)
            if (opts->cpu_list[i] < 0 || !hwloc_bitmap_isset(all, (unsigned)opts->cpu_list[i]))
                return utc__error(UTC_ERR_INVALID_ARG,
                                  "utc_task_create: cpu_list[%d] = %d is not a CPU of this machine",
                                  i, opts->cpu_list[i]);
        /* Whether a CPU is allowed differs between ranks, and matters only on the ranks
         * that hold threads of the task: said by utc__binding_reserve there, and the
         * thread's bind fails, so that every rank learns it from the create's agreement. */
        for (int i = 0; i < opts->cpu_list_len && allowed; i++)
            if (!hwloc_bitmap_isset(allowed, (unsigned)opts->cpu_list[i])) {
                bad_entry = i;
                bad_cpu = opts->cpu_list[i];
                break;
            }
        return UTC_OK;
    }
    }
    return utc__error(UTC_ERR_INVALID_ARG, "utc_task_create: unknown binding mode %d",
                      (int)opts->bind);
}

/* Bind the calling thread to `set`; UTC_ERR_THREAD naming `what` if hwloc refuses. */
static utc_status_t bind_to(hwloc_const_bitmap_t set, int local_id, const char *what, int which)
{
    if (hwloc_set_cpubind(utc__topology(), set, HWLOC_CPUBIND_THREAD) == 0)
        return UTC_OK;
    return utc__error(UTC_ERR_THREAD, "cannot bind thread %d to %s %d", local_id, what, which);
}

/* The objects of `type` that have an allowed CPU: how many, and the k-th of them. */
static hwloc_obj_t allowed_obj(hwloc_obj_type_t type, int k, int *count)
{
    hwloc_topology_t topo = utc__topology();
    hwloc_obj_t found = NULL;
    int m = 0;
    for (hwloc_obj_t o = hwloc_get_next_obj_by_type(topo, type, NULL); o;
         o = hwloc_get_next_obj_by_type(topo, type, o))
        if (hwloc_bitmap_intersects(o->cpuset, allowed) && m++ == k)
            found = o;
    *count = m;
    return found;
}

/* The CPUs thread `local_id` (at `slot` of the cursor) is bound to under opts, into *out
 * (freed by the caller); *what and *which name them for a message. UTC_OK with *out NULL:
 * UTC_BIND_NONE, the thread keeps the process's mask. */
static utc_status_t target_of(const utc_task_options_t *opts, int local_id, int slot,
                              hwloc_bitmap_t *out, const char **what, int *which)
{
    hwloc_obj_type_t type;
    const char *mode, *noun;
    *out = NULL;
    switch (opts->bind) {
    case UTC_BIND_NONE:
        return UTC_OK; /* the process's mask, inherited */
    case UTC_BIND_PACKAGE:
        type = HWLOC_OBJ_PACKAGE;
        mode = "UTC_BIND_PACKAGE";
        noun = "package";
        break;
    case UTC_BIND_CORE:
        type = HWLOC_OBJ_CORE;
        mode = "UTC_BIND_CORE";
        noun = "core";
        break;
    case UTC_BIND_PU:
        type = HWLOC_OBJ_PU;
        mode = "UTC_BIND_PU";
        noun = "PU";
        break;
    case UTC_BIND_EXPLICIT: {
        int cpu = opts->cpu_list[local_id % opts->cpu_list_len];
        if (!hwloc_bitmap_isset(allowed, (unsigned)cpu))
            return utc__error(UTC_ERR_INVALID_ARG,
                              "thread %d: CPU %d is not one of the CPUs this process may use (%s)",
                              local_id, cpu, allowed_text);
        if (!(*out = hwloc_bitmap_alloc()))
            return utc__error(UTC_ERR_NO_MEMORY, "cannot allocate a cpuset");
        hwloc_bitmap_only(*out, (unsigned)cpu);
        *what = "CPU";
        *which = cpu;
        return UTC_OK;
    }
    default:
        return utc__error(UTC_ERR_INVALID_ARG, "unknown binding mode %d", (int)opts->bind);
    }
    int m;
    allowed_obj(type, 0, &m);
    if (!(*out = hwloc_bitmap_alloc()))
        return utc__error(UTC_ERR_NO_MEMORY, "cannot allocate a cpuset");
    if (m == 0) { /* e.g. no package objects reported: the allowed set as a whole */
        hwloc_bitmap_copy(*out, allowed);
        *what = "the allowed CPUs";
        *which = 0;
        return UTC_OK;
    }
    if (local_id == m && type != HWLOC_OBJ_PACKAGE) {
        /* more of this task's threads here than objects to give each its own: say so
         * once per process, then share them round robin (as oversubscription does) */
        static atomic_flag said = ATOMIC_FLAG_INIT;
        if (!atomic_flag_test_and_set(&said))
            utc_log(UTC_LOG_WARN,
                    "%s: a task has more threads on this rank than the %d %s%s of the CPUs "
                    "this process may use (%s); its threads share them, round robin",
                    mode, m, noun, m == 1 ? "" : "s", allowed_text);
    }
    hwloc_obj_t obj = allowed_obj(type, slot % m, &m);
    if (!obj) {
        hwloc_bitmap_free(*out);
        *out = NULL;
        return utc__error(UTC_ERR_THREAD, "cannot bind thread %d to %s #%d", local_id,
                          hwloc_obj_type_string(type), slot % m);
    }
    /* only the allowed part of it: a core's other hardware thread may be another job's */
    hwloc_bitmap_and(*out, obj->cpuset, allowed);
    *what = hwloc_obj_type_string(type);
    *which = (int)obj->logical_index;
    return UTC_OK;
}

utc_status_t utc__bind_self(const utc_task_options_t *opts, int local_id, int slot)
{
    hwloc_bitmap_t set;
    const char *what = NULL;
    int which = 0;
    utc_status_t rc = target_of(opts, local_id, slot, &set, &what, &which);
    if (rc != UTC_OK || !set)
        return rc;
    rc = bind_to(set, local_id, what, which);
    hwloc_bitmap_free(set);
    return rc;
}

void *utc__bind_as(const utc_task_options_t *opts, int local_id, int slot)
{
    if (opts->bind == UTC_BIND_NONE)
        return NULL;
    hwloc_bitmap_t saved = bind_save(), set = NULL;
    const char *what = NULL;
    int which = 0;
    if (!saved || target_of(opts, local_id, slot, &set, &what, &which) != UTC_OK || !set ||
        hwloc_bitmap_isequal(saved, set) || bind_to(set, local_id, what, which) != UTC_OK) {
        /* bound so already (the usual case: a caller that waits where the thread runs),
         * or it cannot be: nothing to undo */
        hwloc_bitmap_free(saved);
        saved = NULL;
    }
    hwloc_bitmap_free(set);
    return saved;
}
