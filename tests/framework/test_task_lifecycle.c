/* Task lifecycle: create, init, run, wait, destroy; thread ids; barriers; many tasks. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "utc_internal.h"

#include "utc_test.h"

typedef struct {
    utc_task_t base;
    atomic_int inits, runs, fini_calls;
    atomic_int bad_ids;        /* threads whose ctx disagreed with the proc list */
    atomic_int early;          /* threads that passed a barrier before all arrived */
    atomic_int arrived;
    int *seen_gids;            /* local id -> global id reported */
    const int *procs;
    int nthreads;
} count_task_t;

static int count_init(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    count_task_t *t = (count_task_t *)self;
    if (ctx->local_id == 0) /* one writer: the threads run init at the same time */
        t->procs = ((const int **)arg)[0];
    atomic_fetch_add(&t->inits, 1);
    return 0;
}

/* Check the ctx against the proc list: global id's rank is ours, local ids are in order. */
static int count_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    count_task_t *t = (count_task_t *)self;
    (void)arg;
    int me = utc_rank(), nlocal = 0, my_local = -1;
    for (int g = 0; g < t->nthreads; g++) {
        if (t->procs[g] == me) {
            if (g == ctx->global_id)
                my_local = nlocal;
            nlocal++;
        }
    }
    if (ctx->global_count != t->nthreads || ctx->local_count != nlocal ||
        my_local != ctx->local_id || ctx->world_rank != me || ctx->task != self ||
        ctx->world_size != utc_nranks() || utc_ctx_self() != ctx)
        atomic_fetch_add(&t->bad_ids, 1);
    atomic_fetch_add(&t->runs, 1);
    return 0;
}

static atomic_int fini_total; /* fini calls of all count tasks: the struct is freed after */

static atomic_int fini_bad_accessors; /* accessors that failed inside fini */

static void count_fini(utc_task_t *self, utc_ctx_t *ctx)
{
    (void)ctx;
    atomic_fetch_add(&((count_task_t *)self)->fini_calls, 1);
    atomic_fetch_add(&fini_total, 1);
    /* the task is still a live task while its threads finish */
    if (utc_task_nthreads(self) != ((count_task_t *)self)->nthreads ||
        strcmp(utc_task_name(self), "count") != 0)
        atomic_fetch_add(&fini_bad_accessors, 1);
}

static const utc_task_ops_t count_ops = {
    .name = "count", .size = sizeof(count_task_t),
    .init = count_init, .run = count_run, .fini = count_fini};

static int local_count(const int *procs, int n)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += procs[i] == utc_rank();
    return c;
}

/* One full lifecycle for a proc list; returns the number of local threads. */
static void lifecycle(const int *procs, int n, int runs)
{
    utc_task_t *task;
    UTC_ASSERT_OK(utc_task_create(&count_ops, procs, n, NULL, &task));
    count_task_t *t = (count_task_t *)task;
    t->nthreads = n;
    int nlocal = local_count(procs, n);
    CU_ASSERT_EQUAL(utc_task_local_nthreads(task), nlocal);
    CU_ASSERT_EQUAL(utc_task_nthreads(task), n);
    CU_ASSERT_EQUAL(utc_task_entry_rank(task), procs[0]);
    const int *arg[1] = {procs};
    UTC_ASSERT_OK(utc_task_init(task, arg));
    for (int r = 0; r < runs; r++) {
        UTC_ASSERT_OK(utc_task_run(task, NULL));
        UTC_ASSERT_OK(utc_task_wait(task));
    }
    CU_ASSERT_EQUAL(atomic_load(&t->inits), nlocal);
    CU_ASSERT_EQUAL(atomic_load(&t->runs), nlocal * runs);
    CU_ASSERT_EQUAL(atomic_load(&t->bad_ids), 0);
    UTC_ASSERT_OK(utc_task_destroy(task));
}

static void test_one_rank_1_to_8_threads(void)
{
    int procs[8];
    for (int n = 1; n <= 8; n++) {
        for (int i = 0; i < n; i++)
            procs[i] = 0;
        lifecycle(procs, n, 3);
    }
}

static void test_spread_over_ranks(void)
{
    int nr = utc_nranks(), procs[24];
    for (int per = 1; per <= 4; per++) {
        int n = utc_procs_spread(procs, 24, 0, nr, per);
        CU_ASSERT_EQUAL_FATAL(n, nr * per);
        lifecycle(procs, n, 2);
    }
    /* interleaved and starting on the last rank */
    int k = 0;
    for (int i = 0; i < 7; i++)
        procs[k++] = (nr - 1 + i) % nr;
    lifecycle(procs, k, 2);
}

static void test_many_runs_queued(void)
{
    int procs[4] = {0, 0, 0, 0};
    utc_task_t *task;
    UTC_ASSERT_OK(utc_task_create(&count_ops, procs, 4, NULL, &task));
    count_task_t *t = (count_task_t *)task;
    t->nthreads = 4;
    const int *arg[1] = {procs};
    UTC_ASSERT_OK(utc_task_init(task, arg));
    /* more runs than the mailbox has slots, without waiting in between */
    for (int r = 0; r < 200; r++)
        UTC_ASSERT_OK(utc_task_run(task, NULL));
    UTC_ASSERT_OK(utc_task_wait(task));
    int expect = utc_rank() == 0 ? 4 * 200 : 0;
    CU_ASSERT_EQUAL(atomic_load(&t->runs), expect);
    UTC_ASSERT_OK(utc_task_destroy(task));
}

