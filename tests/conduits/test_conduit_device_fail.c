/*
 * Device conduits on a GPU, failures after a read took its message's descriptor (label
 * `gpu`; exits 77 without a device). ctest runs it between ranks over CUDA IPC
 * (conduit_device_fail_np*), staged over the node transport (UTC_DEVICE_IPC=0:
 * conduit_device_fail_staged_np*) and staged over MPI (UTC_TRANSPORT=mpi as well:
 * conduit_device_fail_mpi_np*); every case also runs with both tasks in one rank.
 *
 * - An owned read whose device allocation fails (the reader's device filled first with
 *   cudaMalloc): between ranks the read ends with UTC_ERR_NO_MEMORY (UTC_ERR_GPU if CUDA
 *   says so otherwise) and its writer's write, which waited for the read's answer, with a
 *   status of the same kind and a message naming the reader's rank; the message is
 *   dropped at both ends, and the next one goes through whole (the pair's chunk stream in
 *   step). In-process the owned read takes the writer's buffer (no allocation) and
 *   succeeds. A read whose buffer is too small keeps the message (UTC_ERR_TRUNCATE, its
 *   size), and the writer's write ends once a read with room takes it.
 * - A reader's task that fails while a 1 GiB message is on its way (thread 1 of the
 *   reading task returns an error while thread 0 reads): the writer's write ends before
 *   the conduit is destroyed (UTC_OK when the message was through, else
 *   UTC_ERR_PEER_FAILED), and the reading thread's read ends too: no hang (the case would
 *   wait for ever, and ctest's timeout fail it).
 */
#include <cuda_runtime_api.h>
#include <unistd.h>

#include "conduit_test_util.h"

#define MIB      ((size_t)1 << 20)
#define OWN_SIZE (256 * MIB) /* above what the reader's memory pool may hold cached */
#define NEXT     (MIB + 5)
#define BIG      ((size_t)1 << 30)

