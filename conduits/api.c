/*
 * Conduits: the public calls of conduit.h that move messages, each an operation (xfer_t)
 * handed to all_threads.c (blocking), async.c (requests) or transfer.c's express path;
 * and the conduit's id and transport.
 */
#define _GNU_SOURCE
#include "conduit_internal.h"

int utc_conduit_id(const utc_conduit_t *handle)
{
    utc_conduit_t *c;
    utc_status_t rc = utc__conduit_get(handle, "utc_conduit_id", &c);
    return rc != UTC_OK ? (int)rc : c->id;
}

utc_conduit_transport_t utc_conduit_transport(const utc_conduit_t *handle)
{
    utc_conduit_t *c;
    if (utc__conduit_get(handle, "utc_conduit_transport", &c) != UTC_OK)
        return UTC_CONDUIT_NONE;
    return c->entry_transport;
}

utc_status_t utc_conduit_device_path(const utc_conduit_t *handle, const char **name)
{
    static const char fn[] = "utc_conduit_device_path";
    utc_conduit_t *c;
    utc_status_t rc = utc__conduit_get(handle, fn, &c);
    if (rc != UTC_OK)
        return rc;
    if (!name)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: name (the output) is NULL", fn);
    if (c->shared || c->opts.memory != UTC_CONDUIT_MEM_DEVICE)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: conduit %d is a host-memory conduit: it has "
                          "no device path (create it with .memory = UTC_CONDUIT_MEM_DEVICE)",
                          fn, c->id);
    /* this rank's end (the source's first), toward the other task's entry rank */
    int me = utc_rank(), end = utc__conduit_in_group(&c->end[0], me) ? 0
                              : utc__conduit_in_group(&c->end[1], me) ? 1 : -1;
    if (end < 0 || (c->opts.mode == UTC_CONDUIT_SINGLE_ENTRY && c->end[end].entry_rank != me &&
                    (end == 1 || c->end[1].entry_rank != me)))
        return utc__error(UTC_ERR_NOT_MEMBER, "%s: rank %d transfers on neither end of conduit "
                          "%d", fn, me, c->id);
    if (c->opts.mode == UTC_CONDUIT_SINGLE_ENTRY && c->end[end].entry_rank != me)
        end = 1;
    int peer = c->end[1 - end].entry_rank;
    utc__transport_t *tp = utc__conduit_tp(c, me, peer);
    if (!tp)
        return utc__error(UTC_ERR_INTERNAL, "%s: conduit %d has no transport from rank %d to %d",
                          fn, c->id, me, peer);
    *name = utc__device_path(tp, peer);
    return UTC_OK;
}

utc_status_t utc_conduit_write(utc_conduit_t *conduit, const void *buf, size_t size, int tag)
{
    utc_status_t rc;
    if (utc__conduit_express(conduit, UTC__OP_SEND, buf, NULL, size, tag, NULL, &rc))
        return rc;
    xfer_t x = XFER(.fn = "utc_conduit_write", .solo = "utc_conduit_write_by",
                    .op = UTC__OP_SEND, .all = true, .tag = tag, .sbuf = buf, .size = size);
    return utc__conduit_run_op(conduit, &x, NULL, NULL);
}

utc_status_t utc_conduit_read(utc_conduit_t *conduit, void *buf, size_t capacity, int tag,
                              size_t *received)
{
    utc_status_t rc;
    if (utc__conduit_express(conduit, UTC__OP_RECV, NULL, buf, capacity, tag, received, &rc))
        return rc;
    xfer_t x = XFER(.fn = "utc_conduit_read", .solo = "utc_conduit_read_by", .op = UTC__OP_RECV,
                    .all = true, .tag = tag, .rbuf = buf, .size = capacity);
    return utc__conduit_run_op(conduit, &x, received, NULL);
}

