/*
 * The conduit conformance suite (issue 34, item 4): one set of cases that every transport
 * must pass, run once per transport and rank count, in the manner of UCX's per-transport
 * test instantiation. The program tests one transport, named on its command line
 * (`--transport NAME`) or in UTC_CONFORMANCE_TRANSPORT; ctest runs it once per entry of
 * the CMake list UTC_CONFORMANCE_TRANSPORTS and per rank count (CMakeLists.txt here).
 *
 * What a transport is to this suite is one row of `transports` below: the name, what
 * utc_conduit_transport must report, where the two tasks go (one rank, or two ranks), and
 * the value of UTC_TRANSPORT that selects it, which the program sets before utc_init so a
 * run by hand is the run ctest makes. Every case first checks that its conduit uses the
 * transport under test, so a silent fallback to another transport fails every case.
 *
 * Cases: sizes from 0 B to 8 MiB around every threshold (the ring's small slots, MPI's
 * eager wire, the inline limit), contents checked, blocking and asynchronous; tags in
 * order and independent; any-tag reads; probes; truncation; owned buffers; many requests
 * in flight; both directions at once; end of stream; cancel and timeouts; destroy under
 * pending operations; a failed peer (its ends' requests waited for, and only tested);
 * threads on both ends; free mode with named peers; shared conduits; 10,000 conduits
 * (resident memory printed, not asserted).
 *
 * `--only CASE` runs that case alone, `--skip CASE` every case but that one (CASE: a case's
 * name as printed; ctest runs the MPI transport's 10,000 conduits apart, CMakeLists.txt).
 *
 * `test_conformance kill FILE` (2 or more ranks, a transport between ranks) is the killed
 * peer check that tests/robustness/check_kill.sh drives: rank 1 writes the time to FILE and
 * raises SIGKILL while the other end is blocked reading from it.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "../conduit_test_util.h"

/* ---- the transports ---- */

typedef enum cf_place {
    CF_ONE_RANK, /* both tasks on one rank */
    CF_TWO_RANKS /* the tasks on two different ranks (needs 2 ranks) */
} cf_place_t;

typedef struct cf_transport {
    const char *name;             /* as in UTC_CONFORMANCE_TRANSPORTS */
    utc_conduit_transport_t kind; /* what utc_conduit_transport reports for it */
    cf_place_t place;
    const char *env; /* the UTC_TRANSPORT that selects it; NULL: whatever is set */
    bool device;     /* a device conduit over it (issue 35), with host buffers: needs a GPU,
                      * and runs the cases of device_cases only */
} cf_transport_t;

/* To test a new transport: a row here, and its name in UTC_CONFORMANCE_TRANSPORTS. */
static const cf_transport_t transports[] = {
    {"inproc", UTC_CONDUIT_INPROC, CF_ONE_RANK, NULL, false},
    {"node", UTC_CONDUIT_NODE, CF_TWO_RANKS, "auto", false},
    {"mpi", UTC_CONDUIT_MPI, CF_TWO_RANKS, "mpi", false},
    /* device conduits (utc_conduit_options_t.memory = UTC_CONDUIT_MEM_DEVICE) over each */
    {"device-inproc", UTC_CONDUIT_INPROC, CF_ONE_RANK, NULL, true},
    {"device-node", UTC_CONDUIT_NODE, CF_TWO_RANKS, "auto", true},
    {"device-mpi", UTC_CONDUIT_MPI, CF_TWO_RANKS, "mpi", true},
};
#define NTRANSPORTS ((int)(sizeof transports / sizeof transports[0]))

static const cf_transport_t *tp; /* the transport under test */
static int ra, rb;               /* ranks of the source and destination tasks */

static const char *kind_name(utc_conduit_transport_t k)
{
    for (int i = 0; i < NTRANSPORTS; i++)
        if (transports[i].kind == k)
            return transports[i].name;
    return k == UTC_CONDUIT_NONE ? "none (not a live conduit)" : "unknown";
}

/* Assert that conduit c uses the transport under test (fatal for the case). */
static void cf_check_transport(utc_conduit_t *c)
{
    utc_conduit_transport_t got = utc_conduit_transport(c);
    if (got != tp->kind && utc_test_rank() == 0)
        printf("\n    the conduit between ranks %d and %d uses transport '%s', not '%s' "
               "(UTC_TRANSPORT=%s): the transport under test is absent or was not chosen",
               ra, rb, kind_name(got), tp->name,
               getenv("UTC_TRANSPORT") ? getenv("UTC_TRANSPORT") : "(unset)");
    CU_ASSERT_EQUAL_FATAL(got, tp->kind);
}

/* Start a case: place its tasks (the rank count is known once utc_init ran), reset the
 * failure count. */
static void cf_begin(void)
{
    if (tp->device)
        (void)utc_test_need_gpu(); /* exits 77 on every rank without a GPU */
    int n = utc_test_nranks();
    if (tp->place == CF_TWO_RANKS) {
        if (n < 2)
            utc_test_skip_all("this transport joins two ranks: run it at 2 or 3 ranks");
        ct_pair_ranks(&ra, &rb); /* 0 and 1, or 1 and 2 (rank 0 a bystander) */
    } else {
        ra = rb = n >= 2 ? 1 : 0; /* rank 0 and 2 bystanders where they exist */
    }
    ct_begin();
}

/* The pair of a case: tasks of na and nb threads on ra and rb, a conduit between them on
 * the transport under test. Collective. */
static ct_pair_t cf_open(int na, int nb)
{
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    if (tp->device)
        o.memory = UTC_CONDUIT_MEM_DEVICE;
    ct_pair_t p = ct_pair_open(ra, na, rb, nb, &o);
    cf_check_transport(p.c);
    return p;
}

/* Open a pair, run fa on its source and fb on its destination, close it. Collective. */
static void cf_case(int na, ct_fn_t fa, int nb, ct_fn_t fb)
{
    cf_begin();
    ct_pair_t p = cf_open(na, nb);
    ct_pair_run(&p, fa, fb);
    ct_pair_close(&p);
    CT_END();
}

