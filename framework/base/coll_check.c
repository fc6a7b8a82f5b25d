/* Checking that the ranks of a collective call agree (base/coll_check.h). */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/coll_check.h"
#include "base/errors.h"
#include "base/mpi_wait.h"
#include "base/text.h"

/* A rank's description: the call, the sequence number, the local argument check's status
 * and the parts (K words). In the allreduce: each also complemented (2K words, maximized),
 * then the pairs' balance (summed). */
enum { K = 3 + UTC__CHECK_PARTS, W = 2 * K + 1 };

/* Up to DIRECT_MAX ranks, each rank sends its record to every other (one round of small
 * messages, tag CHECK_TAG on the caller's communicator, which no other UTC message there
 * uses) and reduces them itself: a nonblocking allreduce costs ~1.5 us more here at 2-3
 * ranks (doc/PERFORMANCE.md). Above it, an allreduce (the messages grow as n^2). */
enum { DIRECT_MAX = 8, CHECK_TAG = 0x7c4c };

/* The direct round's record (WD words): the K words, not complemented (every rank has every
 * record and compares them itself), the pairs' balance (R_BAL, summed), the tag of the data
 * its rank sent with it (R_TAG; 0: none, utc__coll_data_t), which must be the same on every
 * rank, and which peers it posted data messages of its own for (R_POSTED; bit r: a send to
 * comm rank r; bit 8 + r: a receive from r; a block inlined in the record's message has
 * none), for the drain when the ranks disagree. A record's message may carry a small block
 * behind it: SLOT words at most. The record rides on every message of the round, so it is
 * kept short (10 words; 17 with the complements the allreduce needs). */
enum { R_BAL = K, R_TAG, R_POSTED, WD, SLOT = WD + UTC__COLL_INLINE_MAX / 8 };
_Static_assert(UTC__COLL_INLINE_MAX % 8 == 0, "a record's block fits whole words");

static const char *const call_names[UTC__CALL_COUNT] = {
    [UTC__CALL_TASK_CREATE] = "utc_task_create",
    [UTC__CALL_CONDUIT_CREATE] = "utc_conduit_create",
    [UTC__CALL_GDATA_CREATE] = "utc_gdata_create",
    [UTC__CALL_SHARED_CREATE] = "utc_conduit_create_shared",
    [UTC__CALL_TASK_BCAST] = "utc_task_bcast",
    [UTC__CALL_TASK_GATHER] = "utc_task_gather",
    [UTC__CALL_TASK_SCATTER] = "utc_task_scatter",
    [UTC__CALL_TASK_REDUCE] = "utc_task_reduce",
    [UTC__CALL_TASK_ALLREDUCE] = "utc_task_allreduce",
    [UTC__CALL_TASK_ALLGATHER] = "utc_task_allgather",
    [UTC__CALL_TASK_ALLGATHERV] = "utc_task_allgatherv",
    [UTC__CALL_TASK_ALLTOALL] = "utc_task_alltoall",
    [UTC__CALL_TASK_ALLTOALLV] = "utc_task_alltoallv",
    [UTC__CALL_TASK_SCAN] = "utc_task_scan",
    [UTC__CALL_TASK_EXSCAN] = "utc_task_exscan",
};

static uint64_t world_seq;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static int check_on = 1;

/* The check's reduction: one record of W words (so MPI never splits it), the first 2K
 * maximized, the balance summed. Made at the first check, freed before MPI_Finalize (a
 * mutex, not a once: UTC may start again on an MPI the program keeps). */
static pthread_mutex_t op_lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_Datatype op_type = MPI_DATATYPE_NULL;
static MPI_Op op_check = MPI_OP_NULL;

static void read_env(void)
{
    const char *v = getenv("UTC_CHECK");
    check_on = !(v && strcmp(v, "0") == 0);
}

uint64_t *utc__coll_world_seq(void) { return &world_seq; }

bool utc__coll_check_on(void)
{
    pthread_once(&env_once, read_env);
    return check_on;
}

uint64_t utc__digest_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t utc__digest_u64(uint64_t h, uint64_t v) { return utc__digest_bytes(h, &v, sizeof v); }

uint64_t utc__digest_str(uint64_t h, const char *s)
{
    if (!s)
        return utc__digest_u64(h, 0x6e756c6cull); /* "null" */
    return utc__digest_bytes(utc__digest_u64(h, strlen(s) + 1), s, strlen(s));
}

static const char *call_name(uint64_t call)
{
    return call > 0 && call < UTC__CALL_COUNT ? call_names[call] : "(an unknown call)";
}

