/*
 * The tracer (UTC_TRACE=file.json): per-thread event buffers filled by the profiling hooks
 * (trace.h), the clock alignment of the ranks at utc_init, and the Chrome trace-event file
 * written at utc_finalize (rank 0 writes; the other ranks stream their part to it).
 *
 * The per-thread records also carry the statistics' counters (stats.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <utc/version.h>

#include <utc/context.h>

#include "base/errors.h"
#include "base/text.h"
#include "observe/stats.h"
#include "observe/trace.h"

int utc__prof_flags;

/* Name, category (the trace's "cat") and whether an event is time spent waiting. */
static const struct {
    const char *name;
    const char *cat;
    bool waiting;
} ev_info[UTC__EV_COUNT] = {
    [UTC__EV_TASK_INIT] = {"init", "task", false},
    [UTC__EV_TASK_RUN] = {"run", "task", false},
    [UTC__EV_TASK_FINI] = {"fini", "task", false},
    [UTC__EV_TASK_CREATE] = {"task_create", "runtime", false},
    [UTC__EV_TASK_DESTROY] = {"task_destroy", "runtime", false},
    [UTC__EV_TASK_WAIT] = {"task_wait", "runtime", true},
    [UTC__EV_BARRIER_LOCAL] = {"barrier_local", "barrier", true},
    [UTC__EV_BARRIER] = {"barrier", "barrier", true},
    [UTC__EV_WORLD_BARRIER] = {"world_barrier", "barrier", true},
    [UTC__EV_CONDUIT_WRITE] = {"conduit_write", "conduit", true},
    [UTC__EV_CONDUIT_READ] = {"conduit_read", "conduit", true},
    [UTC__EV_CONDUIT_WAIT] = {"conduit_wait", "conduit", true},
    [UTC__EV_RMA_LOAD] = {"rma_load", "rma", true},
    [UTC__EV_RMA_STORE] = {"rma_store", "rma", true},
    [UTC__EV_RMA_ATOMIC] = {"rma_atomic", "rma", true},
    [UTC__EV_RMA_QUIET] = {"rma_quiet", "rma", true},
    [UTC__EV_RMA_BARRIER] = {"rma_barrier", "rma", true},
    [UTC__EV_RMA_WAIT] = {"rma_wait", "rma", true},
    [UTC__EV_COLL_BCAST] = {"bcast", "collective", true},
    [UTC__EV_COLL_GATHER] = {"gather", "collective", true},
    [UTC__EV_COLL_SCATTER] = {"scatter", "collective", true},
    [UTC__EV_COLL_REDUCE] = {"reduce", "collective", true},
    [UTC__EV_COLL_ALLREDUCE] = {"allreduce", "collective", true},
    [UTC__EV_COLL_ALLGATHER] = {"allgather", "collective", true},
    [UTC__EV_COLL_ALLTOALL] = {"alltoall", "collective", true},
    [UTC__EV_COLL_SCAN] = {"scan", "collective", true},
    [UTC__EV_GPU_H2D] = {"gpu_h2d", "gpu", true},
    [UTC__EV_GPU_D2H] = {"gpu_d2h", "gpu", true},
    [UTC__EV_GPU_SYNC] = {"gpu_sync", "gpu", true},
};

/* One recorded span. */
typedef struct ev_rec {
    uint64_t t0, dur; /* ns, this rank's clock */
    int64_t bytes;
    int32_t obj, tag, peer;
    uint16_t ev;
} ev_rec_t;

/* Everything profiled about one thread. Only that thread writes it until utc_finalize. */
typedef struct prof_thread {
    struct prof_thread *next;
    int tid;     /* its track on this rank: 0 the main thread, then 1, 2... */
    int global_id;
    char label[96];
    utc__stats_thread_t st;
    ev_rec_t *ev;
    size_t nev, cap;
    uint64_t dropped;
} prof_thread_t;

