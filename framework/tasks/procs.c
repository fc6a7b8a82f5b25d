/* Proc-list helpers. */
#include <utc/task.h>

#include "base/errors.h"

int utc_procs_spread(int *procs, int cap, int first, int nranks, int per_rank)
{
    if (!procs || cap < 0 || first < 0 || nranks <= 0 || per_rank <= 0)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_procs_spread: need procs != NULL, first >= 0, nranks > 0 and "
                          "per_rank > 0 (got first=%d nranks=%d per_rank=%d)",
                          first, nranks, per_rank);
    if ((long)nranks * per_rank > cap)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_procs_spread: %d ranks x %d threads do not fit in %d entries",
                          nranks, per_rank, cap);
    int n = 0;
    for (int r = 0; r < nranks; r++)
        for (int t = 0; t < per_rank; t++)
            procs[n++] = first + r;
    return n;
}