/* Run fa and fb on the pair; each run's status on its own ranks must be rca / rcb. */
static void cf_run_rc(const ct_pair_t *p, ct_fn_t fa, int rca, ct_fn_t fb, int rcb)
{
    static ct_job_t ja, jb; /* outlive the runs */
    ja = (ct_job_t){fa, p->c};
    jb = (ct_job_t){fb, p->c};
    UTC_ASSERT_OK(utc_task_run(p->a, &ja));
    UTC_ASSERT_OK(utc_task_run(p->b, &jb));
    int rc = utc_task_wait(p->a);
    CU_ASSERT_EQUAL(rc, utc_task_is_local(p->a) ? rca : UTC_OK);
    rc = utc_task_wait(p->b);
    CU_ASSERT_EQUAL(rc, utc_task_is_local(p->b) ? rcb : UTC_OK);
    UTC_ASSERT_OK(utc_barrier());
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- message helpers (one-thread tasks, or one thread of the _by forms) ---- */

#define MIB    ((size_t)1 << 20)
#define CANARY 64 /* bytes past a message that a read must leave alone */

static uint64_t seed_of(int tag, int i, int side)
{
    return ((uint64_t)side << 56) ^ ((uint64_t)(unsigned)tag << 28) ^ (uint64_t)(unsigned)i;
}

static unsigned char *cf_alloc(size_t n)
{
    unsigned char *b = malloc(n ? n : 1);
    CT_CHECK(b != NULL, "out of memory for %zu bytes", n);
    return b;
}

/* A buffer of n bytes with seed's contents (free it). */
static unsigned char *cf_msg(size_t n, uint64_t seed)
{
    unsigned char *b = cf_alloc(n);
    if (b && n)
        ct_fill(b, n, seed);
    return b;
}

/* Write n bytes with seed's contents on tag. A 0-byte message goes from a NULL buffer. */
static void cf_send(utc_conduit_t *c, size_t n, uint64_t seed, int tag)
{
    unsigned char *b = cf_msg(n, seed);
    if (b)
        CT_OK(utc_conduit_write(c, n ? b : NULL, n, tag));
    free(b);
}

/* Read the next message of tag with room for cap bytes; it must be n bytes with seed's
 * contents, and the read must leave the CANARY bytes past it alone. */
static void cf_recv(utc_conduit_t *c, size_t cap, size_t n, uint64_t seed, int tag)
{
    unsigned char *b = cf_alloc(cap + CANARY);
    if (!b)
        return;
    memset(b, 0xa5, cap + CANARY);
    size_t got = (size_t)-1;
    if (CT_OK(utc_conduit_read(c, cap ? b : NULL, cap, tag, &got))) {
        CT_CHECK(got == n, "tag %d: %zu bytes, %zu expected", tag, got, n);
        CT_CHECK(got != n || ct_verify(b, n, seed), "tag %d: the %zu bytes differ", tag, n);
        bool clean = true;
        for (size_t i = n; i < n + CANARY && i < cap + CANARY; i++)
            clean &= b[i] == 0xa5;
        CT_CHECK(clean, "tag %d: a read of %zu bytes wrote past them", tag, n);
    }
    free(b);
}

/* A write its reader may take after later ones: blocking on a host conduit; on a device
 * conduit, where a write between ranks is a rendezvous (it ends once read), a request put
 * in rs[(*nr)++] for cf_wait_all. buf must then outlive the request. */
static void cf_put(utc_conduit_t *c, const void *buf, size_t n, int tag, utc_request_t **rs,
                   int *nr)
{
    if (!tp->device) {
        CT_OK(utc_conduit_write(c, buf, n, tag));
        return;
    }
    rs[*nr] = NULL;
    CT_OK(utc_conduit_iwrite(c, buf, n, tag, &rs[*nr]));
    (*nr)++;
}

static void cf_wait_all(utc_request_t **rs, int nr)
{
    for (int i = 0; i < nr; i++)
        if (rs[i])
            CT_OK(utc_request_wait(&rs[i], NULL));
}

/* The highest tag the conduit under test takes (a device conduit keeps the top two). */
static int cf_tag_max(void)
{
    return tp->device ? UTC_CONDUIT_DEVICE_TAG_MAX : UTC_CONDUIT_TAG_MAX;
}

/* ---- sizes ---- */

/* around every threshold: the in-process ring's 80-byte small slots, the MPI transport's
 * 1,016-byte wire (1,008 and its header), the 4 KiB inline limit; then large ones */
static const size_t sizes[] = {0,    1,    8,    80,   81,   1007, 1008,  1009,    1015,
                               1016, 1017, 1024, 4095, 4096, 4097, 65536, 1 * MIB, 8 * MIB};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

/* Every size twice on tag: read first with the exact capacity, then with room to spare. */
static void send_sizes(utc_conduit_t *c, int tag, int side)
{
    for (int i = 0; i < NSIZES; i++)
        for (int k = 0; k < 2; k++)
            cf_send(c, sizes[i], seed_of(tag, 2 * i + k, side), tag);
}

static void recv_sizes(utc_conduit_t *c, int tag, int side)
{
    for (int i = 0; i < NSIZES; i++)
        for (int k = 0; k < 2; k++)
            cf_recv(c, sizes[i] + (size_t)k * 4096, sizes[i], seed_of(tag, 2 * i + k, side), tag);
}

static int sizes_a(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    send_sizes(d, 1, 0);
    recv_sizes(d, 2, 1);
    return 0;
}

static int sizes_b(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    recv_sizes(d, 1, 0);
    send_sizes(d, 2, 1);
    return 0;
}

static void test_sizes(void)
{
    cf_case(1, sizes_a, 1, sizes_b);
}

/* Every size at once as iwrite / iread requests (the reads posted before the writes). */
static int isizes_a(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    unsigned char *b[NSIZES];
    utc_request_t *r[NSIZES];
    int go = 0;
    CT_OK(utc_conduit_read(d, &go, sizeof go, 9, NULL)); /* the reads are posted */
    for (int i = 0; i < NSIZES; i++) {
        b[i] = cf_msg(sizes[i], seed_of(3, i, 0));
        r[i] = NULL;
        if (b[i])
            CT_OK(utc_conduit_iwrite(d, b[i], sizes[i], 3, &r[i]));
    }
    utc_status_t st[NSIZES];
    CT_OK(utc_request_waitall(NSIZES, r, st, NULL));
    for (int i = 0; i < NSIZES; i++) {
        CT_CHECK(r[i] == NULL, "request %d was not freed", i);
        free(b[i]);
    }
    return 0;
}

static int isizes_b(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    unsigned char *b[NSIZES];
    utc_request_t *r[NSIZES];
    for (int i = 0; i < NSIZES; i++) {
        b[i] = cf_alloc(sizes[i]);
        r[i] = NULL;
        if (b[i])
            CT_OK(utc_conduit_iread(d, b[i], sizes[i], 3, &r[i]));
    }
    int go = 1;
    CT_OK(utc_conduit_write(d, &go, sizeof go, 9));
    /* complete them in whatever order they finish */
    for (int left = NSIZES; left > 0; left--) {
        int idx = -1;
        size_t got = 0;
        CT_OK(utc_request_waitany(NSIZES, r, &idx, &got));
        if (idx < 0 || idx >= NSIZES) {
            CT_CHECK(0, "waitany gave index %d", idx);
            break;
        }
        CT_CHECK(got == sizes[idx] && ct_verify(b[idx], got, seed_of(3, idx, 0)),
                 "iread %d: %zu bytes (%zu expected) or contents differ", idx, got, sizes[idx]);
    }
    for (int i = 0; i < NSIZES; i++)
        free(b[i]);
    return 0;
}

static void test_sizes_async(void)
{
    cf_case(1, isizes_a, 1, isizes_b);
}

/* ---- tags: in order per tag, and independent ---- */

#define NTAGMSG 200

static int tags_a(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    unsigned char *big = cf_msg(MIB, seed_of(1, -1, 0));
    utc_request_t *r = NULL, *rs[2 * NTAGMSG + 2];
    static int v[2 * NTAGMSG + 2]; /* the messages, kept until their requests end */
    int nr = 0;
    for (int i = 0; i < NTAGMSG; i++) {
        v[nr] = i;
        cf_put(d, &v[nr], sizeof(int), 1, rs, &nr);
    }
    /* a large message nobody reads yet: it must not hold up the tags after it */
    if (big)
        CT_OK(utc_conduit_iwrite(d, big, MIB, 1, &r));
    for (int i = 0; i < NTAGMSG; i++) {
        v[NTAGMSG + i] = i;
        cf_put(d, &v[NTAGMSG + i], sizeof(int), 2, rs, &nr);
    }
    v[2 * NTAGMSG] = v[2 * NTAGMSG + 1] = 7;
    cf_put(d, &v[2 * NTAGMSG], sizeof(int), cf_tag_max(), rs, &nr);
    cf_put(d, &v[2 * NTAGMSG + 1], sizeof(int), 0, rs, &nr);
    cf_wait_all(rs, nr);
    if (r)
        CT_OK(utc_request_wait(&r, NULL));
    free(big);
    return 0;
}

static int tags_b(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    int v = -1;
    size_t got = 0;
    /* the last messages first: nothing written before them holds them up */
    CT_OK(utc_conduit_read(d, &v, sizeof v, 0, &got));
    CT_CHECK(v == 7 && got == sizeof v, "tag 0: %d", v);
    CT_OK(utc_conduit_read(d, &v, sizeof v, cf_tag_max(), &got));
    CT_CHECK(v == 7 && got == sizeof v, "tag max: %d", v);
    for (int tag = 2; tag >= 1; tag--)
        for (int i = 0; i < NTAGMSG; i++) {
            v = -1;
            CT_OK(utc_conduit_read(d, &v, sizeof v, tag, &got));
            CT_CHECK(v == i, "tag %d: message %d arrived as number %d", tag, v, i);
        }
    cf_recv(d, MIB, MIB, seed_of(1, -1, 0), 1);
    return 0;
}

static void test_tags(void)
{
    cf_case(1, tags_a, 1, tags_b);
}

/* ---- any-tag reads ---- */

#define NANY 60
static const size_t any_sizes[] = {0, 8, 1016, 4097, 65536};

static size_t any_size(int i)
{
    return any_sizes[i % 5];
}

static int any_a(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    int go = 0, v = 9;
    CT_OK(utc_conduit_read(d, &go, sizeof go, 19, NULL)); /* b's iread of tag 9 is posted */
    for (int i = 0; i < NANY; i++)
        cf_send(d, any_size(i), seed_of(5 + i % 3, i, 0), 5 + i % 3);
    /* (a device conduit: as requests, as the tag-9 one is read after the tag-10 one) */
    static int v10 = 10;
    utc_request_t *rs[2];
    int nr = 0;
    cf_put(d, &v, sizeof v, 9, rs, &nr);
    cf_put(d, &v10, sizeof v10, 10, rs, &nr);
    CT_OK(utc_conduit_read(d, &go, sizeof go, 19, NULL)); /* tag 10 was read */
    cf_wait_all(rs, nr);
    cf_send(d, 2000, seed_of(8, 0, 0), 8);
    return 0;
}

static int any_b(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    int v9 = -1, v = -1, go = 1;
    utc_request_t *r9 = NULL;
    unsigned char *b = cf_alloc(65536);
    if (!b)
        return -1;
    CT_OK(utc_conduit_iread(d, &v9, sizeof v9, 9, &r9));
    CT_OK(utc_conduit_write(d, &go, sizeof go, 19));
    int seen[3] = {0, 0, 0};
    for (int n = 0; n < NANY; n++) {
        utc_msg_info_t info = {0};
        if (!CT_OK(utc_conduit_read_any(d, b, 65536, &info)))
            break;
        if (info.tag < 5 || info.tag > 7) {
            CT_CHECK(0, "read_any: tag %d, 5 to 7 expected", info.tag);
            continue;
        }
        /* messages of one tag in write order: the k-th of tag t is number 3k + t - 5 */
        int i = 3 * seen[info.tag - 5]++ + info.tag - 5;
        CT_CHECK(info.size == any_size(i) && ct_verify(b, info.size, seed_of(info.tag, i, 0)),
                 "read_any: tag %d: %zu bytes (%zu expected) or contents differ", info.tag,
                 info.size, any_size(i));
        CT_CHECK(info.peer == ra, "read_any: peer %d, %d expected", info.peer, ra);
    }
    /* the tag-9 message is the posted iread's: the next any-tag read gets tag 10 */
    utc_msg_info_t info = {0};
    CT_OK(utc_conduit_read_any(d, &v, sizeof v, &info));
    CT_CHECK(info.tag == 10 && v == 10, "read_any after an iread of tag 9: tag %d, value %d",
             info.tag, v);
    size_t got = 0;
    CT_OK(utc_request_wait(&r9, &got));
    CT_CHECK(v9 == 9 && got == sizeof v9, "the iread of tag 9 got %d", v9);
    CT_OK(utc_conduit_write(d, &go, sizeof go, 19));
    /* too small for the any-tag read: truncated, info filled, the message stays */
    memset(&info, 0, sizeof info);
    CT_EXPECT(utc_conduit_read_any(d, b, 100, &info), UTC_ERR_TRUNCATE);
    CT_CHECK(info.size == 2000 && info.tag == 8, "truncated read_any: %zu bytes, tag %d", info.size,
             info.tag);
    cf_recv(d, 2000, 2000, seed_of(8, 0, 0), 8);
    free(b);
    return 0;
}

static void test_any_tag(void)
{
    cf_case(1, any_a, 1, any_b);
}

/* ---- probes ---- */

static int probe_a(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    /* the reader probes tag 5 first: a device conduit's rendezvous writes go as requests */
    unsigned char *m3 = cf_msg(100, seed_of(3, 0, 0)), *m5 = cf_msg(7, seed_of(5, 0, 0));
    utc_request_t *rs[3];
    int nr = 0;
    if (m3 && m5) {
        cf_put(d, m3, 100, 3, rs, &nr);
        cf_put(d, m5, 7, 5, rs, &nr);
        cf_put(d, NULL, 0, 5, rs, &nr);
        cf_wait_all(rs, nr);
    }
    free(m3), free(m5);
    return 0;
}

static void check_info(const utc_msg_info_t *info, size_t size, int tag, const char *what)
{
    CT_CHECK(info->size == size && info->tag == tag && info->peer == ra,
             "%s: size %zu, tag %d, peer %d; expected %zu, %d, %d", what, info->size, info->tag,
             info->peer, size, tag, ra);
}

static int probe_b(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    utc_msg_info_t info = {0};
    int found = -1;
    CT_OK(utc_conduit_iprobe(d, 9, &found, &info)); /* tag 9 never comes */
    CT_CHECK(found == 0, "iprobe of a tag never written found one");
    CT_OK(utc_conduit_probe(d, 5, &info));
    check_info(&info, 7, 5, "probe(5)");
    CT_OK(utc_conduit_probe(d, 5, &info)); /* still there */
    check_info(&info, 7, 5, "probe(5) again");
    found = 0;
    CT_OK(utc_conduit_iprobe(d, 5, &found, &info));
    CT_CHECK(found == 1, "iprobe(5) after probe(5) found nothing");
    check_info(&info, 7, 5, "iprobe(5)");
    CT_OK(utc_conduit_probe(d, 3, &info));
    check_info(&info, 100, 3, "probe(3)");
    CT_OK(utc_conduit_probe(d, UTC_ANY_TAG, &info));
    CT_CHECK((info.tag == 3 && info.size == 100) || (info.tag == 5 && info.size == 7),
             "probe(any): tag %d, %zu bytes", info.tag, info.size);
    found = 0;
    CT_OK(utc_conduit_iprobe(d, UTC_ANY_TAG, &found, &info));
    CT_CHECK(found == 1, "iprobe(any) found nothing");
    /* the probed messages are all still there, in order */
    cf_recv(d, 7, 7, seed_of(5, 0, 0), 5);
    CT_OK(utc_conduit_probe(d, 5, &info));
    check_info(&info, 0, 5, "probe(5) of the empty message");
    cf_recv(d, 0, 0, 0, 5);
    cf_recv(d, 100, 100, seed_of(3, 0, 0), 3);
    found = -1;
    CT_OK(utc_conduit_iprobe(d, UTC_ANY_TAG, &found, &info));
    CT_CHECK(found == 0, "iprobe(any) found a message after all were read");
    return 0;
}

static void test_probe(void)
{
    cf_case(1, probe_a, 1, probe_b);
}

/* ---- truncation ---- */

static int trunc_a(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    cf_send(d, 1000, seed_of(4, 0, 0), 4);
    cf_send(d, 10, seed_of(4, 1, 0), 4);
    cf_send(d, MIB, seed_of(4, 2, 0), 4);
    cf_send(d, 1, seed_of(6, 0, 0), 6);
    return 0;
}

static int trunc_b(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    unsigned char small[1000];
    size_t got = 0;
    CT_EXPECT(utc_conduit_read(d, small, 100, 4, &got), UTC_ERR_TRUNCATE);
    CT_CHECK(got == 1000, "a truncated read reports %zu bytes, 1000 expected", got);
    utc_msg_info_t info = {0};
    CT_EXPECT(utc_conduit_read_any(d, NULL, 0, &info), UTC_ERR_TRUNCATE);
    CT_CHECK(info.size == 1000 && info.tag == 4, "truncated read_any: %zu bytes, tag %d",
             info.size, info.tag);
    utc_request_t *r = NULL;
    got = 0;
    if (CT_OK(utc_conduit_iread(d, small, 999, 4, &r)))
        CT_EXPECT(utc_request_wait(&r, &got), UTC_ERR_TRUNCATE);
    CT_CHECK(got == 1000, "a truncated iread reports %zu bytes, 1000 expected", got);
    /* still first of its tag, then the rest in order */
    cf_recv(d, 1000, 1000, seed_of(4, 0, 0), 4);
    cf_recv(d, 10, 10, seed_of(4, 1, 0), 4);
    got = 0;
    CT_EXPECT(utc_conduit_read(d, small, sizeof small, 4, &got), UTC_ERR_TRUNCATE);
    CT_CHECK(got == MIB, "a truncated large read reports %zu bytes", got);
    cf_recv(d, MIB, MIB, seed_of(4, 2, 0), 4);
    got = 0;
    CT_EXPECT(utc_conduit_read(d, NULL, 0, 6, &got), UTC_ERR_TRUNCATE);
    CT_CHECK(got == 1, "a 1-byte message into no room reports %zu bytes", got);
    cf_recv(d, 1, 1, seed_of(6, 0, 0), 6);
    return 0;
}

static void test_truncate(void)
{
    cf_case(1, trunc_a, 1, trunc_b);
}

/* ---- owned buffers ---- */

static const size_t owned_sizes[] = {0, 8, 4096, 65536, MIB, 8 * MIB};
#define NOWNED ((int)(sizeof owned_sizes / sizeof owned_sizes[0]))

static void send_owned(utc_conduit_t *c, size_t alloc, size_t n, uint64_t seed, int tag)
{
    unsigned char *b = utc_buf_alloc(alloc);
    CT_CHECK(b != NULL, "utc_buf_alloc(%zu) failed", alloc);
    if (!b)
        return;
    if (n)
        ct_fill(b, n, seed);
    if (!CT_OK(utc_conduit_write_owned(c, b, n, tag)))
        utc_buf_free(b); /* still ours on an error */
}

static void recv_owned(utc_conduit_t *c, size_t n, uint64_t seed, int tag)
{
    void *b = NULL;
    size_t got = (size_t)-1;
    if (!CT_OK(utc_conduit_read_owned(c, tag, &b, &got)))
        return;
    CT_CHECK(b != NULL, "read_owned gave no buffer");
    CT_CHECK(got == n && (!n || ct_verify(b, n, seed)),
             "read_owned, tag %d: %zu bytes (%zu expected) or contents differ", tag, got, n);
    utc_buf_free(b);
}

static int owned_a(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    for (int i = 0; i < NOWNED; i++)
        send_owned(d, owned_sizes[i], owned_sizes[i], seed_of(6, i, 0), 6);
    send_owned(d, 1000, 100, seed_of(6, -1, 0), 6); /* a message shorter than its buffer */
    cf_send(d, 4096, seed_of(7, 0, 0), 7);          /* plain write, owned read */
    cf_recv(d, 65536, 65536, seed_of(8, 0, 1), 8);  /* owned write, plain read */
    return 0;
}

static int owned_b(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    for (int i = 0; i < NOWNED; i++)
        recv_owned(d, owned_sizes[i], seed_of(6, i, 0), 6);
    recv_owned(d, 100, seed_of(6, -1, 0), 6);
    recv_owned(d, 4096, seed_of(7, 0, 0), 7);
    send_owned(d, 65536, 65536, seed_of(8, 0, 1), 8);
    return 0;
}

static void test_owned(void)
{
    cf_case(1, owned_a, 1, owned_b);
}

/* ---- many requests in flight ---- */

#define NREQ 256
static const size_t req_sizes[] = {0, 8, 1016, 4096, 4097, 65536};

static size_t req_size(int i)
{
    return req_sizes[i % 6];
}

/* Round 0: the reads are posted before any write; round 1: the writes go first. */
static int inflight_a(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    unsigned char **b = calloc(NREQ, sizeof *b);
    utc_request_t **r = calloc(NREQ, sizeof *r);
    utc_status_t *st = calloc(NREQ, sizeof *st);
    if (!b || !r || !st)
        goto out;
    for (int round = 0; round < 2; round++) {
        int go = 0;
        if (round == 0)
            CT_OK(utc_conduit_read(d, &go, sizeof go, 9, NULL));
        for (int i = 0; i < NREQ; i++) {
            b[i] = cf_msg(req_size(i), seed_of(1 + i % 4, i, round));
            if (b[i])
                CT_OK(utc_conduit_iwrite(d, b[i], req_size(i), 1 + i % 4, &r[i]));
        }
        if (round == 1)
            CT_OK(utc_conduit_write(d, &go, sizeof go, 9));
        /* test them all until none is left, sleeping a little between passes */
        int done = 0;
        while (!done) {
            if (!CT_OK(utc_request_testall(NREQ, r, &done, st, NULL)))
                break;
            if (!done)
                usleep(200);
        }
        for (int i = 0; i < NREQ; i++) {
            CT_CHECK(r[i] == NULL, "request %d left", i);
            free(b[i]);
        }
    }
out:
    free(b), free(r), free(st);
    return 0;
}

static int inflight_b(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    unsigned char **b = calloc(NREQ, sizeof *b);
    utc_request_t **r = calloc(NREQ, sizeof *r);
    size_t *got = calloc(NREQ, sizeof *got);
    utc_status_t *st = calloc(NREQ, sizeof *st);
    if (!b || !r || !got || !st)
        goto out;
    for (int round = 0; round < 2; round++) {
        int go = 1;
        if (round == 1)
            CT_OK(utc_conduit_read(d, &go, sizeof go, 9, NULL));
        for (int i = 0; i < NREQ; i++) {
            b[i] = cf_alloc(req_size(i));
            if (b[i])
                CT_OK(utc_conduit_iread(d, b[i], req_size(i), 1 + i % 4, &r[i]));
        }
        if (round == 0) {
            CT_OK(utc_conduit_write(d, &go, sizeof go, 9));
            /* one that cannot be done yet: test says so and keeps it */
            int done = -1;
            utc_request_t *probe = r[NREQ - 1];
            CT_OK(utc_request_test(&r[NREQ - 1], &done, NULL));
            CT_CHECK(done == 1 || r[NREQ - 1] == probe, "test freed a request not done");
            if (done == 1)
                got[NREQ - 1] = req_size(NREQ - 1), st[NREQ - 1] = UTC_OK;
        }
        CT_OK(utc_request_waitall(NREQ, r, st, got));
        for (int i = 0; i < NREQ; i++) {
            CT_CHECK(r[i] == NULL && st[i] == UTC_OK, "request %d: %d", i, st[i]);
            /* the request test completed above has its contents checked here too */
            CT_CHECK(got[i] == req_size(i) &&
                         ct_verify(b[i], req_size(i), seed_of(1 + i % 4, i, round)),
                     "round %d, read %d: %zu bytes (%zu expected) or contents differ", round, i,
                     got[i], req_size(i));
            free(b[i]);
            b[i] = NULL;
        }
    }
out:
    free(b), free(r), free(got), free(st);
    return 0;
}

static void test_inflight(void)
{
    cf_case(1, inflight_a, 1, inflight_b);
}

/* ---- both directions at once ---- */

#define NDUPLEX 64
static const size_t duplex_sizes[] = {8, 1016, 4097, 65536, MIB};

/* Thread 0 writes a stream while thread 1 reads the other end's: both directions busy at
 * once with blocking calls; then both ends swap 8 MiB with iwrite + read. */
static int duplex(utc_ctx_t *ctx, void *d, int side)
{
    int tid = ctx->local_id;
    unsigned char *b = cf_alloc(MIB);
    if (!b)
        return -1;
    for (int i = 0; i < NDUPLEX; i++) {
        size_t n = duplex_sizes[i % 5];
        if (tid == 0) {
            ct_fill(b, n, seed_of(1, i, side));
            CT_OK(utc_conduit_write_by(d, 0, b, n, 1));
        } else {
            size_t got = 0;
            CT_OK(utc_conduit_read_by(d, 1, b, MIB, 1, &got));
            CT_CHECK(got == n && ct_verify(b, n, seed_of(1, i, !side)),
                     "duplex message %d: %zu bytes (%zu expected) or contents differ", i, got, n);
        }
    }
    free(b);
    if (tid == 0) {
        unsigned char *out = cf_msg(8 * MIB, seed_of(2, 0, side)), *in = cf_alloc(8 * MIB);
        utc_request_t *r = NULL;
        size_t got = 0;
        if (out && in && CT_OK(utc_conduit_iwrite(d, out, 8 * MIB, 2, &r))) {
            CT_OK(utc_conduit_read_by(d, 0, in, 8 * MIB, 2, &got));
            CT_CHECK(got == 8 * MIB && ct_verify(in, got, seed_of(2, 0, !side)),
                     "the 8 MiB swap: %zu bytes or contents differ", got);
            CT_OK(utc_request_wait(&r, NULL));
        }
        free(out), free(in);
    }
    return 0;
}

static int duplex_a(utc_ctx_t *ctx, void *d)
{
    return duplex(ctx, d, 0);
}

static int duplex_b(utc_ctx_t *ctx, void *d)
{
    return duplex(ctx, d, 1);
}

static void test_duplex(void)
{
    cf_case(2, duplex_a, 2, duplex_b);
}

/* ---- end of stream ---- */

/* A device write pending at the close: more staged chunks than the pipeline's slots. */
#define LATE_BYTES ((size_t)13 << 20)

static int close_a(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    int go = 0;
    CT_OK(utc_conduit_read(d, &go, sizeof go, 10, NULL)); /* b's iread of tag 3 is posted */
    /* large messages (a blocking write waits for their read) before the small ones, which
     * are still unread when the close goes (on a host conduit: a device conduit's writes
     * between ranks wait for their reads) */
    cf_send(d, 4096, seed_of(2, 0, 0), 2);
    cf_send(d, 65536, seed_of(2, 1, 0), 2);
    cf_send(d, 8, seed_of(1, 0, 0), 1);
    cf_send(d, 1000, seed_of(1, 1, 0), 1);
    cf_send(d, 0, 0, 1);
    /* a device conduit: a write still waiting for its reader when the close goes (a staged
     * one's chunks follow the end of stream, and so does an IPC one's answer) */
    unsigned char *late = tp->device ? cf_msg(LATE_BYTES, seed_of(4, 0, 0)) : NULL;
    utc_request_t *rl = NULL;
    if (late)
        CT_OK(utc_conduit_iwrite(d, late, LATE_BYTES, 4, &rl));
    CT_OK(utc_conduit_close(d));
    int v = 1;
    CT_EXPECT(utc_conduit_write(d, &v, sizeof v, 1), UTC_ERR_CLOSED);
    CT_EXPECT(utc_conduit_close(d), UTC_ERR_STATE);
    if (rl)
        CT_OK(utc_request_wait(&rl, NULL));
    free(late);
    /* the other direction still works */
    cf_recv(d, 1000, 1000, seed_of(9, 0, 1), 9);
    return 0;
}

static int close_b(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    int v = 0, go = 1;
    utc_request_t *r3 = NULL;
    CT_OK(utc_conduit_iread(d, &v, sizeof v, 3, &r3)); /* no tag-3 message will come */
    CT_OK(utc_conduit_write(d, &go, sizeof go, 10));
    cf_recv(d, 4096, 4096, seed_of(2, 0, 0), 2);
    cf_recv(d, 70000, 65536, seed_of(2, 1, 0), 2);
    /* the end of tag 2 while tag 1 still holds messages (on a device conduit after them:
     * its writes between ranks are rendezvous, so its writer closes once they were read) */
    if (!tp->device)
        CT_EXPECT(utc_conduit_read(d, &v, sizeof v, 2, NULL), UTC_ERR_CLOSED);
    cf_recv(d, 8, 8, seed_of(1, 0, 0), 1);
    cf_recv(d, 1000, 1000, seed_of(1, 1, 0), 1);
    cf_recv(d, 0, 0, 0, 1);
    if (tp->device) {
        CT_EXPECT(utc_conduit_read(d, &v, sizeof v, 2, NULL), UTC_ERR_CLOSED);
        /* the write its writer started before the close and waits for after it */
        cf_recv(d, LATE_BYTES, LATE_BYTES, seed_of(4, 0, 0), 4);
        CT_EXPECT(utc_conduit_read(d, &v, sizeof v, 4, NULL), UTC_ERR_CLOSED);
    }
    CT_EXPECT(utc_conduit_read(d, &v, sizeof v, 1, NULL), UTC_ERR_CLOSED);
    CT_EXPECT(utc_conduit_read(d, &v, sizeof v, 1, NULL), UTC_ERR_CLOSED); /* and stays so */
    double t0 = now_s();
    CT_EXPECT(utc_conduit_read_timeout(d, &v, sizeof v, 1, NULL, 20.0), UTC_ERR_CLOSED);
    CT_CHECK(now_s() - t0 < 10.0, "a read at the end of stream waited %.1f s", now_s() - t0);
    utc_msg_info_t info;
    CT_EXPECT(utc_conduit_read_any(d, &v, sizeof v, &info), UTC_ERR_CLOSED);
    CT_EXPECT(utc_conduit_probe(d, UTC_ANY_TAG, &info), UTC_ERR_CLOSED);
    CT_EXPECT(utc_conduit_probe(d, 4, &info), UTC_ERR_CLOSED);
    int found = -1;
    int rc = utc_conduit_iprobe(d, 1, &found, &info);
    CT_CHECK(rc == UTC_ERR_CLOSED || (rc == UTC_OK && found == 0),
             "iprobe at the end of stream: %d (%s), found %d", rc, utc_status_string(rc), found);
    CT_EXPECT(utc_request_wait(&r3, NULL), UTC_ERR_CLOSED);
    utc_request_t *r = NULL;
    if (CT_OK(utc_conduit_iread(d, &v, sizeof v, 5, &r)))
        CT_EXPECT(utc_request_wait(&r, NULL), UTC_ERR_CLOSED);
    cf_send(d, 1000, seed_of(9, 0, 1), 9);
    return 0;
}

static void test_close(void)
{
    cf_case(1, close_a, 1, close_b);
}

/* ---- cancel and timeouts ---- */

static int cancel_a(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    int go = 0;
    CT_OK(utc_conduit_read(d, &go, sizeof go, 20, NULL)); /* b canceled and timed out */
    /* (on a device conduit requests, as b reads tag 8 before tag 7; kept till they end) */
    static int m[4] = {42, 1, 2, 77};
    static const int mtag[4] = {7, 8, 8, 21};
    utc_request_t *rs[4];
    int nr = 0;
    for (int i = 0; i < 4; i++)
        cf_put(d, &m[i], sizeof m[i], mtag[i], rs, &nr);
    /* a write cannot be called back: canceling it completes it as it would have */
    static int w = 99; /* outlives the request */
    utc_request_t *r = NULL;
    if (CT_OK(utc_conduit_iwrite(d, &w, sizeof w, 22, &r))) {
        CT_OK(utc_request_cancel(&r));
        CT_OK(utc_request_wait(&r, NULL));
    }
    cf_wait_all(rs, nr);
    return 0;
}

static int cancel_b(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    static int a = -1; /* the canceled read's buffer: nothing may land in it */
    int v = -1, v8 = -1, go = 1;
    size_t got = 0;
    utc_request_t *r = NULL;
    if (CT_OK(utc_conduit_iread(d, &a, sizeof a, 7, &r))) {
        CT_OK(utc_request_cancel(&r));
        CT_CHECK(r != NULL, "cancel freed the request");
        CT_EXPECT(utc_request_wait(&r, NULL), UTC_ERR_CANCELED);
    }
    CT_EXPECT(utc_conduit_read_timeout(d, &v, sizeof v, 8, NULL, 0.0), UTC_ERR_TIMEOUT);
    CT_EXPECT(utc_conduit_read_timeout(d, &v, sizeof v, 8, NULL, 0.2), UTC_ERR_TIMEOUT);
    utc_request_t *r8 = NULL;
    CT_OK(utc_conduit_iread(d, &v8, sizeof v8, 8, &r8));
    int done = -1;
    CT_OK(utc_request_test(&r8, &done, NULL));
    CT_CHECK(done == 0 && r8 != NULL, "a read with nothing written is done");
    CT_OK(utc_conduit_write(d, &go, sizeof go, 20));
    /* nothing was lost to the cancel or the timeouts */
    CT_OK(utc_request_wait(&r8, &got));
    CT_CHECK(v8 == 1, "the iread of tag 8 got %d", v8);
    CT_OK(utc_conduit_read(d, &v, sizeof v, 7, &got));
    CT_CHECK(v == 42 && a == -1, "after a cancel: the next read got %d, the canceled one %d", v, a);
    CT_OK(utc_conduit_read_timeout(d, &v, sizeof v, 8, &got, 30.0));
    CT_CHECK(v == 2, "after the timeouts: %d", v);
    /* canceling a read that may have its message already: it completes, or is withdrawn
     * and the message goes to the next read; never lost, never twice */
    utc_msg_info_t info;
    CT_OK(utc_conduit_probe(d, 21, &info));
    static int c21 = -1;
    int rc = UTC_ERR_INTERNAL;
    if (CT_OK(utc_conduit_iread(d, &c21, sizeof c21, 21, &r))) {
        CT_OK(utc_request_cancel(&r));
        rc = utc_request_wait(&r, NULL);
    }
    CT_CHECK(rc == UTC_OK || rc == UTC_ERR_CANCELED, "canceled iread: %d (%s)", rc,
             utc_status_string(rc));
    if (rc == UTC_ERR_CANCELED)
        CT_OK(utc_conduit_read(d, &c21, sizeof c21, 21, NULL));
    CT_CHECK(c21 == 77, "the message of the canceled read: %d", c21);
    CT_OK(utc_conduit_read(d, &v, sizeof v, 22, NULL));
    CT_CHECK(v == 99, "the canceled write: %d", v);
    return 0;
}

static void test_cancel_timeout(void)
{
    cf_case(1, cancel_a, 1, cancel_b);
}

/* ---- destroy with operations pending ---- */

static atomic_int entered; /* task threads of this rank that are about to block */

static int pending_a(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    /* kept until the process ends: a message may stay in MPI's hands until the destroy */
    static unsigned char big[8 << 20], mid[1 << 20];
    utc_request_t *r = NULL;
    CT_OK(utc_conduit_iwrite(d, big, sizeof big, 1, &r));
    atomic_fetch_add(&entered, 1);
    int rc = utc_conduit_write(d, mid, sizeof mid, 2); /* nobody reads it */
    CT_CHECK(rc == UTC_ERR_CANCELED || rc == UTC_OK, "blocked write: %d (%s): %s", rc,
             utc_status_string(rc), utc_last_error());
    rc = r ? utc_request_wait(&r, NULL) : UTC_ERR_CANCELED;
    CT_CHECK(rc == UTC_ERR_CANCELED || rc == UTC_OK, "pending iwrite: %d (%s): %s", rc,
             utc_status_string(rc), utc_last_error());
    return 0;
}

static int pending_b(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    static int v;
    int w = 0;
    utc_request_t *r = NULL;
    CT_OK(utc_conduit_iread(d, &v, sizeof v, 3, &r));
    atomic_fetch_add(&entered, 1);
    double t0 = now_s();
    CT_EXPECT(utc_conduit_read_timeout(d, &w, sizeof w, 4, NULL, 20.0), UTC_ERR_CANCELED);
    CT_CHECK(now_s() - t0 < 15.0, "the blocked read ended after %.1f s", now_s() - t0);
    if (r)
        CT_EXPECT(utc_request_wait(&r, NULL), UTC_ERR_CANCELED);
    return 0;
}

static void test_destroy_pending(void)
{
    cf_begin();
    ct_pair_t p = cf_open(1, 1);
    static ct_job_t ja, jb;
    ja = (ct_job_t){pending_a, p.c};
    jb = (ct_job_t){pending_b, p.c};
    int me = utc_test_rank(), mine = (me == ra) + (me == rb);
    atomic_store(&entered, 0);
    UTC_ASSERT_OK(utc_task_run(p.a, &ja));
    UTC_ASSERT_OK(utc_task_run(p.b, &jb));
    for (int i = 0; i < 2000 && atomic_load(&entered) < mine; i++)
        usleep(1000);
    usleep(100000); /* into their waits (the check is the status, not the time) */
    UTC_ASSERT_OK(utc_conduit_destroy(p.c));
    UTC_ASSERT_OK(utc_task_wait(p.a));
    UTC_ASSERT_OK(utc_task_wait(p.b));
    UTC_ASSERT_OK(utc_barrier());
    UTC_ASSERT_OK(utc_task_destroy(p.a));
    UTC_ASSERT_OK(utc_task_destroy(p.b));
    CT_END();
}

/* ---- a failed peer task ---- */

static int fails_after_go(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    int go = 0;
    CT_OK(utc_conduit_read(d, &go, sizeof go, 11, NULL)); /* b's reads are pending */
    return UTC_ERR_IO;
}

static int reads_from_failed(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    static int v9; /* outlives the request */
    int v = 0, go = 1;
    utc_request_t *r = NULL;
    CT_OK(utc_conduit_iread(d, &v9, sizeof v9, 9, &r));
    CT_OK(utc_conduit_write(d, &go, sizeof go, 11));
    CT_EXPECT(utc_conduit_read_timeout(d, &v, sizeof v, 10, NULL, 20.0), UTC_ERR_PEER_FAILED);
    CT_CHECK(strstr(utc_last_error(), "task-a") != NULL, "message: %s", utc_last_error());
    if (r)
        CT_EXPECT(utc_request_wait(&r, NULL), UTC_ERR_PEER_FAILED);
    return 0;
}

/* the writer's large message may stay in MPI's hands until the destroy */
static unsigned char to_failed[MIB];

static int writes_to_failed(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    int go = 0, v = 0;
    CT_OK(utc_conduit_read(d, &go, sizeof go, 12, NULL));
    int rc = utc_conduit_write(d, to_failed, sizeof to_failed, 13); /* nobody reads it */
    CT_CHECK(rc == UTC_ERR_PEER_FAILED || rc == UTC_OK, "write to a failed reader: %d (%s)", rc,
             utc_status_string(rc));
    CT_EXPECT(utc_conduit_read_timeout(d, &v, sizeof v, 14, NULL, 20.0), UTC_ERR_PEER_FAILED);
    CT_CHECK(strstr(utc_last_error(), "task-b") != NULL, "message: %s", utc_last_error());
    return 0;
}

static int fails_after_handshake(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    int go = 1;
    CT_OK(utc_conduit_write(d, &go, sizeof go, 12));
    usleep(50000); /* the writer is into its write */
    return UTC_ERR_IO;
}

static int good_a(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    cf_send(d, 65536, seed_of(15, 0, 0), 15);
    cf_recv(d, 8, 8, seed_of(15, 0, 1), 15);
    return 0;
}

static int good_b(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    cf_recv(d, 65536, 65536, seed_of(15, 0, 0), 15);
    cf_send(d, 8, seed_of(15, 0, 1), 15);
    return 0;
}

static void test_peer_failed(void)
{
    cf_begin();
    ct_pair_t p = cf_open(1, 1);
    /* the writer fails: the reader's blocked read and pending iread end */
    cf_run_rc(&p, fails_after_go, UTC_ERR_IO, reads_from_failed, UTC_OK);
    ct_pair_run(&p, good_a, good_b); /* a new run works */
    /* the reader fails: the writer's write and next read end */
    cf_run_rc(&p, writes_to_failed, UTC_OK, fails_after_handshake, UTC_ERR_IO);
    /* the failed task's run is queued first: until then a's operations still fail */
    ct_run2(p.b, good_b, p.c, p.a, good_a, p.c);
    ct_pair_close(&p);
    CT_END();
}

/* Test r (never wait) every millisecond until it completes: its status, or
 * UTC_ERR_TIMEOUT after limit_s. */
static int test_until(utc_request_t **r, double limit_s)
{
    double end = now_s() + limit_s;
    while (now_s() < end) {
        int done = 0;
        int rc = utc_request_test(r, &done, NULL);
        if (done || rc != UTC_OK)
            return rc;
        usleep(1000);
    }
    return UTC_ERR_TIMEOUT;
}

static int tests_read_from_failed(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    static int v; /* outlives the request */
    int go = 1;
    utc_request_t *r = NULL;
    if (!CT_OK(utc_conduit_iread(d, &v, sizeof v, 18, &r)))
        return 0;
    CT_OK(utc_conduit_write(d, &go, sizeof go, 11));
    CT_EXPECT(test_until(&r, 20.0), UTC_ERR_PEER_FAILED);
    if (r) { /* still pending: given up */
        (void)utc_request_cancel(&r);
        (void)utc_request_wait(&r, NULL);
    }
    return 0;
}

static int tests_write_to_failed(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    static int v;
    int go = 0;
    utc_request_t *w = NULL, *r = NULL;
    CT_OK(utc_conduit_read(d, &go, sizeof go, 12, NULL));
    if (!CT_OK(utc_conduit_iwrite(d, to_failed, sizeof to_failed, 19, &w))) /* nobody reads */
        return 0;
    int rc = test_until(&w, 20.0);
    CT_CHECK(rc == UTC_ERR_PEER_FAILED || rc == UTC_OK, "a tested write to a failed reader: "
             "%d (%s)", rc, utc_status_string(rc));
    /* a read from it: refused at its start, or ended when tested */
    rc = utc_conduit_iread(d, &v, sizeof v, 20, &r);
    if (rc == UTC_OK)
        rc = test_until(&r, 20.0);
    CT_CHECK(rc == UTC_ERR_PEER_FAILED, "a read from a failed writer: %d (%s)", rc,
             utc_status_string(rc));
    return 0;
}

/* The same failures, seen by requests that are only tested, never waited for. */
static void test_peer_failed_tested(void)
{
    cf_begin();
    ct_pair_t p = cf_open(1, 1);
    cf_run_rc(&p, fails_after_go, UTC_ERR_IO, tests_read_from_failed, UTC_OK);
    ct_pair_run(&p, good_a, good_b);
    cf_run_rc(&p, tests_write_to_failed, UTC_OK, fails_after_handshake, UTC_ERR_IO);
    ct_run2(p.b, good_b, p.c, p.a, good_a, p.c);
    ct_pair_close(&p);
    CT_END();
}

/* ---- threads on both ends ---- */

#define MT_THREADS 3
#define NMT        40
static const size_t mt_sizes[] = {8, 4096, 65536, MIB};

typedef struct mt {
    utc_conduit_t *c;
    unsigned char *buf; /* shared by the task's threads on this rank */
} mt_t;

/* Calls made by every thread with the same arguments, then each thread on its own tag with
 * the _by forms and with requests, then a probe from every reading thread. */
static int mt_a(utc_ctx_t *ctx, void *d)
{
    mt_t *m = d;
    int t = ctx->local_id;
    for (int i = 0; i < NMT; i++) {
        size_t n = mt_sizes[i % 4];
        if (t == 0)
            ct_fill(m->buf, n, seed_of(1, i, 0));
        utc_ctx_barrier_local(ctx);
        CT_OK(utc_conduit_write(m->c, m->buf, n, 1));
        utc_ctx_barrier_local(ctx); /* all have returned before the buffer is refilled */
    }
    unsigned char *b = cf_alloc(65536);
    if (!b)
        return -1;
    for (int i = 0; i < NMT; i++) {
        size_t n = mt_sizes[i % 3];
        ct_fill(b, n, seed_of(20 + t, i, 0));
        CT_OK(utc_conduit_write_by(m->c, t, b, n, 20 + t));
    }
    free(b);
    unsigned char *bs[16];
    utc_request_t *r[16];
    for (int i = 0; i < 16; i++) {
        bs[i] = cf_msg(mt_sizes[i % 3], seed_of(30 + t, i, 0));
        r[i] = NULL;
        if (bs[i])
            CT_OK(utc_conduit_iwrite(m->c, bs[i], mt_sizes[i % 3], 30 + t, &r[i]));
    }
    CT_OK(utc_request_waitall(16, r, NULL, NULL));
    for (int i = 0; i < 16; i++)
        free(bs[i]);
    if (t == 0) {
        unsigned char *p = cf_msg(777, seed_of(40, 0, 0));
        if (p)
            CT_OK(utc_conduit_write_by(m->c, 0, p, 777, 40));
        free(p);
    }
    return 0;
}

static int mt_b(utc_ctx_t *ctx, void *d)
{
    mt_t *m = d;
    int t = ctx->local_id;
    for (int i = 0; i < NMT; i++) {
        size_t n = mt_sizes[i % 4], got = 0;
        CT_OK(utc_conduit_read(m->c, m->buf, MIB, 1, &got));
        CT_CHECK(got == n && ct_verify(m->buf, n, seed_of(1, i, 0)),
                 "thread %d, message %d: %zu bytes (%zu expected) or contents differ", t, i, got,
                 n);
        utc_ctx_barrier_local(ctx);
    }
    unsigned char *b = cf_alloc(65536);
    if (!b)
        return -1;
    for (int i = 0; i < NMT; i++) {
        size_t n = mt_sizes[i % 3], got = 0;
        CT_OK(utc_conduit_read_by(m->c, t, b, 65536, 20 + t, &got));
        CT_CHECK(got == n && ct_verify(b, n, seed_of(20 + t, i, 0)),
                 "read_by thread %d, message %d: %zu bytes or contents differ", t, i, got);
    }
    free(b);
    unsigned char *bs[16];
    utc_request_t *r[16];
    size_t got[16];
    for (int i = 0; i < 16; i++) {
        bs[i] = cf_alloc(mt_sizes[i % 3]);
        r[i] = NULL;
        if (bs[i])
            CT_OK(utc_conduit_iread(m->c, bs[i], mt_sizes[i % 3], 30 + t, &r[i]));
    }
    CT_OK(utc_request_waitall(16, r, NULL, got));
    for (int i = 0; i < 16; i++) {
        CT_CHECK(got[i] == mt_sizes[i % 3] && ct_verify(bs[i], got[i], seed_of(30 + t, i, 0)),
                 "iread thread %d, %d: %zu bytes or contents differ", t, i, got[i]);
        free(bs[i]);
    }
    utc_msg_info_t info = {0};
    CT_OK(utc_conduit_probe(m->c, 40, &info));
    check_info(&info, 777, 40, "a probe from every thread");
    utc_ctx_barrier_local(ctx); /* every thread has probed before it is read */
    size_t n = 0;
    CT_OK(utc_conduit_read_by(m->c, 0, m->buf, 777, 40, &n));
    CT_CHECK(t != 0 || (n == 777 && ct_verify(m->buf, 777, seed_of(40, 0, 0))),
             "the probed message: %zu bytes or contents differ", n);
    return 0;
}

static void test_threads(void)
{
    cf_begin();
    ct_pair_t p = cf_open(MT_THREADS, MT_THREADS);
    mt_t ma = {p.c, malloc(MIB)}, mb = {p.c, malloc(MIB)};
    CU_ASSERT_FATAL(ma.buf && mb.buf);
    ct_run2(p.a, mt_a, &ma, p.b, mt_b, &mb);
    free(ma.buf), free(mb.buf);
    ct_pair_close(&p);
    CT_END();
}

/* ---- free mode: every rank of one task with every rank of the other ---- */

typedef struct fm {
    utc_conduit_t *c;
    int npeer;
    int peer[3]; /* the other task's ranks, ascending */
} fm_t;

/* b's ranks, one thread each: 8 B and 64 KiB as requests and 1,000 B blocking to each;
 * then from each a probed, a plain, an owned and an any-tag read; then a 1 MiB swap with
 * each (sendrecv). */
static int fm_a(utc_ctx_t *ctx, void *d)
{
    fm_t *f = d;
    int x = ctx->world_rank;
    unsigned char *b[6] = {0};
    utc_request_t *r[6] = {0};
    for (int k = 0; k < f->npeer; k++) {
        int y = f->peer[k];
        b[2 * k] = cf_msg(8, seed_of(1, y, x));
        b[2 * k + 1] = cf_msg(65536, seed_of(1, 100 + y, x));
        if (b[2 * k] && b[2 * k + 1]) {
            CT_OK(utc_conduit_iwrite_to(f->c, y, b[2 * k], 8, 1, &r[2 * k]));
            CT_OK(utc_conduit_iwrite_to(f->c, y, b[2 * k + 1], 65536, 1, &r[2 * k + 1]));
        }
    }
    unsigned char *m = cf_alloc(MIB);
    unsigned char *in = cf_alloc(MIB);
    if (!m || !in)
        goto out;
    for (int k = 0; k < f->npeer; k++) {
        ct_fill(m, 1000, seed_of(2, f->peer[k], x));
        CT_OK(utc_conduit_write_to(f->c, f->peer[k], m, 1000, 2));
    }
    CT_OK(utc_request_waitall(2 * f->npeer, r, NULL, NULL));
    for (int k = 0; k < f->npeer; k++) {
        int y = f->peer[k];
        utc_msg_info_t info = {0};
        size_t got = 0;
        CT_OK(utc_conduit_probe_from(f->c, y, 3, &info));
        CT_CHECK(info.size == 4096 && info.tag == 3 && info.peer == y,
                 "probe_from(%d): %zu bytes, tag %d, peer %d", y, info.size, info.tag, info.peer);
        int found = 0;
        CT_OK(utc_conduit_iprobe_from(f->c, y, 3, &found, &info));
        CT_CHECK(found == 1, "iprobe_from(%d) after its probe found nothing", y);
        CT_OK(utc_conduit_read_from(f->c, y, in, 4096, 3, &got));
        CT_CHECK(got == 4096 && ct_verify(in, got, seed_of(3, x, y)), "read_from(%d)", y);
        void *ob = NULL;
        if (CT_OK(utc_conduit_read_owned_from(f->c, y, 5, &ob, &got))) {
            CT_CHECK(got == 65536 && ct_verify(ob, got, seed_of(5, x, y)), "read_owned_from(%d)",
                     y);
            utc_buf_free(ob);
        }
        CT_OK(utc_conduit_read_any_from(f->c, y, in, 100, &info));
        CT_CHECK(info.tag == 4 && info.size == 100 && info.peer == y &&
                     ct_verify(in, 100, seed_of(4, x, y)),
                 "read_any_from(%d): tag %d, %zu bytes", y, info.tag, info.size);
    }
    for (int k = 0; k < f->npeer; k++) {
        int y = f->peer[k];
        size_t got = 0;
        ct_fill(m, MIB, seed_of(6, y, x));
        CT_OK(utc_conduit_sendrecv(f->c, y, m, MIB, 6, y, in, MIB, 7, &got));
        CT_CHECK(got == MIB && ct_verify(in, got, seed_of(7, x, y)), "sendrecv with %d", y);
    }
out:
    for (int i = 0; i < 6; i++)
        free(b[i]);
    free(m), free(in);
    return 0;
}

static int fm_b(utc_ctx_t *ctx, void *d)
{
    fm_t *f = d;
    int y = ctx->world_rank;
    unsigned char *m = cf_alloc(MIB), *in = cf_alloc(MIB);
    if (!m || !in)
        goto out;
    for (int k = 0; k < f->npeer; k++) {
        int x = f->peer[k];
        size_t got = 0;
        CT_OK(utc_conduit_read_from(f->c, x, in, 8, 1, &got));
        CT_CHECK(got == 8 && ct_verify(in, 8, seed_of(1, y, x)), "8 B from %d", x);
        CT_OK(utc_conduit_read_from(f->c, x, in, 65536, 1, &got));
        CT_CHECK(got == 65536 && ct_verify(in, got, seed_of(1, 100 + y, x)), "64 KiB from %d", x);
        CT_OK(utc_conduit_read_from_timeout(f->c, x, in, 1000, 2, &got, 30.0));
        CT_CHECK(got == 1000 && ct_verify(in, got, seed_of(2, y, x)), "1000 B from %d", x);
    }
    for (int k = 0; k < f->npeer; k++) {
        int x = f->peer[k];
        ct_fill(m, 4096, seed_of(3, x, y));
        CT_OK(utc_conduit_write_to(f->c, x, m, 4096, 3));
        ct_fill(m, 100, seed_of(4, x, y));
        CT_OK(utc_conduit_write_to(f->c, x, m, 100, 4));
        ct_fill(m, 65536, seed_of(5, x, y)); /* read into a buffer of the reader's */
        CT_OK(utc_conduit_write_to(f->c, x, m, 65536, 5));
    }
    for (int k = 0; k < f->npeer; k++) {
        int x = f->peer[k];
        size_t got = 0;
        ct_fill(m, MIB, seed_of(7, x, y));
        CT_OK(utc_conduit_sendrecv(f->c, x, m, MIB, 7, x, in, MIB, 6, &got));
        CT_CHECK(got == MIB && ct_verify(in, got, seed_of(6, y, x)), "sendrecv with %d", x);
    }
out:
    free(m), free(in);
    return 0;
}

/* The ranks of a free-mode task whose entry is `entry`: the entry first, then, for a
 * transport between ranks, every other rank (one thread each). */
static int fm_procs(int entry, int *procs)
{
    int n = 0;
    procs[n++] = entry;
    for (int r = 0; tp->place == CF_TWO_RANKS && r < utc_test_nranks(); r++)
        if (r != entry)
            procs[n++] = r;
    return n;
}

static void fm_peers(fm_t *f, const int *procs, int n)
{
    f->npeer = 0;
    for (int r = 0; r < utc_test_nranks(); r++)
        for (int i = 0; i < n; i++)
            if (procs[i] == r) {
                f->peer[f->npeer++] = r;
                break;
            }
}

static void test_free_mode(void)
{
    cf_begin();
    int pa[3], pb[3], na = fm_procs(ra, pa), nb = fm_procs(rb, pb);
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.mode = UTC_CONDUIT_FREE;
    ct_pair_t p = ct_pair_open_procs(pa, na, pb, nb, &o);
    cf_check_transport(p.c);
    fm_t fa = {.c = p.c}, fb = {.c = p.c};
    fm_peers(&fa, pb, nb);
    fm_peers(&fb, pa, na);
    ct_run2(p.a, fm_a, &fa, p.b, fm_b, &fb);
    ct_pair_close(&p);
    CT_END();
}

/* ---- shared conduits ---- */

#define NSH  100
#define SH_W 2 /* writers, on ra */
#define SH_R 2 /* readers, on rb */

typedef struct sh_hdr {
    int writer, seq;
} sh_hdr_t;

typedef struct sh {
    utc_conduit_t *c;
    int id;
    int got; /* a reader's message count */
} sh_t;

static atomic_int sh_seen[SH_W][NSH]; /* how many readers got each message (on rb) */

static size_t sh_size(int i)
{
    static const size_t s[] = {0, 1000, 60000};
    return sizeof(sh_hdr_t) + s[i % 3];
}

static int sh_writer(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    sh_t *s = d;
    unsigned char *b = cf_alloc(sh_size(2));
    if (!b)
        return -1;
    for (int i = 0; i < NSH; i++) {
        sh_hdr_t h = {s->id, i};
        memcpy(b, &h, sizeof h);
        ct_fill(b + sizeof h, sh_size(i) - sizeof h, seed_of(s->id, i, 0));
        CT_OK(utc_conduit_write(s->c, b, sh_size(i), 0));
    }
    CT_OK(utc_conduit_close(s->c));
    free(b);
    return 0;
}

/* Read until the end of stream; each writer's messages in write order. */
static int sh_reader(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    sh_t *s = d;
    unsigned char *b = cf_alloc(sh_size(2));
    int last[SH_W] = {-1, -1};
    if (!b)
        return -1;
    for (;;) {
        size_t got = 0;
        int rc = utc_conduit_read_timeout(s->c, b, sh_size(2), 0, &got, 30.0);
        if (rc == UTC_ERR_CLOSED)
            break;
        if (!CT_OK(rc))
            break;
        sh_hdr_t h;
        memcpy(&h, b, sizeof h);
        if (got < sizeof h || h.writer < 0 || h.writer >= SH_W || h.seq < 0 || h.seq >= NSH) {
            CT_CHECK(0, "reader %d: a message of %zu bytes from writer %d, number %d", s->id, got,
                     h.writer, h.seq);
            continue;
        }
        CT_CHECK(h.seq > last[h.writer], "reader %d: writer %d's message %d after %d", s->id,
                 h.writer, h.seq, last[h.writer]);
        last[h.writer] = h.seq;
        CT_CHECK(got == sh_size(h.seq) &&
                     ct_verify(b + sizeof h, got - sizeof h, seed_of(h.writer, h.seq, 0)),
                 "reader %d: writer %d's message %d: %zu bytes or contents differ", s->id, h.writer,
                 h.seq, got);
        atomic_fetch_add(&sh_seen[h.writer][h.seq], 1);
        s->got++;
    }
    free(b);
    return 0;
}

static void shared_case(utc_shared_mode_t mode)
{
    cf_begin();
    utc_task_t *t[SH_W + SH_R];
    for (int i = 0; i < SH_W; i++)
        t[i] = ct_task(&ct_ops_a, ra, 1);
    for (int i = 0; i < SH_R; i++)
        t[SH_W + i] = ct_task(&ct_ops_b, rb, 1);
    utc_conduit_t *c = NULL;
    UTC_ASSERT_OK(utc_conduit_create_shared(t, SH_W, t + SH_W, SH_R, mode, NULL, &c));
    cf_check_transport(c);
    memset(sh_seen, 0, sizeof sh_seen);
    sh_t s[SH_W + SH_R];
    ct_job_t j[SH_W + SH_R];
    for (int i = 0; i < SH_W + SH_R; i++) {
        s[i] = (sh_t){c, i < SH_W ? i : i - SH_W, 0};
        j[i] = (ct_job_t){i < SH_W ? sh_writer : sh_reader, &s[i]};
        UTC_ASSERT_OK(utc_task_run(t[i], &j[i]));
    }
    for (int i = 0; i < SH_W + SH_R; i++)
        UTC_ASSERT_OK(utc_task_wait(t[i]));
    UTC_ASSERT_OK(utc_barrier());
    if (utc_test_rank() == rb) {
        int want = mode == UTC_SHARED_PUBLISH ? SH_R : 1, bad = 0, total = 0;
        for (int w = 0; w < SH_W; w++)
            for (int i = 0; i < NSH; i++)
                bad += atomic_load(&sh_seen[w][i]) != want;
        for (int i = 0; i < SH_R; i++) {
            total += s[SH_W + i].got;
            if (mode == UTC_SHARED_PUBLISH)
                CU_ASSERT_EQUAL(s[SH_W + i].got, SH_W * NSH);
        }
        if (bad)
            printf("\n    %d messages not read %d time(s) each", bad, want);
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT_EQUAL(total, want * SH_W * NSH);
    }
    UTC_ASSERT_OK(utc_conduit_destroy(c));
    for (int i = 0; i < SH_W + SH_R; i++)
        UTC_ASSERT_OK(utc_task_destroy(t[i]));
    CT_END();
}

static void test_shared_publish(void)
{
    shared_case(UTC_SHARED_PUBLISH);
}

static void test_shared_share(void)
{
    shared_case(UTC_SHARED_SHARE);
}

/* ---- 10,000 conduits ---- */

#define NMANY 10000

typedef struct many {
    utc_conduit_t **c;
} many_t;

/* this process's resident memory in KiB (VmRSS), or -1 */
static long vm_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

static atomic_long rss_peak_kib; /* VmRSS with every conduit used, on ranks with a task */

static int many_a(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    many_t *m = d;
    for (int i = 0; i < NMANY; i++)
        CT_OK(utc_conduit_write(m->c[i], &i, sizeof i, 0));
    for (int i = 0; i < NMANY; i++) {
        int v = 0;
        CT_OK(utc_conduit_read(m->c[i], &v, sizeof v, 1, NULL));
        CT_CHECK(v == -i, "conduit %d: reply %d", i, v);
    }
    atomic_store(&rss_peak_kib, vm_rss_kib());
    return 0;
}

static int many_b(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    many_t *m = d;
    for (int i = 0; i < NMANY; i++) {
        int v = -1;
        size_t got = 0;
        CT_OK(utc_conduit_read(m->c[i], &v, sizeof v, 0, &got));
        CT_CHECK(v == i && got == sizeof v, "conduit %d: got %d", i, v);
        v = -i;
        CT_OK(utc_conduit_write(m->c[i], &v, sizeof v, 1));
    }
    atomic_store(&rss_peak_kib, vm_rss_kib());
    return 0;
}

static void test_many(void)
{
    cf_begin();
    utc_task_t *a = ct_task(&ct_ops_a, ra, 1), *b = ct_task(&ct_ops_b, rb, 1);
    many_t m = {calloc(NMANY, sizeof(utc_conduit_t *))};
    CU_ASSERT_FATAL(m.c != NULL);
    long before = vm_rss_kib();
    double t0 = now_s();
    for (int i = 0; i < NMANY; i++)
        UTC_ASSERT_OK(utc_conduit_create(a, b, NULL, &m.c[i]));
    cf_check_transport(m.c[0]);
    cf_check_transport(m.c[NMANY - 1]);
    double t1 = now_s();
    ct_run2(a, many_a, &m, b, many_b, &m);
    double t2 = now_s();
    for (int i = 0; i < NMANY; i++)
        UTC_ASSERT_OK(utc_conduit_destroy(m.c[i]));
    double t3 = now_s();
    long after = vm_rss_kib();
    int me = utc_test_rank();
    if (me == ra || me == rb)
        printf("\n    rank %d: %d %s conduits: create %.2f s, a message each way %.2f s, "
               "destroy %.2f s; VmRSS %ld MB before, %ld MB with all used, %ld MB after",
               me, NMANY, tp->name, t1 - t0, t2 - t1, t3 - t2, before >> 10,
               atomic_load(&rss_peak_kib) >> 10, after >> 10);
    fflush(stdout);
    free(m.c);
    UTC_ASSERT_OK(utc_task_destroy(a));
    UTC_ASSERT_OK(utc_task_destroy(b));
    CT_END();
}

/* ---- a killed peer (check_kill.sh) ---- */

static utc_conduit_t *kill_c;

static int kill_writer(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx;
    int v = 1;
    if (utc_conduit_write(kill_c, &v, sizeof v, 1) != UTC_OK)
        fprintf(stderr, "conformance kill: the first write failed: %s\n", utc_last_error());
    usleep(500000); /* the reader is asleep in its next read by now */
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    FILE *f = fopen(arg, "w");
    if (f) {
        fprintf(f, "%ld.%09ld\n", (long)t.tv_sec, t.tv_nsec);
        fclose(f);
    }
    fprintf(stderr, "conformance kill (%s): rank %d raises SIGKILL\n", tp->name, utc_rank());
    raise(SIGKILL);
    return 0;
}

static int kill_reader(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    int v = 0;
    if (utc_conduit_read(kill_c, &v, sizeof v, 1, NULL) != UTC_OK)
        fprintf(stderr, "conformance kill: the first read failed: %s\n", utc_last_error());
    int rc = utc_conduit_read(kill_c, &v, sizeof v, 1, NULL);
    fprintf(stderr, "conformance kill (%s): the survivor's read returned %d (%s): %s\n", tp->name,
            rc, utc_status_string(rc), utc_last_error());
    return 0;
}

static const utc_task_ops_t kill_writer_ops = {
    .name = "killed_writer", .size = sizeof(ct_task_t), .run = kill_writer};
static const utc_task_ops_t kill_reader_ops = {
    .name = "survivor_reader", .size = sizeof(ct_task_t), .run = kill_reader};

/* Rank 1 writes once, then is killed while rank 0 (2 ranks) or 2 (3 ranks) reads. The job
 * must end, non-zero, within 10 s (check_kill.sh); a rank still alive after 30 s says so. */
static int mode_kill(const char *file)
{
    int me = utc_rank(), wp[1] = {1}, rp[1] = {utc_nranks() > 2 ? 2 : 0};
    utc_task_t *w = NULL, *r = NULL;
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    if (tp->device) { /* a device conduit (host buffers): every rank needs a GPU */
        int have = utc_gpu_device_count() > 0, all = 0;
        MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!all) {
            if (me == 0)
                fprintf(stderr, "conformance kill (%s): skipped: %s\n", tp->name,
                        have ? "a rank has no GPU" : utc_gpu_unavailable_reason());
            utc_finalize();
            exit(77);
        }
        o.memory = UTC_CONDUIT_MEM_DEVICE;
    }
    if (utc_task_create(&kill_writer_ops, wp, 1, NULL, &w) != UTC_OK ||
        utc_task_create(&kill_reader_ops, rp, 1, NULL, &r) != UTC_OK ||
        utc_conduit_create(w, r, &o, &kill_c) != UTC_OK) {
        fprintf(stderr, "conformance kill: setup: %s\n", utc_last_error());
        return 1;
    }
    if (utc_conduit_transport(kill_c) != tp->kind) {
        fprintf(stderr, "conformance kill: the conduit uses '%s', not '%s'\n",
                kind_name(utc_conduit_transport(kill_c)), tp->name);
        return 1;
    }
    if (utc_task_run(w, (void *)file) != UTC_OK || utc_task_run(r, NULL) != UTC_OK)
        return 1;
    (void)utc_task_wait(r); /* returns only if the transport releases the survivor */
    sleep(30);
    fprintf(stderr, "conformance kill: rank %d still alive 30 s after rank 1 was killed\n", me);
    _exit(3);
}

