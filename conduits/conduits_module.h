/* What the conduits module gives the runtime layer (runtime/runtime.c). */
#ifndef UTC_CONDUITS_MODULE_H
#define UTC_CONDUITS_MODULE_H

/* utc_finalize, before the tasks go: destroy every live conduit. Main thread. */
void utc__conduits_finalize(void);

#endif /* UTC_CONDUITS_MODULE_H */