#define CUDA_OK(call)                                                                              \
    ({                                                                                             \
        cudaError_t e_ = (call);                                                                   \
        CT_CHECK(e_ == cudaSuccess, "%s: %s", #call, cudaGetErrorString(e_));                      \
        e_ == cudaSuccess;                                                                         \
    })

/* A pair of tasks (CPU threads: the device layer works on a stream of its own for them)
 * and a device conduit. Collective. */
static ct_pair_t dev_pair(int ra, int na, int rb, int nb)
{
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.memory = UTC_CONDUIT_MEM_DEVICE;
    return ct_pair_open(ra, na, rb, nb, &o);
}

/* ---- the device filled: an owned read cannot allocate ---- */

static void **hog_blocks;
static int hog_count;

/* Fill the current device with cudaMalloc blocks (1 GiB, halved down to 16 MiB) until
 * none fits; the memory pool's cached bytes are given back first. */
static void hog(void)
{
    cudaMemPool_t pool;
    CUDA_OK(cudaDeviceSynchronize());
    if (CUDA_OK(cudaDeviceGetDefaultMemPool(&pool, 0)))
        CUDA_OK(cudaMemPoolTrimTo(pool, 0));
    hog_blocks = calloc(8192, sizeof *hog_blocks);
    CT_CHECK(hog_blocks != NULL, "calloc");
    for (size_t blk = (size_t)1 << 30; hog_blocks && blk >= 16 * MIB && hog_count < 8192;) {
        if (cudaMalloc(&hog_blocks[hog_count], blk) == cudaSuccess)
            hog_count++;
        else
            (void)cudaGetLastError(), blk /= 2;
    }
    CT_CHECK(hog_count > 0, "no device memory to fill");
}

static void unhog(void)
{
    for (int i = 0; i < hog_count; i++)
        CUDA_OK(cudaFree(hog_blocks[i]));
    free(hog_blocks);
    hog_blocks = NULL;
    hog_count = 0;
}

static bool case_inproc; /* the running case's tasks share a rank */
static void *case_wbuf;  /* the writer's buffer, made before the device is filled */

static int ownfail_writer(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    if (case_inproc) {
        /* handed over as it is: nothing to allocate at either end */
        CT_OK(utc_conduit_write_owned(c, case_wbuf, OWN_SIZE, 0));
    } else {
        utc_status_t rc = utc_conduit_write(c, case_wbuf, OWN_SIZE, 0);
        CT_CHECK(rc == UTC_ERR_NO_MEMORY || rc == UTC_ERR_GPU,
                 "the write whose reader could not allocate: %d (%s), expected its reader's "
                 "status",
                 rc, utc_status_string(rc));
        CT_CHECK(strstr(utc_last_error(), "the reader on rank") != NULL, "message: %s",
                 utc_last_error());
    }
    /* the reader has its memory back: the next message, host memory at both ends, goes
     * through whole (and a too-small read keeps it) */
    int back = 0;
    CT_OK(utc_conduit_read(c, &back, sizeof back, 1, NULL));
    CT_CHECK(back == 42, "the reader's signal: %d", back);
    unsigned char *h = malloc(NEXT);
    CT_CHECK(h != NULL, "malloc");
    ct_fill(h, NEXT, 9);
    CT_OK(utc_conduit_write(c, h, NEXT, 0));
    free(h);
    return 0;
}

static int ownfail_reader(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    void *p = NULL;
    size_t size = 0;
    utc_status_t rc = utc_conduit_read_owned(c, 0, &p, &size);
    if (case_inproc) {
        CT_CHECK(rc == UTC_OK && p == case_wbuf && size == OWN_SIZE,
                 "in-process owned read: %d (%s), %p (the writer's %p), %zu bytes", rc,
                 utc_status_string(rc), p, case_wbuf, size);
        if (rc == UTC_OK)
            CT_OK(utc_gpu_free(p));
    } else {
        CT_CHECK(rc == UTC_ERR_NO_MEMORY || rc == UTC_ERR_GPU,
                 "an owned read with the device full: %d (%s): %s", rc, utc_status_string(rc),
                 utc_last_error());
        CT_CHECK(p == NULL, "a failed owned read gave buffer %p", p);
    }
    unhog();
    int back = 42;
    CT_OK(utc_conduit_write(c, &back, sizeof back, 1));
    unsigned char *h = malloc(NEXT);
    CT_CHECK(h != NULL, "malloc");
    size_t got = 0;
    CT_EXPECT(utc_conduit_read(c, h, NEXT - 1, 0, &got), UTC_ERR_TRUNCATE);
    CT_CHECK(got == NEXT, "a too-small read reports %zu bytes, expected %zu", got, NEXT);
    got = 0;
    CT_OK(utc_conduit_read(c, h, NEXT, 0, &got));
    CT_CHECK(got == NEXT && ct_verify(h, NEXT, 9),
             "the message after the failed read: %zu bytes, contents %s", got,
             ct_verify(h, NEXT, 9) ? "right" : "wrong");
    free(h);
    return 0;
}

/* A small message from the writer's buffer first: what the paths make once (the layer's
 * stream, events, IPC mappings, pinned rings) is made before the device is full. */
static int warm_writer(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    CT_OK(utc_conduit_write(data, case_wbuf, 4096, 2));
    return 0;
}

static int warm_reader(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    unsigned char h[4096];
    size_t got = 0;
    CT_OK(utc_conduit_read(data, h, sizeof h, 2, &got));
    CT_CHECK(got == sizeof h && ct_verify(h, sizeof h, 3), "the first message: %zu bytes", got);
    return 0;
}

static void ownfail_at(int ra, int rb, void *arg)
{
    (void)arg;
    ct_pair_t p = dev_pair(ra, 1, rb, 1);
    case_inproc = ra == rb;
    case_wbuf = NULL;
    if (utc_rank() == ra) { /* the writer's buffer, before the reader fills the device */
        unsigned char *h = malloc(OWN_SIZE);
        CT_CHECK(h != NULL, "malloc");
        if (case_inproc)
            CT_OK(utc_gpu_malloc(OWN_SIZE, &case_wbuf));
        else
            CUDA_OK(cudaMalloc(&case_wbuf, OWN_SIZE));
        if (h && case_wbuf) {
            ct_fill(h, OWN_SIZE, 3);
            CUDA_OK(cudaMemcpy(case_wbuf, h, OWN_SIZE, cudaMemcpyHostToDevice));
        }
        free(h);
        CUDA_OK(cudaDeviceSynchronize());
    }
    UTC_ASSERT_OK(utc_barrier());
    ct_pair_run(&p, warm_writer, warm_reader);
    if (utc_rank() == rb)
        hog();
    UTC_ASSERT_OK(utc_barrier());
    ct_pair_run(&p, ownfail_writer, ownfail_reader);
    if (utc_rank() == rb && hog_count)
        unhog(); /* the reader did not get that far */
    if (utc_rank() == ra && !case_inproc)
        CUDA_OK(cudaFree(case_wbuf));
    ct_pair_close(&p);
}

static void test_owned_read_fails(void)
{
    ct_begin();
    ct_each_placement(true, ownfail_at, NULL);
    CT_END();
}

/* ---- the reader's task fails while a large message is on its way ---- */

static void *big_w, *big_r; /* the case's buffers, on the writer's and the reader's rank */

static int big_writer(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_status_t rc = utc_conduit_write(data, big_w, BIG, 0);
    CT_CHECK(rc == UTC_OK || rc == UTC_ERR_PEER_FAILED,
             "a write whose reader's task failed: %d (%s): %s", rc, utc_status_string(rc),
             utc_last_error());
    return 0;
}

/* Thread 0 reads; thread 1 fails the task while the message is on its way. */
static int big_reader(utc_ctx_t *ctx, void *data)
{
    if (ctx->local_id == 1) {
        usleep(20 * 1000);
        return 5; /* no status code: the task's wait reports UTC_ERR_TASK_FAILED */
    }
    size_t got = 0;
    utc_status_t rc = utc_conduit_read_by(data, 0, big_r, BIG, 0, &got);
    CT_CHECK(rc != UTC_OK || got == BIG, "a read that ended well has %zu bytes", got);
    if (rc != UTC_OK) /* ended by its own task's failure: any clear status, no hang */
        CT_CHECK(*utc_last_error() != 0, "the failed read %d (%s) has no message", rc,
                 utc_status_string(rc));
    return 0;
}

static void bigfail_at(int ra, int rb, void *arg)
{
    (void)arg;
    ct_pair_t p = dev_pair(ra, 1, rb, 2);
    if (utc_rank() == ra && CUDA_OK(cudaMalloc(&big_w, BIG)))
        CUDA_OK(cudaMemset(big_w, 7, BIG));
    if (utc_rank() == rb)
        CUDA_OK(cudaMalloc(&big_r, BIG));
    UTC_ASSERT_OK(utc_barrier());
    /* the writer's run returns (its write ended) before the destroy below */
    static ct_job_t jw, jr;
    jw = (ct_job_t){big_writer, p.c};
    jr = (ct_job_t){big_reader, p.c};
    UTC_ASSERT_OK(utc_task_run(p.a, &jw));
    UTC_ASSERT_OK(utc_task_run(p.b, &jr));
    UTC_ASSERT_OK(utc_task_wait(p.a));
    int rc = utc_task_wait(p.b);
    CU_ASSERT_EQUAL(rc, utc_task_is_local(p.b) ? UTC_ERR_TASK_FAILED : UTC_OK);
    UTC_ASSERT_OK(utc_barrier());
    ct_pair_close(&p);
    if (utc_rank() == ra)
        CUDA_OK(cudaFree(big_w));
    if (utc_rank() == rb)
        CUDA_OK(cudaFree(big_r));
    big_w = big_r = NULL;
}

static void test_reader_task_fails(void)
{
    ct_begin();
    ct_each_placement(true, bigfail_at, NULL);
    CT_END();
}

static void test_need_a_gpu(void)
{
    CU_ASSERT(utc_test_need_gpu() > 0);
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"a GPU on every rank (else skip)", test_need_a_gpu},
        {"an owned read with the device full; a too-small read", test_owned_read_fails},
        {"the reader's task fails during a 1 GiB message", test_reader_task_fails},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "device conduit failures", cases);
}