utc_status_t utc_conduit_read_timeout(utc_conduit_t *conduit, void *buf, size_t capacity,
                                      int tag, size_t *received, double timeout_s)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_timeout",
                    .solo = "utc_conduit_read_timeout_by", .op = UTC__OP_RECV, .all = true,
                    .tag = tag, .rbuf = buf, .size = capacity, .timed = timeout_s >= 0,
                    .timeout = timeout_s);
    return utc__conduit_run_op(conduit, &x, received, NULL);
}

utc_status_t utc_conduit_write_by(utc_conduit_t *conduit, int thread, const void *buf,
                                  size_t size, int tag)
{
    xfer_t x = XFER(.fn = "utc_conduit_write_by", .op = UTC__OP_SEND, .by = true,
                    .thread = thread, .tag = tag, .sbuf = buf, .size = size);
    return utc__conduit_run_op(conduit, &x, NULL, NULL);
}

utc_status_t utc_conduit_read_by(utc_conduit_t *conduit, int thread, void *buf,
                                 size_t capacity, int tag, size_t *received)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_by", .op = UTC__OP_RECV, .by = true,
                    .thread = thread, .tag = tag, .rbuf = buf, .size = capacity);
    return utc__conduit_run_op(conduit, &x, received, NULL);
}

utc_status_t utc_conduit_read_timeout_by(utc_conduit_t *conduit, int thread, void *buf,
                                         size_t capacity, int tag, size_t *received,
                                         double timeout_s)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_timeout_by", .op = UTC__OP_RECV, .by = true,
                    .thread = thread, .tag = tag, .rbuf = buf, .size = capacity,
                    .timed = timeout_s >= 0, .timeout = timeout_s);
    return utc__conduit_run_op(conduit, &x, received, NULL);
}

utc_status_t utc_conduit_write_owned(utc_conduit_t *conduit, void *buf, size_t size, int tag)
{
    xfer_t x = XFER(.fn = "utc_conduit_write_owned", .op = UTC__OP_SEND, .owned = true,
                    .all = true, .tag = tag, .sbuf = buf, .size = size);
    if (!buf)
        return utc__error(UTC_ERR_INVALID_ARG, "utc_conduit_write_owned: buffer is NULL");
    return utc__conduit_run_op(conduit, &x, NULL, NULL);
}

utc_status_t utc_conduit_read_owned(utc_conduit_t *conduit, int tag, void **buf, size_t *size)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_owned", .op = UTC__OP_RECV, .owned = true,
                    .all = true, .tag = tag, .size = SIZE_MAX);
    if (!buf)
        return utc__error(UTC_ERR_INVALID_ARG, "utc_conduit_read_owned: buf (the output) is NULL");
    return utc__conduit_run_op(conduit, &x, size, buf);
}

utc_status_t utc_conduit_read_owned_by(utc_conduit_t *conduit, int thread, int tag, void **buf,
                                       size_t *size)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_owned_by", .op = UTC__OP_RECV, .owned = true,
                    .by = true, .thread = thread, .tag = tag, .size = SIZE_MAX);
    if (!buf)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_conduit_read_owned_by: buf (the output) is NULL");
    *buf = NULL; /* what the threads that do not read get */
    return utc__conduit_run_op(conduit, &x, size, buf);
}

utc_status_t utc_conduit_read_owned_from(utc_conduit_t *conduit, int peer, int tag, void **buf,
                                         size_t *size)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_owned_from", .op = UTC__OP_RECV, .owned = true,
                    .all = true, .tag = tag, .named_peer = true, .peer = peer, .size = SIZE_MAX);
    if (!buf)
        return utc__error(UTC_ERR_INVALID_ARG,
                          "utc_conduit_read_owned_from: buf (the output) is NULL");
    return utc__conduit_run_op(conduit, &x, size, buf);
}

utc_status_t utc_conduit_write_to(utc_conduit_t *conduit, int peer, const void *buf, size_t size,
                                  int tag)
{
    xfer_t x = XFER(.fn = "utc_conduit_write_to", .solo = "utc_conduit_write_to_by",
                    .op = UTC__OP_SEND, .all = true, .tag = tag,
                    .named_peer = true, .peer = peer, .sbuf = buf, .size = size);
    return utc__conduit_run_op(conduit, &x, NULL, NULL);
}

