/* Binding modes: read back each thread's CPU set with hwloc and compare with the promise,
 * within the CPUs the process may use (its mask: taskset, mpirun --bind-to, Slurm). Run
 * with the whole machine, and by check_binding_mask.sh under taskset and --bind-to core;
 * that script sets UTC_TEST_EXPECT_CPUS to the mask it gave each rank. */
#include <hwloc.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utc_test.h"

#define MAXT 8

typedef struct {
    utc_task_t base;
    hwloc_topology_t topo;
    hwloc_bitmap_t sets[MAXT];
} bind_task_t;

static int bind_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    bind_task_t *t = (bind_task_t *)self;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    hwloc_get_cpubind(t->topo, set, HWLOC_CPUBIND_THREAD);
    t->sets[ctx->local_id] = set;
    return 0;
}

static const utc_task_ops_t bind_ops = {
    .name = "bind", .size = sizeof(bind_task_t), .run = bind_run};

static hwloc_topology_t topo;
static hwloc_bitmap_t allowed; /* this rank's mask, read after utc_init */

/* The CPUs this rank may use, as the runtime should see them (read once). */
static hwloc_const_bitmap_t my_cpus(void)
{
    if (!allowed) {
        allowed = hwloc_bitmap_alloc();
        hwloc_get_cpubind(topo, allowed, HWLOC_CPUBIND_PROCESS);
        hwloc_bitmap_and(allowed, allowed, hwloc_topology_get_allowed_cpuset(topo));
    }
    return allowed;
}

/* The objects of `type` with a CPU in the mask, in order; returns how many. */
static int allowed_objs(hwloc_obj_type_t type, hwloc_obj_t *objs, int max)
{
    int m = 0;
    for (hwloc_obj_t o = hwloc_get_next_obj_by_type(topo, type, NULL); o;
         o = hwloc_get_next_obj_by_type(topo, type, o))
        if (hwloc_bitmap_intersects(o->cpuset, my_cpus()) && m < max)
            objs[m++] = o;
    return m;
}

/* Create, on every rank in turn, a task of n threads all on that rank; run it. Returns
 * this rank's, its threads' sets filled in; the others are destroyed. `rcs` (optional)
 * receives each create's status (then a failing create is no test failure here). */
static bind_task_t *run_bound_rc(int n, const utc_task_options_t *o, int *rcs)
{
    bind_task_t *mine = NULL;
    for (int r = 0; r < utc_nranks(); r++) {
        int p[MAXT];
        for (int i = 0; i < n; i++)
            p[i] = r;
        utc_task_t *task;
        int rc = utc_task_create(&bind_ops, p, n, o, &task);
        if (rcs) {
            rcs[r] = rc;
            if (rc != UTC_OK)
                continue;
        } else
            UTC_ASSERT_OK(rc);
        ((bind_task_t *)task)->topo = topo;
        UTC_ASSERT_OK(utc_task_run(task, NULL));
        UTC_ASSERT_OK(utc_task_wait(task));
        if (r == utc_rank())
            mine = (bind_task_t *)task;
        else
            UTC_ASSERT_OK(utc_task_destroy(task));
    }
    return mine;
}

static bind_task_t *run_bound(int n, const utc_task_options_t *o)
{
    return run_bound_rc(n, o, NULL);
}

static void finish(bind_task_t *t, int n)
{
    for (int i = 0; i < n; i++)
        hwloc_bitmap_free(t->sets[i]);
    /* destroy is collective only among members: here only this rank */
    UTC_ASSERT_OK(utc_task_destroy(&t->base));
}

/* The mask the launcher gave is the one the rank sees (else the runs under taskset would
 * test nothing): UTC_TEST_EXPECT_CPUS (a CPU list), or UTC_TEST_EXPECT_DISJOINT (each
 * rank's mask shares no CPU with another's). */
static void test_mask_as_launched(void)
{
    char text[256];
    hwloc_bitmap_list_snprintf(text, sizeof text, my_cpus());
    const char *want = getenv("UTC_TEST_EXPECT_CPUS");
    if (want) {
        hwloc_bitmap_t w = hwloc_bitmap_alloc();
        hwloc_bitmap_list_sscanf(w, want);
        if (!hwloc_bitmap_isequal(w, my_cpus()))
            fprintf(stderr, "rank %d: mask %s, the launcher gave %s\n", utc_rank(), text, want);
        CU_ASSERT(hwloc_bitmap_isequal(w, my_cpus()));
        hwloc_bitmap_free(w);
    }
    if (getenv("UTC_TEST_EXPECT_DISJOINT")) {
        enum { W = 16 };
        unsigned long mask[W], masks[64 * W];
        int n = utc_nranks();
        CU_ASSERT_FATAL(n <= 64);
        hwloc_bitmap_to_ulongs(my_cpus(), W, mask);
        MPI_Allgather(mask, W, MPI_UNSIGNED_LONG, masks, W, MPI_UNSIGNED_LONG, MPI_COMM_WORLD);
        for (int r = 0; r < n; r++)
            for (int w = 0; w < W && r != utc_rank(); w++)
                CU_ASSERT_EQUAL(masks[r * W + w] & mask[w], 0);
        fprintf(stderr, "rank %d: mask %s\n", utc_rank(), text);
    }
}

