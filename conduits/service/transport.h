/*
 * Conduit service: the transport interface that the in-process (shm/) and MPI (mpi/)
 * transports implement and conduit.c drives. A transport knows requests, waiting and
 * what its creator tells it; it never calls back into the conduit object.
 */
#ifndef UTC_CONDUITS_TRANSPORT_H
#define UTC_CONDUITS_TRANSPORT_H

#include <stdatomic.h>
#include <stdbool.h>

#include <utc/conduit.h>

#include "base/wait_hook.h"
#include "service/request.h"

/*
 * A transport: the in-process rings or MPI. Ops tables are static const and checked once
 * at conduit creation (utc__transport_check).
 */
typedef struct utc__transport_ops {
    const char *name;
    /* Start `req` (send or receive). Never blocks for long. UTC_OK: the request is in
     * flight or already complete (state DONE with its status); an error: not started. */
    utc_status_t (*start)(utc__transport_t *tp, utc_request_t *req);
    /* Make progress without blocking; true once the request is DONE. */
    bool (*progress)(utc__transport_t *tp, utc_request_t *req);
    /* Block (sleeping after a short spin) until the request is DONE or `timeout_s`
     * passes (< 0: no limit). True when DONE. */
    bool (*wait)(utc__transport_t *tp, utc_request_t *req, double timeout_s);
    /* Withdraw a receive that has no message yet. True if withdrawn; false if a message
     * was matched to it meanwhile (then it will complete: wait for it). */
    bool (*cancel)(utc__transport_t *tp, utc_request_t *req);
    /* Without blocking, look for the message a read like `req` (its direction, peer and
     * tag, or UTC_ANY_TAG) started now would get: UTC_OK with req->received its size and
     * req->tag its tag; UTC_ERR_TIMEOUT when there is none (yet); the transport's close or
     * failure status when none will come. Takes nothing: the message stays for a read. */
    utc_status_t (*probe)(utc__transport_t *tp, utc_request_t *req);
    /* The writers of direction `dir` on this rank are done: after their messages to world
     * rank `peer` (in-process: this rank), an end of stream, so that reads there with
     * nothing left end with UTC_ERR_CLOSED. Blocks until it is sent. (The shared
     * transport: `peer` is the closing writer's member index, and its stream to every
     * reader ends.) */
    utc_status_t (*close)(utc__transport_t *tp, int dir, int peer);
    /* End every operation pending on the transport with `status` (its blocked callers
     * return, its requests complete), wake every waiter, and from then on finish every
     * operation started with `status` at once. Does not free anything: requests may still
     * be tested and waited for. */
    void (*shutdown)(utc__transport_t *tp, utc_status_t status);
    /* A task at one end failed: end every read pending on the transport (and writes
     * waiting for a reader) with `status`, and wake their waiters. Messages stay. The
     * transport's `failed` mark is already set. */
    void (*fail)(utc__transport_t *tp, utc_status_t status);
    /* Tell the other ranks of the transport that end `end`'s task failed here with `rc`
     * (MPI only; NULL in-process). */
    void (*notify_failed)(utc__transport_t *tp, int end, utc_status_t rc);
    /* Free the transport (once no operation refers to it): drops queued messages. */
    void (*destroy)(utc__transport_t *tp);
} utc__transport_ops_t;

/* Root object of a transport: derived ones put it first, named base. */
struct utc__transport {
    const utc__transport_ops_t *ops;
    int conduit_id;        /* for messages */
    utc_conduit_transport_t kind;
    /* A task at one end failed (utc__transport_mark_failed): which end, on which world
     * rank, with which status. Set from any thread, cleared by the conduit when a run of
     * one of its tasks is queued here. */
    atomic_int failed;     /* 0, or 1 once the four below are set */
    atomic_int fail_end, fail_rank, fail_rc;
    atomic_int fail_why;   /* what operations end with: UTC_ERR_PEER_FAILED (the task's
                            * run failed) or UTC_ERR_CANCELED (the task is destroyed) */
};

/* Record a failure (why = UTC_ERR_PEER_FAILED) or the destruction (why = UTC_ERR_CANCELED)
 * of end `end`'s task on world rank `rank`, with `rc`. False if one was recorded already
 * (then nothing changes). */
static inline bool utc__transport_mark_failed(utc__transport_t *tp, int end, int rank, int rc,
                                              utc_status_t why)
{
    if (atomic_load(&tp->failed))
        return false;
    atomic_store(&tp->fail_end, end);
    atomic_store(&tp->fail_rank, rank);
    atomic_store(&tp->fail_rc, rc);
    atomic_store(&tp->fail_why, (int)why);
    int expected = 0;
    return atomic_compare_exchange_strong(&tp->failed, &expected, 1);
}

/* ---- transport components ----
 *
 * Each transport is a folder under conduits/ with one component record; the component
 * table (conduits/components.c) lists them, most specific first, and one function picks
 * the component for a peer. Nothing else names a transport.
 */

