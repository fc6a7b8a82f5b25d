/* Run statistics (UTC_STATS=1): the counters' updates and the table printed at finalize. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "base/text.h"
#include "observe/stats.h"

/* Counters of one conduit in one direction on one thread. */
struct utc__stats_conduit {
    int key; /* conduit id * 2 + (1 for reads) */
    uint64_t msgs, bytes, ns;
    UT_hash_handle hh;
};

/* What an event adds besides waiting time: busy time and runs, conduit traffic. */
static void account(utc__stats_thread_t *st, utc__ev_t ev, uint64_t dur_ns, int obj,
                    int64_t bytes)
{
    switch (ev) {
    case UTC__EV_TASK_RUN:
        st->runs++;
        /* fall through */
    case UTC__EV_TASK_INIT:
    case UTC__EV_TASK_FINI:
        st->busy_ns += dur_ns;
        break;
    case UTC__EV_CONDUIT_WRITE:
    case UTC__EV_CONDUIT_READ: {
        if (obj < 0)
            break;
        int key = obj * 2 + (ev == UTC__EV_CONDUIT_READ);
        utc__stats_conduit_t *c;
        HASH_FIND_INT(st->conduits, &key, c);
        if (!c) {
            if (!(c = calloc(1, sizeof *c)))
                break; /* out of memory: this message goes uncounted */
            c->key = key;
            HASH_ADD_INT(st->conduits, key, c);
        }
        c->msgs++;
        c->bytes += bytes > 0 ? (uint64_t)bytes : 0;
        c->ns += dur_ns;
        break;
    }
    default:
        break;
    }
}

void utc__stats_close(utc__stats_thread_t *st, utc__ev_t ev, bool waiting, uint64_t dur_ns,
                      int obj, int64_t bytes)
{
    if (st->depth <= 0)
        return; /* unbalanced hook: ignore rather than corrupt the counters */
    st->depth--;
    /* An outer wait covers the waits nested in it: its duration replaces what they added
     * since it opened, so nothing is counted twice. */
    if (waiting && st->depth < UTC__STATS_DEPTH)
        st->wait_ns = st->wait_at_open[st->depth] + dur_ns;
    account(st, ev, dur_ns, obj, bytes);
}

void utc__stats_leaf(utc__stats_thread_t *st, utc__ev_t ev, bool waiting, uint64_t dur_ns,
                     int obj, int64_t bytes)
{
    if (waiting)
        st->wait_ns += dur_ns;
    account(st, ev, dur_ns, obj, bytes);
}

void utc__stats_thread_fini(utc__stats_thread_t *st)
{
    utc__stats_conduit_t *c, *tmp;
    HASH_ITER(hh, st->conduits, c, tmp) {
        HASH_DEL(st->conduits, c);
        free(c);
    }
}

/* ---- the report ---- */

/* One task on one rank. Plain data: gathered as bytes (all ranks run the same binary). */
typedef struct task_row {
    int32_t task_id, rank, threads, pad;
    uint64_t runs, busy_ns, wait_ns;
    char name[UTC__STATS_NAME];
} task_row_t;

/* One conduit direction on one rank. */
typedef struct conduit_row {
    int32_t conduit, rank, is_read, pad;
    uint64_t msgs, bytes, ns;
    char transport[UTC__PROF_TRANSPORT]; /* on that rank (utc__prof_conduit) */
} conduit_row_t;