/* Append to msg (bounded). */
static void add(char *msg, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *msg, size_t cap, const char *fmt, ...)
{
    size_t len = strlen(msg);
    if (len + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + len, cap - len, fmt, ap);
    va_end(ap);
}

/* "rank 1", "ranks 1, 2 and 5" (at most 8 named) of the ranks whose value at index `idx`
 * differs from the first rank's. Returns how many differ. */
static int list_differing(char *msg, size_t cap, const uint64_t *all, int n, int idx,
                          const int *world_ranks)
{
    int count = 0;
    for (int r = 1; r < n; r++)
        count += all[(size_t)r * K + idx] != all[idx];
    if (!count)
        return 0;
    add(msg, cap, "%s", count == 1 ? "rank " : "ranks ");
    int named = 0;
    for (int r = 1; r < n && named < 8; r++) {
        if (all[(size_t)r * K + idx] == all[idx])
            continue;
        named++;
        add(msg, cap, "%s%d", named == 1 ? "" : named == count || named == 8 ? " and " : ", ",
            world_ranks ? world_ranks[r] : r);
    }
    if (count > named)
        add(msg, cap, " (and %d more)", count - named);
    return count;
}

/* " (rank 0: 8, rank 1: 4)": the first rank's value at index `idx` and up to 3 that differ. */
static void show_values(char *msg, size_t cap, const uint64_t *all, int n, int idx,
                        const int *world_ranks, const utc__coll_desc_t *d, int p)
{
    char v[64];
    d->show(p, all[idx], v, sizeof v);
    add(msg, cap, " (rank %d: %s", world_ranks ? world_ranks[0] : 0, v);
    for (int r = 1, shown = 0; r < n && shown < 3; r++) {
        if (all[(size_t)r * K + idx] == all[idx])
            continue;
        shown++;
        d->show(p, all[(size_t)r * K + idx], v, sizeof v);
        add(msg, cap, ", rank %d: %s", world_ranks ? world_ranks[r] : r, v);
    }
    add(msg, cap, ")");
}

/* The message every rank builds alike from every rank's description. */
static void describe(char *msg, size_t cap, const uint64_t *all, int n, const int *world_ranks,
                     const utc__coll_desc_t *d, const char *fn)
{
    int first = world_ranks ? world_ranks[0] : 0;
    snprintf(msg, cap, "%s: the ranks disagree (checked collective call #%llu of rank %d): ",
             fn, (unsigned long long)all[1] + 1, first);
    if (list_differing(msg, cap, all, n, 0, world_ranks)) {
        add(msg, cap, " made another collective call here (");
        for (int r = 1, shown = 0; r < n && shown < 3; r++) {
            if (all[(size_t)r * K] == all[0])
                continue;
            add(msg, cap, "%srank %d: %s", shown++ ? ", " : "", world_ranks ? world_ranks[r] : r,
                call_name(all[(size_t)r * K]));
        }
        add(msg, cap, ") while rank %d called %s", first, call_name(all[0]));
    } else if (list_differing(msg, cap, all, n, 1, world_ranks)) {
        add(msg, cap, " made a different number of collective calls before this one (");
        for (int r = 1, shown = 0; r < n && shown < 3; r++) {
            if (all[(size_t)r * K + 1] == all[1])
                continue;
            add(msg, cap, "%srank %d is at #%llu", shown++ ? ", " : "",
                world_ranks ? world_ranks[r] : r, (unsigned long long)all[(size_t)r * K + 1] + 1);
        }
        add(msg, cap, "): a rank skipped or added a collective call");
    } else if (list_differing(msg, cap, all, n, 2, world_ranks)) {
        add(msg, cap, " got another result from the call's own checks of the arguments "
            "(rank %d: %s", first, utc_status_string((int)(int64_t)all[2]));
        for (int r = 1, shown = 0; r < n && shown < 3; r++) {
            if (all[(size_t)r * K + 2] == all[2])
                continue;
            shown++;
            add(msg, cap, "; rank %d: %s", world_ranks ? world_ranks[r] : r,
                utc_status_string((int)(int64_t)all[(size_t)r * K + 2]));
        }
        add(msg, cap, ")");
    } else {
        int said = 0;
        for (int p = 0; p < UTC__CHECK_PARTS; p++) {
            size_t before = strlen(msg);
            if (said)
                add(msg, cap, "; ");
            int count = list_differing(msg, cap, all, n, 3 + p, world_ranks);
            if (!count) {
                msg[before] = '\0';
                continue;
            }
            add(msg, cap, " differ%s from rank %d in the %s", count == 1 ? "s" : "", first,
                d->part_name[p] ? d->part_name[p] : "arguments");
            if (d->show) /* plain values: say them (the first rank's and 3 others) */
                show_values(msg, cap, all, n, 3 + p, world_ranks, d, p);
            said++;
        }
    }
    add(msg, cap, ". Every rank must make the same collective calls, in the same order, with "
        "the same arguments");
}

