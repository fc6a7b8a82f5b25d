/**
 * @file app_report.h
 * @brief The result of a run: a line for people, or one JSON object for scripts.
 *
 * With --json the JSON object is the only (and so the last) line on stdout:
 *
 *     {"app": "md5", "impl": "utc", "size": "M", "threads": 2, "seconds": 0.123456,
 *      "verified": true}
 *
 * "seconds" is the fastest of --reps runs of the timed part; "verified" is true only
 * when --verify was given and the result equals seq's.
 */
#ifndef APP_REPORT_H
#define APP_REPORT_H

#include <stdio.h>

#include "app_cli.h"

/** What --verify found. */
typedef enum app_verified {
    APP_VERIFY_SKIPPED = 0, /**< not asked */
    APP_VERIFY_OK = 1,      /**< equal to seq */
    APP_VERIFY_MISMATCH = 2 /**< differs from seq */
} app_verified_t;

/**
 * @brief Print the result on stdout: the JSON object with --json, else a line for people.
 * @param detail extra words for the human line (e.g. "2048 buffers of 4096 bytes"), or NULL
 */
void app_report(const app_info_t *info, const app_opts_t *opts, double seconds,
                app_verified_t verified, const char *detail);

/** @brief Write @p s as a JSON string (quoted, escaped) to @p f. */
void app_json_string(FILE *f, const char *s);

#endif /* APP_REPORT_H */
