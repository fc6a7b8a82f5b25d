/**
 * @file version.h
 * @brief Library version: macros for the headers you compile against, and
 * utc_version_string() for the library you run with.
 *
 * UTC follows semantic versioning; while the major version is 0, a minor release may
 * change the API. The changes of each release are in CHANGELOG.md.
 * @code
 * #if UTC_VERSION_AT_LEAST(0, 2, 0)
 *     ... use something 0.2 added ...
 * #endif
 * @endcode
 */
#ifndef UTC_VERSION_H
#define UTC_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

#define UTC_VERSION_MAJOR 0 /**< major version */
#define UTC_VERSION_MINOR 1 /**< minor version */
#define UTC_VERSION_PATCH 0 /**< patch version */
/** Version as a string literal, "MAJOR.MINOR.PATCH". */
#define UTC_VERSION_STRING "0.1.0"

/** Version as one number for `#if`: MAJOR * 10000 + MINOR * 100 + PATCH (0.1.0 is 100). */
#define UTC_VERSION_NUMBER                                                                 \
    (UTC_VERSION_MAJOR * 10000 + UTC_VERSION_MINOR * 100 + UTC_VERSION_PATCH)

/** Whether the headers are version major.minor.patch or later (for `#if`). */
#define UTC_VERSION_AT_LEAST(major, minor, patch)                                          \
    (UTC_VERSION_NUMBER >= (major) * 10000 + (minor) * 100 + (patch))

/**
 * @brief The library's version string, e.g. "0.1.0": the version of the library the
 * program runs with, which may differ from UTC_VERSION_STRING (the headers it was compiled
 * with) when a shared library was replaced.
 * @return a static string, never NULL. May be called before utc_init.
 */
const char *utc_version_string(void);

#ifdef __cplusplus
}
#endif
#endif /* UTC_VERSION_H */
