/*
 * Conduits: creation (collective). The arguments and options, checked and compared across
 * ranks; the ends; the transports, one per component that the pairs of ranks pick
 * (components.c); the shared conduit's members and its shared transport.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conduit_internal.h"
#include "base/coll_check.h"
#include "base/handle.h"

static utc_status_t check_options(const utc_conduit_options_t *o)
{
    if (o->mode != UTC_CONDUIT_SINGLE_ENTRY && o->mode != UTC_CONDUIT_FREE)
        return utc__error(UTC_ERR_INVALID_ARG, "utc_conduit_create: unknown mode %d",
                          (int)o->mode);
    if (o->inline_max > ((size_t)1 << 20))
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_conduit_create: inline_max %zu is above the 1 MiB limit",
                          o->inline_max);
    unsigned n = o->ring_slots;
    if (n < 2 || n > 65536 || (n & (n - 1)))
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_conduit_create: ring_slots %u is not a power of two in 2..65536", n);
    if ((size_t)n * o->inline_max > ((size_t)256 << 20))
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_conduit_create: ring_slots * inline_max = %zu bytes per direction "
                          "is above the 256 MiB limit", (size_t)n * o->inline_max);
    if (o->memory != UTC_CONDUIT_MEM_HOST && o->memory != UTC_CONDUIT_MEM_DEVICE)
        return utc__error(UTC_ERR_INVALID_ARG, "utc_conduit_create: memory %d is neither "
                          "UTC_CONDUIT_MEM_HOST nor UTC_CONDUIT_MEM_DEVICE", (int)o->memory);
    if (o->credits < 0 || o->credits > UTC_CONDUIT_CREDITS_MAX)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_conduit_create: credits %d is outside 0..%d (0: the default)",
                          o->credits, UTC_CONDUIT_CREDITS_MAX);
    return UTC_OK;
}

/* Check the options of a creation by `fn` and resolve o->transport (the option, else
 * UTC_TRANSPORT): the pick (utc__transport_pick) reads the result. */
static utc_status_t check_options_resolve(utc_conduit_options_t *o, const char *fn)
{
    utc_status_t rc = check_options(o);
    if (rc == UTC_OK)
        rc = utc__transport_choice(o, fn, &o->transport);
    return rc;
}

static utc_status_t end_init(utc__conduit_end_t *e, utc_task_t *task)
{
    struct utc__task *t = task->impl;
    e->task = task;
    utc__text_copy(e->name, sizeof e->name, utc__text_name(task->ops->name));
    e->nlocal = t->nlocal;
    e->entry_rank = t->entry_rank;
    e->ngroup = t->ngroup;
    atomic_init(&e->wclosed, false);
    if (!(e->group_ranks = malloc(sizeof(int) * (size_t)t->ngroup)))
        return utc__error(UTC_ERR_NO_MEMORY, "utc_conduit_create: out of memory");
    memcpy(e->group_ranks, t->group_ranks, sizeof(int) * (size_t)t->ngroup);
    if (e->nlocal > 1) {
        utc__barrier_init(&e->barrier, (unsigned)e->nlocal);
        if (!(e->op_count = calloc((size_t)e->nlocal, sizeof *e->op_count)))
            return utc__error(UTC_ERR_NO_MEMORY, "utc_conduit_create: out of memory");
        utc__inflight_init(&e->inflight);
    }
    return UTC_OK;
}

static utc_status_t check_create_args(utc_task_t *src, utc_task_t *dst,
                                      utc_conduit_options_t *o, utc_conduit_t **out)
{
    utc_status_t rc;
    if ((rc = utc__task_check(src, "utc_conduit_create")) != UTC_OK ||
        (rc = utc__task_check(dst, "utc_conduit_create")) != UTC_OK)
        return rc;
    if (!out)
        return utc__error(UTC_ERR_INVALID_ARG, "utc_conduit_create: out is NULL");
    if ((rc = check_options_resolve(o, "utc_conduit_create")) != UTC_OK)
        return rc;
    if (o->credits != 0)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_conduit_create: credits %d: a credit window is for share-mode "
                          "shared conduits (utc_conduit_create_shared, UTC_SHARED_SHARE); leave "
                          "it 0 here", o->credits);
    if (src == dst && o->mode != UTC_CONDUIT_FREE)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_conduit_create: source and destination are the same task; a "
                          "conduit from a task to itself must be in free mode "
                          "(UTC_CONDUIT_FREE: its ranks name each other with _to/_from)");
    return UTC_OK;
}

/* What this rank passed, for the agreement check: the ends by their task ids (equal on
 * every rank for the same task), the options. Bad arguments by their status alone. */
