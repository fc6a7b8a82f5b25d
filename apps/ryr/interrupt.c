#include "interrupt.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "files.h"

static const int signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NSIGNALS (sizeof signals / sizeof signals[0])
static int ignored[NSIGNALS]; /* ignored when the program started (nohup, `ryr &` in a script) */

static int wake[2] = {-1, -1}; /* the handler writes the signal's number, the watcher reads */
static atomic_int rank = -1;   /* -1: not known yet */
static int launcher_rank = -1; /* the rank the launcher's variables give (read at install) */
static int under_mpirun;       /* launched by Open MPI's mpirun (read once, at install) */
static int several_ranks;      /* ... with other ranks beside this one */
static int on_terminal;        /* stderr is a terminal, where progress is written in place */

/* Async-signal-safe: one write(2), errno kept. A full pipe means a signal is already on
 * its way to the watcher, so a failed write loses nothing. */
static void on_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    ssize_t n = write(wake[1], &b, 1);
    (void)n;
    errno = saved;
}

/* how long a rank of several waits before it exits (see watch) */
#define RYR_INTERRUPT_LINGER_NS 400000000L

/* Open MPI's mpirun passes neither SIGINT nor SIGTERM on as it is: it stops its ranks with
 * SIGTERM (utcrun exits with the signal it got) */
#define MPIRUN_NOTE " (mpirun stops its ranks with SIGTERM when it gets SIGINT or SIGTERM)"

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGINT:
        return "SIGINT";
    case SIGTERM:
        return "SIGTERM";
    case SIGHUP:
        return "SIGHUP";
    default:
        return "a signal";
    }
}

/* Whether this process tells the user: rank 0, or, before the rank is known, the rank
 * the launcher gave it, or a process on its own (each rank gets the signal; one line is
 * enough). */
static int reporter(void)
{
    /* relaxed: a plain value, set once by the main thread */
    int r = atomic_load_explicit(&rank, memory_order_relaxed);
    return r >= 0 ? r == 0 : launcher_rank <= 0;
}

/* Read before MPI starts (which sets variables: getenv beside setenv is a race). */
static void read_launcher(void)
{
    const char *size = getenv("OMPI_COMM_WORLD_SIZE");
    under_mpirun = size != NULL;
    several_ranks = size && atoi(size) > 1;
    const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0] && launcher_rank < 0; i++) {
        const char *v = getenv(vars[i]);
        if (v)
            launcher_rank = atoi(v);
    }
}

static void *watch(void *arg)
{
    (void)arg;
    unsigned char b;
    ssize_t n;
    while ((n = read(wake[0], &b, 1)) < 0 && errno == EINTR)
        ;
    if (n != 1)
        return NULL; /* cannot happen: the write end stays open */
    int sig = b;
    int removed = ryr_files_abandon(); /* and nothing is created after it */
    if (reporter()) {
        /* on a terminal, after the progress line written in place */
        char msg[512];
        int len = snprintf(msg, sizeof msg, "%sryr: interrupted by %s%s; stopped, %s\n",
                           on_terminal ? "\n" : "", signal_name(sig),
                           sig == SIGTERM && under_mpirun ? MPIRUN_NOTE : "",
                           removed ? "unfinished files removed" : "no unfinished file left");
        if (len > 0 && (size_t)len < sizeof msg) {
            ssize_t w = write(STDERR_FILENO, msg, (size_t)len);
            (void)w;
        }
    }
    if (several_ranks) {
        /* Open MPI's mpirun sends SIGTERM to its ranks, then SIGKILL when a second has
         * passed or, as its sleep ends early on SIGCHLD, as soon as one rank has exited.
         * So no rank exits at once: each has time to remove its files first. */
        struct timespec linger = {.tv_sec = 0, .tv_nsec = RYR_INTERRUPT_LINGER_NS};
        while (nanosleep(&linger, &linger) != 0 && errno == EINTR)
            ;
    }
    _exit(128 + sig);
}

int ryr_interrupt_install(ryr_err_t *err)
{
    if (wake[0] < 0) {
        for (size_t i = 0; i < NSIGNALS; i++) {
            struct sigaction old;
            ignored[i] = sigaction(signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN;
        }
        read_launcher();
        on_terminal = isatty(STDERR_FILENO);
        if (pipe(wake) != 0)
            return ryr_err_set(err, "cannot make the interrupt pipe: %s", strerror(errno));
        for (int i = 0; i < 2; i++)
            fcntl(wake[i], F_SETFD, FD_CLOEXEC);
        /* the handler must never block on it */
        fcntl(wake[1], F_SETFL, fcntl(wake[1], F_GETFL) | O_NONBLOCK);
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&t, &attr, watch, NULL);
        pthread_attr_destroy(&attr);
        if (rc != 0)
            return ryr_err_set(err, "cannot start the interrupt watcher: %s", strerror(rc));
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigfillset(&sa.sa_mask);
    for (size_t i = 0; i < NSIGNALS; i++)
        if (!ignored[i] && sigaction(signals[i], &sa, NULL) != 0)
            return ryr_err_set(err, "cannot handle %s: %s", signal_name(signals[i]),
                               strerror(errno));
    return 0;
}

void ryr_interrupt_set_rank(int r)
{
    /* relaxed: see reporter() */
    atomic_store_explicit(&rank, r, memory_order_relaxed);
}