/* Wait for the check's exchange: the ranks of a creation or a collective usually arrive
 * close together, and a late wake-up would be paid by every call, so test without a pause
 * for the first 32 tests (a microsecond or two: a partner that is running answers within
 * them; yielding at once cost ~0.7 us per collective at 2 ranks here), then yield (not
 * sleep) up to 5 ms; after that, wait with back-off like every other MPI wait (a rank far
 * behind). The 5 ms count from the first yield: the clock is read only by a wait that
 * gets that far (a read costs ~20 ns here, a tenth of the usual wait). */
static utc_status_t wait_meeting(int nreq, MPI_Request *reqs, MPI_Status *st)
{
    uint64_t start = 0;
    for (unsigned i = 0;; i++) {
        int done = 0, err = MPI_Testall(nreq, reqs, &done, st ? st : MPI_STATUSES_IGNORE);
        if (err != MPI_SUCCESS)
            return utc__mpi_error(err, "MPI_Testall (argument check of a collective call)");
        if (done)
            return UTC_OK;
        if (i < 32)
            continue;
        if (i == 32)
            start = utc__clock_ns();
        if ((i & 63) == 63 && utc__clock_ns() - start > 5000000) {
            for (int k = 0; k < nreq; k++) {
                utc_status_t rc = utc__mpi_wait(&reqs[k], st ? &st[k] : NULL, -1);
                if (rc != UTC_OK)
                    return rc;
            }
            return UTC_OK;
        }
        sched_yield();
    }
}

/* The check's reduction over records of W words (op_type). */
static void check_reduce(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const uint64_t *a = in;
    uint64_t *b = inout;
    for (int r = 0; r < *len; r++, a += W, b += W) {
        for (int i = 0; i < 2 * K; i++)
            b[i] = a[i] > b[i] ? a[i] : b[i];
        b[2 * K] += a[2 * K]; /* wraps: the balance is a sum modulo 2^64 */
    }
}

static utc_status_t check_op(MPI_Datatype *type, MPI_Op *op)
{
    int err = MPI_SUCCESS;
    pthread_mutex_lock(&op_lock);
    if (op_check == MPI_OP_NULL) {
        MPI_Datatype t = MPI_DATATYPE_NULL;
        if ((err = MPI_Type_contiguous(W, MPI_UINT64_T, &t)) == MPI_SUCCESS &&
            (err = MPI_Type_commit(&t)) == MPI_SUCCESS &&
            (err = MPI_Op_create(check_reduce, 1, &op_check)) == MPI_SUCCESS)
            op_type = t;
        else if (t != MPI_DATATYPE_NULL)
            MPI_Type_free(&t);
    }
    *type = op_type;
    *op = op_check;
    pthread_mutex_unlock(&op_lock);
    return err == MPI_SUCCESS ? UTC_OK
                              : utc__mpi_error(err, "MPI_Op_create (argument check of a "
                                                    "collective call)");
}

void utc__coll_check_fini(void)
{
    pthread_mutex_lock(&op_lock);
    if (op_check != MPI_OP_NULL)
        MPI_Op_free(&op_check);
    if (op_type != MPI_DATATYPE_NULL)
        MPI_Type_free(&op_type);
    pthread_mutex_unlock(&op_lock);
}

/* A 64-bit mixer (the finalizer of splitmix64): a bijection that spreads every input bit. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* One pair's count as the balance sees it: sender i, receiver j, count v. */
static uint64_t pair_hash(int i, int j, uint64_t v)
{
    return mix(mix((uint64_t)(uint32_t)i << 32 | (uint32_t)j) + v);
}

/* This rank's share of the balance: its row (what it sends) minus its column (what it
 * expects). The ranks' shares sum to zero when every pair agrees. Its own pair (me, me) is
 * in both: it adds exactly nothing when its two counts are equal, so only then is it
 * skipped. */
static uint64_t pairs_balance(const utc__coll_pairs_t *p, int me, int n)
{
    uint64_t b = 0;
    for (int k = 0; k < n; k++) {
        uint64_t sends = p->sends(p->arg, k), expects = p->expects(p->arg, k);
        if (k != me || sends != expects)
            b += pair_hash(me, k, sends) - pair_hash(k, me, expects);
    }
    return b;
}

