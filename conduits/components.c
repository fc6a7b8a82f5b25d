/*
 * The component table: every transport a conduit may use, and the one function that picks
 * the transport for a pair of ranks (service/transport.h). A conduit's creation, a shared
 * conduit's pairs, the routing of an operation and a close all ask utc__transport_pick;
 * nothing else names a transport.
 *
 * Adding a transport: its folder (its ops table and its component record), its line in
 * the table below, and its files in CMakeLists.txt and scripts/check-layers.py.
 */
#include <stdlib.h>
#include <string.h>

#include "utc_internal.h"
#include "service/request.h"
#include "service/transport.h"

/* Most specific first: the first that reaches a pair carries it. */
const utc__transport_component_t *const utc__transport_components[] = {
    &utc__inproc_component, /* one rank: both ends in this process */
    &utc__node_component,   /* two ranks of one host: memory both map */
    &utc__mpi_component,    /* any two ranks */
};
const int utc__transport_ncomponents =
    (int)(sizeof utc__transport_components / sizeof *utc__transport_components);
static_assert(sizeof utc__transport_components / sizeof *utc__transport_components <=
                  UTC__TRANSPORT_MAX,
              "a conduit holds one transport per component: raise UTC__TRANSPORT_MAX");

/* Bit i: component i is off for the rest of the run (its collective create refused, on
 * every rank alike). Set only inside a collective creation (the main thread); the picks
 * of other threads route conduits made before, whose pairs never picked a component that
 * was still to be set up (its first create would have been theirs), so they need no
 * order with the store: relaxed. */
static atomic_uint comp_off;

bool utc__transport_off(int comp)
{
    return atomic_load_explicit(&comp_off, memory_order_relaxed) & (1u << comp);
}

int utc__transport_pick(int a, int b, const utc_conduit_options_t *opts)
{
    bool mpi_only = a != b && opts->transport == UTC_CONDUIT_MPI;
    unsigned off = atomic_load_explicit(&comp_off, memory_order_relaxed); /* see comp_off */
    for (int i = 0; i < utc__transport_ncomponents; i++) {
        const utc__transport_component_t *k = utc__transport_components[i];
        if ((!mpi_only || k->kind == UTC_CONDUIT_MPI) && !(off & (1u << i)) && k->reaches(a, b))
            return i;
    }
    return -1;
}

bool utc__transport_no_send_now(utc__transport_t *tp, utc_request_t *req)
{
    (void)tp;
    (void)req;
    return false;
}

bool utc__transport_ops_ok(const utc__transport_ops_t *o)
{
    return o && o->name && o->start && o->send_now && o->progress && o->wait && o->cancel && o->probe &&
           o->close && o->shutdown && o->fail && o->notify_failed && o->destroy;
}

utc_status_t utc__transport_create(int comp, const utc__transport_args_t *args,
                                   utc__transport_t **out)
{
    const utc__transport_component_t *k = utc__transport_components[comp];
    /* the same on every rank: a collective create is skipped by all or by none */
    if (k->req_priv > UTC__REQ_PRIV_BYTES)
        return utc__error(UTC_ERR_INTERNAL, "conduit %d: transport '%s' needs %zu bytes of a "
                          "request's private part, above UTC__REQ_PRIV_BYTES (%d)",
                          args->conduit_id, k->name, k->req_priv, UTC__REQ_PRIV_BYTES);
    utc__transport_t *tp = NULL;
    utc_status_t rc = k->create(args, &tp);
    if (rc == UTC_ERR_UNSUPPORTED && k->collective) {
        /* refused on every rank alike (its create agrees): off for good, on every rank */
        atomic_fetch_or_explicit(&comp_off, 1u << comp, memory_order_relaxed); /* comp_off */
        utc_log(UTC_LOG_INFO, "conduit %d: transport '%s' is off for this run (%s); its "
                "pairs of ranks use the next transport that reaches them", args->conduit_id,
                k->name, utc_last_error());
        return rc;
    }
    if (rc != UTC_OK)
        return rc;
    if (tp && !utc__transport_ops_ok(tp->ops)) {
        if (tp->ops && tp->ops->destroy)
            tp->ops->destroy(tp);
        return utc__error(UTC_ERR_INTERNAL, "conduit %d: transport '%s' has an incomplete ops "
                          "table (every op must be there)", args->conduit_id, k->name);
    }
    *out = tp;
    return UTC_OK;
}

utc_status_t utc__transport_choice(const utc_conduit_options_t *opts, const char *fn,
                                   utc_conduit_transport_t *out)
{
    switch (opts->transport) {
    case UTC_CONDUIT_MPI:
    case UTC_CONDUIT_NODE:
        *out = opts->transport; /* the option wins over the environment */
        return UTC_OK;
    case UTC_CONDUIT_NONE:
        break;
    case UTC_CONDUIT_INPROC:
        return utc__error(UTC_ERR_INVALID_ARG, "%s: transport UTC_CONDUIT_INPROC cannot be "
                          "asked for (in-process rings are used wherever both ends are in "
                          "one rank); give UTC_CONDUIT_NONE (automatic), UTC_CONDUIT_NODE or "
                          "UTC_CONDUIT_MPI", fn);
    default:
        return utc__error(UTC_ERR_INVALID_ARG, "%s: transport %d is not a transport to ask "
                          "for; give UTC_CONDUIT_NONE (automatic), UTC_CONDUIT_NODE or "
                          "UTC_CONDUIT_MPI", fn, (int)opts->transport);
    }
    const char *env = getenv("UTC_TRANSPORT");
    if (!env || !*env || !strcmp(env, "auto")) {
        *out = UTC_CONDUIT_NONE;
        return UTC_OK;
    }
    if (!strcmp(env, "mpi")) {
        *out = UTC_CONDUIT_MPI;
        return UTC_OK;
    }
    return utc__error(UTC_ERR_INVALID_ARG, "%s: UTC_TRANSPORT='%.40s' is not a transport "
                      "choice: 'auto' (the default: node-local between ranks of one host, MPI "
                      "across hosts) or 'mpi' (MPI between every two ranks)", fn, env);
}

void utc__transport_components_finalize(void)
{
    for (int i = 0; i < utc__transport_ncomponents; i++)
        if (utc__transport_components[i]->finalize)
            utc__transport_components[i]->finalize();
    utc__device_finalize(); /* the device layer's caches, wrapped around the above */
    atomic_store_explicit(&comp_off, 0, memory_order_relaxed); /* no conduit is left */
}
