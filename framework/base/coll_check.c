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

/* On the wire: the call, the sequence number, the local argument check's status and the
 * parts, each also complemented. */
enum { K = 3 + UTC__CHECK_PARTS };

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
};

static uint64_t world_seq;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static int check_on = 1;

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

/* Wait for the check's allreduce: the ranks of a creation usually arrive close together,
 * and a late wake-up would be paid by every creation, so yield (not sleep) for the first
 * 5 ms; after that, wait with back-off like every other MPI wait (a rank far behind). */
static utc_status_t wait_meeting(MPI_Request *req)
{
    uint64_t start = utc__clock_ns();
    for (unsigned i = 0;; i++) {
        int done = 0, err = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS)
            return utc__mpi_error(err, "MPI_Test (argument check of a collective call)");
        if (done)
            return UTC_OK;
        if ((i & 63) == 63 && utc__clock_ns() - start > 5000000)
            return utc__mpi_wait(req, NULL, -1);
        sched_yield();
    }
}

utc_status_t utc__coll_check(MPI_Comm comm, uint64_t *seq, const int *world_ranks,
                             const char *fn, const utc__coll_desc_t *d)
{
    pthread_once(&env_once, read_env);
    if (!check_on) {
        (*seq)++;
        return UTC_OK;
    }
    uint64_t mine[2 * K], max[2 * K];
    mine[0] = (uint64_t)d->call;
    mine[1] = *seq;
    mine[2] = (uint64_t)(int64_t)d->args_rc;
    for (int p = 0; p < UTC__CHECK_PARTS; p++)
        mine[3 + p] = d->part_name[p] && d->args_rc == UTC_OK ? d->part[p] : 0;
    for (int i = 0; i < K; i++)
        mine[K + i] = ~mine[i];
    MPI_Request req;
    int err = MPI_Iallreduce(mine, max, 2 * K, MPI_UINT64_T, MPI_MAX, comm, &req);
    if (err != MPI_SUCCESS)
        return utc__mpi_error(err, "MPI_Iallreduce (argument check of a collective call)");
    utc_status_t rc = wait_meeting(&req);
    if (rc != UTC_OK)
        return rc;
    bool agree = true;
    for (int i = 0; i < K; i++)
        agree &= max[i] == ~max[K + i]; /* the maximum equals the minimum */
    *seq = max[1] + 1;
    if (agree)
        return UTC_OK;

    int n = 0;
    MPI_Comm_size(comm, &n);
    uint64_t *all = malloc(sizeof *all * K * (size_t)n);
    char msg[1024];
    /* the gather only when every rank has room for it (a rare path: blocking is fine) */
    int have = all != NULL, all_have = 0;
    if ((err = MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, comm)) || !all_have) {
        free(all);
        return utc__error(UTC_ERR_MISMATCH, "%s: the ranks disagree on the call or its "
                          "arguments (checked collective call #%llu; out of memory for the "
                          "details). Every rank must make the same collective calls, in the "
                          "same order, with the same arguments", fn, (unsigned long long)max[1] + 1);
    }
    if ((err = MPI_Iallgather(mine, K, MPI_UINT64_T, all, K, MPI_UINT64_T, comm, &req)) ||
        (rc = utc__mpi_wait(&req, NULL, -1)) != UTC_OK) {
        free(all);
        return err ? utc__mpi_error(err, "MPI_Iallgather (argument check of a collective call)") : rc;
    }
    describe(msg, sizeof msg, all, n, world_ranks, d, fn);
    free(all);
    if (d->args_rc != UTC_OK) { /* this rank's own complaint, which the mismatch replaces */
        char own[512]; /* a copy: utc__error writes where utc_last_error points */
        utc__text_copy(own, sizeof own, utc_last_error());
        return utc__error(UTC_ERR_MISMATCH, "%s (here: %s)", msg, own);
    }
    return utc__error(UTC_ERR_MISMATCH, "%s", msg);
}
