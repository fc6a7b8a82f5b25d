/* Pinning task threads with hwloc. One cursor per rank spreads the threads of all tasks. */
#define _GNU_SOURCE
#include <sched.h>

#include <hwloc.h>
#include <stdatomic.h>

#include "base/errors.h"
#include "context/binding.h"
#include "context/context_internal.h"

static atomic_int cursor;
static atomic_int cursor_started;

int utc__cpus_allowed(void)
{
    static atomic_int n;
    int v = atomic_load_explicit(&n, memory_order_relaxed); /* a lone value, same for all */
    if (v == 0) {
        cpu_set_t set;
        v = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
        if (v < 1)
            v = 1;
        atomic_store_explicit(&n, v, memory_order_relaxed);
    }
    return v;
}

int utc__binding_reserve(int n)
{
    /* ranks sharing a node start at different places so their threads interleave */
    int expected = 0;
    if (atomic_compare_exchange_strong(&cursor_started, &expected, 1))
        atomic_fetch_add(&cursor, utc__node_local_rank());
    return atomic_fetch_add(&cursor, n);
}

utc_status_t utc__binding_check(const utc_task_options_t *opts)
{
    hwloc_topology_t topo = utc__topology();
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
        return UTC_OK;
    }
    }
    return utc__error(UTC_ERR_INVALID_ARG, "utc_task_create: unknown binding mode %d",
                      (int)opts->bind);
}

utc_status_t utc__bind_self(const utc_task_options_t *opts, int local_id, int slot)
{
    hwloc_topology_t topo = utc__topology();
    hwloc_obj_type_t type;
    switch (opts->bind) {
    case UTC_BIND_NONE:
        return UTC_OK;
    case UTC_BIND_PACKAGE: type = HWLOC_OBJ_PACKAGE; break;
    case UTC_BIND_CORE: type = HWLOC_OBJ_CORE; break;
    case UTC_BIND_PU: type = HWLOC_OBJ_PU; break;
    case UTC_BIND_EXPLICIT: {
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        if (!set)
            return utc__error(UTC_ERR_NO_MEMORY, "cannot allocate a cpuset");
        hwloc_bitmap_only(set, (unsigned)opts->cpu_list[local_id % opts->cpu_list_len]);
        int err = hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_THREAD);
        hwloc_bitmap_free(set);
        if (err != 0)
            return utc__error(UTC_ERR_THREAD, "cannot bind thread %d to CPU %d", local_id,
                              opts->cpu_list[local_id % opts->cpu_list_len]);
        return UTC_OK;
    }
    default:
        return utc__error(UTC_ERR_INVALID_ARG, "unknown binding mode %d", (int)opts->bind);
    }
    int n = hwloc_get_nbobjs_by_type(topo, type);
    if (n <= 0) /* e.g. no package objects reported: fall back to the whole machine */
        return UTC_OK;
    hwloc_obj_t obj = hwloc_get_obj_by_type(topo, type, (unsigned)(slot % n));
    if (!obj || hwloc_set_cpubind(topo, obj->cpuset, HWLOC_CPUBIND_THREAD) != 0)
        return utc__error(UTC_ERR_THREAD, "cannot bind thread %d to %s #%d", local_id,
                          hwloc_obj_type_string(type), slot % n);
    return UTC_OK;
}