/* "sendcounts[2] = 8" or "sendcount = 8". */
static void add_count(char *msg, size_t cap, const char *name, bool one, int idx, uint64_t v)
{
    if (one)
        add(msg, cap, "%s %llu", name, (unsigned long long)v);
    else
        add(msg, cap, "%s[%d] = %llu", name, idx, (unsigned long long)v);
}

/*
 * The pairs whose counts disagree, for the message (the rare path: the balance was not
 * zero and everything else agreed). Each rank learns what every rank sends it (one
 * alltoall of the counts) and compares with what it expects; then every rank gathers each
 * rank's first disagreement and how many it found, and writes the same message.
 */
static utc_status_t pairs_message(MPI_Comm comm, const int *world_ranks, const utc__coll_desc_t *d,
                                  const char *fn, uint64_t seq, char *msg, size_t cap)
{
    const utc__coll_pairs_t *p = d->pairs;
    int n = 0, me = 0;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    /* sent and got: n each; found: 4 per rank (how many, the first sender, its count, ours) */
    uint64_t *buf = malloc(sizeof *buf * 6 * (size_t)n);
    int have = buf != NULL, all_have = 0, err;
    if ((err = MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, comm)) != MPI_SUCCESS ||
        !all_have) {
        free(buf);
        if (err != MPI_SUCCESS)
            return utc__mpi_error(err, "MPI_Allreduce (argument check of a collective call)");
        snprintf(msg, cap,
                 "%s: the ranks disagree on the %s and %s of checked collective "
                 "call #%llu (out of memory for the details)",
                 fn, p->sends_name, p->expects_name, (unsigned long long)seq + 1);
        return UTC_OK;
    }
    uint64_t *sent = buf, *got = buf + n, *found = buf + 2 * n;
    for (int j = 0; j < n; j++)
        sent[j] = p->sends(p->arg, j);
    uint64_t mine[4] = {0, 0, 0, 0};
    MPI_Request req;
    utc_status_t rc = UTC_OK;
    if ((err = MPI_Ialltoall(sent, 1, MPI_UINT64_T, got, 1, MPI_UINT64_T, comm, &req)) ||
        (rc = utc__mpi_wait(&req, NULL, -1)) != UTC_OK)
        goto out;
    for (int i = 0; i < n; i++) {
        uint64_t want = p->expects(p->arg, i);
        if (got[i] != want && mine[0]++ == 0)
            mine[1] = (uint64_t)i, mine[2] = got[i], mine[3] = want;
    }
    if ((err = MPI_Iallgather(mine, 4, MPI_UINT64_T, found, 4, MPI_UINT64_T, comm, &req)) ||
        (rc = utc__mpi_wait(&req, NULL, -1)) != UTC_OK)
        goto out;
    snprintf(msg, cap, "%s: the ranks disagree (checked collective call #%llu): ", fn,
             (unsigned long long)seq + 1);
    uint64_t pairs = 0;
    int shown = 0;
    for (int j = 0; j < n; j++) {
        const uint64_t *f = found + 4 * (size_t)j;
        pairs += f[0];
        if (!f[0] || shown == 3)
            continue;
        int i = (int)f[1];
        add(msg, cap, "%srank %d sends %llu elements to rank %d (its ", shown++ ? "; " : "",
            world_ranks ? world_ranks[i] : i, (unsigned long long)f[2],
            world_ranks ? world_ranks[j] : j);
        add_count(msg, cap, p->sends_name, p->sends_one, j, f[2]);
        add(msg, cap, "), which expects %llu (its ", (unsigned long long)f[3]);
        add_count(msg, cap, p->expects_name, false, i, f[3]);
        add(msg, cap, ")");
    }
    if (pairs > (uint64_t)shown)
        add(msg, cap, " (and %llu more pairs)", (unsigned long long)(pairs - (uint64_t)shown));
    if (!pairs) /* the hashes disagree but no count does: cannot happen unless memory is bad */
        add(msg, cap, "the %s and %s do not match, but no pair was found", p->sends_name,
            p->expects_name);
    add(msg, cap,
        ". What rank i sends to rank j must be what rank j expects from rank i "
        "(group ranks index the arrays)");
out:
    free(buf);
    if (err != MPI_SUCCESS)
        return utc__mpi_error(err, "exchanging the counts (argument check of a collective "
                                   "call)");
    return rc;
}