/* What a component's create gets. */
typedef struct utc__transport_args {
    int conduit_id;
    const utc_conduit_options_t *opts;
    const int *members;    /* the world ranks that take part, ascending (this one included
                            * when it takes part) */
    int nmembers;
} utc__transport_args_t;

typedef struct utc__transport_component {
    const char *name;                    /* "inproc", "node", "mpi": logs, trace, stats */
    utc_conduit_transport_t kind;
    /* True when the component carries messages between this rank and world rank `peer`
     * (it is asked for every peer, this rank included). */
    bool (*reaches)(int peer);
    /* Create the transport of conduit `args->conduit_id` on this rank. A collective
     * component's create is entered by every rank of the world, members or not (*out is
     * NULL on the others); any other's only on the ranks that need it. */
    bool collective;
    utc_status_t (*create)(const utc__transport_args_t *args, utc__transport_t **out);
    size_t req_priv;                     /* bytes of a request's private part it uses */
} utc__transport_component_t;

/* ---- transports ---- */

/* In-process rings (conduits/shm/). On the rank that holds both ends. */
utc_status_t utc__shm_transport_create(int conduit_id, const utc_conduit_options_t *opts,
                                       utc__transport_t **out);

/* MPI (conduits/mpi/). Collective over all ranks: `members` lists the world ranks that
 * take part (ascending); *out is NULL on the others. */
utc_status_t utc__mpi_transport_create(int conduit_id, const int *members, int nmembers,
                                       utc__transport_t **out);

/* Node-local (conduits/node/): between ranks of one host, through shared memory.
 * Collective over all ranks (its first call sets up the host's shared memory; *out is NULL
 * on non-members). UTC_ERR_UNSUPPORTED on every rank alike when shared memory cannot be
 * used: the caller then uses MPI. */
extern const utc__transport_component_t utc__node_component;
utc_status_t utc__node_transport_create(const utc__transport_args_t *a,
                                        utc__transport_t **out);
/* Its failure notice with the rank given (as utc__mpi_transport_notify). */
void utc__node_transport_notify(utc__transport_t *tp, int end, int rank, utc_status_t rc);
/* Whether a conduit whose ranks are `members` should use the node transport between them:
 * all on this rank's host, and the environment variable UTC_TRANSPORT is not "mpi". An
 * error (UTC_ERR_INVALID_ARG, naming `fn`) for a value of UTC_TRANSPORT other than "auto"
 * and "mpi". */
utc_status_t utc__node_wanted(const char *fn, const int *members, int nmembers, bool *want);
/* Unmap the host's shared memory (utc_finalize, after the last conduit). */
void utc__node_engine_finalize(void);

/* The MPI transport's failure notice (its notify_failed) with the end, the rank where the
 * task failed and its status given: the shared transport passes a notice on. */
void utc__mpi_transport_notify(utc__transport_t *tp, int end, int rank, utc_status_t rc);

/* A shared conduit's transport (conduits/shared/): one inner transport (in-process or MPI)
 * per pair of a writer and a reader. Collective over all ranks. `entry[i]` is the entry
 * rank of member i (the `nwriters` writers first, then the `nreaders` readers). Requests
 * carry their caller's member index (req->member); close's `peer` is the closing writer's
 * member index; its reads fill in req->peer, the world rank of the writer. */
utc_status_t utc__shared_transport_create(int conduit_id, utc_shared_mode_t mode,
                                          const int *entry, int nwriters, int nreaders,
                                          const utc_conduit_options_t *opts,
                                          utc__transport_t **out);

/* A shared conduit's credit window in `mode` (share mode: opts->credits, or when that is
 * 0 the environment variable UTC_SHARE_CREDITS, else UTC_CONDUIT_CREDITS_DEFAULT; publish
 * mode: 0, and credits set are refused). UTC_ERR_INVALID_ARG, with the message, for a bad
 * value. The range of opts->credits is checked by the caller. */
utc_status_t utc__shared_credits(const utc_conduit_options_t *opts, utc_shared_mode_t mode,
                                 int *credits);

/* The world rank that a wait of member `member` of shared transport `tp` names as its
 * peer: the entry rank of the first member on the other side (its wait detail names them
 * all). */
int utc__shared_transport_peer(const utc__transport_t *tp, int member);

/* A wait of a shared conduit's member, told on demand (base/wait_hook.h): whom it waits
 * for on which ranks, and a share-mode reader's asks. Lives on the waiter's stack. */
typedef struct utc__shared_wait {
    utc__wait_detail_t base;
    utc__transport_t *tp;
    int member, tag;
} utc__shared_wait_t;

/* Fill `w` for a wait of member `member` (a writer writes, a reader reads) on `tag`
 * (< 0: unknown). */
void utc__shared_wait_init(utc__shared_wait_t *w, utc__transport_t *tp, int member, int tag);

#endif /* UTC_CONDUITS_TRANSPORT_H */
