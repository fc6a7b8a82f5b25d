/*
 * The device conduits' staged pipeline (conduits/device/staged.h) with host buffers on
 * both sides, over a real conduit between two task threads (in-process, and between ranks
 * where there are several): every size from 0 bytes to 13 MiB across the chunk edges, in
 * chunks of 4 KiB, 64 KiB and the default, arrives whole and in order, and nothing beyond
 * the message is written; a transport error midway is returned after every transfer the
 * pipeline started was waited for, the stream marked out of step; after a writer's abort
 * marks midway (sent by hand, as the pipeline sends them after a CUDA error) and after a
 * CUDA error at either end before the first chunk (for want of a device here), the reader
 * has taken every chunk and the next message arrives whole; a chunk of the wrong size
 * marks the stream out of step; bad arguments and a bad UTC_DEVICE_CHUNK are refused with
 * a message; one thread at each end moves a send and a receive of 13 MiB at once (a
 * transfer never blocks: utc__staged_step). Host buffers need no CUDA call, so this runs
 * without a device (the device sides are tested by the GPU suites).
 */
#include <stdlib.h>
#include <string.h>

#include "conduit_test_util.h"
#include "base/errors.h"
#include "device/staged.h"

#define TAG    3
#define GUARD  64
#define MAX_SZ ((size_t)13 << 20) /* beyond 3 default chunks */

/* The io: the conduit's iwrite/iread and utc_request_test; fail_after >= 0 makes the
 * isend of that chunk (counting from 0) fail, as a transport error would. */
typedef struct conduit_io {
    utc_conduit_t *c;
    int fail_after;
    int sends;
    int outstanding; /* handles started and not waited for */
} conduit_io_t;

typedef struct handle {
    utc_request_t *req;
    size_t n;
    bool recv;
} handle_t;

static utc_status_t start(conduit_io_t *io, void *buf, size_t n, bool recv, void **h)
{
    handle_t *x = malloc(sizeof *x);
    if (!x)
        return UTC_ERR_NO_MEMORY;
    *x = (handle_t){.n = n, .recv = recv};
    utc_status_t st = recv ? utc_conduit_iread(io->c, buf, n, TAG, &x->req)
                           : utc_conduit_iwrite(io->c, buf, n, TAG, &x->req);
    if (st != UTC_OK) {
        free(x);
        return st;
    }
    io->outstanding++;
    *h = x;
    return UTC_OK;
}

static utc_status_t io_isend(void *arg, const void *buf, size_t n, void **h)
{
    conduit_io_t *io = arg;
    if (io->fail_after >= 0 && io->sends == io->fail_after)
        return utc__error(UTC_ERR_CANCELED, "test: a transport error injected");
    io->sends++;
    return start(io, (void *)buf, n, false, h);
}

static utc_status_t io_irecv(void *arg, void *buf, size_t n, void **h)
{
    return start(arg, buf, n, true, h);
}

static bool io_test(void *arg, void *h, utc_status_t *status, size_t *received)
{
    conduit_io_t *io = arg;
    handle_t *x = h;
    int done = 0;
    size_t got = 0;
    utc_status_t st = utc_request_test(&x->req, &done, &got);
    if (st == UTC_OK && !done)
        return false;
    *status = st;
    if (received)
        *received = got; /* the pipeline checks it */
    io->outstanding--;
    free(x);
    return true;
}

static utc__staged_io_t make_io(conduit_io_t *io)
{
    return (utc__staged_io_t){.arg = io, .isend = io_isend, .irecv = io_irecv, .test = io_test};
}

/* ---- every size, three chunk sizes ---- */

static const size_t chunks[] = {4096, 64 << 10, 0 /* the default, 4 MiB */};

/* The sizes for chunk c (cc: its real value): 0, 1, the edges of 1 and 3 chunks, 13 MiB,
 * and a few random ones (the same on both ends: seeded alike). */
static size_t case_size(size_t cc, int i, unsigned *seed)
{
    static const long pick[] = {0, 1, -1, 0, 1, -3, 0, 3};
    switch (i) {
    case 0:
        return 0;
    case 1:
        return 1;
    case 2 ... 7:
        return (size_t)((long)cc * (i < 5 ? 1 : 3) + pick[i]); /* chunk-1, chunk, chunk+1; 3x */
    case 8:
        return MAX_SZ;
    default:
        return (size_t)rand_r(seed) % MAX_SZ;
    }
}
#define NCASES 14

