/* What the conduits module gives the runtime layer (runtime/runtime.c). */
#ifndef UTC_CONDUITS_MODULE_H
#define UTC_CONDUITS_MODULE_H

/* utc_finalize, before the tasks go: destroy every live conduit (operations blocked on one
 * end with UTC_ERR_CANCELED). Main thread. */
void utc__conduits_finalize(void);

/* utc_finalize, after the tasks are gone: free the destroyed conduits that requests never
 * waited for still hold, and the pool of conduit objects. Main thread. */
void utc__conduits_release(void);

#endif /* UTC_CONDUITS_MODULE_H */
