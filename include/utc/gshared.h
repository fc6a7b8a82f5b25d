/**
 * @file gshared.h
 * @brief (being written: see the gshared module)
 */
#ifndef UTC_GSHARED_H
#define UTC_GSHARED_H
#include <utc/task.h>
#endif
