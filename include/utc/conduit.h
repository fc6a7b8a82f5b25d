/**
 * @file conduit.h
 * @brief (being written: see the conduit module)
 */
#ifndef UTC_CONDUIT_H
#define UTC_CONDUIT_H
#include <utc/task.h>
#endif
