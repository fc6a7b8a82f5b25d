/* The API before utc_init and after utc_finalize: errors, never crashes. */
#include <CUnit/Basic.h>
#include <string.h>

#include <utc/utc.h>

static const utc_task_ops_t ops = {.name = "x", .size = sizeof(utc_task_t)};

static void check_not_running(const char *when)
{
    utc_task_t *task = NULL;
    int procs[1] = {0};
    CU_ASSERT_FALSE(utc_is_initialized());
    CU_ASSERT_EQUAL(utc_rank(), UTC_ERR_NOT_INITIALIZED);
    CU_ASSERT_PTR_NOT_NULL(strstr(utc_last_error(), when));
    CU_ASSERT_EQUAL(utc_nranks(), UTC_ERR_NOT_INITIALIZED);
    CU_ASSERT_EQUAL(utc_barrier(), UTC_ERR_NOT_INITIALIZED);
    CU_ASSERT_EQUAL(utc_task_create(&ops, procs, 1, NULL, &task), UTC_ERR_NOT_INITIALIZED);
    CU_ASSERT_PTR_NULL(task);
    CU_ASSERT_EQUAL(utc_task_run((utc_task_t *)&ops, NULL), UTC_ERR_NOT_INITIALIZED);
    CU_ASSERT_EQUAL(utc_task_destroy((utc_task_t *)&ops), UTC_ERR_NOT_INITIALIZED);
    CU_ASSERT_EQUAL(utc_finalize(), UTC_ERR_NOT_INITIALIZED);
    utc_log(UTC_LOG_DEBUG, "logging works outside utc_init/utc_finalize too");
}

static void test_before_init(void) { check_not_running("not initialized"); }

static void test_init_finalize(void)
{
    int argc = 0;
    char **argv = NULL;
    CU_ASSERT_EQUAL_FATAL(utc_init(&argc, &argv), UTC_OK);
    CU_ASSERT_EQUAL(utc_init(&argc, &argv), UTC_ERR_STATE);
    CU_ASSERT(utc_rank() >= 0);
    CU_ASSERT_EQUAL(utc_barrier(), UTC_OK);
    CU_ASSERT_STRING_EQUAL(utc_version_string(), UTC_VERSION_STRING);
    CU_ASSERT_EQUAL(utc_finalize(), UTC_OK);
}

static void test_after_finalize(void)
{
    check_not_running("finalized");
    int argc = 0;
    char **argv = NULL;
    CU_ASSERT_EQUAL(utc_init(&argc, &argv), UTC_ERR_STATE);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("context state", NULL, NULL);
    CU_add_test(s, "API before utc_init returns errors", test_before_init);
    CU_add_test(s, "utc_init and utc_finalize", test_init_finalize);
    CU_add_test(s, "API after utc_finalize returns errors", test_after_finalize);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
