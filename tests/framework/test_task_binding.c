/* Binding modes: read back each thread's CPU set with hwloc and compare with the promise. */
#include <hwloc.h>
#include <stdlib.h>

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

static const utc_task_ops_t bind_ops = {.name = "bind", .size = sizeof(bind_task_t), .run = bind_run};

static hwloc_topology_t topo;

/* Run a task of n threads on this rank with the options; its threads' sets in t->sets. */
static bind_task_t *run_bound(int n, const utc_task_options_t *o)
{
    int procs[MAXT];
    for (int i = 0; i < n; i++)
        procs[i] = utc_rank();
    /* one task per rank, created collectively: rank r's task holds r's threads */
    bind_task_t *mine = NULL;
    for (int r = 0; r < utc_nranks(); r++) {
        int p[MAXT];
        for (int i = 0; i < n; i++)
            p[i] = r;
        utc_task_t *task;
        UTC_ASSERT_OK(utc_task_create(&bind_ops, p, n, o, &task));
        ((bind_task_t *)task)->topo = topo;
        UTC_ASSERT_OK(utc_task_run(task, NULL));
        UTC_ASSERT_OK(utc_task_wait(task));
        if (r == utc_rank())
            mine = (bind_task_t *)task;
        else
            UTC_ASSERT_OK(utc_task_destroy(task));
    }
    (void)procs;
    return mine;
}

static void finish(bind_task_t *t, int n)
{
    for (int i = 0; i < n; i++)
        hwloc_bitmap_free(t->sets[i]);
    /* destroy is collective only among members: here only this rank */
    UTC_ASSERT_OK(utc_task_destroy(&t->base));
}

static void check_objects(hwloc_obj_type_t type, utc_bind_mode_t mode)
{
    int nobj = hwloc_get_nbobjs_by_type(topo, type);
    CU_ASSERT_FATAL(nobj > 0);
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.bind = mode;
    int n = 4;
    bind_task_t *t = run_bound(n, &o);
    int prev = -1;
    for (int i = 0; i < n; i++) {
        /* the set is exactly one object's set */
        int found = -1;
        for (int k = 0; k < nobj; k++)
            if (hwloc_bitmap_isequal(hwloc_get_obj_by_type(topo, type, k)->cpuset, t->sets[i]))
                found = k;
        CU_ASSERT(found >= 0);
        /* consecutive threads go to consecutive objects (round robin) */
        if (i > 0 && nobj > 1)
            CU_ASSERT_EQUAL(found, (prev + 1) % nobj);
        prev = found;
    }
    finish(t, n);
}

static void test_core(void) { check_objects(HWLOC_OBJ_CORE, UTC_BIND_CORE); }
static void test_pu(void) { check_objects(HWLOC_OBJ_PU, UTC_BIND_PU); }
static void test_package(void) { check_objects(HWLOC_OBJ_PACKAGE, UTC_BIND_PACKAGE); }

static void test_explicit(void)
{
    int last = hwloc_bitmap_last(hwloc_topology_get_complete_cpuset(topo));
    int cpus[2] = {last, 0};
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
    int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    if (ncores < 2)
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
    {"core binding: one core each, round robin", test_core},
    {"PU binding: one PU each, round robin", test_pu},
    {"package binding", test_package},
    {"explicit CPU list", test_explicit},
    {"no binding keeps the process's CPU set", test_none_keeps_process_set},
    {"the rank's cursor spreads tasks over cores", test_cursor_spreads_tasks},
    UTC_TEST_END};

int main(int argc, char **argv)
{
    hwloc_topology_init(&topo);
    hwloc_topology_load(topo);
    int rc = utc_test_main(argc, argv, "task binding", cases);
    hwloc_topology_destroy(topo);
    return rc;
}
