/**
 * @file utc.h
 * @brief Umbrella header of UTC, the Unified Tasks and Conduits runtime.
 */
#ifndef UTC_UTC_H
#define UTC_UTC_H

#include <utc/version.h>
#include <utc/status.h>
#include <utc/context.h>
#include <utc/task.h>
#include <utc/conduit.h>
#include <utc/gshared.h>
#include <utc/collectives.h>
#include <utc/gpu.h>

#endif /* UTC_UTC_H */