/* Default and largest bound on a thread's events (UTC_TRACE_EVENTS). */
#define DEFAULT_MAX_EVENTS ((size_t)1 << 18)
#define FIRST_EVENTS 1024

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static prof_thread_t *list_head, **list_tail = &list_head;
static int list_len, next_tid = 1;
static _Thread_local prof_thread_t *self;
static pthread_t main_thread;

/* Conduits' transports on this rank, by ascending id (ids grow with each creation), under
 * list_lock. */
typedef struct prof_conduit {
    int id;
    char transport[UTC__PROF_TRANSPORT];
} prof_conduit_t;
static prof_conduit_t *conduits;
static int nconduits, conduits_cap;

static char trace_path[4096];
static size_t max_events = DEFAULT_MAX_EVENTS;
static uint64_t init_ns;  /* this rank's clock at utc_init */
static uint64_t epoch_ns; /* this rank's clock at the trace's time 0 (aligned over ranks) */
static const char *clock_sync = "none";
static uint64_t sync_rtt_ns; /* largest best round trip of the ping-pongs (rank 0) */

/* The calling thread's record, made on first use. NULL when out of memory. */
static prof_thread_t *thread_record(int task_id, const char *task_name, int global_id,
                                    int local_id)
{
    prof_thread_t *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    bool is_main = task_id < 0 && pthread_equal(pthread_self(), main_thread);
    p->global_id = global_id;
    p->st.task_id = task_id;
    if (task_id >= 0) {
        /* cut whole characters: the trace and the table must stay valid UTF-8 */
        utc__text_copy(p->st.task_name, sizeof p->st.task_name, utc__text_name(task_name));
        snprintf(p->label, sizeof p->label, "%s #%d thread %d (local %d)", p->st.task_name,
                 task_id, global_id, local_id);
    }
    pthread_mutex_lock(&list_lock);
    p->tid = is_main ? 0 : next_tid++;
    if (task_id < 0)
        snprintf(p->label, sizeof p->label, is_main ? "main" : "thread %d", p->tid);
    *list_tail = p;
    list_tail = &p->next;
    list_len++;
    pthread_mutex_unlock(&list_lock);
    self = p;
    return p;
}

void utc__prof_conduit(int id, const char *transport)
{
    pthread_mutex_lock(&list_lock);
    if (nconduits == conduits_cap) {
        int cap = conduits_cap ? 2 * conduits_cap : 64;
        prof_conduit_t *more = realloc(conduits, sizeof *more * (size_t)cap);
        if (!more) { /* out of memory: the conduit goes unnamed ("-") */
            pthread_mutex_unlock(&list_lock);
            return;
        }
        conduits = more;
        conduits_cap = cap;
    }
    prof_conduit_t *c = &conduits[nconduits++];
    c->id = id;
    utc__text_copy(c->transport, sizeof c->transport, transport);
    pthread_mutex_unlock(&list_lock);
}

