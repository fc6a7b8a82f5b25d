/*
 * Device conduits' refusals that need no GPU (they run on every machine): a device conduit
 * where a rank has no usable device, or in a build without CUDA, fails on every rank alike
 * with UTC_ERR_NO_GPU_SUPPORT and a message that says why; a bad memory option; shared
 * conduits refuse device memory; utc_conduit_device_path on a host conduit; utc_gpu_malloc
 * and utc_gpu_free without a device. On a machine with a GPU on every rank the creation
 * succeeds instead, and its path is named (the GPU suite, test_conduit_device, covers the
 * rest). A bad device setting (UTC_DEVICE_CHUNK) on one rank only: every rank's refusal
 * names it (not "no device"), also on cudahost (conduit_device_errors_cudahost_np*).
 */
#include "conduit_test_util.h"

static int gpus_everywhere(void)
{
    int n = utc_gpu_device_count(), min = 0;
    if (n < 0)
        n = 0;
    MPI_Allreduce(&n, &min, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return min;
}

static void test_create_refused(void)
{
    ct_begin();
    int ra, rb;
    ct_pair_ranks(&ra, &rb);
    utc_task_t *a = ct_task(&ct_ops_a, ra, 1), *b = ct_task(&ct_ops_b, rb, 1);
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.memory = UTC_CONDUIT_MEM_DEVICE;
    utc_conduit_t *c = NULL;
    utc_status_t rc = utc_conduit_create(a, b, &o, &c);
    if (gpus_everywhere() > 0) {
        UTC_ASSERT_OK(rc);
        const char *path = NULL;
        if (utc_rank() == ra || utc_rank() == rb) { /* (a rank of neither end has none) */
            UTC_ASSERT_OK(utc_conduit_device_path(c, &path));
            CU_ASSERT_PTR_NOT_NULL(path);
        }
        UTC_ASSERT_OK(utc_conduit_destroy(c));
    } else {
        /* every rank alike, and the message says what is missing */
        CU_ASSERT_EQUAL(rc, UTC_ERR_NO_GPU_SUPPORT);
        CU_ASSERT_PTR_NULL(c);
        const char *why = utc_last_error();
        CU_ASSERT(strstr(why, "device") != NULL);
        if (rc != UTC_ERR_NO_GPU_SUPPORT || !strstr(why, "device"))
            fprintf(stderr, "[rank %d] rc %d: %s\n", utc_rank(), rc, why);
        /* the next collective call still lines up on every rank */
        o.memory = UTC_CONDUIT_MEM_HOST;
        UTC_ASSERT_OK(utc_conduit_create(a, b, &o, &c));
        UTC_ASSERT_OK(utc_conduit_destroy(c));
    }
    UTC_ASSERT_OK(utc_task_destroy(a));
    UTC_ASSERT_OK(utc_task_destroy(b));
    CT_END();
}

static void test_bad_options(void)
{
    ct_begin();
    utc_task_t *a = ct_task(&ct_ops_a, 0, 1), *b = ct_task(&ct_ops_b, 0, 1);
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.memory = (utc_conduit_memory_t)7;
    utc_conduit_t *c = NULL;
    CU_ASSERT_EQUAL(utc_conduit_create(a, b, &o, &c), UTC_ERR_INVALID_ARG);
    CU_ASSERT(strstr(utc_last_error(), "memory 7") != NULL);
    /* shared conduits carry host memory only */
    o.memory = UTC_CONDUIT_MEM_DEVICE;
    utc_task_t *w[1] = {a}, *r[1] = {b};
    CU_ASSERT_EQUAL(utc_conduit_create_shared(w, 1, r, 1, UTC_SHARED_PUBLISH, &o, &c),
                    UTC_ERR_UNSUPPORTED);
    CU_ASSERT(strstr(utc_last_error(), "host memory only") != NULL);
    /* a host conduit has no device path; NULL output refused */
    o.memory = UTC_CONDUIT_MEM_HOST;
    UTC_ASSERT_OK(utc_conduit_create(a, b, &o, &c));
    const char *path = "untouched";
    CU_ASSERT_EQUAL(utc_conduit_device_path(c, &path), UTC_ERR_INVALID_ARG);
    CU_ASSERT(strstr(utc_last_error(), "UTC_CONDUIT_MEM_DEVICE") != NULL);
    CU_ASSERT_STRING_EQUAL(path, "untouched");
    CU_ASSERT_EQUAL(utc_conduit_device_path(c, NULL), UTC_ERR_INVALID_ARG);
    UTC_ASSERT_OK(utc_conduit_destroy(c));
    CU_ASSERT_EQUAL(utc_conduit_device_path(c, &path), UTC_ERR_INVALID_HANDLE);
    UTC_ASSERT_OK(utc_task_destroy(a));
    UTC_ASSERT_OK(utc_task_destroy(b));
    CT_END();
}

/* UTC_DEVICE_CHUNK=1 on the reader's rank only: every rank's refusal quotes that rank's
 * message (a rank with a device is not said to have none). */
static void test_bad_setting_one_rank(void)
{
    ct_begin();
    int ra, rb;
    ct_pair_ranks(&ra, &rb);
    utc_task_t *a = ct_task(&ct_ops_a, ra, 1), *b = ct_task(&ct_ops_b, rb, 1);
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.memory = UTC_CONDUIT_MEM_DEVICE;
    utc_conduit_t *c = NULL;
    if (utc_rank() == rb)
        setenv("UTC_DEVICE_CHUNK", "1", 1);
    utc_status_t rc = utc_conduit_create(a, b, &o, &c);
    char why[512];
    snprintf(why, sizeof why, "%s", utc_last_error());
    if (utc_rank() == rb)
        unsetenv("UTC_DEVICE_CHUNK");
    CU_ASSERT_NOT_EQUAL(rc, UTC_OK);
    CU_ASSERT_PTR_NULL(c);
    if (rc == UTC_OK)
        UTC_ASSERT_OK(utc_conduit_destroy(c));
    if (gpus_everywhere() > 0) { /* the setting is the one cause */
        char said[32];
        snprintf(said, sizeof said, "rank %d", rb);
        CU_ASSERT_EQUAL(rc, UTC_ERR_INVALID_ARG);
        CU_ASSERT(strstr(why, "UTC_DEVICE_CHUNK") != NULL);
        CU_ASSERT(strstr(why, "none usable") == NULL);
        if (utc_rank() != rb)
            CU_ASSERT(strstr(why, said) != NULL);
        if (rc != UTC_ERR_INVALID_ARG || !strstr(why, "UTC_DEVICE_CHUNK") ||
            strstr(why, "none usable") || (utc_rank() != rb && !strstr(why, said)))
            fprintf(stderr, "[rank %d] rc %d: %s\n", utc_rank(), rc, why);
    }
    UTC_ASSERT_OK(utc_task_destroy(a));
    UTC_ASSERT_OK(utc_task_destroy(b));
    CT_END();
}

/* Every rank passes a different memory option: the agreement check says so on all. */
static void test_mismatch(void)
{
    ct_begin();
    utc_task_t *a = ct_task(&ct_ops_a, 0, 1), *b = ct_task(&ct_ops_b, 0, 1);
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.memory = utc_rank() == 0 ? UTC_CONDUIT_MEM_HOST : UTC_CONDUIT_MEM_DEVICE;
    utc_conduit_t *c = NULL;
    utc_status_t rc = utc_conduit_create(a, b, &o, &c);
    if (utc_nranks() > 1)
        CU_ASSERT_EQUAL(rc, UTC_ERR_MISMATCH);
    if (rc == UTC_OK)
        UTC_ASSERT_OK(utc_conduit_destroy(c));
    UTC_ASSERT_OK(utc_task_destroy(a));
    UTC_ASSERT_OK(utc_task_destroy(b));
    CT_END();
}

static void test_gpu_memory_calls(void)
{
    void *p = (void *)0x1;
    if (!utc_gpu_supported()) {
        CU_ASSERT_EQUAL(utc_gpu_malloc(64, &p), UTC_ERR_NO_GPU_SUPPORT);
        CU_ASSERT_EQUAL(utc_gpu_free(NULL), UTC_ERR_NO_GPU_SUPPORT);
        return;
    }
    CU_ASSERT_EQUAL(utc_gpu_malloc(64, NULL), UTC_ERR_INVALID_ARG);
    UTC_ASSERT_OK(utc_gpu_malloc(0, &p));
    CU_ASSERT_PTR_NULL(p);
    UTC_ASSERT_OK(utc_gpu_free(NULL));
    int x;
    CU_ASSERT_EQUAL(utc_gpu_free(&x), UTC_ERR_INVALID_ARG); /* not utc_gpu_malloc's */
    CU_ASSERT(strstr(utc_last_error(), "utc_gpu_malloc") != NULL);
    if (utc_gpu_device_count() <= 0) {
        p = (void *)0x1;
        utc_status_t rc = utc_gpu_malloc(64, &p);
        CU_ASSERT(rc == UTC_ERR_NO_DEVICE || rc == UTC_ERR_GPU);
        CU_ASSERT_PTR_EQUAL(p, (void *)0x1); /* output set only on success */
    } else {
        UTC_ASSERT_OK(utc_gpu_malloc(64, &p));
        UTC_ASSERT_OK(utc_gpu_free(p));
        CU_ASSERT_EQUAL(utc_gpu_free(p), UTC_ERR_INVALID_ARG); /* freed already */
    }
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"a device conduit without a GPU: refused on every rank", test_create_refused},
        {"bad memory option, shared conduits, device_path on a host conduit", test_bad_options},
        {"ranks disagreeing on the memory option", test_mismatch},
        {"a bad device setting on one rank: every rank names it", test_bad_setting_one_rank},
        {"utc_gpu_malloc / utc_gpu_free", test_gpu_memory_calls},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "device conduit refusals", cases);
}
