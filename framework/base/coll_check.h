/*
 * Base layer: checking that the ranks of a collective call agree.
 *
 * Collective calls (task, conduit and global shared data creation, the task collectives)
 * must be made by every rank in the same order with the same arguments. When they are not, MPI
 * crashes or hangs in the call's first communicator operation. So each such call first describes
 * what this rank passed, as a few 64-bit digests (one per part: proc list, options, ...), and
 * utc__coll_check compares them across the ranks in one round: up to 8 ranks, each rank
 * sends its description to every other and compares them all itself; beyond that, one small
 * non-blocking allreduce (with a reduction of its own) of the maximum of each value and of
 * its complement: equal everywhere when all agree. Calls whose ranks pass
 * counts that must match pair by pair (what rank i sends to rank j is what j expects from
 * i: the v-forms of the task collectives) add one word, summed instead of maximized (see
 * utc__coll_pairs_t). On a disagreement every rank has or gathers the descriptions, builds
 * the same message (the call, its sequence number, which ranks differ from the lowest and
 * in what) and returns UTC_ERR_MISMATCH, before any other collective: the runtime stays
 * usable. The direct round uses tag 0x7c4c on the caller's communicator: no other message
 * there may use it.
 *
 * UTC_CHECK=0 in the environment turns the comparison off (the sequence numbers still
 * count); see doc/PERFORMANCE.md for its cost.
 */
#ifndef UTC_BASE_COLL_CHECK_H
#define UTC_BASE_COLL_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include <utc/status.h>

/* The collective calls that are checked: every one describes itself the same way, so two
 * ranks in different calls still meet in the check and are told apart. */
typedef enum utc__coll_call {
    UTC__CALL_TASK_CREATE = 1,
    UTC__CALL_CONDUIT_CREATE,
    UTC__CALL_GDATA_CREATE,
    UTC__CALL_SHARED_CREATE,
    /* the task collectives (gshared/ops/collectives.c): the plain and _by forms of a kind
     * are one call, since either may meet the other across ranks */
    UTC__CALL_TASK_BCAST,
    UTC__CALL_TASK_GATHER,
    UTC__CALL_TASK_SCATTER,
    UTC__CALL_TASK_REDUCE,
    UTC__CALL_TASK_ALLREDUCE,
    UTC__CALL_TASK_ALLGATHER,
    UTC__CALL_TASK_ALLGATHERV,
    UTC__CALL_TASK_ALLTOALL,
    UTC__CALL_TASK_ALLTOALLV,
    UTC__CALL_TASK_SCAN,
    UTC__CALL_TASK_EXSCAN,
    UTC__CALL_COUNT
} utc__coll_call_t;

#define UTC__CHECK_PARTS 4

/*
 * Counts that must match between pairs of ranks: what this rank sends to comm rank j
 * (sends(arg, j)) must be what j expects from it (j's expects(arg, i) for this rank i).
 * Each rank adds hash(i, j, sends) over its row and subtracts hash(i, j, expects) over its
 * column; the sum over the ranks, made in the check's one allreduce, is zero when every
 * pair agrees (a disagreement cancels out with probability 2^-64). Only when it is not
 * zero, one more exchange of the counts finds the pairs to name in the message.
 */
typedef struct utc__coll_pairs {
    const char *sends_name, *expects_name; /* the arguments, for the message ("sendcounts") */
    bool sends_one;                        /* sends_name is one count, not an array */
    uint64_t (*sends)(const void *arg, int j);
    uint64_t (*expects)(const void *arg, int i);
    const void *arg;
} utc__coll_pairs_t;

/*
 * A collective whose data may move in the same round as its check (up to 8 ranks, the
 * direct round): start() posts one receive from every other rank of the communicator and
 * one send to every other rank, all with `tag` (which no other message there uses), and
 * makes this rank's own part. utc__coll_check calls it right after posting its record, so
 * the check costs no round trip before the data moves; with more ranks, after the check
 * agreed; with UTC_CHECK=0, at once. Each record says whether (and with which tag) its rank
 * sent data, and the ranks agree only when all of them did. When they disagree nothing is
 * left on the communicator: every rank completes what the others posted for it and it did
 * not match (it receives and drops a message sent to it, and sends an empty message for a
 * receive posted for it), then waits for its own requests (a receive cut short by counts
 * that disagree included: its error is dropped). Pass it only when the call's own checks
 * passed here and the data can move by those messages (the same on every rank that agrees).
 *
 * Small blocks (block() given): a block of at most UTC__COLL_INLINE_MAX bytes travels in the
 * check's own message to its peer, behind the record (one message per pair instead of two),
 * and is copied out once the ranks agree. start() is then told which peers' blocks went
 * that way (bit r of inlined_to: the block for comm rank r; of inlined_from: the block from
 * r) and posts no message for them. Whether a pair's block is inlined follows from its size,
 * which the check compares (count and datatype, or the pairs' balance): when the ranks agree
 * both ends of each pair chose alike.
 */