static void test_fini_runs_on_destroy(void)
{
    int procs[3] = {0, 0, 0};
    utc_task_t *task;
    UTC_ASSERT_OK(utc_task_create(&count_ops, procs, 3, NULL, &task));
    count_task_t *t = (count_task_t *)task;
    t->nthreads = 3;
    const int *arg[1] = {procs};
    UTC_ASSERT_OK(utc_task_init(task, arg));
    int before = atomic_load(&fini_total);
    UTC_ASSERT_OK(utc_task_destroy(task));
    CU_ASSERT_EQUAL(atomic_load(&fini_total) - before, utc_rank() == 0 ? 3 : 0);
    CU_ASSERT_EQUAL(atomic_load(&fini_bad_accessors), 0);
}

static void test_many_tasks_ids_agree(void)
{
    enum { NT = 24 };
    utc_task_t *tasks[NT];
    int ids[NT], procs[2];
    int nr = utc_nranks();
    for (int i = 0; i < NT; i++) {
        procs[0] = i % nr;
        procs[1] = (i + 1) % nr;
        UTC_ASSERT_OK(utc_task_create(&count_ops, procs, 2, NULL, &tasks[i]));
        ((count_task_t *)tasks[i])->nthreads = 2;
        ids[i] = utc_task_id(tasks[i]);
        CU_ASSERT(ids[i] >= 0);
        if (i)
            CU_ASSERT(ids[i] > ids[i - 1]);
    }
    int lo[NT], hi[NT];
    MPI_Allreduce(ids, lo, NT, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(ids, hi, NT, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    for (int i = 0; i < NT; i++)
        CU_ASSERT_EQUAL(lo[i], hi[i]);
    /* all alive at once, all running at once */
    for (int i = 0; i < NT; i++) {
        procs[0] = i % nr;
        procs[1] = (i + 1) % nr;
        static const int *arg_procs[NT][1];
        int *p = malloc(sizeof(int) * 2);
        p[0] = procs[0];
        p[1] = procs[1];
        arg_procs[i][0] = p;
        UTC_ASSERT_OK(utc_task_init(tasks[i], arg_procs[i]));
        UTC_ASSERT_OK(utc_task_run(tasks[i], NULL));
    }
    for (int i = 0; i < NT; i++) {
        UTC_ASSERT_OK(utc_task_wait(tasks[i]));
        count_task_t *t = (count_task_t *)tasks[i];
        CU_ASSERT_EQUAL(atomic_load(&t->bad_ids), 0);
        free((void *)t->procs);
        UTC_ASSERT_OK(utc_task_destroy(tasks[i]));
    }
}

/* ---- barriers ---- */

typedef struct {
    utc_task_t base;
    atomic_int counter;
    atomic_int errors;
    int rounds;
} barrier_task_t;

static int barrier_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    barrier_task_t *t = (barrier_task_t *)self;
    int global = arg != NULL;
    for (int r = 1; r <= t->rounds; r++) {
        atomic_fetch_add(&t->counter, 1);
        /* stagger arrivals so a broken barrier would let early threads through */
        if ((ctx->global_id + r) % 3 == 0)
            usleep(200);
        if (global)
            UTC_ASSERT_OK(utc_ctx_barrier(ctx));
        else
            UTC_ASSERT_OK(utc_ctx_barrier_local(ctx));
        if (atomic_load(&t->counter) < r * ctx->local_count)
            atomic_fetch_add(&t->errors, 1);
        /* second barrier: nobody starts round r+1 until all have checked round r */
        if (global)
            UTC_ASSERT_OK(utc_ctx_barrier(ctx));
        else
            UTC_ASSERT_OK(utc_ctx_barrier_local(ctx));
    }
    return 0;
}

static const utc_task_ops_t barrier_ops = {
    .name = "barrier", .size = sizeof(barrier_task_t), .run = barrier_run};

static void run_barrier_test(int global)
{
    int procs[12], nr = utc_nranks();
    int n = utc_procs_spread(procs, 12, 0, nr, 4);
    utc_task_t *task;
    UTC_ASSERT_OK(utc_task_create(&barrier_ops, procs, n, NULL, &task));
    barrier_task_t *t = (barrier_task_t *)task;
    t->rounds = 200;
    UTC_ASSERT_OK(utc_task_run(task, global ? (void *)1 : NULL));
    UTC_ASSERT_OK(utc_task_wait(task));
    CU_ASSERT_EQUAL(atomic_load(&t->errors), 0);
    CU_ASSERT_EQUAL(atomic_load(&t->counter), 4 * t->rounds);
    UTC_ASSERT_OK(utc_task_destroy(task));
}

static void test_local_barrier_holds(void) { run_barrier_test(0); }

/* Global barrier: a rank-wide counter in a window would be nicer; here every rank checks
 * that after the barrier all ranks have published their round through an allreduce. */
typedef struct {
    utc_task_t base;
    int rounds;
    atomic_int errors;
} gbar_task_t;

static int gbar_step(utc_ctx_t *ctx, void *arg)
{
    int *round = arg, mine = *round, lo;
    MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, ctx->task->impl->comm);
    return lo == mine ? 0 : UTC_ERR_INTERNAL;
}

