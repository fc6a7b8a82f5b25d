/**
 * @file interrupt.h
 * @brief What RYR does on SIGINT, SIGTERM and SIGHUP: remove the files it is writing
 * (files.h), say so in one line and exit with 128 + the signal's number (130, 143, 129).
 *
 * The signal handler only writes the signal's number to a pipe (async-signal-safe, and
 * safe whichever thread it interrupts: one blocked in MPI or in a conduit wait, one
 * holding a lock). A watcher thread reads it and does the rest in an ordinary thread's
 * context: ryr_files_abandon, the message, _exit. It does not wait for the pipeline's
 * threads or for the other ranks: under mpirun every rank gets the signal (Open MPI's
 * mpirun stops its ranks with SIGTERM, then SIGKILL a second later), and each removes
 * its own files.
 */
#ifndef RYR_INTERRUPT_H
#define RYR_INTERRUPT_H

#include "error.h"

/**
 * @brief Start the watcher thread and install the handlers. Call first in main, before
 * any file is written or thread started; again after MPI starts (it keeps them).
 * @return 0, or -1 with the reason in @p err
 */
int ryr_interrupt_install(ryr_err_t *err) __attribute__((warn_unused_result));

/**
 * @brief This process's rank, once known: only rank 0 prints the message (before it is
 * known, the launcher's rank variable decides, else this process prints).
 */
void ryr_interrupt_set_rank(int rank);

#endif /* RYR_INTERRUPT_H */