utc_status_t utc_conduit_read_from(utc_conduit_t *conduit, int peer, void *buf, size_t capacity,
                                   int tag, size_t *received)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_from", .solo = "utc_conduit_read_from_by",
                    .op = UTC__OP_RECV, .all = true, .tag = tag,
                    .named_peer = true, .peer = peer, .rbuf = buf, .size = capacity);
    return utc__conduit_run_op(conduit, &x, received, NULL);
}

utc_status_t utc_conduit_read_from_timeout(utc_conduit_t *conduit, int peer, void *buf,
                                           size_t capacity, int tag, size_t *received,
                                           double timeout_s)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_from_timeout",
                    .solo = "utc_conduit_read_from_timeout_by", .op = UTC__OP_RECV, .all = true,
                    .tag = tag, .named_peer = true, .peer = peer, .rbuf = buf, .size = capacity,
                    .timed = timeout_s >= 0, .timeout = timeout_s);
    return utc__conduit_run_op(conduit, &x, received, NULL);
}

utc_status_t utc_conduit_write_to_by(utc_conduit_t *conduit, int thread, int peer,
                                     const void *buf, size_t size, int tag)
{
    xfer_t x = XFER(.fn = "utc_conduit_write_to_by", .op = UTC__OP_SEND, .by = true,
                    .thread = thread, .tag = tag, .named_peer = true, .peer = peer, .sbuf = buf,
                    .size = size);
    return utc__conduit_run_op(conduit, &x, NULL, NULL);
}

utc_status_t utc_conduit_read_from_by(utc_conduit_t *conduit, int thread, int peer, void *buf,
                                      size_t capacity, int tag, size_t *received)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_from_by", .op = UTC__OP_RECV, .by = true,
                    .thread = thread, .tag = tag, .named_peer = true, .peer = peer, .rbuf = buf,
                    .size = capacity);
    return utc__conduit_run_op(conduit, &x, received, NULL);
}

utc_status_t utc_conduit_read_from_timeout_by(utc_conduit_t *conduit, int thread, int peer,
                                              void *buf, size_t capacity, int tag,
                                              size_t *received, double timeout_s)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_from_timeout_by", .op = UTC__OP_RECV, .by = true,
                    .thread = thread, .tag = tag, .named_peer = true, .peer = peer, .rbuf = buf,
                    .size = capacity, .timed = timeout_s >= 0, .timeout = timeout_s);
    return utc__conduit_run_op(conduit, &x, received, NULL);
}

utc_status_t utc_conduit_close(utc_conduit_t *conduit)
{
    xfer_t x = XFER(.fn = "utc_conduit_close", .op = UTC__OP_SEND, .all = true, .close = true);
    return utc__conduit_run_op(conduit, &x, NULL, NULL);
}

/* ---- probes and any-tag reads ---- */

/* A probe is no transfer: any thread may call one, alone, and each call looks for itself
 * (no "every local thread calls" rule, no barrier). */
static utc_status_t probe(utc_conduit_t *conduit, xfer_t *x, int *found)
{
    if (x->nowait && !found)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: found (the output) is NULL", x->fn);
    utc_status_t rc = utc__conduit_run_op(conduit, x, NULL, NULL);
    if (found)
        *found = rc == UTC_OK;
    return rc == UTC_ERR_TIMEOUT && x->nowait ? UTC_OK : rc;
}

utc_status_t utc_conduit_probe(utc_conduit_t *conduit, int tag, utc_msg_info_t *info)
{
    xfer_t x = XFER(.fn = "utc_conduit_probe", .op = UTC__OP_RECV, .tag = tag, .any_tag = true,
                    .probe = true, .info = info);
    return probe(conduit, &x, NULL);
}

