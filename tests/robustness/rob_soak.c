/*
 * rob_soak: a stress test of conduits (ctest label `stress`).
 *
 *   scripts/utcrun -np 3 rob_soak [--messages N] [--conduits M] [--tags T] [--window W]
 *
 * Every rank r holds a producer task P_r and a consumer task C_r of 4 threads each. Each
 * producer thread owns one stream of messages: threads 0 and 1 send to C_r (in-process
 * rings), threads 2 and 3 to C_{r+1} (MPI; in-process too on one rank). A stream spreads
 * its messages over M conduits of its own and T tags, with random sizes (mostly small,
 * some over the inline threshold, a few up to 64 KiB), chosen by a generator both ends
 * replay, so the consumer knows which conduit and tag carry message i. The consumer reads
 * them with windows of W asynchronous reads and checks each one's header (stream, index,
 * tag, size) and checksum: nothing lost, duplicated, corrupted or reordered within a tag.
 * It grants the producer credit every CREDIT messages on the back direction (so no end
 * buffers without bound), and at the end every conduit and tag must be empty.
 *
 * The main thread samples this rank's resident memory (VmRSS) while the tasks run: after
 * warm-up (20% of this rank's messages) it must not grow by 10% or more when that is 4 MiB
 * or more. (Over TCP, between network namespaces, Open MPI's buffers grow once by 2-3 MiB
 * in about one run in five, when a burst comes after a rank's warm-up: a step, not a leak.
 * A leak of 80 bytes per message after warm-up, 53,000 messages per rank in the multi-host
 * run, is 4 MiB.)
 * Exit 0 on success on every rank; 1 otherwise (the reasons on stderr).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <utc/utc.h>

#define THREADS 4         /* threads per task */
#define MAX_CONDUITS 16   /* per stream */
#define MAX_WINDOW 64
#define MAX_MSG 65536
#define CREDIT 256        /* messages per credit message */
#define CREDIT_TAG 4000   /* back direction, conduit 0 of the stream */
#define STALL_S 60        /* no progress for this long: fail */

typedef struct {
    uint64_t index;
    uint32_t stream, tag, size, pad;
    uint64_t checksum;    /* of the bytes after the header */
} msg_hdr_t;

typedef struct {
    utc_task_t base;
} soak_task_t;

static long total_messages = 1000000;
static int nconduits = 3, ntags = 8, window = 8;
static int nranks, me, nstreams;
static utc_conduit_t *conduits[64 * THREADS][MAX_CONDUITS]; /* [stream][m] */

static atomic_long received_here;   /* messages checked by this rank's consumers */
static atomic_int threads_done;     /* task threads of this rank whose run returned */
static atomic_int failures;

#define FAIL(...)                                                                         \
    do {                                                                                  \
        if (atomic_fetch_add(&failures, 1) < 20) {                                        \
            fprintf(stderr, "rob_soak: rank %d: ", me);                                   \
            fprintf(stderr, __VA_ARGS__);                                                 \
            fprintf(stderr, "\n");                                                        \
        }                                                                                 \
    } while (0)

/* ---- what both ends replay ---- */

static inline uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

typedef struct {
    int conduit, tag;
    uint32_t size;
    uint64_t seed;
} msg_plan_t;

static msg_plan_t plan_of(int stream, uint64_t i)
{
    uint64_t r = mix64(((uint64_t)stream << 40) ^ i);
    msg_plan_t p;
    p.conduit = (int)(r % (uint64_t)nconduits);
    p.tag = (int)((r >> 8) % (uint64_t)ntags);
    unsigned cls = (unsigned)((r >> 16) % 1000), v = (unsigned)(r >> 32);
    if (cls < 900)
        p.size = sizeof(msg_hdr_t) + v % 225;             /* 32 .. 256 bytes */
    else if (cls < 990)
        p.size = 257 + v % (4096 - 257 + 1);              /* up to the inline threshold */
    else
        p.size = 4097 + v % (MAX_MSG - 4097 + 1);         /* reader-copies path */
    p.seed = mix64(r);
    return p;
}

