/*
 * The device conduits' building blocks on a GPU (conduits/device/ipc_cache.h, staged.h):
 * IPC export of cudaMalloc memory (offset, extent, one handle per allocation) and its
 * refusals (a host pointer, a range beyond the allocation, a stream-ordered pool's memory);
 * between two ranks, a copy from the other rank's exported buffer ordered after its
 * interprocess event, and a second copy from the cache; the staged pipeline with device
 * buffers on either side or both (a stream on the receiver, and none), across chunk edges.
 * Exits 77 (skipped) without a device, or fails under UTC_REQUIRE_GPU=1.
 */
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conduit_test_util.h"
#include "device/ipc_cache.h"
#include "device/staged.h"

#define CUDA_OK(call) CU_ASSERT_EQUAL_FATAL((call), cudaSuccess)

static void test_need_a_gpu(void)
{
    (void)utc_test_need_gpu();
}

static void test_export(void)
{
    char *d = NULL;
    CUDA_OK(cudaMalloc((void **)&d, 1 << 20));
    utc__ipc_ref_t a, b;
    UTC_ASSERT_OK(utc__ipc_export(d + 4096, 1000, &a));
    CU_ASSERT_EQUAL(a.offset, 4096);
    CU_ASSERT(a.alloc_size >= (1u << 20));
    UTC_ASSERT_OK(utc__ipc_export(d, 1 << 20, &b)); /* same allocation: same handle, id */
    CU_ASSERT_EQUAL(a.alloc_id, b.alloc_id);
    CU_ASSERT(memcmp(&a.handle, &b.handle, sizeof a.handle) == 0);
    CU_ASSERT_EQUAL(b.offset, 0);

    CU_ASSERT_EQUAL(utc__ipc_export(d + 16, a.alloc_size, &b), UTC_ERR_INVALID_ARG);
    CU_ASSERT(strstr(utc_last_error(), "leave their allocation") != NULL);
    char host[64];
    CU_ASSERT_EQUAL(utc__ipc_export(host, sizeof host, &b), UTC_ERR_INVALID_ARG);
    CU_ASSERT(strstr(utc_last_error(), "host memory") != NULL);
    CU_ASSERT_EQUAL(utc__ipc_export(NULL, 1, &b), UTC_ERR_INVALID_ARG);

    /* a stream-ordered pool's memory is not legacy IPC capable: refused, to go staged */
    void *pooled = NULL;
    CUDA_OK(cudaMallocAsync(&pooled, 1 << 20, 0));
    CUDA_OK(cudaStreamSynchronize(0));
    utc_status_t st = utc__ipc_export(pooled, 1 << 20, &b);
    CU_ASSERT_EQUAL(st, UTC_ERR_UNSUPPORTED);
    if (st != UTC_OK)
        printf("\n  pool memory: %s\n", utc_last_error());
    CUDA_OK(cudaFreeAsync(pooled, 0));

    utc__ipc_forget(d);
    UTC_ASSERT_OK(utc__ipc_export(d, 1, &b)); /* made again after forget */
    CU_ASSERT_EQUAL(b.alloc_id, a.alloc_id);
    utc__ipc_forget(d);
    CUDA_OK(cudaFree(d));
}

/* Rank 0 exports a buffer and an event recorded after its fill; rank 1 waits on the event
 * and copies it, twice (the second from the cache), and checks the bytes. */