static void describe_create(utc__coll_desc_t *d, utc_task_t *src, utc_task_t *dst,
                            const utc_conduit_options_t *o, utc_status_t args_rc)
{
    *d = (utc__coll_desc_t){.call = UTC__CALL_CONDUIT_CREATE, .args_rc = args_rc,
                            .part_name = {"ends (source and destination tasks)", "options"}};
    if (args_rc != UTC_OK)
        return;
    uint64_t h = utc__digest_u64(UTC__DIGEST_INIT, (uint64_t)utc_task_id(src));
    d->part[0] = utc__digest_u64(h, (uint64_t)utc_task_id(dst));
    h = utc__digest_u64(UTC__DIGEST_INIT, (uint64_t)o->mode);
    h = utc__digest_u64(h, o->inline_max);
    h = utc__digest_u64(h, (uint64_t)o->transport); /* resolved: UTC_TRANSPORT counts */
    h = utc__digest_u64(h, (uint64_t)o->memory);
    d->part[1] = utc__digest_u64(h, o->ring_slots);
}

/* Pair (a, b) of ranks will talk: its component is used, by both ranks. */
static void pair_use(const utc_conduit_options_t *o, bool *use, int nranks, int a, int b)
{
    int k = utc__transport_pick(a, b, o);
    if (k >= 0)
        use[k * nranks + a] = use[k * nranks + b] = true;
}

/* Which components c's pairs of ranks that will talk use (single-entry: the two entry
 * ranks; free mode: every rank of one task with every rank of the other): use[k * nranks
 * + r] for component k and rank r. */
static void pairs_use(const utc_conduit_t *c, bool *use, int nranks)
{
    const utc__conduit_end_t *e0 = &c->end[0], *e1 = &c->end[1];
    memset(use, 0, sizeof *use * (size_t)utc__transport_ncomponents * (size_t)nranks);
    if (c->opts.mode == UTC_CONDUIT_SINGLE_ENTRY)
        pair_use(&c->opts, use, nranks, e0->entry_rank, e1->entry_rank);
    else
        for (int i = 0; i < e0->ngroup; i++)
            for (int j = 0; j < e1->ngroup; j++)
                pair_use(&c->opts, use, nranks, e0->group_ranks[i], e1->group_ranks[j]);
}

/*
 * Create c's transports: each pair of ranks that will talk uses the component the pick
 * gives it. Every rank computes the same answer from the proc lists and the host map, so
 * a collective component's create is entered by all ranks or by none; the collective ones
 * come first and are all entered even after a failure (no rank skips one that the others
 * enter), then the others, on the ranks of their pairs. A collective component that
 * refuses (UTC_ERR_UNSUPPORTED on every rank: it is off from now on) makes every rank
 * give back what it created and the pairs pick again.
 */
static utc_status_t create_transports(utc_conduit_t *c)
{
    int me = utc_rank(), nranks = utc_nranks(), ncomp = utc__transport_ncomponents;
    bool *use = calloc((size_t)ncomp * (size_t)nranks, sizeof *use);
    int *members = malloc(sizeof *members * (size_t)nranks);
    utc_status_t rc = UTC_OK;
    if (!use || !members) {
        rc = utc__error(UTC_ERR_NO_MEMORY, "utc_conduit_create: out of memory");
        goto out;
    }
again:
    pairs_use(c, use, nranks);
    for (int collective = 1; collective >= 0; collective--) {
        for (int k = 0; k < ncomp; k++) {
            const utc__transport_component_t *comp = utc__transport_components[k];
            const bool *u = &use[k * nranks];
            int n = 0;
            for (int r = 0; r < nranks; r++)
                if (u[r])
                    members[n++] = r;
            if (comp->collective != collective || n == 0 ||
                (!collective && (!u[me] || rc != UTC_OK)))
                continue;
            utc__transport_args_t args = {.conduit_id = c->id, .opts = &c->opts,
                                          .members = members, .nmembers = n};
            utc_status_t krc =
                collective ? UTC__WAIT_CALL(UTC__WAIT_CONDUIT_SETUP, c->id, -1, -1, NULL,
                                            utc__transport_create(k, &args, &c->tp[k]))
                           : utc__transport_create(k, &args, &c->tp[k]);
            if (krc == UTC_ERR_UNSUPPORTED && collective && utc__transport_off(k)) {
                /* off on every rank alike: what was made goes (in the same order on
                 * every rank: the collective creates before it), and the pairs pick
                 * again, without it */
                for (int j = 0; j < ncomp; j++)
                    if (c->tp[j]) {
                        c->tp[j]->ops->destroy(c->tp[j]);
                        c->tp[j] = NULL;
                    }
                if (rc == UTC_OK)
                    goto again;
            }
            if (rc == UTC_OK)
                rc = krc;
        }
    }
out:
    free(use);
    free(members);
    return rc;
}