const char *utc__prof_conduit_transport(int id)
{
    const char *name = "-";
    pthread_mutex_lock(&list_lock);
    for (int lo = 0, hi = nconduits - 1; lo <= hi;) {
        int mid = lo + (hi - lo) / 2;
        if (conduits[mid].id == id) {
            name = conduits[mid].transport;
            break;
        }
        if (conduits[mid].id < id)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    pthread_mutex_unlock(&list_lock);
    return name;
}

void utc__prof_thread_start(int task_id, const char *task_name, int global_id, int local_id)
{
    if (UTC__PROF_ON())
        (void)thread_record(task_id, task_name, global_id, local_id);
}

uint64_t utc__prof_begin(void)
{
    prof_thread_t *p = self ? self : thread_record(-1, NULL, -1, -1);
    if (p)
        utc__stats_open(&p->st);
    return utc__prof_clock();
}

/* Append an event to the calling thread's buffer (trace on), growing it up to the bound. */
static void record(prof_thread_t *p, utc__ev_t ev, uint64_t t0, uint64_t dur, int obj,
                   int64_t bytes, int tag, int peer)
{
    if (p->nev == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : FIRST_EVENTS;
        if (cap > max_events)
            cap = max_events;
        ev_rec_t *grown = cap > p->cap ? realloc(p->ev, cap * sizeof *grown) : NULL;
        if (!grown) {
            p->dropped++; /* the buffer is full: keep the earliest events */
            return;
        }
        p->ev = grown;
        p->cap = cap;
    }
    p->ev[p->nev++] = (ev_rec_t){.t0 = t0, .dur = dur, .bytes = bytes, .obj = obj, .tag = tag,
                                 .peer = peer, .ev = (uint16_t)ev};
}

void utc__prof_span(utc__ev_t ev, uint64_t t0, int obj, int64_t bytes, int tag, int peer)
{
    uint64_t t1 = utc__prof_clock();
    prof_thread_t *p = self;
    if (!p || (unsigned)ev >= UTC__EV_COUNT)
        return;
    uint64_t dur = t1 > t0 ? t1 - t0 : 0;
    utc__stats_close(&p->st, ev, ev_info[ev].waiting, dur, obj, bytes);
    if (utc__prof_flags & UTC__PROF_TRACE)
        record(p, ev, t0, dur, obj, bytes, tag, peer);
}

void utc__prof_leaf(utc__ev_t ev, uint64_t t0, int obj, int64_t bytes, int tag, int peer)
{
    uint64_t t1 = utc__prof_clock();
    prof_thread_t *p = self ? self : thread_record(-1, NULL, -1, -1);
    if (!p || (unsigned)ev >= UTC__EV_COUNT)
        return;
    uint64_t dur = t1 > t0 ? t1 - t0 : 0;
    utc__stats_leaf(&p->st, ev, ev_info[ev].waiting, dur, obj, bytes);
    if (utc__prof_flags & UTC__PROF_TRACE)
        record(p, ev, t0, dur, obj, bytes, tag, peer);
}

/* ---- start: settings and clocks ---- */

/*
 * Align the ranks' clocks on rank 0's. Ranks on rank 0's node share its clock
 * (CLOCK_MONOTONIC is the kernel's): offset 0. For the others, rank 0 estimates the offset
 * by ping-pong, keeping the exchange with the smallest round trip (offset = remote time -
 * midpoint of the round trip): precise to half that round trip, which is recorded.
 * UTC_TRACE_SYNC=pingpong uses ping-pong for every rank (to test it on one node).
 */
static void sync_clocks(MPI_Comm comm, int rank, int nranks, bool force_pingpong)
{
    enum { MIN_ROUNDS = 4, MAX_ROUNDS = 64, TAG = 0x7ace };
    const uint64_t good_rtt_ns = 20000, max_sync_ns = 200000000; /* 20 us; 0.2 s a rank */
    int64_t offset = 0; /* this rank's clock minus rank 0's */
    uint64_t worst_rtt = 0;

    /* who shares rank 0's node: the smallest world rank of each node's group */
    int on_zero_node = 1;
    MPI_Comm node;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        int lowest;
        MPI_Allreduce(&rank, &lowest, 1, MPI_INT, MPI_MIN, node);
        on_zero_node = lowest == 0;
        MPI_Comm_free(&node);
    }
    int need = force_pingpong || !on_zero_node;
    for (int r = 1; r < nranks; r++) {
        int r_need = 0;
        /* rank 0 learns, rank by rank, who needs an exchange (no array to allocate) */
        if (rank == r)
            MPI_Send(&need, 1, MPI_INT, 0, TAG, comm);
        else if (rank == 0)
            MPI_Recv(&r_need, 1, MPI_INT, r, TAG, comm, MPI_STATUS_IGNORE);
        if (rank == 0 && r_need) {
            uint64_t best = UINT64_MAX, begin = utc__prof_clock();
            int64_t off_r = 0;
            int go = 1;
            for (int k = 0; go; k++) {
                uint64_t remote, a = utc__prof_clock();
                MPI_Send(&go, 1, MPI_INT, r, TAG, comm);
                MPI_Recv(&remote, 1, MPI_UINT64_T, r, TAG, comm, MPI_STATUS_IGNORE);
                uint64_t b = utc__prof_clock();
                if (b - a < best) {
                    best = b - a;
                    off_r = (int64_t)remote - (int64_t)(a + (b - a) / 2);
                }
                /* enough once a round trip was short, or after the bounds */
                go = k + 1 < MAX_ROUNDS && b - begin < max_sync_ns &&
                     (k + 1 < MIN_ROUNDS || best > good_rtt_ns);
            }
            MPI_Send(&go, 1, MPI_INT, r, TAG, comm); /* 0: done */
            int64_t result[2] = {off_r, (int64_t)best};
            MPI_Send(result, 2, MPI_INT64_T, r, TAG, comm);
        } else if (rank == r && need) {
            for (;;) {
                int go;
                MPI_Recv(&go, 1, MPI_INT, 0, TAG, comm, MPI_STATUS_IGNORE);
                if (!go)
                    break;
                uint64_t now = utc__prof_clock();
                MPI_Send(&now, 1, MPI_UINT64_T, 0, TAG, comm);
            }
            int64_t result[2];
            MPI_Recv(result, 2, MPI_INT64_T, 0, TAG, comm, MPI_STATUS_IGNORE);
            offset = result[0];
            worst_rtt = (uint64_t)result[1];
        }
    }
    MPI_Reduce(rank == 0 ? MPI_IN_PLACE : &worst_rtt, &worst_rtt, 1, MPI_UINT64_T, MPI_MAX, 0,
               comm);
    uint64_t zero = utc__prof_clock(); /* rank 0's is the one kept */
    MPI_Bcast(&zero, 1, MPI_UINT64_T, 0, comm);
    epoch_ns = (uint64_t)((int64_t)zero + offset);
    sync_rtt_ns = worst_rtt;
    clock_sync = nranks == 1 ? "none (one rank)"
                 : force_pingpong ? "ping-pong offset to rank 0 (forced)"
                                  : "shared clock on rank 0's node, ping-pong offset elsewhere";
}

