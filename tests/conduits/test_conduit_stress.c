/*
 * Ordering and no loss under load: 100,000 messages each way of random sizes from 0 B to
 * 1 MiB (mostly small, some large), every one checked for size and contents, over an
 * in-process conduit and one between ranks, with 4-thread tasks on both ends: two
 * threads of each task write two tag streams with write_by while two others read the
 * other task's streams with read_by, both directions at once. Then a phase where all
 * threads call write/read together (thread 0 transfers).
 */
#include "conduit_test_util.h"

#define NMSG 100000         /* per direction */
#define STREAMS 2           /* tag streams per direction */
#define PER_STREAM (NMSG / STREAMS)
#define MAXMSG (1 << 20)
#define TAG0 100
#define NCOLL 2000          /* messages of the all-threads phase */

/* Size of message k of a stream: 97% up to 256 B, 2.5% up to 64 KiB, 0.5% up to 1 MiB. */
static size_t msg_size(uint64_t seed)
{
    uint64_t r = ct_mix(seed);
    unsigned p = (unsigned)(r % 1000);
    r >>= 10;
    if (p < 970)
        return (size_t)(r % 257);
    if (p < 995)
        return 257 + (size_t)(r % (65536 - 256));
    return 65537 + (size_t)(r % (MAXMSG - 65536));
}

static uint64_t msg_seed(int dir, int tag, int k)
{
    return ((uint64_t)dir << 56) ^ ((uint64_t)tag << 32) ^ (uint64_t)k;
}

static size_t stream_size(int dir, int tag, int k)
{
    if (k == 0)
        return 0;
    if (k == 1)
        return MAXMSG;
    return msg_size(msg_seed(dir, tag, k) * 7 + 1);
}

typedef struct {
    utc_conduit_t *c;
    int end;                      /* 0: source task (writes direction 0), 1: destination */
    unsigned char *wbuf[STREAMS]; /* per writer thread */
    unsigned char *rbuf[STREAMS]; /* per reader thread */
    unsigned char *shared;        /* all-threads phase */
    atomic_ulong bytes;
} stress_t;

static int stress_run(utc_ctx_t *ctx, void *d)
{
    stress_t *s = d;
    int lid = ctx->local_id;
    int wdir = s->end, rdir = 1 - s->end;
    if (lid < STREAMS) {
        int tag = TAG0 + lid;
        unsigned char *buf = s->wbuf[lid];
        for (int k = 0; k < PER_STREAM; k++) {
            size_t n = stream_size(wdir, tag, k);
            ct_fill(buf, n, msg_seed(wdir, tag, k));
            if (!CT_OK(utc_conduit_write_by(s->c, lid, buf, n, tag)))
                return -1;
        }
    } else if (lid < 2 * STREAMS) {
        int tag = TAG0 + lid - STREAMS;
        unsigned char *buf = s->rbuf[lid - STREAMS];
        unsigned long bytes = 0;
        for (int k = 0; k < PER_STREAM; k++) {
            size_t want = stream_size(rdir, tag, k), got = 0;
            if (!CT_OK(utc_conduit_read_by(s->c, lid, buf, MAXMSG, tag, &got)))
                return -1;
            bytes += got;
            if (got != want || !ct_verify(buf, got, msg_seed(rdir, tag, k))) {
                CT_CHECK(0, "direction %d tag %d message %d: %zu bytes (want %zu)%s", rdir, tag,
                         k, got, want, got == want ? ", contents differ" : "");
                return -1;
            }
        }
        atomic_fetch_add(&s->bytes, bytes);
    }
    /* all threads together: the source writes, the destination reads */
    utc_ctx_barrier_local(ctx);
    for (int k = 0; k < NCOLL; k++) {
        size_t n = stream_size(2, 7, k) % 70000, got = 0;
        if (s->end == 0) {
            if (lid == 0)
                ct_fill(s->shared, n, msg_seed(2, 7, k));
            if (!CT_OK(utc_conduit_write(s->c, s->shared, n, 7)))
                return -1;
        } else {
            if (!CT_OK(utc_conduit_read(s->c, s->shared, MAXMSG, 7, &got)))
                return -1;
            CT_CHECK(got == n, "all-threads message %d: %zu bytes, want %zu", k, got, n);
            if (lid == 0)
                CT_CHECK(ct_verify(s->shared, got, msg_seed(2, 7, k)),
                         "all-threads message %d corrupt", k);
            utc_ctx_barrier_local(ctx); /* everyone has looked before the next read */
        }
    }
    return 0;
}

static void stress(int ra, int rb, const char *what)
{
    ct_begin();
    ct_pair_t p = ct_pair_open(ra, 2 * STREAMS, rb, 2 * STREAMS, NULL);
    utc_task_t *a = p.a, *b = p.b;
    stress_t sa = {.c = p.c, .end = 0}, sb = {.c = p.c, .end = 1};
    stress_t *all[2] = {&sa, &sb};
    for (int e = 0; e < 2; e++) {
        for (int i = 0; i < STREAMS; i++) {
            all[e]->wbuf[i] = malloc(MAXMSG);
            all[e]->rbuf[i] = malloc(MAXMSG);
        }
        all[e]->shared = malloc(MAXMSG);
        atomic_init(&all[e]->bytes, 0);
    }
    double t0 = utc_wtime();
    ct_run2(a, stress_run, &sa, b, stress_run, &sb);
    double dt = utc_wtime() - t0;
    unsigned long bytes = atomic_load(&sa.bytes) + atomic_load(&sb.bytes);
    if (utc_task_is_local(a) == 1 || utc_task_is_local(b) == 1)
        printf("\n    %s: rank %d received %lu MB in %d+%d messages in %.2f s", what,
               utc_test_rank(), bytes >> 20,
               (utc_task_is_local(a) == 1) * NMSG + (utc_task_is_local(b) == 1) * NMSG,
               (utc_task_is_local(b) == 1) * NCOLL, dt);
    for (int e = 0; e < 2; e++) {
        for (int i = 0; i < STREAMS; i++) {
            free(all[e]->wbuf[i]);
            free(all[e]->rbuf[i]);
        }
        free(all[e]->shared);
    }
    ct_pair_close(&p);
    CT_END();
}

static void test_stress_inproc(void) { stress(0, 0, "in-process"); }

static void test_stress_remote(void)
{
    int ra, rb;
    if (!ct_remote_ranks(&ra, &rb))
        return;
    stress(ra, rb, "MPI");
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"100,000 messages each way, in-process, 4-thread tasks", test_stress_inproc},
        {"100,000 messages each way, between ranks, 4-thread tasks", test_stress_remote},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "conduit stress", cases);
}