/* Whether the direct round's records differ in the data sent with them. */
static bool data_differs(const uint64_t *records, int n)
{
    for (int r = 1; r < n; r++)
        if (records[(size_t)r * WD + R_TAG] != records[R_TAG])
            return true;
    return false;
}

/* The message when the ranks agree on everything but whether they sent data with the
 * check (d->nodata_name says what the others did). */
static void data_message(char *msg, size_t cap, const uint64_t *records, int n,
                         const int *world_ranks, const utc__coll_desc_t *d, const char *fn,
                         uint64_t seq)
{
    int first = world_ranks ? world_ranks[0] : 0;
    const char *what = d->nodata_name ? d->nodata_name : "how they move the data";
    snprintf(msg, cap, "%s: the ranks disagree (checked collective call #%llu of rank %d): ", fn,
             (unsigned long long)seq + 1, first);
    uint64_t all[DIRECT_MAX * K]; /* the data tags at index 0, for list_differing */
    for (int r = 0; r < n; r++)
        all[(size_t)r * K] = records[(size_t)r * WD + R_TAG];
    int count = list_differing(msg, cap, all, n, 0, world_ranks);
    /* the first rank sent data: the others did what nodata_name says */
    add(msg, cap, " differ%s from rank %d in %s: rank %d does%s", count == 1 ? "s" : "", first,
        what, first, records[R_TAG] ? " not" : "");
    add(msg, cap, ". Every rank must make the same collective calls, in the same order, with "
        "the same arguments");
}

/* The rare path: the ranks disagree. Every rank builds the same message and returns
 * UTC_ERR_MISMATCH with it (or UTC_ERR_MPI). */
static utc_status_t disagree(MPI_Comm comm, const int *world_ranks, const char *call,
                             const utc__coll_desc_t *d, const uint64_t *mine, const uint64_t *max,
                             const uint64_t *records)
{
    char fn[192]; /* the call as the message names it: with its task, if it has one */
    if (d->task)
        snprintf(fn, sizeof fn, "%s on task '%s'", call, d->task);
    else
        snprintf(fn, sizeof fn, "%s", call);
    bool words_agree = true;
    for (int i = 0; i < K; i++)
        words_agree &= max[i] == ~max[K + i];
    char msg[1024];
    utc_status_t rc;
    int n = 0, err;
    MPI_Comm_size(comm, &n);
    if (words_agree && records && data_differs(records, n)) {
        data_message(msg, sizeof msg, records, n, world_ranks, d, fn, max[1]);
        goto done;
    }
    if (words_agree) { /* only the pairs' balance: every rank has pairs (same call) */
        if ((rc = pairs_message(comm, world_ranks, d, fn, max[1], msg, sizeof msg)) != UTC_OK)
            return rc;
        goto done;
    }
    if (records) { /* every rank's record is here already (a direct exchange) */
        uint64_t all[DIRECT_MAX * K];
        for (int r = 0; r < n; r++)
            memcpy(all + (size_t)r * K, records + (size_t)r * WD, sizeof *all * K);
        describe(msg, sizeof msg, all, n, world_ranks, d, fn);
        goto done;
    }
    uint64_t *all = malloc(sizeof *all * K * (size_t)n);
    /* the gather only when every rank has room for it (a rare path: blocking is fine) */
    int have = all != NULL, all_have = 0;
    if ((err = MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, comm)) || !all_have) {
        free(all);
        return utc__error(UTC_ERR_MISMATCH, "%s: the ranks disagree on the call or its "
                          "arguments (checked collective call #%llu; out of memory for the "
                          "details). Every rank must make the same collective calls, in the "
                          "same order, with the same arguments", fn, (unsigned long long)max[1] + 1);
    }
    MPI_Request req;
    if ((err = MPI_Iallgather(mine, K, MPI_UINT64_T, all, K, MPI_UINT64_T, comm, &req)) ||
        (rc = utc__mpi_wait(&req, NULL, -1)) != UTC_OK) {
        free(all);
        return err ? utc__mpi_error(err, "MPI_Iallgather (argument check of a collective call)") : rc;
    }
    describe(msg, sizeof msg, all, n, world_ranks, d, fn);
    free(all);
done:
    if (d->args_rc != UTC_OK) { /* this rank's own complaint, which the mismatch replaces */
        char own[512]; /* a copy: utc__error writes where utc_last_error points */
        utc__text_copy(own, sizeof own, utc_last_error());
        return utc__error(UTC_ERR_MISMATCH, "%s (here: %s)", msg, own);
    }
    return utc__error(UTC_ERR_MISMATCH, "%s", msg);
}

