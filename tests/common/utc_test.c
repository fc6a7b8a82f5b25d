#include "utc_test.h"

#include <CUnit/Basic.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int test_rank = 0;
static int test_nranks = 1;

static int *test_host; /* each rank's host: its node's lowest world rank */

int utc_test_rank(void) { return test_rank; }
int utc_test_nranks(void) { return test_nranks; }

int utc_test_same_host(int a, int b)
{
    if (a < 0 || b < 0 || a >= test_nranks || b >= test_nranks)
        return 0;
    return !test_host || test_host[a] == test_host[b];
}

utc_conduit_transport_t utc_test_transport(int a, int b)
{
    const char *env = getenv("UTC_TRANSPORT");
    if (a == b)
        return UTC_CONDUIT_INPROC;
    if ((env && !strcmp(env, "mpi")) || !utc_test_same_host(a, b))
        return UTC_CONDUIT_MPI;
    return UTC_CONDUIT_NODE;
}

/* Each rank's host, gathered once (collective, right after utc_init). */
static void host_map(void)
{
    MPI_Comm node;
    int leader = test_rank;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        MPI_Allreduce(&test_rank, &leader, 1, MPI_INT, MPI_MIN, node);
        MPI_Comm_free(&node);
    }
    if ((test_host = malloc(sizeof *test_host * (size_t)test_nranks)))
        MPI_Allgather(&leader, 1, MPI_INT, test_host, 1, MPI_INT, MPI_COMM_WORLD);
}

void utc_test_report_(const char *file, int line, const char *expr, int rc)
{
    fprintf(stderr, "[rank %d] %s:%d: %s returned %d (%s): %s\n", test_rank, file, line, expr,
            rc, utc_status_string(rc), utc_last_error());
}

double utc_test_cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

long utc_test_rss_bytes(void)
{
    long pages = 0, res = -1;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return -1;
    if (fscanf(f, "%ld %ld", &pages, &res) != 2)
        res = -1;
    fclose(f);
    return res < 0 ? -1 : res * sysconf(_SC_PAGESIZE);
}

void utc_test_skip_all(const char *reason)
{
    if (test_rank == 0)
        printf("SKIPPED: %s\n", reason);
    fflush(stdout);
    if (utc_is_initialized())
        (void)utc_finalize();
    exit(77);
}

int utc_test_gpu_required(void)
{
    const char *req = getenv("UTC_REQUIRE_GPU");
    return req && strcmp(req, "1") == 0;
}

int utc_test_need_gpu(void)
{
    int n = utc_gpu_device_count(), min = n;
    MPI_Allreduce(&n, &min, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (min > 0)
        return min;
    const char *why = utc_gpu_unavailable_reason();
    if (n <= 0) /* each rank without a device says why */
        printf("rank %d: no usable GPU: %s\n", test_rank,
               why ? why : n < 0 ? utc_last_error() : "none visible");
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (utc_test_gpu_required()) {
        if (test_rank == 0)
            printf("FAILED: UTC_REQUIRE_GPU=1, and a rank has no usable GPU (above)\n");
        fflush(stdout);
        (void)utc_finalize();
        exit(1);
    }
    utc_test_skip_all("a rank has no usable GPU (above)");
}

int utc_test_main(int argc, char **argv, const char *suite_name, const utc_test_case_t *cases)
{
    utc_status_t rc = utc_init(&argc, &argv);
    if (rc != UTC_OK) {
        fprintf(stderr, "utc_init failed: %s: %s\n", utc_status_string(rc), utc_last_error());
        return 1;
    }
    test_rank = utc_rank();
    test_nranks = utc_nranks();
    host_map();

    if (CU_initialize_registry() != CUE_SUCCESS) {
        fprintf(stderr, "CUnit: %s\n", CU_get_error_msg());
        return 1;
    }
    char name[256];
    snprintf(name, sizeof name, "%s (rank %d of %d)", suite_name, test_rank, test_nranks);
    CU_pSuite suite = CU_add_suite(name, NULL, NULL);
    for (const utc_test_case_t *c = cases; suite && c->name; c++)
        CU_add_test(suite, c->name, c->fn);

    /* Only rank 0 prints the per-test lines; every rank prints a summary if it failed. */
    CU_basic_set_mode(test_rank == 0 ? CU_BRM_VERBOSE : CU_BRM_SILENT);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    if (test_rank != 0 && failed) {
        printf("\n[rank %d] failures:\n", test_rank);
        CU_basic_show_failures(CU_get_failure_list());
        CU_print_run_results(stdout);
        printf("\n");
    }
    fflush(stdout);
    CU_cleanup_registry();

    int any_failed = failed != 0, world_failed = any_failed;
    MPI_Allreduce(&any_failed, &world_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    rc = utc_finalize();
    if (rc != UTC_OK) {
        fprintf(stderr, "utc_finalize failed: %s\n", utc_last_error());
        return 1;
    }
    return world_failed ? 1 : 0;
}