void utc__prof_init(MPI_Comm comm)
{
    int rank, nranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    /* Rank 0's environment decides for all: every rank must agree, and a multi-host
     * launch does not always pass the environment on. */
    struct {
        int flags;
        int force_pingpong;
        long long max_events;
        char path[sizeof trace_path];
    } cfg = {0, 0, (long long)DEFAULT_MAX_EVENTS, ""};
    if (rank == 0) {
        const char *trace = getenv("UTC_TRACE"), *stats = getenv("UTC_STATS");
        const char *maxev = getenv("UTC_TRACE_EVENTS"), *sync = getenv("UTC_TRACE_SYNC");
        cfg.force_pingpong = sync && strcmp(sync, "pingpong") == 0;
        if (trace && *trace) {
            if (strlen(trace) >= sizeof cfg.path)
                utc_log(UTC_LOG_WARN, "UTC_TRACE: path too long; not tracing");
            else {
                cfg.flags |= UTC__PROF_TRACE;
                strcpy(cfg.path, trace);
                struct stat st; /* said now rather than after the run (see tf_open) */
                if (lstat(trace, &st) == 0 && S_ISLNK(st.st_mode))
                    utc_log(UTC_LOG_WARN, "UTC_TRACE='%s' is a symbolic link: the trace will "
                            "not be written through it (name the file itself)", trace);
            }
        }
        if (stats && *stats && strcmp(stats, "0") != 0 && strcmp(stats, "off") != 0)
            cfg.flags |= UTC__PROF_STATS;
        if (maxev && *maxev) {
            char *end;
            long long v = strtoll(maxev, &end, 10);
            if (*end || v < 1)
                utc_log(UTC_LOG_WARN, "UTC_TRACE_EVENTS='%s' is not a positive number; "
                                      "using %zu", maxev, DEFAULT_MAX_EVENTS);
            else
                cfg.max_events = v;
        }
    }
    MPI_Bcast(&cfg, (int)sizeof cfg, MPI_BYTE, 0, comm);
    main_thread = pthread_self();
    init_ns = utc__prof_clock();
    if (!cfg.flags)
        return;
    max_events = (size_t)cfg.max_events;
    memcpy(trace_path, cfg.path, sizeof trace_path);
    if (cfg.flags & UTC__PROF_TRACE)
        sync_clocks(comm, rank, nranks, cfg.force_pingpong);
    utc__prof_flags = cfg.flags; /* before any task thread exists: see trace.h */
}