/*
 * A device conduit (opts.memory = UTC_CONDUIT_MEM_DEVICE) needs CUDA and a device on every
 * rank that holds threads of its tasks: each of those checks, and every rank returns the
 * first refusal (of the lowest rank), so all of them fail alike. Collective.
 */
static utc_status_t device_agree(utc_task_t *src, utc_task_t *dst)
{
    struct utc__task *ts = src->impl, *td = dst->impl;
    int me = utc_rank();
    bool part = false;
    for (int i = 0; i < ts->ngroup; i++)
        part |= ts->group_ranks[i] == me;
    for (int i = 0; i < td->ngroup; i++)
        part |= td->group_ranks[i] == me;
    utc_status_t mine = part ? utc__device_available() : UTC_OK;
    char why[256] = "";
    if (mine != UTC_OK)
        utc__text_copy(why, sizeof why, utc_last_error());
    struct { int status, rank; } in = {(int)mine, me}, out;
    int err = MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MINLOC, utc__world_comm());
    if (err != MPI_SUCCESS)
        return utc__error(UTC_ERR_MPI, "utc_conduit_create: agreeing on the device conduit's "
                          "GPUs failed (MPI error %d)", err);
    if (out.status == UTC_OK)
        return UTC_OK;
    /* the refusing rank's message, to every rank: its cause may be no device, or a bad
     * setting of its environment (UTC_DEVICE_CHUNK, UTC_DEVICE_IPC) */
    err = MPI_Bcast(why, (int)sizeof why, MPI_CHAR, out.rank, utc__world_comm());
    why[sizeof why - 1] = '\0';
    if (out.rank == me)
        return utc__error((utc_status_t)out.status, "%s", why);
    if (err != MPI_SUCCESS)
        utc__text_copy(why, sizeof why, "its message did not come");
    return utc__error((utc_status_t)out.status,
                      "utc_conduit_create: rank %d refuses the "
                      "device conduit (%s): %s",
                      out.rank, utc_status_string((utc_status_t)out.status), why);
}

/* A device conduit: each of c's host transports wrapped in a device transport, which
 * learns its host transport's members (its shutdown says goodbye to each). */
static utc_status_t wrap_device(utc_conduit_t *c)
{
    int nranks = utc_nranks(), ncomp = utc__transport_ncomponents;
    bool *use = calloc((size_t)ncomp * (size_t)nranks, sizeof *use);
    int *members = malloc(sizeof *members * (size_t)nranks);
    utc_status_t rc = UTC_OK;
    if (!use || !members)
        rc = utc__error(UTC_ERR_NO_MEMORY, "utc_conduit_create: out of memory");
    else
        pairs_use(c, use, nranks);
    for (int k = 0; k < ncomp && rc == UTC_OK; k++) {
        if (!c->tp[k])
            continue;
        int n = 0;
        for (int r = 0; r < nranks; r++)
            if (use[k * nranks + r])
                members[n++] = r;
        utc__transport_args_t args = {
            .conduit_id = c->id, .opts = &c->opts, .members = members, .nmembers = n};
        utc__transport_t *dev = NULL;
        rc = utc__device_transport_create(c->tp[k], &args, &dev);
        if (rc == UTC_OK) /* else c->tp[k] is still the host one: freed with c */
            c->tp[k] = dev;
    }
    free(use);
    free(members);
    return rc;
}

/* The names of c's transports on this rank ("inproc,mpi"; "none"), for the log, the trace
 * and the statistics. */
static void transports_here(const utc_conduit_t *c, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < utc__transport_ncomponents && len < size; k++)
        if (c->tp[k])
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? "," : "",
                                    utc__transport_components[k]->name);
    if (!buf[0])
        utc__text_copy(buf, size, "none");
}

