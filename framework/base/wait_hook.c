/* The wait hook's state (base/wait_hook.h). */
#include "base/wait_hook.h"

atomic_bool utc__wait_hook_on;
utc__wait_hook_t utc__wait_hook;

void utc__wait_hook_install(const utc__wait_hook_t *hook)
{
    utc__wait_hook = *hook;
    /* relaxed: no task thread exists yet; pthread_create publishes both stores */
    atomic_store_explicit(&utc__wait_hook_on, true, memory_order_relaxed);
}