/* ---- end: the trace file ---- */

/* A growing string. On allocation failure it stops growing and remembers it. */
typedef struct sbuf {
    char *s;
    size_t len, cap;
    bool failed;
} sbuf_t;

/* Room for n more bytes and a NUL; false (and failed set) when out of memory. */
static bool sb_reserve(sbuf_t *b, size_t n)
{
    if (b->failed)
        return false;
    if (b->cap - b->len > n)
        return true;
    size_t cap = b->cap ? b->cap * 2 : 1 << 16;
    while (cap - b->len <= n)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->failed = true;
        return false;
    }
    b->s = s;
    b->cap = cap;
    return true;
}

__attribute__((format(printf, 2, 3))) static void sb_printf(sbuf_t *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = b->failed ? -1 : vsnprintf(b->s ? b->s + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0)
            return;
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        if (!sb_reserve(b, (size_t)n))
            return;
    }
}

/* The body of a JSON string (base/text.h: ASCII, whatever bytes s holds). */
static void sb_json_str(sbuf_t *b, const char *s)
{
    size_t len = strlen(s), need = utc__text_escape(NULL, 0, s, len, UTC__TEXT_JSON);
    if (sb_reserve(b, need))
        b->len += utc__text_escape(b->s + b->len, b->cap - b->len, s, len, UTC__TEXT_JSON);
}

/* Microseconds since the trace's time 0, with nanosecond digits. */
static void sb_us(sbuf_t *b, int64_t ns)
{
    const char *sign = ns < 0 ? "-" : "";
    uint64_t a = ns < 0 ? (uint64_t)-ns : (uint64_t)ns;
    sb_printf(b, "%s%" PRIu64 ".%03u", sign, a / 1000, (unsigned)(a % 1000));
}

static void fragment_thread(sbuf_t *b, int rank, const prof_thread_t *p)
{
    sb_printf(b, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                 "\"args\":{\"name\":\"", rank, p->tid);
    sb_json_str(b, p->label);
    sb_printf(b, "\"}},\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                 "\"args\":{\"sort_index\":%d}}", rank, p->tid, p->tid);
    for (size_t i = 0; i < p->nev; i++) {
        const ev_rec_t *e = &p->ev[i];
        const char *cat = ev_info[e->ev].cat;
        sb_printf(b, ",\n{\"name\":\"");
        if (!strcmp(cat, "task") && p->st.task_id >= 0) {
            sb_json_str(b, p->st.task_name);
            sb_printf(b, ".");
        }
        sb_printf(b, "%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":",
                  ev_info[e->ev].name, cat, rank, p->tid);
        sb_us(b, (int64_t)(e->t0 - epoch_ns));
        sb_printf(b, ",\"dur\":");
        sb_us(b, (int64_t)e->dur);
        const char *obj = !strcmp(cat, "conduit") ? "conduit"
                          : !strcmp(cat, "gpu")   ? "device"
                                                  : "task";
        sb_printf(b, ",\"args\":{\"%s\":%" PRId32, obj, e->obj);
        if (e->bytes >= 0)
            sb_printf(b, ",\"bytes\":%" PRId64, e->bytes);
        if (e->tag >= 0)
            sb_printf(b, ",\"tag\":%" PRId32, e->tag);
        if (e->peer >= 0)
            sb_printf(b, ",\"%s\":%" PRId32, e->ev >= UTC__EV_COLL_BCAST &&
                                                   e->ev <= UTC__EV_COLL_SCAN ? "root"
                                                                                   : "peer",
                      e->peer);
        sb_printf(b, "}}");
    }
}