/* A block that may travel in a record's message: where it is and its bytes. */
typedef struct {
    void *at;
    size_t bytes;
} block_t;

/* Post the direct round: this rank's record (WD words) to every other rank, with its block
 * for that rank behind it where bit r of inlined_to says so (to[r], staged in stage[r]),
 * and a receive of every other rank's (record and block, SLOT words) into inbox[r].
 * Requests into req (the receives first, in rank order), their number *nreq. */
static utc_status_t post_direct(MPI_Comm comm, int n, int me, const uint64_t *mine,
                                unsigned inlined_to, const block_t *to, uint64_t (*stage)[SLOT],
                                uint64_t (*inbox)[SLOT], MPI_Request *req, int *nreq)
{
    int err = MPI_SUCCESS;
    *nreq = 0;
    for (int r = 0; r < n && err == MPI_SUCCESS; r++)
        if (r != me)
            err = MPI_Irecv(inbox[r], SLOT * 8, MPI_BYTE, r, CHECK_TAG, comm, &req[(*nreq)++]);
    for (int r = 0; r < n && err == MPI_SUCCESS; r++) {
        if (r == me)
            continue;
        if (!(inlined_to >> r & 1u)) {
            err = MPI_Isend(mine, WD * 8, MPI_BYTE, r, CHECK_TAG, comm, &req[(*nreq)++]);
            continue;
        }
        memcpy(stage[r], mine, sizeof *mine * WD);
        if (to[r].bytes)
            memcpy(stage[r] + WD, to[r].at, to[r].bytes);
        err = MPI_Isend(stage[r], WD * 8 + (int)to[r].bytes, MPI_BYTE, r, CHECK_TAG, comm,
                        &req[(*nreq)++]);
    }
    if (err != MPI_SUCCESS) {
        (*nreq)--; /* the failed one made no request */
        return utc__mpi_error(err, "MPI_Isend/MPI_Irecv (argument check of a collective call)");
    }
    return UTC_OK;
}

/* Start the data that moves with the check (utc__coll_data_t). */
static void start_data(utc__coll_data_t *data, unsigned inlined_to, unsigned inlined_from)
{
    data->nreq = 0;
    data->err = data->start(data->arg, inlined_to, inlined_from, data->reqs, &data->nreq);
}

/*
 * The ranks disagree, and some sent data with their records (the direct round): leave
 * nothing on the communicator. For every other rank r, by the records: a data message r
 * sent this rank that it posted no receive for is received and dropped, and a receive r
 * posted for this rank that it sent nothing for gets an empty message. Then this rank's own
 * requests end (every one is matched now; a receive cut short by counts that disagree ends
 * in an error, dropped: the mismatch says it). A rank that sent no data posted nothing.
 */
static utc_status_t drop_data(MPI_Comm comm, int n, int me, const uint64_t *records,
                              utc__coll_data_t *data)
{
    uint64_t own = records[(size_t)me * WD + R_POSTED];
    MPI_Request req[DIRECT_MAX];
    int nreq = 0, err = MPI_SUCCESS;
    for (int r = 0; r < n && err == MPI_SUCCESS; r++) {
        int tag = (int)records[(size_t)r * WD + R_TAG];
        uint64_t posted = records[(size_t)r * WD + R_POSTED];
        if (r == me || !tag)
            continue;
        if ((posted >> (8 + me) & 1u) && !(own >> r & 1u)) {
            if ((err = MPI_Isend(NULL, 0, MPI_BYTE, r, tag, comm, &req[nreq])) != MPI_SUCCESS)
                break;
            nreq++;
        }
        if (!(posted >> me & 1u) || (own >> (8 + r) & 1u))
            continue;
        /* its message was sent before it waited for anything: the probe ends */
        MPI_Message m;
        MPI_Status st;
        int bytes = 0;
        if ((err = MPI_Mprobe(r, tag, comm, &m, &st)) != MPI_SUCCESS ||
            (err = MPI_Get_count(&st, MPI_BYTE, &bytes)) != MPI_SUCCESS)
            break;
        void *buf = malloc(bytes > 0 ? (size_t)bytes : 1);
        err = buf ? MPI_Mrecv(buf, bytes, MPI_BYTE, &m, MPI_STATUS_IGNORE)
                  : MPI_Mrecv(NULL, 0, MPI_BYTE, &m, MPI_STATUS_IGNORE); /* cut short */
        free(buf);
        if (!buf && err == MPI_ERR_TRUNCATE)
            err = MPI_SUCCESS;
    }
    for (int k = 0; k < nreq; k++)
        MPI_Wait(&req[k], MPI_STATUS_IGNORE);
    if (records[(size_t)me * WD + R_TAG]) {
        for (int k = 0; k < data->nreq; k++)
            MPI_Wait(&data->reqs[k], MPI_STATUS_IGNORE); /* its error: the mismatch says it */
        data->nreq = 0;
    }
    return err == MPI_SUCCESS ? UTC_OK
                              : utc__mpi_error(err, "dropping the data of a collective call whose "
                                                    "ranks disagree");
}

