#include <utc/version.h>

const char *utc_version_string(void) { return UTC_VERSION_STRING; }