/* This rank's part of traceEvents: its process metadata, then each thread's track. */
static void fragment(sbuf_t *b, int rank, uint64_t *dropped)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    sb_printf(b, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                 "\"args\":{\"name\":\"rank %d (", rank, rank);
    sb_json_str(b, host);
    sb_printf(b, ")\"}},\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                 "\"args\":{\"sort_index\":%d}}", rank, rank);
    /* each conduit's transport(s) on this rank: a metadata record per conduit */
    for (int i = 0; i < nconduits; i++) {
        sb_printf(b, ",\n{\"name\":\"conduit_transport\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                     "\"args\":{\"conduit\":%d,\"transport\":\"", rank, conduits[i].id);
        sb_json_str(b, conduits[i].transport);
        sb_printf(b, "\"}}");
    }
    for (const prof_thread_t *p = list_head; p; p = p->next) {
        fragment_thread(b, rank, p);
        *dropped += p->dropped;
    }
}

/*
 * The trace file. A new file is written under a temporary name beside the target
 * (O_CREAT | O_EXCL | O_NOFOLLOW: a fresh file, never through a link), flushed to disk and
 * renamed over the target once whole: a reader never sees half a trace, and a failure
 * (a full disk, a write or rename error) leaves the target as it was and no temporary
 * file. A symbolic link at the target is refused, the link and what it points to left
 * untouched. A character device or a FIFO (/dev/null, a named pipe) is written in place.
 */
typedef struct tfile {
    FILE *f;
    bool in_place; /* a device or a FIFO: no temporary file */
    int err;       /* errno of the first failed step; 0 while all goes well */
    const char *step;
    char tmp[sizeof trace_path + 48];
} tfile_t;

static void tf_fail(tfile_t *t, const char *step)
{
    if (!t->err) {
        t->err = errno ? errno : EIO;
        t->step = step;
    }
}

/* Open the trace's destination. On failure returns UTC_ERR_IO with the message set. */
static utc_status_t tf_open(tfile_t *t, const char *path)
{
    *t = (tfile_t){0};
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (S_ISLNK(st.st_mode))
            return utc__error(UTC_ERR_IO, "UTC_TRACE='%s' is a symbolic link: UTC does not "
                              "write through links (it would overwrite the file the link "
                              "points to); name the file itself, or remove the link", path);
        if (S_ISDIR(st.st_mode))
            return utc__error(UTC_ERR_IO, "UTC_TRACE='%s' is a directory: name a file", path);
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
            /* no O_CREAT, O_TRUNC: a stream, written from where it is */
            int fd = open(path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
            if (fd >= 0 && (fstat(fd, &st) != 0 || S_ISREG(st.st_mode))) {
                close(fd); /* replaced by a file meanwhile: not overwritten in place */
                fd = -1;
                errno = EAGAIN;
            }
            if (fd < 0 || !(t->f = fdopen(fd, "w"))) {
                int e = errno;
                if (fd >= 0)
                    close(fd);
                return utc__error(UTC_ERR_IO, "UTC_TRACE='%s': cannot open it for writing (%s)",
                                  path, strerror(e));
            }
            t->in_place = true;
            return UTC_OK;
        }
        if (!S_ISREG(st.st_mode))
            return utc__error(UTC_ERR_IO, "UTC_TRACE='%s' is not a regular file, a character "
                              "device or a FIFO", path);
    } else if (errno != ENOENT) {
        return utc__error(UTC_ERR_IO, "UTC_TRACE='%s': cannot examine it (%s)", path,
                          strerror(errno));
    }
    int fd = -1;
    for (unsigned k = 0; fd < 0 && k < 100; k++) {
        snprintf(t->tmp, sizeof t->tmp, "%s.utc-%ld-%u.tmp", path, (long)getpid(), k);
        /* mode as an fopen "w" of a new file gives: 0666 less the umask */
        fd = open(t->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0 || !(t->f = fdopen(fd, "w"))) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
            unlink(t->tmp);
        }
        return utc__error(UTC_ERR_IO, "UTC_TRACE='%s': cannot create the file '%s' to write "
                          "the trace in (%s)", path, t->tmp, strerror(e));
    }
    return UTC_OK;
}