/* Ranks sharing CPUs start their cursors at different places; a rank whose CPUs no rank
 * before it shares starts at its first. (First case: every cursor is still at its start.) */
static void test_ranks_spread(void)
{
    int n = utc_nranks(), me = utc_rank();
    hwloc_obj_t cores[64];
    int m = allowed_objs(HWLOC_OBJ_CORE, cores, 64);
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.bind = UTC_BIND_CORE;
    bind_task_t *t = run_bound(1, &o);
    /* the first thread of each rank: which of its cores, and the masks, on every rank */
    int k = -1;
    for (int i = 0; i < m; i++)
        if (hwloc_bitmap_isincluded(t->sets[0], cores[i]->cpuset))
            k = i;
    CU_ASSERT(k >= 0);
    enum { W = 16 }; /* words of a mask: 1024 CPUs */
    unsigned long mask[W], masks[64 * W];
    hwloc_bitmap_to_ulongs(my_cpus(), W, mask);
    int first_cpu = hwloc_bitmap_first(t->sets[0]), firsts[64];
    CU_ASSERT_FATAL(n <= 64);
    MPI_Allgather(mask, W, MPI_UNSIGNED_LONG, masks, W, MPI_UNSIGNED_LONG, MPI_COMM_WORLD);
    MPI_Allgather(&first_cpu, 1, MPI_INT, firsts, 1, MPI_INT, MPI_COMM_WORLD);
    int before = 0; /* ranks before this one sharing a CPU with it */
    for (int r = 0; r < me; r++) {
        int shares = 0;
        for (int w = 0; w < W; w++)
            shares |= (masks[r * W + w] & mask[w]) != 0;
        before += shares;
    }
    CU_ASSERT_EQUAL(k, before % m);
    /* ranks with the same mask and enough cores for all: each on a core of its own */
    for (int r = 0; r < n; r++)
        if (r != me && !memcmp(&masks[r * W], mask, sizeof mask) && m >= n)
            CU_ASSERT_NOT_EQUAL(firsts[r], first_cpu);
    finish(t, 1);
}

static void check_objects(hwloc_obj_type_t type, utc_bind_mode_t mode)
{
    hwloc_obj_t objs[256];
    int nobj = allowed_objs(type, objs, 256);
    CU_ASSERT_FATAL(nobj > 0);
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.bind = mode;
    int n = 4;
    bind_task_t *t = run_bound(n, &o);
    hwloc_bitmap_t want = hwloc_bitmap_alloc();
    int prev = -1;
    for (int i = 0; i < n; i++) {
        /* only CPUs of the mask */
        CU_ASSERT(hwloc_bitmap_isincluded(t->sets[i], my_cpus()));
        /* the set is exactly the allowed part of one allowed object */
        int found = -1;
        for (int k = 0; k < nobj; k++) {
            hwloc_bitmap_and(want, objs[k]->cpuset, my_cpus());
            if (hwloc_bitmap_isequal(want, t->sets[i]))
                found = k;
        }
        CU_ASSERT(found >= 0);
        /* consecutive threads go to consecutive allowed objects (round robin) */
        if (i > 0)
            CU_ASSERT_EQUAL(found, (prev + 1) % nobj);
        prev = found;
    }
    hwloc_bitmap_free(want);
    finish(t, n);
}

static void test_core(void)
{
    check_objects(HWLOC_OBJ_CORE, UTC_BIND_CORE);
}
static void test_pu(void)
{
    check_objects(HWLOC_OBJ_PU, UTC_BIND_PU);
}
static void test_package(void)
{
    check_objects(HWLOC_OBJ_PACKAGE, UTC_BIND_PACKAGE);
}

static void test_explicit(void)
{
    /* CPUs every rank may use: its first and last (the same list on every rank, as the
     * create's agreement needs, when the masks are the same) */
    int lo = hwloc_bitmap_first(my_cpus()), hi = hwloc_bitmap_last(my_cpus()), all_lo, all_hi;
    MPI_Allreduce(&lo, &all_lo, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&hi, &all_hi, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int ok = hwloc_bitmap_isset(my_cpus(), (unsigned)all_lo) &&
             hwloc_bitmap_isset(my_cpus(), (unsigned)all_hi),
        all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) /* disjoint masks: test_explicit_own_cpu covers them */
        return;
    int cpus[2] = {all_hi, all_lo};
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.bind = UTC_BIND_EXPLICIT;
    o.cpu_list = cpus;
    o.cpu_list_len = 2;
    bind_task_t *t = run_bound(3, &o);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(hwloc_bitmap_weight(t->sets[i]), 1);
        CU_ASSERT(hwloc_bitmap_isset(t->sets[i], (unsigned)cpus[i % 2]));
    }
    finish(t, 3);
}