/* Which peers' blocks travel in the check's messages (utc__coll_data_t): into *to those
 * this rank sends so, into *from those it receives so, with the blocks (asked once: an
 * alltoallv's block without displacements is a sum over the counts before it). */
static void inline_blocks(const utc__coll_data_t *data, int n, int me, unsigned *to, unsigned *from,
                          block_t *sends, block_t *recvs)
{
    *to = *from = 0;
    if (!data || !data->block)
        return;
    for (int r = 0; r < n; r++) {
        if (r == me)
            continue;
        if ((sends[r].bytes = data->block(data->arg, r, true, &sends[r].at)) <=
            UTC__COLL_INLINE_MAX)
            *to |= 1u << r;
        if ((recvs[r].bytes = data->block(data->arg, r, false, &recvs[r].at)) <=
            UTC__COLL_INLINE_MAX)
            *from |= 1u << r;
    }
}

/*
 * The direct round (n <= DIRECT_MAX): every rank sends its record to every other, the data
 * (if any) right behind it, and compares all the records itself. `mine` holds this rank's
 * K words and balance (WD words of room).
 */
static utc_status_t check_direct(MPI_Comm comm, int n, int me, uint64_t *seq,
                                 const int *world_ranks, const char *fn, const utc__coll_desc_t *d,
                                 uint64_t *mine)
{
    utc__coll_data_t *data = d->data;
    block_t to[DIRECT_MAX], from[DIRECT_MAX];
    unsigned inl_to = 0, inl_from = 0, peers = ((1u << n) - 1) & ~(1u << me);
    inline_blocks(data, n, me, &inl_to, &inl_from, to, from);
    mine[R_TAG] = data ? (uint64_t)data->tag : 0;
    mine[R_POSTED] = data ? (peers & ~inl_to) | (peers & ~inl_from) << 8 : 0;
    /* the staged sends and the received records, with their blocks: a small block travels
     * in its pair's one message (utc__coll_data_t) */
    uint64_t stage[DIRECT_MAX][SLOT], inbox[DIRECT_MAX][SLOT];
    MPI_Request req[2 * DIRECT_MAX];
    MPI_Status st[2 * DIRECT_MAX];
    int nreq = 0;
    utc_status_t rc = post_direct(comm, n, me, mine, inl_to, to, stage, inbox, req, &nreq);
    if (rc == UTC_OK && data) /* the data leaves right behind the record */
        start_data(data, inl_to, inl_from);
    utc_status_t wrc = wait_meeting(nreq, req, st);
    if (rc != UTC_OK || (rc = wrc) != UTC_OK)
        return rc; /* the MPI failed: its data, if any, is the caller's to wait for */
    const uint64_t *rec[DIRECT_MAX]; /* every rank's record, read where it landed */
    for (int r = 0; r < n; r++)
        rec[r] = r == me ? mine : inbox[r];
    uint64_t balance = 0;
    bool agree = true;
    for (int r = 0; r < n; r++) {
        balance += rec[r][R_BAL]; /* wraps: the balance is a sum modulo 2^64 */
        for (int i = 0; i < K; i++)
            agree &= rec[r][i] == rec[0][i];
        agree &= rec[r][R_TAG] == rec[0][R_TAG];
    }
    if (!agree || balance != 0) {
        /* the rare path: every record in one array, and the maximum of each word and of
         * its complement as the allreduce makes them, for the message */
        uint64_t records[DIRECT_MAX * WD], max[W];
        for (int r = 0; r < n; r++)
            memcpy(records + (size_t)r * WD, rec[r], sizeof *records * WD);
        for (int i = 0; i < K; i++) {
            max[i] = max[K + i] = 0;
            for (int r = 0; r < n; r++) {
                max[i] = rec[r][i] > max[i] ? rec[r][i] : max[i];
                max[K + i] = ~rec[r][i] > max[K + i] ? ~rec[r][i] : max[K + i];
            }
        }
        max[2 * K] = balance;
        *seq = max[1] + 1;
        if ((rc = drop_data(comm, n, me, records, data)) != UTC_OK)
            return rc;
        return disagree(comm, world_ranks, fn, d, mine, max, records);
    }
    *seq = mine[1] + 1; /* the same on every rank */
    /* The ranks agree, so on every pair's count and datatype: each block inlined for this
     * rank has the size it expects (a difference here would take a 2^-64 collision of the
     * pairs' balance; it is reported, on this rank only, rather than copied) */
    for (int r = 0, k = 0; r < n; r++) {
        if (r == me)
            continue;
        const MPI_Status *rst = &st[k++]; /* the receives came first, in rank order */
        if (!(inl_from >> r & 1u))
            continue;
        int bytes = 0;
        if (MPI_Get_count(rst, MPI_BYTE, &bytes) != MPI_SUCCESS || bytes == MPI_UNDEFINED)
            bytes = WD * 8 - 1;
        if (bytes < WD * 8 || (size_t)(bytes - WD * 8) != from[r].bytes) {
            for (int j = 0; j < data->nreq; j++)
                MPI_Wait(&data->reqs[j], MPI_STATUS_IGNORE);
            data->nreq = 0;
            return utc__error(UTC_ERR_MISMATCH,
                              "%s: the ranks disagree (checked collective call #%llu): rank %d "
                              "sent %d bytes to rank %d, which expects %zu",
                              fn, (unsigned long long)mine[1] + 1, world_ranks ? world_ranks[r] : r,
                              bytes - WD * 8, world_ranks ? world_ranks[me] : me, from[r].bytes);
        }
        if (from[r].bytes)
            memcpy(from[r].at, inbox[r] + WD, from[r].bytes);
    }
    return UTC_OK;
}