static int cmp_task(const void *a, const void *b)
{
    const task_row_t *x = a, *y = b;
    if (x->task_id != y->task_id)
        return x->task_id < y->task_id ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int cmp_conduit(const void *a, const void *b)
{
    const conduit_row_t *x = a, *y = b;
    if (x->conduit != y->conduit)
        return x->conduit < y->conduit ? -1 : 1;
    if (x->is_read != y->is_read)
        return x->is_read - y->is_read;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* This rank's rows: one per task (summed over its threads), one per conduit direction. */
static void local_rows(utc__stats_thread_t *const *threads, int n, int rank, task_row_t **tasks,
                       int *ntasks, conduit_row_t **conduits, int *nconduits)
{
    *tasks = NULL;
    *conduits = NULL;
    *ntasks = *nconduits = 0;
    int ncond_max = 0;
    for (int i = 0; i < n; i++)
        ncond_max += (int)HASH_COUNT(threads[i]->conduits);
    task_row_t *t = calloc((size_t)n + 1, sizeof *t);
    conduit_row_t *c = calloc((size_t)ncond_max + 1, sizeof *c);
    if (!t || !c) {
        free(t);
        free(c);
        return;
    }
    int nt = 0, nc = 0;
    for (int i = 0; i < n; i++) {
        const utc__stats_thread_t *st = threads[i];
        if (st->task_id >= 0) {
            int j = 0;
            while (j < nt && t[j].task_id != st->task_id)
                j++;
            if (j == nt) {
                t[nt].task_id = st->task_id;
                t[nt].rank = rank;
                memcpy(t[nt].name, st->task_name, sizeof t[nt].name);
                nt++;
            }
            t[j].threads++;
            t[j].busy_ns += st->busy_ns;
            t[j].wait_ns += st->wait_ns;
            if (st->runs > t[j].runs) /* every thread runs each command */
                t[j].runs = st->runs;
        }
        const utc__stats_conduit_t *sc;
        for (sc = st->conduits; sc; sc = sc->hh.next) {
            int id = sc->key / 2, rd = sc->key % 2, j = 0;
            while (j < nc && (c[j].conduit != id || c[j].is_read != rd))
                j++;
            if (j == nc) {
                c[nc].conduit = id;
                c[nc].is_read = rd;
                c[nc].rank = rank;
                utc__text_copy(c[nc].transport, sizeof c[nc].transport,
                               utc__prof_conduit_transport(id));
                nc++;
            }
            c[j].msgs += sc->msgs;
            c[j].bytes += sc->bytes;
            c[j].ns += sc->ns;
        }
    }
    *tasks = t;
    *conduits = c;
    *ntasks = nt;
    *nconduits = nc;
}

/* Gather `count` rows of `size` bytes from every rank onto rank 0 (NULL elsewhere). */
static void *gather_rows(MPI_Comm comm, const void *rows, int count, size_t size, int *total)
{
    int rank, nranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    int bytes = count * (int)size;
    int *lens = NULL, *displs = NULL;
    char *all = NULL;
    if (rank == 0) {
        lens = calloc((size_t)nranks, sizeof *lens);
        displs = calloc((size_t)nranks, sizeof *displs);
    }
    MPI_Gather(&bytes, 1, MPI_INT, lens, 1, MPI_INT, 0, comm);
    int sum = 0;
    if (rank == 0) {
        for (int r = 0; r < nranks; r++) {
            displs[r] = sum;
            sum += lens[r];
        }
        all = malloc((size_t)sum + 1);
    }
    MPI_Gatherv(rows, bytes, MPI_BYTE, all, lens, displs, MPI_BYTE, 0, comm);
    free(lens);
    free(displs);
    *total = rank == 0 ? sum / (int)size : 0;
    return all;
}

static double seconds(uint64_t ns) { return (double)ns * 1e-9; }

/* Characters of the task column. */
#define NAME_COLUMN 20

void utc__stats_report(MPI_Comm comm, utc__stats_thread_t *const *threads, int n,
                       double elapsed_s, FILE *out)
{
    int rank, nranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    task_row_t *tasks;
    conduit_row_t *conduits;
    int nt, nc;
    local_rows(threads, n, rank, &tasks, &nt, &conduits, &nc);
    int ntotal, nctotal;
    task_row_t *all_t = gather_rows(comm, tasks, nt, sizeof *tasks, &ntotal);
    conduit_row_t *all_c = gather_rows(comm, conduits, nc, sizeof *conduits, &nctotal);
    free(tasks);
    free(conduits);
    if (rank != 0)
        return;
    if (!all_t || !all_c) {
        fprintf(out, "[utc stats] out of memory: no report\n");
        free(all_t);
        free(all_c);
        return;
    }
    qsort(all_t, (size_t)ntotal, sizeof *all_t, cmp_task);
    qsort(all_c, (size_t)nctotal, sizeof *all_c, cmp_conduit);

    fprintf(out, "[utc stats] %d rank%s, %.3f s from utc_init to utc_finalize\n", nranks,
            nranks == 1 ? "" : "s", elapsed_s);
    fprintf(out, "[utc stats] %-*s %4s %4s %7s %6s %10s %10s %6s\n", NAME_COLUMN, "task",
            "id", "rank", "threads", "runs", "busy s", "waiting s", "wait%");
    for (int i = 0; i < ntotal; i++) {
        const task_row_t *r = &all_t[i];
        double busy = seconds(r->busy_ns), wait = seconds(r->wait_ns);
        /* the name escaped (one line per row, whatever it holds), 20 characters wide */
        char name[4 * NAME_COLUMN + 1];
        utc__text_column(name, sizeof name, r->name, NAME_COLUMN);
        fprintf(out, "[utc stats] %s %4" PRId32 " %4" PRId32 " %7" PRId32 " %6" PRIu64
                     " %10.6f %10.6f %6.1f\n",
                name, r->task_id, r->rank, r->threads, r->runs, busy, wait,
                busy > 0 ? 100.0 * wait / busy : 0.0);
    }
    if (ntotal == 0)
        fprintf(out, "[utc stats] (no task ran)\n");
    fprintf(out, "[utc stats] %-8s %4s %5s %10s %14s %14s %10s %s\n", "conduit", "id", "rank",
            "op", "messages", "bytes", "mean us", "transport");
    for (int i = 0; i < nctotal; i++) {
        const conduit_row_t *r = &all_c[i];
        fprintf(out, "[utc stats] %-8s %4" PRId32 " %5" PRId32 " %10s %14" PRIu64 " %14" PRIu64
                     " %10.3f %s\n",
                "conduit", r->conduit, r->rank, r->is_read ? "read" : "write", r->msgs,
                r->bytes, r->msgs ? (double)r->ns * 1e-3 / (double)r->msgs : 0.0,
                r->transport);
    }
    if (nctotal == 0)
        fprintf(out, "[utc stats] (no conduit message)\n");
    fflush(out);
    free(all_t);
    free(all_c);
}