static int all_w(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    conduit_io_t io = {.c = data, .fail_after = -1};
    utc__staged_io_t sio = make_io(&io);
    char *buf = malloc(MAX_SZ);
    CT_CHECK(buf != NULL, "malloc");
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        size_t cc = chunks[k] ? chunks[k] : UTC__DEVICE_CHUNK_DEFAULT;
        unsigned seed = 7;
        for (int i = 0; i < NCASES; i++) {
            size_t size = case_size(cc, i, &seed);
            ct_fill(buf, size, 1000 * k + (unsigned)i);
            CT_OK(utc__staged_send(&sio, buf, false, size, chunks[k], NULL));
            CT_CHECK(io.outstanding == 0, "%d transfers left after the send", io.outstanding);
        }
    }
    free(buf);
    return 0;
}

static int all_r(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    conduit_io_t io = {.c = data, .fail_after = -1};
    utc__staged_io_t sio = make_io(&io);
    unsigned char *buf = malloc(MAX_SZ + 2 * GUARD);
    CT_CHECK(buf != NULL, "malloc");
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        size_t cc = chunks[k] ? chunks[k] : UTC__DEVICE_CHUNK_DEFAULT;
        unsigned seed = 7;
        for (int i = 0; i < NCASES; i++) {
            size_t size = case_size(cc, i, &seed);
            memset(buf, 0xEE, size + 2 * GUARD);
            CT_OK(utc__staged_recv(&sio, buf + GUARD, false, size, chunks[k], NULL));
            CT_CHECK(ct_verify(buf + GUARD, size, 1000 * k + (unsigned)i),
                     "%zu bytes in chunks of %zu: contents differ", size, cc);
            bool guards = true;
            for (size_t g = 0; g < GUARD; g++)
                guards &= buf[g] == 0xEE && buf[GUARD + size + g] == 0xEE;
            CT_CHECK(guards, "%zu bytes in chunks of %zu: written outside the buffer", size, cc);
            CT_CHECK(io.outstanding == 0, "%d transfers left after the receive", io.outstanding);
        }
    }
    free(buf);
    return 0;
}

static void pair_case(int ra, int rb, void *arg)
{
    ct_fn_t *fns = arg;
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, NULL);
    ct_pair_run(&p, fns[0], fns[1]);
    ct_pair_close(&p);
}

static void test_sizes_and_chunks(void)
{
    ct_begin();
    ct_each_placement(true, pair_case, (ct_fn_t[]){all_w, all_r});
    CT_END();
}

/* ---- both directions at once, from one thread at each end ---- */

#define DUPLEX_SIZE  ((size_t)13 << 20)
#define DUPLEX_CHUNK ((size_t)64 << 10) /* 208 chunks each way, far more than the slots */

/* Each end sends DUPLEX_SIZE bytes to the other and receives as many, both transfers in
 * flight at once and moved on by the one thread (blocking forms would wait for each
 * other: each end's send needs the other's receive to move). */
static int duplex(utc_conduit_t *c, unsigned mine, unsigned theirs)
{
    conduit_io_t io = {.c = c, .fail_after = -1};
    utc__staged_io_t sio = make_io(&io);
    char *out = malloc(DUPLEX_SIZE), *in = malloc(DUPLEX_SIZE);
    CT_CHECK(out && in, "malloc");
    if (!out || !in) {
        free(out), free(in);
        return 1;
    }
    ct_fill(out, DUPLEX_SIZE, mine);
    utc__staged_t *tx = NULL, *rx = NULL;
    CT_OK(utc__staged_start(&sio, true, out, false, DUPLEX_SIZE, DUPLEX_CHUNK, NULL, &tx));
    CT_OK(utc__staged_start(&sio, false, in, false, DUPLEX_SIZE, DUPLEX_CHUNK, NULL, &rx));
    utc_status_t txs = UTC_OK, rxs = UTC_OK;
    while (tx || rx) {
        if (tx && utc__staged_step(tx, &txs))
            tx = NULL;
        if (rx && utc__staged_step(rx, &rxs))
            rx = NULL;
    }
    CT_CHECK(txs == UTC_OK && rxs == UTC_OK, "send %s, receive %s", utc_status_string(txs),
             utc_status_string(rxs));
    CT_CHECK(ct_verify(in, DUPLEX_SIZE, theirs), "the other end's %zu bytes differ", DUPLEX_SIZE);
    CT_CHECK(io.outstanding == 0, "%d transfers left", io.outstanding);
    free(out), free(in);
    return 0;
}

static int duplex_a(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    return duplex(data, 71, 72);
}

static int duplex_b(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    return duplex(data, 72, 71);
}

static void test_duplex(void)
{
    ct_begin();
    ct_each_placement(true, pair_case, (ct_fn_t[]){duplex_a, duplex_b});
    CT_END();
}

