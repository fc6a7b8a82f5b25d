/* Idle task threads sleep: 8 idle threads use under 2% of a core over 1 s. */
#include <unistd.h>

#include "utc_test.h"

typedef struct {
    utc_task_t base;
} idle_task_t;

static int idle_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    return 0;
}

static const utc_task_ops_t idle_ops = {.name = "idle", .size = sizeof(idle_task_t), .run = idle_run};

static void test_idle_threads_sleep(void)
{
    int procs[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    utc_task_t *task;
    UTC_ASSERT_OK(utc_task_create(&idle_ops, procs, 8, NULL, &task));
    /* one run so the threads have been through a command and back to idle */
    UTC_ASSERT_OK(utc_task_run(task, NULL));
    UTC_ASSERT_OK(utc_task_wait(task));
    usleep(50000);
    double cpu0 = utc_test_cpu_seconds(), wall0 = utc_wtime();
    sleep(1);
    double cpu = utc_test_cpu_seconds() - cpu0, wall = utc_wtime() - wall0;
    printf("\n  8 idle threads: %.4f s CPU over %.3f s (%.2f%% of a core)\n", cpu, wall,
           100 * cpu / wall);
    CU_ASSERT(cpu < 0.02 * wall);
    UTC_ASSERT_OK(utc_task_destroy(task));
}

static int blocked_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)arg;
    /* thread 0 sleeps 1 s; the others wait for it in a barrier */
    if (ctx->local_id == 0)
        sleep(1);
    return utc_ctx_barrier_local(ctx);
}

static const utc_task_ops_t blocked_ops = {.name = "blocked", .size = sizeof(idle_task_t), .run = blocked_run};

static void test_barrier_waiters_sleep(void)
{
    int procs[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    utc_task_t *task;
    UTC_ASSERT_OK(utc_task_create(&blocked_ops, procs, 8, NULL, &task));
    double cpu0 = utc_test_cpu_seconds();
    UTC_ASSERT_OK(utc_task_run(task, NULL));
    UTC_ASSERT_OK(utc_task_wait(task)); /* the owner sleeps too */
    double cpu = utc_test_cpu_seconds() - cpu0;
    printf("\n  7 threads in a barrier + owner in wait for 1 s: %.4f s CPU\n", cpu);
    CU_ASSERT(cpu < 0.05);
    UTC_ASSERT_OK(utc_task_destroy(task));
}

static const utc_test_case_t cases[] = {
    {"8 idle threads use under 2% of a core", test_idle_threads_sleep},
    {"threads waiting in a barrier and in wait sleep", test_barrier_waiters_sleep},
    UTC_TEST_END};

int main(int argc, char **argv) { return utc_test_main(argc, argv, "idle threads", cases); }
