#include "app_timer.h"

#include <time.h>

double app_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double app_time_best(void (*fn)(void *arg), void *arg, int reps)
{
    double best = 0.0;
    for (int r = 0; r < (reps > 0 ? reps : 1); r++) {
        double t0 = app_now();
        fn(arg);
        double dt = app_now() - t0;
        if (r == 0 || dt < best)
            best = dt;
    }
    return best;
}
