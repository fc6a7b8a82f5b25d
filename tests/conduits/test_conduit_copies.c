/*
 * Messages that come before their reads (doc/ROBUSTNESS.md, row 86). A transport between
 * ranks takes them out of its ring (the node transport's queue) or out of MPI (the MPI
 * transport's stash) into copies of its own, buffers of utc_buf_alloc so that an owned read
 * can take one as it is. A copy read into the reader's own buffer was never anyone else's:
 * it must go back to the allocator at once, not wait in utc_buf_free's quarantine (the last
 * 1,024 frees, kept to catch a user's use of a buffer after its free). Before, every such
 * copy waited there: 6-7 MiB of a 3-rank soak's resident memory, up to 64 MiB, and the
 * delayed frees fragmented the heap (the step in the netns 2-host soak's resident memory).
 *
 * Cases, each in-process and between ranks (ct_each_placement), on the quarantine's count
 * (conduits/service/buffer.h) on every rank before and after:
 * - early messages read into the reader's buffers (the first one after a read too small
 *   for it) leave nothing in the quarantine;
 * - early messages read with owned reads are the reader's: its frees are quarantined, one
 *   each (the copies were handed over, not discarded under it).
 *
 *   test_conduit_copies node|mpi
 * node: the node-local transport between ranks of a host, large messages pipelined through
 * its ring (UTC_NODE_CMA=0: the path that copies); mpi: UTC_TRANSPORT=mpi.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "conduit_test_util.h"
#include "service/buffer.h"

/* Messages per case (the quarantine holds 1,024: room for both cases' frees) and their
 * sizes, in turn: the MPI transport's stash takes those up to its 1,008-byte wire, the
 * node transport copies those over 1 KiB into buffers, pipelines those over 16 KiB. */
#define NMSG 240
static const size_t sizes[] = {100, 1000, 1500, 4000, 20000, 60000};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define MAXSZ  60000
#define TAG    3
#define GO_TAG 9 /* written after the others: read first, the others have come by then */

static size_t size_of(int i) { return sizes[(size_t)i % NSIZES]; }

static size_t quarantined(void)
{
    size_t count = 0, bytes = 0;
    utc__buf_quarantined(&count, &bytes);
    return count;
}

/* The source: every message without waiting (an in-process large write waits for its
 * read), then the go-ahead, then the waits. */
static int write_early(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    unsigned char *bufs = malloc((size_t)NMSG * MAXSZ);
    utc_request_t *req[NMSG];
    int posted = 0;
    CT_CHECK(bufs != NULL, "out of memory");
    for (; bufs && posted < NMSG; posted++) {
        unsigned char *b = bufs + (size_t)posted * MAXSZ;
        ct_fill(b, size_of(posted), (uint64_t)posted);
        if (!CT_OK(utc_conduit_iwrite(c, b, size_of(posted), TAG, &req[posted])))
            break;
    }
    int go = 1;
    CT_OK(utc_conduit_write(c, &go, sizeof go, GO_TAG));
    for (int i = 0; i < posted; i++)
        CT_OK(utc_request_wait(&req[i], NULL));
    free(bufs);
    return 0;
}

/* The destination: the go-ahead first (the messages before it are queued by then, or in
 * MPI), then every message, checked; `owned`: by owned reads, each freed by the reader.
 * A plain reader first reads the first message into too small a buffer: it stays first in
 * line (the MPI transport keeps it in its stash, a copy of its own). */
static int read_early(utc_conduit_t *c, bool owned)
{
    int go = 0;
    size_t got = 0;
    CT_OK(utc_conduit_read(c, &go, sizeof go, GO_TAG, &got));
    if (!owned)
        CT_EXPECT(utc_conduit_read(c, &go, sizeof go, TAG, &got), UTC_ERR_TRUNCATE);
    unsigned char *mine = owned ? NULL : malloc(MAXSZ);
    CT_CHECK(owned || mine != NULL, "out of memory");
    for (int i = 0; i < NMSG && (owned || mine); i++) {
        void *b = mine;
        got = 0;
        bool ok = owned ? CT_OK(utc_conduit_read_owned(c, TAG, &b, &got))
                        : CT_OK(utc_conduit_read(c, b, MAXSZ, TAG, &got));
        if (!ok)
            break;
        CT_CHECK(got == size_of(i) && ct_verify(b, got, (uint64_t)i),
                 "message %d: %zu bytes (%zu expected) or its contents differ", i, got,
                 size_of(i));
        if (owned)
            utc_buf_free(b);
    }
    free(mine);
    return 0;
}

static int read_plain(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    return read_early(data, false);
}

static int read_owned(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    return read_early(data, true);
}

/* Run the pair with fb at the destination; the quarantine on each rank must have grown by
 * `per_read` for each message its reader read. */
static void early_case(int ra, int rb, ct_fn_t fb, size_t per_read)
{
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, NULL);
    CU_ASSERT_EQUAL(utc_conduit_transport(p.c), utc_test_transport(ra, rb));
    size_t before = quarantined();
    ct_pair_run(&p, write_early, fb);
    size_t after = quarantined(), want = utc_test_rank() == rb ? per_read * NMSG : 0;
    if (after - before != want)
        printf("\n    rank %d (tasks on ranks %d and %d): the quarantine went from %zu to %zu "
               "buffers, %zu expected", utc_test_rank(), ra, rb, before, after, before + want);
    CU_ASSERT_EQUAL(after - before, want);
    ct_pair_close(&p);
}

static void plain_at(int ra, int rb, void *arg)
{
    (void)arg;
    early_case(ra, rb, read_plain, 0);
}

static void owned_at(int ra, int rb, void *arg)
{
    (void)arg;
    early_case(ra, rb, read_owned, 1);
}

static void test_plain(void)
{
    ct_begin();
    ct_each_placement(true, plain_at, NULL);
    CT_END();
}

static void test_owned(void)
{
    ct_begin();
    ct_each_placement(true, owned_at, NULL);
    CT_END();
}

int main(int argc, char **argv)
{
    /* before utc_init: the transports read them when they set up */
    if (argc > 1 && !strcmp(argv[1], "mpi")) {
        setenv("UTC_TRANSPORT", "mpi", 1);
    } else if (argc > 1 && !strcmp(argv[1], "node")) {
        setenv("UTC_NODE_CMA", "0", 1);
    } else {
        fprintf(stderr, "usage: test_conduit_copies node|mpi\n");
        return 2;
    }
    static const utc_test_case_t cases[] = {
        {"early messages read into the reader's buffers leave nothing in the quarantine",
         test_plain},
        {"early messages read owned are the reader's: its frees are quarantined", test_owned},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "conduit copies", cases);
}
