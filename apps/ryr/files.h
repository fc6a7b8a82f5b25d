/**
 * @file files.h
 * @brief Files RYR is writing and must not leave behind if the run is interrupted: the
 * video under its temporary name, the probe of --out, a PGM or PPM half written.
 *
 * A file is created through ryr_files_open, which remembers its name until the writer
 * lets go of it (ryr_files_rename, ryr_files_release). ryr_files_abandon, called when
 * the program is stopped by a signal (interrupt.c), removes every remembered file and
 * keeps the table locked, so no thread creates or renames a file after it: the process
 * exits with nothing half written behind it. Creating, renaming and abandoning take one
 * mutex, so a file is either created before the abandon (and removed by it) or never.
 *
 * Thread-safe. A name that is not a regular file (a device such as /dev/null, a FIFO)
 * is opened but not remembered: it is never removed.
 */
#ifndef RYR_FILES_H
#define RYR_FILES_H

#include <stdio.h>

/** Most files written at once (an output task per plane, the RGB frame, the video). */
#define RYR_FILES_MAX 32

/**
 * @brief fopen(@p path, "wb"), remembering the file when it is a regular one.
 * @param[out] slot the file's slot for ryr_files_rename / ryr_files_release, or -1
 *                  when it is not remembered (not a regular file)
 * @return the stream, or NULL with errno set (EMFILE when RYR_FILES_MAX files are being
 *         written already)
 */
FILE *ryr_files_open(const char *path, int *slot);

/**
 * @brief Rename @p from (opened with ryr_files_open, @p slot its slot or -1) to @p to and
 * forget it. Call after closing it.
 * @return 0, or -1 with errno set (the file is forgotten either way, and still there)
 */
int ryr_files_rename(int slot, const char *from, const char *to);

/**
 * @brief Forget the file of @p slot (-1: nothing to do); with @p remove, also unlink it.
 * Call after closing it.
 */
void ryr_files_release(int slot, int remove);

/**
 * @brief Remove every remembered file and lock the table for good: later opens and
 * renames block. For a program about to exit after a signal; never returns the lock.
 * @return the number of files removed
 */
int ryr_files_abandon(void);

#endif /* RYR_FILES_H */