static void tf_write(tfile_t *t, const void *p, size_t n)
{
    errno = 0;
    if (t->f && !t->err && n > 0 && fwrite(p, 1, n, t->f) != n)
        tf_fail(t, "writing");
}

static void tf_puts(tfile_t *t, const char *s) { tf_write(t, s, strlen(s)); }

/* Finish the file: flush, sync and rename into place, or remove what was written. */
static utc_status_t tf_close(tfile_t *t, const char *path)
{
    errno = 0;
    if (!t->err && fflush(t->f) != 0)
        tf_fail(t, "writing");
    if (!t->err && !t->in_place && fsync(fileno(t->f)) != 0)
        tf_fail(t, "syncing it to disk");
    errno = 0;
    if (fclose(t->f) != 0)
        tf_fail(t, "closing");
    t->f = NULL;
    if (!t->err && !t->in_place && rename(t->tmp, path) != 0)
        tf_fail(t, "renaming it into place");
    if (!t->err)
        return UTC_OK;
    if (t->in_place)
        return utc__error(UTC_ERR_IO, "UTC_TRACE='%s': the trace could not be written: %s "
                          "failed (%s); what it received is incomplete", path, t->step,
                          strerror(t->err));
    unlink(t->tmp);
    return utc__error(UTC_ERR_IO, "UTC_TRACE='%s': the trace could not be written: %s "
                      "failed (%s); no partial trace left, the path is as it was", path,
                      t->step, strerror(t->err));
}

enum { FRAG_TAG = 0x7acf };
#define CHUNK ((size_t)1 << 20)
/* Rank 0's receive buffer; untouched pages of it cost no memory. */
static char recv_chunk[CHUNK];

/* Write the trace (rank 0 gathers the ranks' parts). Returns rank 0's status on rank 0,
 * UTC_OK elsewhere. Collective. */
