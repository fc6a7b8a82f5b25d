/**
 * @file version.h
 * @brief Library version.
 */
#ifndef UTC_VERSION_H
#define UTC_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

#define UTC_VERSION_MAJOR 0 /**< major version */
#define UTC_VERSION_MINOR 1 /**< minor version */
#define UTC_VERSION_PATCH 0 /**< patch version */
/** Version as a string literal. */
#define UTC_VERSION_STRING "0.1.0"

/** @brief The library's version string, e.g. "0.1.0" (what the library was built as). */
const char *utc_version_string(void);

#ifdef __cplusplus
}
#endif
#endif /* UTC_VERSION_H */
