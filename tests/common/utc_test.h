/*
 * Shared test harness: runs one CUnit suite on every rank under MPI and UTC.
 */
#ifndef UTC_TEST_H
#define UTC_TEST_H

#include <CUnit/CUnit.h>
#include <utc/utc.h>

typedef struct utc_test_case {
    const char *name;
    void (*fn)(void);
} utc_test_case_t;

#define UTC_TEST_END {NULL, NULL}

/*
 * utc_init, run the suite's cases in order on every rank, print CUnit's run summary
 * (rank 0, and any rank with failures), utc_finalize. Returns the process exit status:
 * 0 when every rank passed, 1 otherwise. Use as `return utc_test_main(...)` from main.
 */
int utc_test_main(int argc, char **argv, const char *suite, const utc_test_case_t *cases);

/* Exit 77 on every rank (ctest: skipped) with a reason on rank 0. Collective. */
void utc_test_skip_all(const char *reason) __attribute__((noreturn));

/*
 * For suites that need a GPU on every rank: the smallest device count over the ranks
 * (> 0). When a rank has none, every rank exits: 77 (skipped) with CUDA's reason
 * (utc_gpu_unavailable_reason), or 1 (failed) when UTC_REQUIRE_GPU=1, as the GPU check
 * sets, so that a GPU CUDA cannot use is never a green run. Collective.
 */
int utc_test_need_gpu(void);

/* Whether UTC_REQUIRE_GPU=1 is set: a missing GPU is a failure, not a skip. */
int utc_test_gpu_required(void);

/* CUnit assertion that a status is UTC_OK, printing the last error otherwise. */
#define UTC_ASSERT_OK(expr)                                                              \
    do {                                                                                 \
        int utc_test_rc_ = (expr);                                                       \
        if (utc_test_rc_ != UTC_OK)                                                      \
            utc_test_report_(__FILE__, __LINE__, #expr, utc_test_rc_);                   \
        CU_ASSERT_EQUAL_FATAL(utc_test_rc_, UTC_OK);                                     \
    } while (0)

void utc_test_report_(const char *file, int line, const char *expr, int rc);

/* Process CPU time (user + system) in seconds. */
double utc_test_cpu_seconds(void);

/* This process's resident memory (/proc/self/statm) in bytes, or -1. */
long utc_test_rss_bytes(void);

/* Ranks of the world (valid once the harness has called utc_init). */
int utc_test_rank(void);
int utc_test_nranks(void);
/* Whether world ranks a and b run on one host (MPI_COMM_TYPE_SHARED). */
int utc_test_same_host(int a, int b);
/* The transport a conduit between entry ranks a and b uses: in-process (a == b), node-local
 * (one host, unless UTC_TRANSPORT=mpi) or MPI. */
utc_conduit_transport_t utc_test_transport(int a, int b);

#endif /* UTC_TEST_H */