#define UTC__COLL_INLINE_MAX 1024

typedef struct utc__coll_data {
    int tag;
    int (*start)(void *arg, unsigned inlined_to, unsigned inlined_from, MPI_Request *reqs,
                 int *nreq); /* MPI's error code */
    /* Optional: this rank's block for comm rank `peer` (send) or from it (!send): where it
     * is (*at) and its size in bytes */
    size_t (*block)(void *arg, int peer, bool send, void **at);
    void *arg;
    MPI_Request *reqs; /* room for 2 (n - 1) requests */
    int nreq;          /* out: the requests started, for the caller to wait for (0 when the
                        * check did not return UTC_OK: it waited for them) */
    int err;           /* out: start()'s error code (MPI_SUCCESS when not started) */
} utc__coll_data_t;

/* What this rank passed to a collective call. */
typedef struct utc__coll_desc {
    utc__coll_call_t call;
    utc_status_t args_rc; /* the call's own argument check here (its message is the last
                           * error); when not UTC_OK the parts are not compared */
    const char *part_name[UTC__CHECK_PARTS]; /* what each digest covers; NULL: unused */
    uint64_t part[UTC__CHECK_PARTS];
    /* Optional: the parts are plain values (a count, a root), not digests, and this writes
     * part `p`'s value `v` readably into buf; the message then shows each rank's value. */
    void (*show)(int p, uint64_t v, char *buf, size_t cap);
    /* Optional: counts to check pair by pair (read only when args_rc is UTC_OK). Whether a
     * call has them must be the same on every rank that makes it (a property of the call). */
    const utc__coll_pairs_t *pairs;
    /* Optional: the task the call acts on; messages then name "fn on task 'task'" */
    const char *task;
    /* Optional: the data to move with the check (see utc__coll_data_t) */
    utc__coll_data_t *data;
    /* For a call that moves data with the check on some ranks only by their arguments:
     * what the others did, for the message ("passing recvbuf as sendbuf (in place)") */
    const char *nodata_name;
} utc__coll_desc_t;

/* Digests (FNV-1a, 64 bits): start with UTC__DIGEST_INIT, then add values. */
#define UTC__DIGEST_INIT 0xcbf29ce484222325ull
uint64_t utc__digest_bytes(uint64_t h, const void *p, size_t n);
uint64_t utc__digest_u64(uint64_t h, uint64_t v);
uint64_t utc__digest_str(uint64_t h, const char *s); /* NULL and "" differ */

/*
 * Compare `d` across `comm` (collective over it). `seq` is the caller's count of checked
 * calls on that communicator (the world's: utc__coll_world_seq()); it is compared too and
 * advanced (on a mismatch, every rank moves to one past the highest, so the next call can
 * agree again). `world_ranks` maps comm ranks to world ranks for the message (NULL: comm
 * is the world). Returns UTC_OK, UTC_ERR_MISMATCH (the same on every rank, with the
 * message), or UTC_ERR_MPI. Blocks, testing with back-off. With d->data, UTC_OK means the
 * data has been started too (d->data->nreq requests to wait for, d->data->err).
 */
utc_status_t utc__coll_check(MPI_Comm comm, uint64_t *seq, const int *world_ranks,
                             const char *fn, const utc__coll_desc_t *d);

/* Whether the comparison is on (UTC_CHECK is not 0): a checked call's ranks have then met
 * in its allreduce already. */
bool utc__coll_check_on(void);

/* The sequence counter of the world's checked calls. */
uint64_t *utc__coll_world_seq(void);

/* Free what the check made in MPI (its reduction op); before MPI_Finalize. */
void utc__coll_check_fini(void);

#endif /* UTC_BASE_COLL_CHECK_H */