/* ---- a transport error midway ---- */

#define FAIL_CHUNK 4096

static int fail_w(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    conduit_io_t io = {.c = data, .fail_after = 5};
    utc__staged_io_t sio = make_io(&io);
    size_t size = 9 * FAIL_CHUNK;
    char *buf = malloc(size);
    ct_fill(buf, size, 42);
    CT_EXPECT(utc__staged_send(&sio, buf, false, size, FAIL_CHUNK, NULL), UTC_ERR_CANCELED);
    CT_CHECK(io.sends == 5, "%d chunks sent before the error, expected 5", io.sends);
    /* a transfer failed: the chunk stream is out of step, no abort marks were sent */
    CT_CHECK(sio.out_of_step, "a failed transfer left the stream marked in step");
    /* every isend it started was waited for: the buffer may go */
    CT_CHECK(io.outstanding == 0, "%d transfers left after the error", io.outstanding);
    free(buf);
    return 0;
}

static int fail_r(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    conduit_io_t io = {.c = data, .fail_after = -1};
    utc__staged_io_t sio = make_io(&io);
    /* the 5 chunks that went: what a receiver that learns of the failure has */
    size_t size = 5 * FAIL_CHUNK;
    char *buf = malloc(size);
    CT_OK(utc__staged_recv(&sio, buf, false, size, FAIL_CHUNK, NULL));
    CT_CHECK(ct_verify(buf, size, 42), "the chunks before the error differ");
    free(buf);
    return 0;
}

static void test_transport_error(void)
{
    ct_begin();
    ct_each_placement(true, pair_case, (ct_fn_t[]){fail_w, fail_r});
    CT_END();
}

/* ---- every message is all its chunks: abort marks, skipped chunks ---- */

#define ABORT_CHUNK 4096
#define ABORT_SIZE  (9 * ABORT_CHUNK + 100) /* 10 chunks, the last one short */
#define ABORT_SENT  3                       /* chunks sent before the writer stops */

/* One chunk by hand through the io (as the pipeline sends it). */
static utc_status_t hand_send(utc__staged_io_t *sio, const char *buf, size_t n)
{
    void *h;
    utc_status_t st = sio->isend(sio->arg, buf, n, &h);
    while (st == UTC_OK && !sio->test(sio->arg, h, &st, NULL))
        ;
    return st;
}

/* The next message after a failed one arrives whole: the stream stayed in step. */
static void next_intact_w(utc__staged_io_t *sio, char *buf)
{
    ct_fill(buf, ABORT_SIZE, 77);
    CT_OK(utc__staged_send(sio, buf, false, ABORT_SIZE, ABORT_CHUNK, NULL));
}

static void next_intact_r(utc__staged_io_t *sio, char *buf)
{
    memset(buf, 0, ABORT_SIZE);
    CT_OK(utc__staged_recv(sio, buf, false, ABORT_SIZE, ABORT_CHUNK, NULL));
    CT_CHECK(!sio->out_of_step, "a whole message marked the stream out of step");
    CT_CHECK(ct_verify(buf, ABORT_SIZE, 77), "the message after the failed one differs");
}

/* A writer that stops after ABORT_SENT chunks (as the pipeline does after a CUDA error):
 * the rest go as abort marks; the reader ends with UTC_ERR_IO, having taken every chunk. */
static int abort_w(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    conduit_io_t io = {.c = data, .fail_after = -1};
    utc__staged_io_t sio = make_io(&io);
    char *buf = malloc(ABORT_SIZE);
    CT_CHECK(buf != NULL, "malloc");
    ct_fill(buf, ABORT_SIZE, 5);
    for (int j = 0; j < ABORT_SENT; j++)
        CT_OK(hand_send(&sio, buf + (size_t)j * ABORT_CHUNK, ABORT_CHUNK));
    CT_OK(utc__staged_send_abort(&sio, ABORT_SIZE, ABORT_CHUNK, ABORT_SENT));
    CT_CHECK(!sio.out_of_step, "abort marks sent, yet the stream is marked out of step");
    CT_CHECK(io.sends == 10, "%d messages for a 10-chunk message", io.sends);
    CT_EXPECT(utc__staged_send_abort(&sio, ABORT_SIZE, 0, 0), UTC_ERR_INVALID_ARG);
    next_intact_w(&sio, buf);
    CT_CHECK(io.outstanding == 0, "%d transfers left", io.outstanding);
    free(buf);
    return 0;
}

