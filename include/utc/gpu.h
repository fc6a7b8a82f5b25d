/**
 * @file gpu.h
 * @brief (being written: see the gpu module)
 */
#ifndef UTC_GPU_H
#define UTC_GPU_H
#include <utc/task.h>
#endif
