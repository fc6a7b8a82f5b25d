/*
 * Defaults of the task extensions (utc__task_ext_t in utc_internal.h) for a build
 * without the gshared or gpu module: weak definitions that a module's own replaces.
 *
 * They live in a file of their own, away from the code that uses them: clang treats a
 * weak definition of a const object as final (LLVM's weak_odr) and folds loads from it
 * in its own file, so with the defaults in task.c a clang build never called the real
 * gshared and gpu hooks (every task lacked its global shared data window).
 */
#include "utc_internal.h"

__attribute__((weak)) const utc__task_ext_t utc__gshared_ext = {.name = "gshared (none)"};
__attribute__((weak)) const utc__task_ext_t utc__gpu_ext = {.name = "gpu (none)"};