utc_status_t utc_conduit_iprobe(utc_conduit_t *conduit, int tag, int *found,
                                utc_msg_info_t *info)
{
    xfer_t x = XFER(.fn = "utc_conduit_iprobe", .op = UTC__OP_RECV, .tag = tag, .any_tag = true,
                    .probe = true, .nowait = true, .info = info);
    return probe(conduit, &x, found);
}

utc_status_t utc_conduit_probe_from(utc_conduit_t *conduit, int peer, int tag,
                                    utc_msg_info_t *info)
{
    xfer_t x = XFER(.fn = "utc_conduit_probe_from", .op = UTC__OP_RECV, .tag = tag,
                    .named_peer = true, .peer = peer, .any_tag = true, .probe = true,
                    .info = info);
    return probe(conduit, &x, NULL);
}

utc_status_t utc_conduit_iprobe_from(utc_conduit_t *conduit, int peer, int tag, int *found,
                                     utc_msg_info_t *info)
{
    xfer_t x = XFER(.fn = "utc_conduit_iprobe_from", .op = UTC__OP_RECV, .tag = tag,
                    .named_peer = true, .peer = peer, .any_tag = true, .probe = true,
                    .nowait = true, .info = info);
    return probe(conduit, &x, found);
}

utc_status_t utc_conduit_read_any(utc_conduit_t *conduit, void *buf, size_t capacity,
                                  utc_msg_info_t *info)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_any", .op = UTC__OP_RECV, .all = true,
                    .tag = UTC_ANY_TAG, .any_tag = true, .rbuf = buf, .size = capacity,
                    .info = info);
    return utc__conduit_run_op(conduit, &x, NULL, NULL);
}

utc_status_t utc_conduit_read_any_from(utc_conduit_t *conduit, int peer, void *buf,
                                       size_t capacity, utc_msg_info_t *info)
{
    xfer_t x = XFER(.fn = "utc_conduit_read_any_from", .op = UTC__OP_RECV, .all = true,
                    .tag = UTC_ANY_TAG, .any_tag = true, .named_peer = true, .peer = peer,
                    .rbuf = buf, .size = capacity, .info = info);
    return utc__conduit_run_op(conduit, &x, NULL, NULL);
}

utc_status_t utc_conduit_iwrite(utc_conduit_t *conduit, const void *buf, size_t size, int tag,
                                utc_request_t **req)
{
    if (req && utc__conduit_express_iwrite(conduit, buf, size, tag, req))
        return UTC_OK;
    xfer_t x = XFER(.fn = "utc_conduit_iwrite", .op = UTC__OP_SEND, .tag = tag, .sbuf = buf,
                    .size = size);
    return utc__conduit_start_async(conduit, &x, req);
}

utc_status_t utc_conduit_iread(utc_conduit_t *conduit, void *buf, size_t capacity, int tag,
                               utc_request_t **req)
{
    utc_status_t rc;
    if (req && utc__conduit_express_iread(conduit, buf, capacity, tag, req, &rc))
        return rc;
    xfer_t x = XFER(.fn = "utc_conduit_iread", .op = UTC__OP_RECV, .tag = tag, .rbuf = buf,
                    .size = capacity);
    return utc__conduit_start_async(conduit, &x, req);
}

utc_status_t utc_conduit_iwrite_to(utc_conduit_t *conduit, int peer, const void *buf, size_t size,
                                   int tag, utc_request_t **req)
{
    xfer_t x = XFER(.fn = "utc_conduit_iwrite_to", .op = UTC__OP_SEND, .tag = tag,
                    .named_peer = true, .peer = peer, .sbuf = buf, .size = size);
    return utc__conduit_start_async(conduit, &x, req);
}

utc_status_t utc_conduit_iread_from(utc_conduit_t *conduit, int peer, void *buf, size_t capacity,
                                    int tag, utc_request_t **req)
{
    xfer_t x = XFER(.fn = "utc_conduit_iread_from", .op = UTC__OP_RECV, .tag = tag,
                    .named_peer = true, .peer = peer, .rbuf = buf, .size = capacity);
    return utc__conduit_start_async(conduit, &x, req);
}
