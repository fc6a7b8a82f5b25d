/**
 * @file app_timer.h
 * @brief Wall-clock timing of the apps (no framework needed, so seq stays plain C).
 */
#ifndef APP_TIMER_H
#define APP_TIMER_H

/** @brief Seconds from a monotonic clock; only differences are meaningful. */
double app_now(void);

/**
 * @brief Call fn(arg) @p reps times (at least once) and return the fastest call's seconds.
 */
double app_time_best(void (*fn)(void *arg), void *arg, int reps);

#endif /* APP_TIMER_H */