utc_status_t utc_conduit_create(utc_task_t *src, utc_task_t *dst,
                                const utc_conduit_options_t *opts, utc_conduit_t **out)
{
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    if (opts)
        o = *opts;
    /* every rank compares what it passed before anything collective (base/coll_check.h):
     * ranks that disagree all return UTC_ERR_MISMATCH; ranks that agree on bad arguments
     * all return their error */
    utc_status_t args_rc = check_create_args(src, dst, &o, out);
    utc__coll_desc_t desc;
    describe_create(&desc, src, dst, &o, args_rc);
    utc_status_t rc = utc__coll_check(utc__world_comm(), utc__coll_world_seq(), NULL,
                                      "utc_conduit_create", &desc);
    if (rc != UTC_OK)
        return rc;
    if (args_rc != UTC_OK)
        return args_rc;
    if (o.memory == UTC_CONDUIT_MEM_DEVICE && (rc = device_agree(src, dst)) != UTC_OK)
        return rc;

    utc_conduit_t *c = utc__conduit_alloc();
    if (!c)
        return utc__error(UTC_ERR_NO_MEMORY, "utc_conduit_create: out of memory");
    c->id = utc__conduit_new_id();
    c->opts = o;
    c->ends = c->end;
    c->nends = 2;
    if ((rc = end_init(&c->end[0], src)) != UTC_OK || (rc = end_init(&c->end[1], dst)) != UTC_OK)
        goto fail;

    if ((rc = create_transports(c)) != UTC_OK ||
        (o.memory == UTC_CONDUIT_MEM_DEVICE && (rc = wrap_device(c)) != UTC_OK))
        goto fail;
    int entry = utc__transport_pick(c->end[0].entry_rank, c->end[1].entry_rank, &c->opts);
    c->entry_transport = utc__transport_components[entry]->kind;
    c->entry_name = utc__transport_components[entry]->name;

    utc__conduit_register(c);
    char here[64];
    transports_here(c, here, sizeof here);
    utc_log(UTC_LOG_DEBUG, "conduit %d: '%s' -> '%s', %s mode, %s between entries; "
            "transports here: %s", c->id, utc_task_name(src), utc_task_name(dst),
            o.mode == UTC_CONDUIT_FREE ? "free" : "single-entry", c->entry_name, here);
    if (UTC__PROF_ON())
        utc__prof_conduit(c->id, here);
    *out = utc__handle_make(c, c->gen);
    return UTC_OK;
fail:
    utc__conduit_free(c);
    return rc;
}

/* ---- shared conduits ---- */

static utc_status_t check_shared_args(utc_task_t *const *w, int nw, utc_task_t *const *rd,
                                      int nr, utc_shared_mode_t mode,
                                      utc_conduit_options_t *o, utc_conduit_t **out)
{
    static const char fn[] = "utc_conduit_create_shared";
    if (!out)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: out is NULL", fn);
    if (!w || !rd)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: the %s array is NULL", fn,
                          !w ? "writers" : "readers");
    if (nw < 1 || nr < 1)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: %d %s: a shared conduit needs at least one "
                          "writer and one reader", fn, nw < 1 ? nw : nr,
                          nw < 1 ? "writers" : "readers");
    if (mode != UTC_SHARED_PUBLISH && mode != UTC_SHARED_SHARE)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: unknown mode %d (UTC_SHARED_PUBLISH or "
                          "UTC_SHARED_SHARE)", fn, (int)mode);
    utc_status_t rc = check_options_resolve(o, fn);
    int credits;
    if (rc != UTC_OK || (rc = utc__shared_credits(o, mode, &credits)) != UTC_OK)
        return rc;
    if (o->memory == UTC_CONDUIT_MEM_DEVICE)
        return utc__error(UTC_ERR_UNSUPPORTED, "%s: a shared conduit carries host memory only "
                          "(memory = UTC_CONDUIT_MEM_DEVICE is for utc_conduit_create)", fn);
    if (o->mode != UTC_CONDUIT_SINGLE_ENTRY)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: a shared conduit is in single-entry mode "
                          "(each member transfers on its entry rank); free mode is not "
                          "supported", fn);
    int n = nw + nr;
    for (int i = 0; i < n; i++) {
        utc_task_t *t = i < nw ? w[i] : rd[i - nw];
        if ((rc = utc__task_check(t, fn)) != UTC_OK)
            return rc;
        for (int j = 0; j < i; j++) {
            utc_task_t *u = j < nw ? w[j] : rd[j - nw];
            if (u == t)
                return utc__error(UTC_ERR_INVALID_ARG, "%s: task '%s' is listed twice (%s %d "
                                  "and %s %d); each task is one writer or one reader", fn,
                                  utc_task_name(t), j < nw ? "writer" : "reader",
                                  j < nw ? j : j - nw, i < nw ? "writer" : "reader",
                                  i < nw ? i : i - nw);
        }
    }
    return UTC_OK;
}