static void test_ipc_between_ranks(void)
{
    if (utc_test_nranks() < 2 || !utc_test_same_host(0, 1)) {
        printf("\n  (needs 2 ranks on one host)\n");
        return;
    }
    const size_t n = (size_t)8 << 20;
    int rank = utc_test_rank();
    unsigned char *h = malloc(n);
    if (rank == 0) {
        char *d;
        cudaStream_t s;
        CUDA_OK(cudaMalloc((void **)&d, n + 512));
        CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        ct_fill(h, n, 5);
        CUDA_OK(cudaMemcpyAsync(d + 512, h, n, cudaMemcpyHostToDevice, s));
        utc__ipc_event_t ev;
        UTC_ASSERT_OK(utc__ipc_event_get(&ev));
        CUDA_OK(cudaEventRecord(ev.event, s));
        utc__ipc_ref_t ref;
        UTC_ASSERT_OK(utc__ipc_export(d + 512, n, &ref));
        MPI_Send(&ref, sizeof ref, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Send(&ev.handle, sizeof ev.handle, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        int ack;
        MPI_Recv(&ack, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        utc__ipc_event_put(&ev);
        MPI_Recv(&ack, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* done */
        CUDA_OK(cudaStreamSynchronize(s));
        utc__ipc_forget(d);
        CUDA_OK(cudaFree(d));
        CUDA_OK(cudaStreamDestroy(s));
    } else if (rank == 1) {
        utc__ipc_ref_t ref;
        cudaIpcEventHandle_t eh;
        MPI_Recv(&ref, sizeof ref, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&eh, sizeof eh, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        cudaStream_t s;
        char *mine;
        CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        CUDA_OK(cudaMalloc((void **)&mine, n));
        UTC_ASSERT_OK(utc__ipc_event_wait(0, &eh, s));
        UTC_ASSERT_OK(utc__ipc_copy_from(0, &ref, mine, n, s));
        CUDA_OK(cudaMemcpyAsync(h, mine, n, cudaMemcpyDeviceToHost, s));
        CUDA_OK(cudaStreamSynchronize(s));
        CU_ASSERT(ct_verify(h, n, 5));
        memset(h, 0, n);
        UTC_ASSERT_OK(utc__ipc_copy_from(0, &ref, h, n, s)); /* cached; into host memory */
        void *p;
        UTC_ASSERT_OK(utc__ipc_import(0, &ref, &p));
        CUDA_OK(cudaStreamSynchronize(s));
        CU_ASSERT(ct_verify(h, n, 5));
        CU_ASSERT_EQUAL(utc__ipc_copy_from(0, &ref, mine, ref.alloc_size, s),
                        UTC_ERR_INVALID_ARG); /* beyond the exported allocation */
        int ack = 1;
        MPI_Send(&ack, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
        utc__ipc_close_peer(0);
        MPI_Send(&ack, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
        CUDA_OK(cudaFree(mine));
        CUDA_OK(cudaStreamDestroy(s));
    }
    free(h);
    MPI_Barrier(MPI_COMM_WORLD);
    utc__ipc_cache_clear();
}

/* An imported mapping read by copies on two streams, the first held back by a host
 * function, then closed: the close waits for both copies (it waited for the last one's
 * stream only, and unmapped under the first). */
static void hold_back(void *arg)
{
    (void)arg;
    usleep(200 * 1000);
}

static void test_ipc_close_two_streams(void)
{
    if (utc_test_nranks() < 2 || !utc_test_same_host(0, 1)) {
        printf("\n  (needs 2 ranks on one host)\n");
        return;
    }
    const size_t n = (size_t)4 << 20;
    int rank = utc_test_rank();
    unsigned char *h = malloc(n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    if (rank == 0) {
        char *d;
        CUDA_OK(cudaMalloc((void **)&d, n));
        ct_fill(h, n, 8);
        CUDA_OK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
        utc__ipc_ref_t ref;
        UTC_ASSERT_OK(utc__ipc_export(d, n, &ref));
        MPI_Send(&ref, sizeof ref, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        int ack;
        MPI_Recv(&ack, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* closed */
        utc__ipc_forget(d);
        CUDA_OK(cudaFree(d));
    } else if (rank == 1) {
        utc__ipc_ref_t ref;
        MPI_Recv(&ref, sizeof ref, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        cudaStream_t a, b;
        char *da, *db;
        CUDA_OK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
        CUDA_OK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
        CUDA_OK(cudaMalloc((void **)&da, n));
        CUDA_OK(cudaMalloc((void **)&db, n));
        CUDA_OK(cudaLaunchHostFunc(a, hold_back, NULL));
        UTC_ASSERT_OK(utc__ipc_copy_from(0, &ref, da, n, a)); /* held back */
        UTC_ASSERT_OK(utc__ipc_copy_from(0, &ref, db, n, b));
        utc__ipc_close_peer(0); /* unmaps once both copies are over */
        CUDA_OK(cudaStreamSynchronize(a));
        CUDA_OK(cudaStreamSynchronize(b));
        for (int k = 0; k < 2; k++) {
            memset(h, 0, n);
            CUDA_OK(cudaMemcpy(h, k ? db : da, n, cudaMemcpyDeviceToHost));
            CU_ASSERT(ct_verify(h, n, 8));
        }
        int ack = 1;
        MPI_Send(&ack, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
        CUDA_OK(cudaFree(da));
        CUDA_OK(cudaFree(db));
        CUDA_OK(cudaStreamDestroy(a));
        CUDA_OK(cudaStreamDestroy(b));
    }
    free(h);
    MPI_Barrier(MPI_COMM_WORLD);
    utc__ipc_cache_clear();
}

/* ---- staged, device buffers ---- */

typedef struct io_state {
    utc_conduit_t *c;
} io_state_t;

static utc_status_t io_isend(void *arg, const void *buf, size_t n, void **h)
{
    return utc_conduit_iwrite(((io_state_t *)arg)->c, buf, n, 9, (utc_request_t **)h);
}
static utc_status_t io_irecv(void *arg, void *buf, size_t n, void **h)
{
    return utc_conduit_iread(((io_state_t *)arg)->c, buf, n, 9, (utc_request_t **)h);
}
static bool io_test(void *arg, void *h, utc_status_t *status, size_t *received)
{
    (void)arg;
    utc_request_t *r = h;
    int done = 0;
    size_t got = 0;
    utc_status_t rc = utc_request_test(&r, &done, &got);
    if (rc == UTC_OK && !done)
        return false;
    *status = rc;
    if (received)
        *received = got;
    return true;
}

#define CHUNK ((size_t)1 << 20)
#define MAXN  ((size_t)13 << 20)
static const size_t sizes[] = {0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK, 3 * CHUNK + 5, MAXN};
#define NS (sizeof sizes / sizeof sizes[0])
/* mode: bit 0 the writer's buffer on the device, bit 1 the reader's; bit 2 the reader
 * uses a stream */
#define NMODES 8

static int stg_w(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    io_state_t st = {data};
    utc__staged_io_t io = {.arg = &st, .isend = io_isend, .irecv = io_irecv, .test = io_test};
    unsigned char *h = malloc(MAXN);
    void *d = NULL;
    CT_CHECK(cudaMalloc(&d, MAXN) == cudaSuccess, "cudaMalloc");
    for (int mode = 0; mode < NMODES; mode++)
        for (size_t i = 0; i < NS; i++) {
            ct_fill(h, sizes[i], 100 * (unsigned)mode + i);
            bool dev = mode & 1;
            if (dev)
                CT_CHECK(cudaMemcpy(d, h, sizes[i], cudaMemcpyHostToDevice) == cudaSuccess, "H2D");
            CT_OK(utc__staged_send(&io, dev ? d : h, dev, sizes[i], CHUNK, NULL));
        }
    cudaFree(d);
    free(h);
    return 0;
}

static int stg_r(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    io_state_t st = {data};
    utc__staged_io_t io = {.arg = &st, .isend = io_isend, .irecv = io_irecv, .test = io_test};
    unsigned char *h = malloc(MAXN);
    void *d = NULL;
    cudaStream_t s;
    CT_CHECK(cudaMalloc(&d, MAXN) == cudaSuccess, "cudaMalloc");
    CT_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess, "stream");
    for (int mode = 0; mode < NMODES; mode++)
        for (size_t i = 0; i < NS; i++) {
            bool dev = mode & 2;
            cudaStream_t rs = (mode & 4) ? s : NULL;
            memset(h, 0, sizes[i]);
            CT_OK(utc__staged_recv(&io, dev ? d : (void *)h, dev, sizes[i], CHUNK, rs));
            if (dev) /* on the reader's stream: after the queued H2Ds */
                CT_CHECK(cudaMemcpyAsync(h, d, sizes[i], cudaMemcpyDeviceToHost, s) ==
                                 cudaSuccess &&
                             cudaStreamSynchronize(s) == cudaSuccess,
                         "D2H");
            CT_CHECK(ct_verify(h, sizes[i], 100 * (unsigned)mode + i),
                     "mode %d, %zu bytes: contents differ", mode, sizes[i]);
        }
    cudaStreamDestroy(s);
    cudaFree(d);
    free(h);
    return 0;
}

static void stg_case(int ra, int rb, void *arg)
{
    (void)arg;
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, NULL);
    ct_pair_run(&p, stg_w, stg_r);
    ct_pair_close(&p);
}

static void test_staged_device(void)
{
    ct_begin();
    ct_each_placement(true, stg_case, NULL);
    CT_END();
    utc__staged_cache_clear();
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"a GPU on every rank", test_need_a_gpu},
        {"IPC export", test_export},
        {"IPC copy between ranks after the writer's event", test_ipc_between_ranks},
        {"IPC: a mapping read on two streams is closed after both copies",
         test_ipc_close_two_streams},
        {"staged with device buffers", test_staged_device},
        UTC_TEST_END,
    };
    return utc_test_main(argc, argv, "device_blocks", cases);
}