static int abort_r(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    conduit_io_t io = {.c = data, .fail_after = -1};
    utc__staged_io_t sio = make_io(&io);
    char *buf = malloc(ABORT_SIZE);
    CT_CHECK(buf != NULL, "malloc");
    CT_EXPECT(utc__staged_recv(&sio, buf, false, ABORT_SIZE, ABORT_CHUNK, NULL), UTC_ERR_IO);
    CT_CHECK(strstr(utc_last_error(), "empty chunk") != NULL, "message: %s", utc_last_error());
    CT_CHECK(!sio.out_of_step, "an abort mark left the stream marked out of step");
    CT_CHECK(io.outstanding == 0, "%d transfers left after the abort", io.outstanding);
    CT_CHECK(ct_verify(buf, ABORT_SENT * ABORT_CHUNK, 5), "the chunks before the abort differ");
    next_intact_r(&sio, buf);
    free(buf);
    return 0;
}

static void test_abort_mark(void)
{
    ct_begin();
    ct_each_placement(true, pair_case, (ct_fn_t[]){abort_w, abort_r});
    CT_END();
}

/* A CUDA error before the first chunk, at either end: cudaStreamSynchronize of a host
 * buffer's stream fails where there is no device (here); with a device it succeeds and the
 * message goes whole. The failing writer sends every chunk as an abort mark, the failing
 * reader takes every chunk and drops it: the next message arrives whole either way. */
static bool have_gpu(void)
{
    return utc_gpu_device_count() > 0;
}

static int cuda_w(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    conduit_io_t io = {.c = data, .fail_after = -1};
    utc__staged_io_t sio = make_io(&io);
    char *buf = malloc(ABORT_SIZE);
    CT_CHECK(buf != NULL, "malloc");
    ct_fill(buf, ABORT_SIZE, 6);
    /* 1: the writer's stream fails */
    CT_EXPECT(utc__staged_send(&sio, buf, false, ABORT_SIZE, ABORT_CHUNK, cudaStreamPerThread),
              have_gpu() ? UTC_OK : UTC_ERR_GPU);
    CT_CHECK(!sio.out_of_step, "a CUDA error left the stream marked out of step");
    CT_CHECK(io.sends == 10, "%d messages for a 10-chunk message", io.sends);
    /* 2: the reader's stream fails */
    CT_OK(utc__staged_send(&sio, buf, false, ABORT_SIZE, ABORT_CHUNK, NULL));
    next_intact_w(&sio, buf);
    free(buf);
    return 0;
}

static int cuda_r(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    conduit_io_t io = {.c = data, .fail_after = -1};
    utc__staged_io_t sio = make_io(&io);
    char *buf = malloc(ABORT_SIZE);
    CT_CHECK(buf != NULL, "malloc");
    CT_EXPECT(utc__staged_recv(&sio, buf, false, ABORT_SIZE, ABORT_CHUNK, NULL),
              have_gpu() ? UTC_OK : UTC_ERR_IO);
    CT_EXPECT(utc__staged_recv(&sio, buf, false, ABORT_SIZE, ABORT_CHUNK, cudaStreamPerThread),
              have_gpu() ? UTC_OK : UTC_ERR_GPU);
    CT_CHECK(!sio.out_of_step, "a CUDA error left the stream marked out of step");
    CT_CHECK(io.outstanding == 0, "%d transfers left", io.outstanding);
    next_intact_r(&sio, buf);
    free(buf);
    return 0;
}

static void test_cuda_error(void)
{
    ct_begin();
    ct_each_placement(true, pair_case, (ct_fn_t[]){cuda_w, cuda_r});
    CT_END();
}

/* A chunk of another size than agreed: out of step (the pair is failed by its caller). */
static int odd_w(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    conduit_io_t io = {.c = data, .fail_after = -1};
    utc__staged_io_t sio = make_io(&io);
    char b[ABORT_CHUNK] = {0};
    CT_OK(hand_send(&sio, b, ABORT_CHUNK / 2));
    return 0;
}

static int odd_r(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    conduit_io_t io = {.c = data, .fail_after = -1};
    utc__staged_io_t sio = make_io(&io);
    char b[ABORT_CHUNK];
    CT_EXPECT(utc__staged_recv(&sio, b, false, ABORT_CHUNK, ABORT_CHUNK, NULL), UTC_ERR_INTERNAL);
    CT_CHECK(sio.out_of_step, "a chunk of the wrong size left the stream marked in step");
    CT_CHECK(strstr(utc_last_error(), "out of step") != NULL, "message: %s", utc_last_error());
    return 0;
}

static void test_odd_chunk(void)
{
    ct_begin();
    ct_each_placement(true, pair_case, (ct_fn_t[]){odd_w, odd_r});
    CT_END();
}

/* ---- bad arguments, the chunk size setting ---- */