/* ---- main ---- */

static const utc_test_case_t cases[] = {
    {"sizes 0 B to 8 MiB, both directions, contents", test_sizes},
    {"sizes as requests, reads posted first", test_sizes_async},
    {"tags in order and independent", test_tags},
    {"any-tag reads", test_any_tag},
    {"probe and iprobe", test_probe},
    {"truncation: the message stays first", test_truncate},
    {"owned buffers", test_owned},
    {"256 requests in flight", test_inflight},
    {"both directions at once", test_duplex},
    {"close: end of stream", test_close},
    {"cancel and timed-out reads", test_cancel_timeout},
    {"destroy with operations pending", test_destroy_pending},
    {"a failed peer task", test_peer_failed},
    {"a failed peer task, seen by requests only tested", test_peer_failed_tested},
    {"threads on both ends", test_threads},
    {"free mode, named peers", test_free_mode},
    {"shared conduit, publish", test_shared_publish},
    {"shared conduit, share", test_shared_share},
    {"10,000 conduits", test_many},
    UTC_TEST_END};

/* The cases a device conduit runs. A device write between ranks is a rendezvous (it
 * returns once the reader has its data, as MPI_Ssend): where a case's reader takes
 * messages in another order than written, its writer writes them as requests on a device
 * conduit (cf_put). Not for it: shared conduits (it refuses them), owned buffers
 * (utc_buf_alloc's: a device conduit hands over utc_gpu_malloc's; test_conduit_device
 * covers them), threads, free mode, 10,000 conduits. Both directions at once runs: a
 * thread blocked in a read moves its own staged write on (the device transport's
 * drive). */