static int gbar_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    gbar_task_t *t = (gbar_task_t *)self;
    for (int r = 0; r < t->rounds; r++) {
        if (ctx->global_id % 2)
            usleep(100);
        UTC_ASSERT_OK(utc_ctx_barrier(ctx));
        int rc = utc_ctx_single(ctx, 0, gbar_step, &r);
        if (rc != 0)
            atomic_fetch_add(&t->errors, 1);
    }
    return 0;
}

static const utc_task_ops_t gbar_ops = {.name = "gbar", .size = sizeof(gbar_task_t), .run = gbar_run};

static void test_global_barrier_holds(void)
{
    run_barrier_test(1);
    int procs[12], nr = utc_nranks();
    int n = utc_procs_spread(procs, 12, 0, nr, 3);
    utc_task_t *task;
    UTC_ASSERT_OK(utc_task_create(&gbar_ops, procs, n, NULL, &task));
    ((gbar_task_t *)task)->rounds = 100;
    UTC_ASSERT_OK(utc_task_run(task, NULL));
    UTC_ASSERT_OK(utc_task_wait(task));
    CU_ASSERT_EQUAL(atomic_load(&((gbar_task_t *)task)->errors), 0);
    UTC_ASSERT_OK(utc_task_destroy(task));
}

/* ---- one thread does it ---- */

static int single_fn(utc_ctx_t *ctx, void *arg)
{
    atomic_int *calls = arg;
    atomic_fetch_add(calls, 1);
    return 100 + ctx->local_id;
}

typedef struct {
    utc_task_t base;
    atomic_int calls, wrong;
} single_task_t;

static int single_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    single_task_t *t = (single_task_t *)self;
    for (int r = 0; r < 100; r++) {
        int who = r % ctx->local_count;
        if (utc_ctx_single(ctx, who, single_fn, &t->calls) != 100 + who)
            atomic_fetch_add(&t->wrong, 1);
    }
    if (utc_ctx_single(ctx, ctx->local_count, single_fn, &t->calls) != UTC_ERR_OUT_OF_RANGE)
        atomic_fetch_add(&t->wrong, 1);
    return 0;
}

static const utc_task_ops_t single_ops = {
    .name = "single", .size = sizeof(single_task_t), .run = single_run};

static void test_single_thread_does_it(void)
{
    int procs[5] = {0, 0, 0, 0, 0};
    utc_task_t *task;
    UTC_ASSERT_OK(utc_task_create(&single_ops, procs, 5, NULL, &task));
    UTC_ASSERT_OK(utc_task_run(task, NULL));
    UTC_ASSERT_OK(utc_task_wait(task));
    single_task_t *t = (single_task_t *)task;
    CU_ASSERT_EQUAL(atomic_load(&t->wrong), 0);
    CU_ASSERT_EQUAL(atomic_load(&t->calls), utc_rank() == 0 ? 100 : 0);
    UTC_ASSERT_OK(utc_task_destroy(task));
}

static void test_rank_without_threads_returns_at_once(void)
{
    int procs[2] = {0, 0};
    utc_task_t *task;
    UTC_ASSERT_OK(utc_task_create(&count_ops, procs, 2, NULL, &task));
    ((count_task_t *)task)->nthreads = 2;
    const int *arg[1] = {procs};
    CU_ASSERT_EQUAL(utc_task_is_local(task), utc_rank() == 0);
    UTC_ASSERT_OK(utc_task_init(task, arg));
    UTC_ASSERT_OK(utc_task_run(task, NULL));
    UTC_ASSERT_OK(utc_task_wait(task));
    CU_ASSERT_EQUAL(atomic_load(&((count_task_t *)task)->runs), utc_rank() == 0 ? 2 : 0);
    UTC_ASSERT_OK(utc_task_destroy(task));
}

static const utc_test_case_t cases[] = {
    {"1 to 8 threads on one rank", test_one_rank_1_to_8_threads},
    {"threads spread over ranks", test_spread_over_ranks},
    {"200 runs queued without waiting", test_many_runs_queued},
    {"destroy runs fini on every local thread", test_fini_runs_on_destroy},
    {"24 tasks alive at once, ids agree on all ranks", test_many_tasks_ids_agree},
    {"local barrier: no thread passes early", test_local_barrier_holds},
    {"task barrier across ranks: no thread passes early", test_global_barrier_holds},
    {"one thread does it, the others wait", test_single_thread_does_it},
    {"rank without threads: init/run/wait return at once", test_rank_without_threads_returns_at_once},
    UTC_TEST_END};

int main(int argc, char **argv) { return utc_test_main(argc, argv, "task lifecycle", cases); }