static utc_status_t never_start(void *arg, const void *buf, size_t n, void **h)
{
    (void)arg, (void)buf, (void)n, (void)h;
    return UTC_ERR_INTERNAL; /* a bad argument must be refused before any transfer */
}

static utc_status_t never_recv(void *arg, void *buf, size_t n, void **h)
{
    return never_start(arg, buf, n, h);
}

static bool never_test(void *arg, void *h, utc_status_t *status, size_t *received)
{
    (void)arg, (void)h, (void)received;
    *status = UTC_ERR_INTERNAL;
    return true;
}

static void test_bad_arguments(void)
{
    utc__staged_io_t io = {.isend = never_start, .irecv = never_recv, .test = never_test};
    char b[8] = {0};
    CU_ASSERT_EQUAL(utc__staged_send(NULL, b, false, 8, 4, NULL), UTC_ERR_INVALID_ARG);
    CU_ASSERT(strstr(utc_last_error(), "io") != NULL);
    utc__staged_io_t half = io;
    half.test = NULL;
    CU_ASSERT_EQUAL(utc__staged_recv(&half, b, false, 8, 4, NULL), UTC_ERR_INVALID_ARG);
    CU_ASSERT_EQUAL(utc__staged_send(&io, NULL, false, 8, 4, NULL), UTC_ERR_INVALID_ARG);
    CU_ASSERT(strstr(utc_last_error(), "NULL buffer") != NULL);
    CU_ASSERT_EQUAL(utc__staged_recv(&io, NULL, false, 8, 4, NULL), UTC_ERR_INVALID_ARG);
    /* nothing to move: no transfer, whatever the buffer */
    UTC_ASSERT_OK(utc__staged_send(&io, NULL, false, 0, 4, NULL));
    UTC_ASSERT_OK(utc__staged_recv(&io, NULL, true, 0, 4, NULL));
}

static void test_chunk_setting(void)
{
    size_t c = 0;
    unsetenv("UTC_DEVICE_CHUNK");
    UTC_ASSERT_OK(utc__device_chunk_size(&c));
    CU_ASSERT_EQUAL(c, (size_t)4 << 20);
    setenv("UTC_DEVICE_CHUNK", "1M", 1);
    UTC_ASSERT_OK(utc__device_chunk_size(&c));
    CU_ASSERT_EQUAL(c, (size_t)1 << 20);
    setenv("UTC_DEVICE_CHUNK", "65536", 1);
    UTC_ASSERT_OK(utc__device_chunk_size(&c));
    CU_ASSERT_EQUAL(c, (size_t)64 << 10);
    setenv("UTC_DEVICE_CHUNK", "256M", 1);
    UTC_ASSERT_OK(utc__device_chunk_size(&c));
    CU_ASSERT_EQUAL(c, (size_t)256 << 20);
    static const char *bad[] = {"65535", "257M", "-1", "abc", "4MB", "1G", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("UTC_DEVICE_CHUNK", bad[i], 1);
        c = 123;
        CU_ASSERT_EQUAL(utc__device_chunk_size(&c), UTC_ERR_INVALID_ARG);
        CU_ASSERT_EQUAL(c, 123); /* output set only on success */
        CU_ASSERT(strstr(utc_last_error(), "UTC_DEVICE_CHUNK") != NULL);
        CU_ASSERT(strstr(utc_last_error(), bad[i]) != NULL);
    }
    /* chunk 0 takes the setting: a bad one fails the transfer before it starts */
    utc__staged_io_t io = {.isend = never_start, .irecv = never_recv, .test = never_test};
    char b[8] = {0};
    CU_ASSERT_EQUAL(utc__staged_send(&io, b, false, 8, 0, NULL), UTC_ERR_INVALID_ARG);
    CU_ASSERT(strstr(utc_last_error(), "UTC_DEVICE_CHUNK") != NULL);
    unsetenv("UTC_DEVICE_CHUNK");
    CU_ASSERT_EQUAL(utc__device_chunk_size(NULL), UTC_ERR_INVALID_ARG);
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"host to host, sizes 0 B to 13 MiB, three chunk sizes", test_sizes_and_chunks},
        {"both directions at once, one thread at each end", test_duplex},
        {"a transport error midway", test_transport_error},
        {"a writer's abort marks midway", test_abort_mark},
        {"a CUDA error at either end before the first chunk", test_cuda_error},
        {"a chunk of the wrong size", test_odd_chunk},
        {"bad arguments", test_bad_arguments},
        {"UTC_DEVICE_CHUNK", test_chunk_setting},
        UTC_TEST_END,
    };
    return utc_test_main(argc, argv, "staged", cases);
}