static utc_status_t write_trace(MPI_Comm comm, int rank, int nranks)
{
    sbuf_t b = {0};
    uint64_t dropped = 0, total_dropped = 0, nev = 0, total_nev = 0;
    fragment(&b, rank, &dropped);
    for (const prof_thread_t *p = list_head; p; p = p->next)
        nev += p->nev;
    if (b.failed) {
        utc_log(UTC_LOG_WARN, "trace: out of memory; rank %d's events are left out", rank);
        b.len = 0;
    }
    MPI_Reduce(&dropped, &total_dropped, 1, MPI_UINT64_T, MPI_SUM, 0, comm);
    MPI_Reduce(&nev, &total_nev, 1, MPI_UINT64_T, MPI_SUM, 0, comm);
    uint64_t len = b.len;
    if (rank != 0) {
        /* stream this rank's part to rank 0 in chunks: no int overflow, no big gather */
        MPI_Send(&len, 1, MPI_UINT64_T, 0, FRAG_TAG, comm);
        for (size_t off = 0; off < b.len; off += CHUNK) {
            size_t n = b.len - off < CHUNK ? b.len - off : CHUNK;
            MPI_Send(b.s + off, (int)n, MPI_CHAR, 0, FRAG_TAG, comm);
        }
        free(b.s);
        return UTC_OK;
    }
    tfile_t tf;
    utc_status_t rc = tf_open(&tf, trace_path);
    bool any = b.len > 0; /* a part has been written: the next one needs a comma */
    tf_puts(&tf, "{\"traceEvents\":[\n");
    tf_write(&tf, b.s, b.len);
    /* the other ranks' parts are received even when they cannot be written */
    for (int r = 1; r < nranks; r++) {
        uint64_t rlen;
        MPI_Recv(&rlen, 1, MPI_UINT64_T, r, FRAG_TAG, comm, MPI_STATUS_IGNORE);
        if (any && rlen > 0)
            tf_puts(&tf, ",\n");
        any = any || rlen > 0;
        for (uint64_t off = 0; off < rlen; off += CHUNK) {
            int n = (int)(rlen - off < CHUNK ? rlen - off : CHUNK);
            MPI_Recv(recv_chunk, n, MPI_CHAR, r, FRAG_TAG, comm, MPI_STATUS_IGNORE);
            tf_write(&tf, recv_chunk, (size_t)n);
        }
    }
    free(b.s);
    char tail[512];
    snprintf(tail, sizeof tail,
             "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"utc_version\":\"%s\","
             "\"ranks\":%d,\"clock_sync\":\"%s\",\"clock_sync_rtt_us\":%.3f,"
             "\"events\":%" PRIu64 ",\"dropped_events\":%" PRIu64 "}}\n",
             utc_version_string(), nranks, clock_sync, (double)sync_rtt_ns * 1e-3, total_nev,
             total_dropped);
    tf_puts(&tf, tail);
    if (rc == UTC_OK)
        rc = tf_close(&tf, trace_path);
    if (rc != UTC_OK)
        utc_log(UTC_LOG_ERROR, "trace: %s", utc_last_error());
    else
        utc_log(UTC_LOG_INFO, "trace: %" PRIu64 " events written to %s", total_nev, trace_path);
    if (total_dropped > 0)
        utc_log(UTC_LOG_WARN, "trace: %" PRIu64 " events did not fit in the per-thread "
                              "buffers and were left out (raise UTC_TRACE_EVENTS, now %zu)",
                total_dropped, max_events);
    return rc;
}

utc_status_t utc__prof_finalize(MPI_Comm comm)
{
    int flags = utc__prof_flags;
    if (!flags)
        return UTC_OK;
    /* every task thread has been joined (utc__task_destroy_all): no hook runs any more */
    utc__prof_flags = 0;
    int rank, nranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    if (flags & UTC__PROF_STATS) {
        utc__stats_thread_t **st = calloc((size_t)list_len + 1, sizeof *st);
        int n = 0;
        for (prof_thread_t *p = list_head; p && st; p = p->next)
            st[n++] = &p->st;
        utc__stats_report(comm, st, n, (double)(utc__prof_clock() - init_ns) * 1e-9, stderr);
        free(st);
    }
    utc_status_t rc = UTC_OK;
    if (flags & UTC__PROF_TRACE) {
        int status = write_trace(comm, rank, nranks);
        /* every rank returns rank 0's outcome: a lost trace fails utc_finalize everywhere */
        MPI_Bcast(&status, 1, MPI_INT, 0, comm);
        rc = (utc_status_t)status;
        if (rc != UTC_OK && rank != 0)
            utc__error(rc, "UTC_TRACE='%s': rank 0 could not write the trace (its log says "
                       "why)", trace_path);
    }
    prof_thread_t *p = list_head;
    while (p) {
        prof_thread_t *next = p->next;
        utc__stats_thread_fini(&p->st);
        free(p->ev);
        free(p);
        p = next;
    }
    list_head = NULL;
    list_tail = &list_head;
    list_len = 0;
    self = NULL;
    free(conduits);
    conduits = NULL;
    nconduits = conduits_cap = 0;
    return rc;
}
