/*
 * The asymmetric fences (base/sync.h): where the kernel offers private expedited
 * membarrier, utc_init turns the light side (every conduit call) into a compiler barrier.
 * It once stayed a full fence unnoticed (a wrong command number, refused with EPERM). A
 * litmus test of the pair itself was tried and dropped: on 2 cores it never caught a
 * compiler barrier put in place of the heavy side, so it would have asserted nothing.
 */
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "utc_test.h"
#include "base/sync.h"

static void test_light_side_on(void)
{
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0);
    bool kernel = cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
                  (cmds & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED);
    printf("\n  kernel private expedited membarrier: %s; light fence: %s\n",
           kernel ? "yes" : "no", utc__fence_asym ? "compiler barrier" : "full fence");
    if (kernel)
        CU_ASSERT_TRUE(utc__fence_asym);
}

static const utc_test_case_t cases[] = {
    {"utc_init makes the light fence a compiler barrier where the kernel allows",
     test_light_side_on},
    UTC_TEST_END};

int main(int argc, char **argv) { return utc_test_main(argc, argv, "fences", cases); }