/* Above DIRECT_MAX ranks: one nonblocking allreduce of every rank's K words, their
 * complements and its balance (W words: `mine`), then the data (if any). */
static utc_status_t check_reduced(MPI_Comm comm, uint64_t *seq, const int *world_ranks,
                                  const char *fn, const utc__coll_desc_t *d, uint64_t *mine)
{
    MPI_Datatype type;
    MPI_Op op;
    uint64_t max[W];
    utc_status_t rc = check_op(&type, &op);
    if (rc != UTC_OK)
        return rc;
    for (int i = 0; i < K; i++)
        mine[K + i] = ~mine[i];
    MPI_Request req;
    int err = MPI_Iallreduce(mine, max, 1, type, op, comm, &req);
    if (err != MPI_SUCCESS)
        return utc__mpi_error(err, "MPI_Iallreduce (argument check of a collective call)");
    if ((rc = wait_meeting(1, &req, NULL)) != UTC_OK)
        return rc;
    bool agree = max[2 * K] == 0;
    for (int i = 0; i < K; i++)
        agree &= max[i] == ~max[K + i]; /* the maximum equals the minimum */
    *seq = max[1] + 1;
    if (!agree)
        return disagree(comm, world_ranks, fn, d, mine, max, NULL);
    if (d->data) /* the ranks agree: now the data */
        start_data(d->data, 0, 0);
    return UTC_OK;
}

utc_status_t utc__coll_check(MPI_Comm comm, uint64_t *seq, const int *world_ranks, const char *fn,
                             const utc__coll_desc_t *d)
{
    pthread_once(&env_once, read_env);
    utc__coll_data_t *data = d->data;
    if (data)
        data->nreq = 0, data->err = MPI_SUCCESS;
    if (!check_on) {
        (*seq)++;
        if (data)
            start_data(data, 0, 0);
        return UTC_OK;
    }
    /* room for either form: the direct record (WD words) or the allreduce's (W) */
    uint64_t mine[(int)WD > (int)W ? (int)WD : (int)W];
    mine[0] = (uint64_t)d->call;
    mine[1] = *seq;
    mine[2] = (uint64_t)(int64_t)d->args_rc;
    for (int p = 0; p < UTC__CHECK_PARTS; p++)
        mine[3 + p] = d->part_name[p] && d->args_rc == UTC_OK ? d->part[p] : 0;
    int n = 0, me = 0;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    uint64_t balance = d->pairs && d->args_rc == UTC_OK ? pairs_balance(d->pairs, me, n) : 0;
    if (n <= DIRECT_MAX) {
        mine[R_BAL] = balance;
        return check_direct(comm, n, me, seq, world_ranks, fn, d, mine);
    }
    mine[2 * K] = balance;
    return check_reduced(comm, seq, world_ranks, fn, d, mine);
}