utc_status_t utc_conduit_create_shared(utc_task_t *const *writers, int nwriters,
                                       utc_task_t *const *readers, int nreaders,
                                       utc_shared_mode_t mode,
                                       const utc_conduit_options_t *opts, utc_conduit_t **out)
{
    static const char fn[] = "utc_conduit_create_shared";
    utc_status_t rc = utc__check_init(fn);
    if (rc != UTC_OK)
        return rc;
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    if (opts)
        o = *opts;
    utc_status_t args_rc = check_shared_args(writers, nwriters, readers, nreaders, mode, &o,
                                             out);
    /* every rank compares what it passed before anything collective (base/coll_check.h) */
    utc__coll_desc_t d = {.call = UTC__CALL_SHARED_CREATE, .args_rc = args_rc,
                          .part_name = {"writer tasks", "reader tasks", "mode and options"}};
    if (args_rc == UTC_OK) {
        uint64_t h = utc__digest_u64(UTC__DIGEST_INIT, (uint64_t)nwriters);
        for (int i = 0; i < nwriters; i++)
            h = utc__digest_u64(h, (uint64_t)utc_task_id(writers[i]));
        d.part[0] = h;
        h = utc__digest_u64(UTC__DIGEST_INIT, (uint64_t)nreaders);
        for (int i = 0; i < nreaders; i++)
            h = utc__digest_u64(h, (uint64_t)utc_task_id(readers[i]));
        d.part[1] = h;
        h = utc__digest_u64(UTC__DIGEST_INIT, (uint64_t)mode);
        h = utc__digest_u64(h, o.inline_max);
        h = utc__digest_u64(h, (uint64_t)o.credits);
        h = utc__digest_u64(h, (uint64_t)o.transport); /* resolved: UTC_TRANSPORT counts */
        d.part[2] = utc__digest_u64(h, o.ring_slots);
    }
    if ((rc = utc__coll_check(utc__world_comm(), utc__coll_world_seq(), NULL, fn, &d)) != UTC_OK)
        return rc;
    if (args_rc != UTC_OK)
        return args_rc;

    int n = nwriters + nreaders;
    int *entry = NULL;
    utc_conduit_t *c = utc__conduit_alloc();
    if (!c)
        return utc__error(UTC_ERR_NO_MEMORY, "%s: out of memory", fn);
    c->id = utc__conduit_new_id();
    c->opts = o;
    c->shared = true;
    c->shared_mode = mode;
    c->nwriters = nwriters;
    if (!(c->ends = calloc((size_t)n, sizeof *c->ends)) ||
        !(entry = malloc(sizeof(int) * (size_t)n))) {
        rc = utc__error(UTC_ERR_NO_MEMORY, "%s: out of memory", fn);
        goto fail;
    }
    for (int i = 0; i < n; i++, c->nends++) {
        if ((rc = end_init(&c->ends[i], i < nwriters ? writers[i] : readers[i - nwriters])) !=
            UTC_OK)
            goto fail;
        entry[i] = c->ends[i].entry_rank;
    }
    utc__transport_t **tp = &c->tp[UTC__CONDUIT_SHARED_TP];
    if ((rc = UTC__WAIT_CALL(UTC__WAIT_CONDUIT_SETUP, c->id, -1, -1, NULL,
                             utc__shared_transport_create(c->id, mode, entry, nwriters, nreaders,
                                                          &c->opts, tp))) != UTC_OK)
        goto fail;
    if (!utc__transport_ops_ok((*tp)->ops)) {
        rc = utc__error(UTC_ERR_INTERNAL, "%s: the shared transport has an incomplete ops "
                        "table", fn);
        goto fail;
    }
    /* the widest component its pairs of a writer and a reader use (the last in the
     * table), picked after the pairs were made (a component may have refused there) */
    int widest = 0;
    for (int w = 0; w < nwriters; w++)
        for (int r = nwriters; r < n; r++) {
            int k = utc__transport_pick(entry[w], entry[r], &c->opts);
            widest = k > widest ? k : widest;
        }
    c->entry_transport = utc__transport_components[widest]->kind;
    c->entry_name = utc__transport_components[widest]->name;
    free(entry);
    utc__conduit_register(c);
    utc_log(UTC_LOG_DEBUG, "conduit %d: shared, %d writer(s) -> %d reader(s), %s mode, %s "
            "between entries (at the widest)", c->id, nwriters, nreaders,
            mode == UTC_SHARED_PUBLISH ? "publish" : "share", c->entry_name);
    if (UTC__PROF_ON()) /* its pairs' transports are the shared transport's: the widest */
        utc__prof_conduit(c->id, c->entry_name);
    *out = utc__handle_make(c, c->gen);
    return UTC_OK;
fail:
    free(entry);
    utc__conduit_free(c);
    return rc;
}
