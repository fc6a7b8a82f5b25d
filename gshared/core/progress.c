/*
 * Progress for passive targets. Where a one-sided component moves data in software (osc/ucx
 * over TCP between hosts), an access completes only when the *target* process makes MPI
 * progress. A rank whose task threads compute, or sleep in UTC's back-off waits, makes every
 * remote access to it slow: measured 2-3 ms per 8-byte rload over TCP, ~0.12 ms with this
 * thread. While the rank has global shared data in a window that is not in shared memory
 * (from a task's first utc_gdata_create to its destroy), one thread per rank
 * runs MPI's progress engine every UTC_GSHARED_PROGRESS_US microseconds (default 100; 0
 * turns it off) and sleeps in between: ~9% of a core here, instead of a spinning one.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#include "utc_internal.h"
#include "core/progress.h"

#define GS_PROGRESS_US_DEFAULT 100

static struct {
    pthread_mutex_t lock; /* users, thread, comm */
    int users;
    bool running;
    pthread_t thread;
    atomic_bool stop;
    MPI_Comm comm;
    long interval_ns;
} gs_progress = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void *gs_progress_main(void *arg)
{
    (void)arg;
    /* Linux's default timer slack (50 us) would double a 50 us sleep */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    struct timespec ts = {0, gs_progress.interval_ns};
    /* relaxed: a late stop only costs one more poll; join orders everything after */
    while (!atomic_load_explicit(&gs_progress.stop, memory_order_relaxed)) {
        int flag;
        /* nothing is ever sent on this communicator: the probe only runs the progress
         * engine (all components, osc/ucx's included) */
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, gs_progress.comm, &flag, MPI_STATUS_IGNORE);
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static long gs_progress_interval_ns(void)
{
    const char *env = getenv("UTC_GSHARED_PROGRESS_US");
    long us = GS_PROGRESS_US_DEFAULT;
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (*end == '\0' && v >= 0 && v <= 1000000)
            us = v;
        else
            utc_log(UTC_LOG_WARN, "UTC_GSHARED_PROGRESS_US='%s' is not 0..1000000; using %d", env,
                    GS_PROGRESS_US_DEFAULT);
    }
    return us * 1000;
}

void utc__gs_progress_acquire(void)
{
    pthread_mutex_lock(&gs_progress.lock);
    if (gs_progress.users++ == 0) {
        gs_progress.interval_ns = gs_progress_interval_ns();
        gs_progress.running = false;
        if (gs_progress.interval_ns > 0 &&
            MPI_Comm_dup(MPI_COMM_SELF, &gs_progress.comm) == MPI_SUCCESS) {
            atomic_store(&gs_progress.stop, false);
            gs_progress.running =
                pthread_create(&gs_progress.thread, NULL, gs_progress_main, NULL) == 0;
            if (!gs_progress.running) {
                MPI_Comm_free(&gs_progress.comm);
                utc_log(UTC_LOG_WARN, "gshared: no progress thread; remote accesses to this "
                                      "rank may be slow");
            }
        }
    }
    pthread_mutex_unlock(&gs_progress.lock);
}

void utc__gs_progress_release(void)
{
    pthread_mutex_lock(&gs_progress.lock);
    if (gs_progress.users > 0 && --gs_progress.users == 0 && gs_progress.running) {
        atomic_store(&gs_progress.stop, true);
        pthread_join(gs_progress.thread, NULL);
        MPI_Comm_free(&gs_progress.comm);
        gs_progress.running = false;
    }
    pthread_mutex_unlock(&gs_progress.lock);
}