static uint64_t checksum(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static void fill(unsigned char *buf, int stream, uint64_t i, const msg_plan_t *p)
{
    msg_hdr_t h = {.index = i, .stream = (uint32_t)stream, .tag = (uint32_t)p->tag,
                   .size = p->size};
    unsigned char *body = buf + sizeof h;
    size_t n = p->size - sizeof h;
    uint64_t x = p->seed;
    for (size_t k = 0; k < n; k += 8) {
        x = mix64(x);
        memcpy(body + k, &x, n - k < 8 ? n - k : 8);
    }
    h.checksum = checksum(body, n);
    memcpy(buf, &h, sizeof h);
}

static long stream_messages(int s)
{
    long base = total_messages / nstreams, extra = total_messages % nstreams;
    return base + (s < extra);
}

/* Stream of producer thread t of P_r, and where it goes. */
static int stream_of_producer(int r, int t) { return r * THREADS + t; }
static int consumer_rank_of(int s)
{
    int r = s / THREADS, t = s % THREADS;
    return t < 2 ? r : (r + 1) % nranks;
}
/* The stream that consumer thread t of C_d reads. */
static int stream_of_consumer(int d, int t)
{
    return t < 2 ? d * THREADS + t : ((d - 1 + nranks) % nranks) * THREADS + t;
}

/* ---- tasks ---- */

static int producer_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)arg;
    int t = ctx->local_id, s = stream_of_producer(me, t);
    long n = stream_messages(s);
    unsigned char *buf = malloc(MAX_MSG);
    int rc = UTC_OK;
    if (!buf) {
        FAIL("producer: out of memory");
        rc = UTC_ERR_NO_MEMORY;
    }
    for (long i = 0; rc == UTC_OK && i < n; i++) {
        if (i % CREDIT == 0 && i >= 2 * CREDIT) {
            /* at most two credits ahead of the consumer */
            int64_t granted = 0;
            size_t got = 0;
            rc = utc_conduit_read_by(conduits[s][0], t, &granted, sizeof granted, CREDIT_TAG,
                                     &got);
            if (rc != UTC_OK) {
                FAIL("stream %d: credit read: %s", s, utc_last_error());
                break;
            }
            if (got != sizeof granted || granted != i / CREDIT - 2) {
                FAIL("stream %d: credit %" PRId64 " (%zu bytes), expected %ld", s, granted,
                     got, i / CREDIT - 2);
                rc = UTC_ERR_INTERNAL;
                break;
            }
        }
        msg_plan_t p = plan_of(s, (uint64_t)i);
        fill(buf, s, (uint64_t)i, &p);
        utc_conduit_t *c = conduits[s][p.conduit];
        if (i % 7 == 3) {
            utc_request_t *req;
            rc = utc_conduit_iwrite(c, buf, p.size, p.tag, &req);
            if (rc == UTC_OK)
                rc = utc_request_wait(&req, NULL);
        } else {
            rc = utc_conduit_write_by(c, t, buf, p.size, p.tag);
        }
        if (rc != UTC_OK)
            FAIL("stream %d: write %ld: %s", s, i, utc_last_error());
    }
    free(buf);
    atomic_fetch_add(&threads_done, 1);
    return rc;
}

static int check_message(int s, uint64_t i, const msg_plan_t *p, const unsigned char *buf,
                         size_t got)
{
    msg_hdr_t h;
    if (got != p->size) {
        FAIL("stream %d message %" PRIu64 " (tag %d): %zu bytes, expected %u", s, i, p->tag,
             got, p->size);
        return -1;
    }
    memcpy(&h, buf, sizeof h);
    if (h.stream != (uint32_t)s || h.index != i || h.tag != (uint32_t)p->tag ||
        h.size != p->size) {
        FAIL("stream %d, tag %d: expected message %" PRIu64 ", got stream %u message %" PRIu64
             " tag %u size %u (lost, duplicated or reordered)", s, p->tag, i, h.stream,
             h.index, h.tag, h.size);
        return -1;
    }
    if (checksum(buf + sizeof h, got - sizeof h) != h.checksum) {
        FAIL("stream %d message %" PRIu64 ": checksum mismatch (corrupted)", s, i);
        return -1;
    }
    return 0;
}

static int drain_run(utc_ctx_t *ctx);
static char drain_cmd; /* utc_task_run's argument that asks the consumers to drain */

