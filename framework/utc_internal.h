/*
 * The framework's interface to the modules above it (conduits, gshared, gpu) and to the
 * runtime layer: one include for the services they use. Not installed; users never
 * include it. The layers, lowest first (doc/guide/architecture.md):
 *   base/     status, last error, logging, the clock, futex waits, the MPI wait loop,
 *             the wait hook
 *   observe/  trace, statistics, watchdog (plugged into base's wait hook)
 *   context/  MPI and hwloc start-up, ranks, binding
 *   tasks/    task objects, thread groups, the thread context, task extensions
 */
#ifndef UTC_FRAMEWORK_INTERNAL_H
#define UTC_FRAMEWORK_INTERNAL_H

#include "base/errors.h"
#include "base/mpi_wait.h"
#include "base/sync.h"
#include "base/text.h"
#include "base/wait_hook.h"
#include "context/context_internal.h"
#include "context/dev_alloc.h"
#include "tasks/task_internal.h"

#endif /* UTC_FRAMEWORK_INTERNAL_H */