static const utc_test_case_t device_cases[] = {
    {"sizes 0 B to 8 MiB, both directions, contents", test_sizes},
    {"sizes as requests, reads posted first", test_sizes_async},
    {"tags in order and independent", test_tags},
    {"truncation: the message stays first", test_truncate},
    {"256 requests in flight", test_inflight},
    {"both directions at once", test_duplex},
    {"any-tag reads", test_any_tag},
    {"probes", test_probe},
    {"close: end of stream", test_close},
    {"cancel and timed-out reads", test_cancel_timeout},
    {"destroy with operations pending", test_destroy_pending},
    {"a failed peer task", test_peer_failed},
    {"a failed peer task, seen by requests only tested", test_peer_failed_tested},
    UTC_TEST_END};

static void usage(void)
{
    fprintf(stderr, "usage: test_conformance [--transport NAME] [--only CASE | --skip CASE] "
                    "[kill FILE]\n"
                    "  NAME (or UTC_CONFORMANCE_TRANSPORT):");
    for (int i = 0; i < NTRANSPORTS; i++)
        fprintf(stderr, " %s", transports[i].name);
    fprintf(stderr, "\n");
}

/* The cases of `all` named `only` (when not NULL) and not named `skip`, into `out` (room
 * for every case of `all` and the end). Returns how many, or -1 when a given name is none
 * of them (printed with the names there are). */