static int consumer_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self;
    if (arg == &drain_cmd)
        return drain_run(ctx);
    int t = ctx->local_id, s = stream_of_consumer(me, t);
    long n = stream_messages(s);
    unsigned char *bufs = malloc((size_t)window * MAX_MSG);
    int rc = UTC_OK;
    if (!bufs) {
        FAIL("consumer: out of memory");
        rc = UTC_ERR_NO_MEMORY;
    }
    utc_request_t *req[MAX_WINDOW];
    msg_plan_t plan[MAX_WINDOW];
    for (long i0 = 0; rc == UTC_OK && i0 < n; i0 += window) {
        int w = (int)(n - i0 < window ? n - i0 : window), posted = 0;
        for (int k = 0; k < w; k++, posted++) {
            plan[k] = plan_of(s, (uint64_t)(i0 + k));
            rc = utc_conduit_iread(conduits[s][plan[k].conduit], bufs + (size_t)k * MAX_MSG,
                                   MAX_MSG, plan[k].tag, &req[k]);
            if (rc != UTC_OK) {
                FAIL("stream %d: iread %ld: %s", s, i0 + k, utc_last_error());
                break;
            }
        }
        for (int k = 0; k < posted; k++) {
            size_t got = 0;
            int r2 = utc_request_wait(&req[k], &got);
            if (r2 != UTC_OK) {
                FAIL("stream %d: read %ld: %s", s, i0 + k, utc_last_error());
                rc = r2;
            } else if (rc == UTC_OK &&
                       check_message(s, (uint64_t)(i0 + k), &plan[k],
                                     bufs + (size_t)k * MAX_MSG, got)) {
                rc = UTC_ERR_INTERNAL;
            }
            long done = i0 + k + 1;
            if (rc == UTC_OK && done % CREDIT == 0) {
                int64_t credit = done / CREDIT - 1;
                rc = utc_conduit_write_by(conduits[s][0], t, &credit, sizeof credit,
                                          CREDIT_TAG);
                if (rc != UTC_OK)
                    FAIL("stream %d: credit write: %s", s, utc_last_error());
            }
        }
        atomic_fetch_add_explicit(&received_here, posted, memory_order_relaxed);
    }
    free(bufs);
    atomic_fetch_add(&threads_done, 1);
    return rc;
}

/* After the run: every conduit and tag this consumer reads must be empty. Called by every
 * local thread of C_me (read_timeout is an all-threads call). */
static int drain_run(utc_ctx_t *ctx)
{
    static unsigned char extra[MAX_MSG];
    int rc = UTC_OK;
    for (int t = 0; t < THREADS; t++) {
        int s = stream_of_consumer(me, t);
        for (int m = 0; m < nconduits; m++)
            for (int tag = 0; tag < ntags; tag++) {
                size_t got = 0;
                int r = utc_conduit_read_timeout(conduits[s][m], extra, sizeof extra, tag, &got,
                                                 0.0);
                if (r == UTC_OK) {
                    if (ctx->local_id == 0)
                        FAIL("stream %d conduit %d tag %d: an extra message (%zu bytes) after "
                             "the last one (duplicated)", s, m, tag, got);
                    rc = UTC_ERR_INTERNAL;
                } else if (r != UTC_ERR_TIMEOUT) {
                    if (ctx->local_id == 0)
                        FAIL("drain: %s", utc_last_error());
                    rc = r;
                }
            }
    }
    return rc;
}

static const utc_task_ops_t producer_ops = {.name = "soak_producer",
                                            .size = sizeof(soak_task_t), .run = producer_run};
static const utc_task_ops_t consumer_ops = {.name = "soak_consumer",
                                            .size = sizeof(soak_task_t), .run = consumer_run};