/* For each rank r, a task on r alone with an explicit list: the first CPU of r's mask
 * (good, even where another rank may not use it), then one outside r's mask (refused on
 * every rank, r's error naming the CPU and its mask). */
static void test_explicit_own_cpu(void)
{
    int n = utc_nranks(), me = utc_rank();
    int mine[2] = {hwloc_bitmap_first(my_cpus()), -1}, all[2 * 64];
    int last = hwloc_bitmap_last(hwloc_topology_get_complete_cpuset(topo));
    for (int c = 0; c <= last; c++)
        if (hwloc_bitmap_isset(hwloc_topology_get_complete_cpuset(topo), (unsigned)c) &&
            !hwloc_bitmap_isset(my_cpus(), (unsigned)c)) {
            mine[1] = c;
            break;
        }
    MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < n; r++) {
        utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
        o.bind = UTC_BIND_EXPLICIT;
        o.cpu_list = &all[2 * r];
        o.cpu_list_len = 1;
        utc_task_t *task;
        UTC_ASSERT_OK(utc_task_create(&bind_ops, &r, 1, &o, &task));
        ((bind_task_t *)task)->topo = topo;
        UTC_ASSERT_OK(utc_task_run(task, NULL));
        UTC_ASSERT_OK(utc_task_wait(task));
        if (r == me) {
            bind_task_t *t = (bind_task_t *)task;
            CU_ASSERT_EQUAL(hwloc_bitmap_weight(t->sets[0]), 1);
            CU_ASSERT(hwloc_bitmap_isset(t->sets[0], (unsigned)all[2 * r]));
            hwloc_bitmap_free(t->sets[0]);
        }
        UTC_ASSERT_OK(utc_task_destroy(task));

        if (all[2 * r + 1] < 0) /* rank r may use every CPU */
            continue;
        o.cpu_list = &all[2 * r + 1];
        int rc = utc_task_create(&bind_ops, &r, 1, &o, &task);
        CU_ASSERT_EQUAL(rc, UTC_ERR_INVALID_ARG);
        if (rc == UTC_OK) {
            UTC_ASSERT_OK(utc_task_destroy(task));
            continue;
        }
        if (r == me) {
            char want[64], mask[256];
            snprintf(want, sizeof want, "cpu_list[0] = %d is not one of the CPUs", all[2 * r + 1]);
            hwloc_bitmap_list_snprintf(mask, sizeof mask, my_cpus());
            const char *msg = utc_last_error();
            CU_ASSERT_PTR_NOT_NULL_FATAL(msg);
            CU_ASSERT_PTR_NOT_NULL(strstr(msg, want));
            CU_ASSERT_PTR_NOT_NULL(strstr(msg, mask));
            if (!strstr(msg, want) || !strstr(msg, mask))
                fprintf(stderr, "rank %d: message '%s'\n", me, msg);
        }
    }
}

static void test_none_keeps_process_set(void)
{
    hwloc_bitmap_t proc = hwloc_bitmap_alloc();
    hwloc_get_cpubind(topo, proc, HWLOC_CPUBIND_PROCESS);
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    bind_task_t *t = run_bound(2, &o);
    for (int i = 0; i < 2; i++)
        CU_ASSERT(hwloc_bitmap_isequal(t->sets[i], proc));
    hwloc_bitmap_free(proc);
    finish(t, 2);
}

static void test_cursor_spreads_tasks(void)
{
    hwloc_obj_t cores[2];
    if (allowed_objs(HWLOC_OBJ_CORE, cores, 2) < 2)
        return;
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.bind = UTC_BIND_CORE;
    /* two one-thread tasks: the rank's cursor puts them on different cores */
    bind_task_t *a = run_bound(1, &o);
    bind_task_t *b = run_bound(1, &o);
    CU_ASSERT_FALSE(hwloc_bitmap_isequal(a->sets[0], b->sets[0]));
    finish(a, 1);
    finish(b, 1);
}

static const utc_test_case_t cases[] = {
    {"the mask the launcher gave", test_mask_as_launched},
    {"ranks sharing CPUs spread, ranks with CPUs of their own use them", test_ranks_spread},
    {"core binding: one allowed core each, round robin", test_core},
    {"PU binding: one allowed PU each, round robin", test_pu},
    {"package binding", test_package},
    {"explicit CPU list", test_explicit},
    {"explicit CPU: the rank's own, and one outside its mask refused", test_explicit_own_cpu},
    {"no binding keeps the process's CPU set", test_none_keeps_process_set},
    {"the rank's cursor spreads tasks over cores", test_cursor_spreads_tasks},
    UTC_TEST_END};

int main(int argc, char **argv)
{
    hwloc_topology_init(&topo);
    hwloc_topology_load(topo);
    int rc = utc_test_main(argc, argv, "task binding", cases);
    hwloc_bitmap_free(allowed);
    hwloc_topology_destroy(topo);
    return rc;
}