static int select_cases(const utc_test_case_t *all, const char *only, const char *skip,
                        utc_test_case_t *out)
{
    int n = 0, found = 0;
    for (const utc_test_case_t *c = all; c->name; c++) {
        bool named = (only && !strcmp(c->name, only)) || (skip && !strcmp(c->name, skip));
        found += named;
        if (only ? named : !named)
            out[n++] = *c;
    }
    out[n] = (utc_test_case_t)UTC_TEST_END;
    if (found == 0 && (only || skip)) {
        fprintf(stderr, "test_conformance: no case '%s' for transport '%s'; its cases:\n",
                only ? only : skip, tp->name);
        for (const utc_test_case_t *c = all; c->name; c++)
            fprintf(stderr, "  %s\n", c->name);
        return -1;
    }
    return n;
}

int main(int argc, char **argv)
{
    const char *name = getenv("UTC_CONFORMANCE_TRANSPORT"), *kill_file = NULL;
    const char *only = NULL, *skip = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--transport") && i + 1 < argc)
            name = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc && !skip)
            only = argv[++i];
        else if (!strcmp(argv[i], "--skip") && i + 1 < argc && !only)
            skip = argv[++i];
        else if (!strcmp(argv[i], "kill") && i + 1 < argc)
            kill_file = argv[++i];
        else {
            usage();
            return 2;
        }
    }
    for (int i = 0; name && i < NTRANSPORTS; i++)
        if (!strcmp(name, transports[i].name))
            tp = &transports[i];
    if (!tp) {
        fprintf(stderr, "test_conformance: %s transport '%s'\n", name ? "unknown" : "no",
                name ? name : "");
        usage();
        return 2;
    }
    if (tp->env)
        setenv("UTC_TRANSPORT", tp->env, 1);
    setvbuf(stdout, NULL, _IOLBF, 0); /* the case names appear as they start */
    char suite[64];
    snprintf(suite, sizeof suite, "conduit conformance: %s", tp->name);
    if (kill_file) {
        if (tp->place != CF_TWO_RANKS) {
            fprintf(stderr, "test_conformance kill: '%s' is not a transport between ranks\n",
                    tp->name);
            return 2;
        }
        if (utc_init(&argc, &argv) != UTC_OK) {
            fprintf(stderr, "test_conformance: utc_init: %s\n", utc_last_error());
            return 1;
        }
        if (utc_nranks() < 2) {
            fprintf(stderr, "test_conformance kill: needs 2 or more ranks\n");
            return 2;
        }
        return mode_kill(kill_file);
    }
    _Static_assert(sizeof device_cases <= sizeof cases, "chosen has room for either list");
    static utc_test_case_t chosen[sizeof cases / sizeof cases[0]];
    if (select_cases(tp->device ? device_cases : cases, only, skip, chosen) < 0)
        return 2;
    return utc_test_main(argc, argv, suite, chosen);
}