/* VmRSS of this process in KiB, or -1. */
static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        long v = 0;
        if (i + 1 < argc)
            v = strtol(argv[i + 1], &end, 10);
        bool num = i + 1 < argc && end && *end == '\0' && end != argv[i + 1];
        if (!strcmp(argv[i], "--messages") && num && v >= 1)
            total_messages = v;
        else if (!strcmp(argv[i], "--conduits") && num && v >= 1 && v <= MAX_CONDUITS)
            nconduits = (int)v;
        else if (!strcmp(argv[i], "--tags") && num && v >= 1 && v <= 1000)
            ntags = (int)v;
        else if (!strcmp(argv[i], "--window") && num && v >= 1 && v <= MAX_WINDOW)
            window = (int)v;
        else {
            fprintf(stderr, "usage: rob_soak [--messages N] [--conduits 1..%d] [--tags 1..1000] "
                    "[--window 1..%d]\n", MAX_CONDUITS, MAX_WINDOW);
            return -1;
        }
        i++;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (parse_args(argc, argv))
        return 2;
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "rob_soak: utc_init: %s\n", utc_last_error());
        return 1;
    }
    me = utc_rank();
    nranks = utc_nranks();
    nstreams = nranks * THREADS;
    if (nranks > 64) {
        fprintf(stderr, "rob_soak: at most 64 ranks\n");
        utc_finalize();
        return 2;
    }
    int rc;
    utc_task_t *prod[64], *cons[64];
    int procs[THREADS];
    for (int r = 0; r < nranks; r++) {
        for (int t = 0; t < THREADS; t++)
            procs[t] = r;
        if ((rc = utc_task_create(&producer_ops, procs, THREADS, NULL, &prod[r])) != UTC_OK ||
            (rc = utc_task_create(&consumer_ops, procs, THREADS, NULL, &cons[r])) != UTC_OK) {
            fprintf(stderr, "rob_soak: utc_task_create: %s\n", utc_last_error());
            return 1;
        }
    }
    /* small rings: the full-ring backlog and the wrap-around get exercised too */
    utc_conduit_options_t copt = UTC_CONDUIT_OPTIONS_INIT;
    copt.ring_slots = 16;
    for (int s = 0; s < nstreams; s++)
        for (int m = 0; m < nconduits; m++)
            if ((rc = utc_conduit_create(prod[s / THREADS], cons[consumer_rank_of(s)], &copt,
                                         &conduits[s][m])) != UTC_OK) {
                fprintf(stderr, "rob_soak: utc_conduit_create: %s\n", utc_last_error());
                return 1;
            }
    long expected = 0;
    int inproc = 0;
    for (int t = 0; t < THREADS; t++) {
        int s = stream_of_consumer(me, t);
        expected += stream_messages(s);
        inproc += consumer_rank_of(s) == s / THREADS;
    }

    double t0 = utc_wtime();
    if ((rc = utc_task_run(prod[me], NULL)) != UTC_OK ||
        (rc = utc_task_run(cons[me], NULL)) != UTC_OK) {
        fprintf(stderr, "rob_soak: utc_task_run: %s\n", utc_last_error());
        return 1;
    }
    long rss_warm = -1, rss_max = -1, rss_start = rss_kib(), last_got = -1;
    double last_progress = utc_wtime();
    while (atomic_load(&threads_done) < 2 * THREADS) {
        sleep_ms(50);
        long got = atomic_load_explicit(&received_here, memory_order_relaxed);
        if (got != last_got) {
            last_got = got;
            last_progress = utc_wtime();
        } else if (utc_wtime() - last_progress > (atomic_load(&failures) ? 2 : STALL_S)) {
            /* a lost message leaves a read waiting for ever, and a failed consumer leaves
             * its producer waiting for credit: fail instead of hanging */
            fprintf(stderr, "rob_soak: rank %d: no message for %d s after %ld of %ld: lost "
                    "messages or a hang; aborting\n", me, STALL_S, got, expected);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        long rss = rss_kib();
        if (rss_warm < 0 && got * 5 >= expected)
            rss_warm = rss_max = rss;
        else if (rss_warm >= 0 && rss > rss_max)
            rss_max = rss;
    }
    int bad = 0;
    if ((rc = utc_task_wait(cons[me])) != UTC_OK || (rc = utc_task_wait(prod[me])) != UTC_OK) {
        fprintf(stderr, "rob_soak: rank %d: %s\n", me, utc_last_error());
        bad = 1;
    }
    double secs = utc_wtime() - t0;
    long rss_end = rss_kib();
    if (rss_end > rss_max)
        rss_max = rss_end;
    if (rss_warm < 0)
        rss_warm = rss_start;

    /* every rank has finished writing before the drain looks for leftovers */
    utc_barrier();
    if (!bad && ((rc = utc_task_run(cons[me], &drain_cmd)) != UTC_OK ||
                 (rc = utc_task_wait(cons[me])) != UTC_OK)) {
        fprintf(stderr, "rob_soak: rank %d: drain: %s\n", me, utc_last_error());
        bad = 1;
    }

    double growth = rss_warm > 0 ? (double)(rss_max - rss_warm) / (double)rss_warm : 0;
    printf("rob_soak: rank %d: %ld messages in %d streams (%d in-process, %d MPI) over %d "
           "conduits x %d tags in %.1f s (%.0f msg/s); VmRSS start %ld KiB, after warm-up %ld "
           "KiB, max %ld KiB (%+.1f%%)\n",
           me, expected, THREADS, inproc, THREADS - inproc, nconduits, ntags, secs,
           (double)expected / secs, rss_start, rss_warm, rss_max, growth * 100);
    if (rss_warm <= 0 || (growth >= 0.10 && rss_max - rss_warm >= 4096)) {
        fprintf(stderr, "rob_soak: rank %d: resident memory grew %.1f%% after warm-up "
                "(%ld -> %ld KiB); the limit is 10%% or 4 MiB, whichever is more\n", me,
                growth * 100, rss_warm, rss_max);
        bad = 1;
    }
    if (atomic_load(&failures) != 0)
        bad = 1;

    for (int s = 0; s < nstreams; s++)
        for (int m = 0; m < nconduits; m++)
            if (utc_conduit_destroy(conduits[s][m]) != UTC_OK)
                bad = 1;
    for (int r = nranks - 1; r >= 0; r--)
        if (utc_task_destroy(cons[r]) != UTC_OK || utc_task_destroy(prod[r]) != UTC_OK)
            bad = 1;
    int any = bad;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    long all = 0;
    MPI_Reduce(&expected, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("rob_soak: %s: %ld messages on %d ranks\n", any ? "FAILED" : "passed", all,
               nranks);
    if (utc_finalize() != UTC_OK)
        return 1;
    return any;
}
