/* utc_wtime: seconds of the runtime's clock (base/clock.h). */
#include <utc/context.h>

#include "base/clock.h"

double utc_wtime(void) { return (double)utc__clock_ns() * 1e-9; }
