/*
 * Device conduits on a GPU (label `gpu`; exits 77 without a device, fails under
 * UTC_REQUIRE_GPU=1): every case runs with both tasks in one rank (the handover path) and,
 * at 2-3 ranks, on two ranks (CUDA IPC; with UTC_DEVICE_IPC=0 the staged path, which ctest
 * runs as conduit_device_staged_*). The path each placement takes is checked.
 *
 * - sizes 0 B to 64 MiB, contents checked, with the stream rules: the writer's data is
 *   made on its stream just before the write (no synchronisation), and overwritten on its
 *   stream just after (the write returned: the buffer is reusable in stream order); the
 *   reader, on another stream, copies the message out on its own stream after the read;
 * - both directions at once from one GPU thread at each end (write as a request, read,
 *   wait for the write; or read as a request too, the write waited for first), 13 MiB
 *   each way;
 * - tags and order: requests of three tags read in another order than written;
 * - host (pageable and pinned) and device memory mixed, GPU and CPU threads at either end;
 *   a host source is taken when the write returns (overwritten at once);
 * - owned buffers (utc_gpu_malloc): handed over in-process (the very pointer), copied
 *   between ranks; the refusals of owned writes; in-process to a reader on another device
 *   (where there are two, as cudahost's UTC_CUDAHOST_DEVICES=2): copied to its device;
 * - all-threads calls of two GPU threads sharing one buffer: after a read, the other
 *   thread's stream sees the message; after a write, its stream may overwrite the buffer;
 * - probes of device messages (size and tag, nothing taken);
 * - the refusals of a device conduit: tags above UTC_CONDUIT_DEVICE_TAG_MAX, sendrecv; a
 *   device pointer on a host conduit;
 * - destroy with device transfers pending: the operations end, no hang, and the device
 *   memory the layer allocated is back (the default pool's used bytes);
 * - destroy after the reader took a write nobody waited for (its ack on its way): the
 *   write ends UTC_OK, its stream after the reader's copy (the writer overwriting its
 *   buffer on its stream afterwards leaves the read's data whole);
 * - a failed peer task: the reads and writes blocked on it end with UTC_ERR_PEER_FAILED.
 */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <unistd.h>

#include "conduit_test_util.h"

#define MIB ((size_t)1 << 20)
#define BIG (64 * MIB)

#define CUDA_OK(call)                                                                              \
    ({                                                                                             \
        cudaError_t e_ = (call);                                                                   \
        CT_CHECK(e_ == cudaSuccess, "%s: %s", #call, cudaGetErrorString(e_));                      \
        e_ == cudaSuccess;                                                                         \
    })

static const char *expected_path(int ra, int rb)
{
    if (ra == rb)
        return "handover";
    const char *v = getenv("UTC_DEVICE_IPC");
    return v && !strcmp(v, "0") ? "staged" : "ipc";
}

/* Tasks of one thread each on ra and rb, GPU or CPU, and a device conduit. Collective. */
static ct_pair_t dev_pair(int ra, bool gpu_a, int rb, bool gpu_b, utc_conduit_mode_t mode)
{
    utc_task_options_t oa = UTC_TASK_OPTIONS_INIT, ob = UTC_TASK_OPTIONS_INIT;
    oa.kind = gpu_a ? UTC_TASK_GPU : UTC_TASK_CPU;
    ob.kind = gpu_b ? UTC_TASK_GPU : UTC_TASK_CPU;
    ct_pair_t p = {NULL, NULL, NULL};
    UTC_ASSERT_OK(utc_task_create(&ct_ops_a, &ra, 1, &oa, &p.a));
    UTC_ASSERT_OK(utc_task_create(&ct_ops_b, &rb, 1, &ob, &p.b));
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.memory = UTC_CONDUIT_MEM_DEVICE;
    o.mode = mode;
    UTC_ASSERT_OK(utc_conduit_create(p.a, p.b, &o, &p.c));
    return p;
}

/* The calling thread's stream: its own on a GPU thread, else the legacy one (CPU). */
static cudaStream_t my_stream(utc_ctx_t *ctx)
{
    return ctx->kind == UTC_TASK_GPU ? (cudaStream_t)utc_gpu_stream() : 0;
}

static void my_sync(utc_ctx_t *ctx)
{
    if (ctx->kind == UTC_TASK_GPU)
        CT_OK(utc_gpu_synchronize());
    else
        CUDA_OK(cudaDeviceSynchronize());
}

static int case_ra, case_rb; /* the placement of the running case */

/* ---- sizes, with the stream rules ---- */

static const size_t sizes[] = {0, 1, 4095, 4097, MIB + 3, 4 * MIB, 9 * MIB + 1, BIG};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static int sizes_writer(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    const char *path = NULL;
    if (CT_OK(utc_conduit_device_path(c, &path)))
        CT_CHECK(!strcmp(path, expected_path(case_ra, case_rb)), "path %s, expected %s", path,
                 expected_path(case_ra, case_rb));
    cudaStream_t s = my_stream(ctx);
    unsigned char *h = malloc(BIG), *d = NULL;
    if (!h || !CUDA_OK(cudaMalloc((void **)&d, BIG)))
        return 1;
    for (int i = 0; i < NSIZES; i++) {
        ct_fill(h, sizes[i], 100 + (uint64_t)i);
        /* made on the stream just before the write, overwritten just after */
        CUDA_OK(cudaMemcpyAsync(d, h, sizes[i], cudaMemcpyHostToDevice, s));
        CT_OK(utc_conduit_write(c, d, sizes[i], i % 3));
        CUDA_OK(cudaMemsetAsync(d, 0xEE, sizes[i] ? sizes[i] : 1, s));
    }
    my_sync(ctx);
    cudaFree(d);
    free(h);
    return 0;
}

static int sizes_reader(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    cudaStream_t s = my_stream(ctx);
    unsigned char *h = malloc(BIG), *d = NULL;
    if (!h || !CUDA_OK(cudaMalloc((void **)&d, BIG)))
        return 1;
    for (int i = 0; i < NSIZES; i++) {
        size_t got = 12345;
        if (!CT_OK(utc_conduit_read(c, d, BIG, i % 3, &got)))
            continue;
        CT_CHECK(got == sizes[i], "size %zu, got %zu", sizes[i], got);
        CUDA_OK(cudaMemcpyAsync(h, d, sizes[i], cudaMemcpyDeviceToHost, s));
        my_sync(ctx);
        CT_CHECK(ct_verify(h, sizes[i], 100 + (uint64_t)i), "contents of %zu bytes", sizes[i]);
    }
    cudaFree(d);
    free(h);
    return 0;
}

static void sizes_at(int ra, int rb, void *arg)
{
    (void)arg;
    case_ra = ra;
    case_rb = rb;
    ct_pair_t p = dev_pair(ra, true, rb, true, UTC_CONDUIT_SINGLE_ENTRY);
    ct_run2(p.a, sizes_writer, p.c, p.b, sizes_reader, p.c);
    ct_pair_close(&p);
}

static void test_sizes(void)
{
    ct_begin();
    ct_each_placement(true, sizes_at, NULL);
    CT_END();
}

/* ---- both directions from one thread at each end ---- */

#define SWAP_BYTES (13 * MIB) /* more staged chunks than the pipeline's slots */
#define NSWAPS     4

/* Each end's one GPU thread writes its message as a request, reads the other end's, and
 * waits for its write: a thread blocked in its read moves its own write on (a staged one's
 * chunks; an IPC one's answer), and one waiting for its write moves its own read on (the
 * answer the other end's write waits for). */
static int swap_job(utc_ctx_t *ctx, void *data, uint64_t mine, uint64_t theirs)
{
    utc_conduit_t *c = data;
    cudaStream_t s = my_stream(ctx);
    unsigned char *h = malloc(SWAP_BYTES), *out = NULL, *in = NULL;
    if (!h || !CUDA_OK(cudaMalloc((void **)&out, SWAP_BYTES)) ||
        !CUDA_OK(cudaMalloc((void **)&in, SWAP_BYTES)))
        return 1;
    for (int i = 0; i < NSWAPS; i++) {
        ct_fill(h, SWAP_BYTES, mine + (uint64_t)i);
        CUDA_OK(cudaMemcpyAsync(out, h, SWAP_BYTES, cudaMemcpyHostToDevice, s));
        utc_request_t *w = NULL, *r = NULL;
        size_t got = 0;
        CT_OK(utc_conduit_iwrite(c, out, SWAP_BYTES, 4, &w));
        if (i % 2 == 0) { /* a blocking read, then the write */
            CT_OK(utc_conduit_read(c, in, SWAP_BYTES, 4, &got));
            CT_OK(utc_request_wait(&w, NULL));
        } else { /* both as requests, the write waited for first (its answer needs the
                  * other end's read moved while its thread waits for its own write) */
            CT_OK(utc_conduit_iread(c, in, SWAP_BYTES, 4, &r));
            CT_OK(utc_request_wait(&w, NULL));
            CT_OK(utc_request_wait(&r, &got));
        }
        CUDA_OK(cudaMemcpyAsync(h, in, SWAP_BYTES, cudaMemcpyDeviceToHost, s));
        my_sync(ctx);
        CT_CHECK(got == SWAP_BYTES && ct_verify(h, SWAP_BYTES, theirs + (uint64_t)i),
                 "swap %d: %zu bytes or contents differ", i, got);
    }
    cudaFree(out);
    cudaFree(in);
    free(h);
    return 0;
}

static int swap_a(utc_ctx_t *ctx, void *data)
{
    return swap_job(ctx, data, 500, 600);
}

static int swap_b(utc_ctx_t *ctx, void *data)
{
    return swap_job(ctx, data, 600, 500);
}

static void swap_at(int ra, int rb, void *arg)
{
    (void)arg;
    ct_pair_t p = dev_pair(ra, true, rb, true, UTC_CONDUIT_SINGLE_ENTRY);
    ct_run2(p.a, swap_a, p.c, p.b, swap_b, p.c);
    ct_pair_close(&p);
}

static void test_swap(void)
{
    ct_begin();
    ct_each_placement(true, swap_at, NULL);
    CT_END();
}

/* ---- tags and order ---- */

#define PER_TAG   4
#define TAG_BYTES (64 << 10)

static int tags_writer(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    cudaStream_t s = my_stream(ctx);
    unsigned char *h = malloc(TAG_BYTES), *d = NULL;
    utc_request_t *req[3 * PER_TAG];
    if (!h || !CUDA_OK(cudaMalloc((void **)&d, 3 * PER_TAG * TAG_BYTES)))
        return 1;
    /* on the thread's stream (a GPU thread's is non-blocking: cudaMemcpy, on the legacy
     * stream, is not ordered before the writes' events); h is staged at each call */
    for (int k = 0; k < 3 * PER_TAG; k++) {
        ct_fill(h, TAG_BYTES, 1000 + (uint64_t)k);
        CUDA_OK(
            cudaMemcpyAsync(d + (size_t)k * TAG_BYTES, h, TAG_BYTES, cudaMemcpyHostToDevice, s));
    }
    for (int k = 0; k < 3 * PER_TAG; k++) /* tags 0,1,2,0,1,2,... */
        CT_OK(utc_conduit_iwrite(c, d + (size_t)k * TAG_BYTES, TAG_BYTES, k % 3, &req[k]));
    for (int k = 0; k < 3 * PER_TAG; k++)
        CT_OK(utc_request_wait(&req[k], NULL));
    /* the device layer's own tags are not the user's */
    CT_EXPECT(utc_conduit_write(c, d, 8, UTC_CONDUIT_DEVICE_TAG_MAX + 1), UTC_ERR_INVALID_ARG);
    CT_OK(utc_conduit_write(c, d, 8, UTC_CONDUIT_DEVICE_TAG_MAX));
    my_sync(ctx);
    cudaFree(d);
    free(h);
    return 0;
}

static int tags_reader(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    cudaStream_t s = my_stream(ctx);
    unsigned char *h = malloc(TAG_BYTES), *d = NULL;
    if (!h || !CUDA_OK(cudaMalloc((void **)&d, TAG_BYTES)))
        return 1;
    /* probes say a device message's size and tag, and take nothing */
    utc_msg_info_t info = {0};
    int found = 0;
    if (CT_OK(utc_conduit_probe(c, 2, &info)))
        CT_CHECK(info.size == TAG_BYTES && info.tag == 2, "probe(2): %zu bytes, tag %d",
                 info.size, info.tag);
    CT_OK(utc_conduit_iprobe(c, UTC_ANY_TAG, &found, &info));
    CT_CHECK(found && info.size == TAG_BYTES && info.tag >= 0 && info.tag <= 2,
             "iprobe(any): found %d, %zu bytes, tag %d", found, info.size, info.tag);
    CT_EXPECT(utc_conduit_read(c, d, 8, UTC_CONDUIT_DEVICE_TAG_MAX + 1, NULL), UTC_ERR_INVALID_ARG);
    static const int order[3] = {2, 0, 1};
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < PER_TAG; i++) {
            int tag = order[j], k = i * 3 + tag;
            size_t got = 0;
            if (i == 0) { /* too small: the message stays first */
                CT_EXPECT(utc_conduit_read(c, d, TAG_BYTES - 1, tag, &got), UTC_ERR_TRUNCATE);
                CT_CHECK(got == TAG_BYTES, "truncated read: size %zu", got);
            }
            if (!CT_OK(utc_conduit_read(c, d, TAG_BYTES, tag, &got)))
                continue;
            /* the read's copy is queued on the thread's stream: the copy out too (a
             * cudaMemcpy on the legacy stream ran before it, and saw the last message) */
            CUDA_OK(cudaMemcpyAsync(h, d, TAG_BYTES, cudaMemcpyDeviceToHost, s));
            my_sync(ctx);
            CT_CHECK(got == TAG_BYTES && ct_verify(h, TAG_BYTES, 1000 + (uint64_t)k),
                     "tag %d message %d out of order or wrong", tag, i);
        }
    size_t got = 0;
    CT_OK(utc_conduit_read(c, d, 8, UTC_CONDUIT_DEVICE_TAG_MAX, &got));
    my_sync(ctx);
    cudaFree(d);
    free(h);
    return 0;
}

static void tags_at(int ra, int rb, void *arg)
{
    (void)arg;
    ct_pair_t p = dev_pair(ra, true, rb, true, UTC_CONDUIT_SINGLE_ENTRY);
    ct_run2(p.a, tags_writer, p.c, p.b, tags_reader, p.c);
    ct_pair_close(&p);
}

static void test_tags(void)
{
    ct_begin();
    ct_each_placement(true, tags_at, NULL);
    CT_END();
}

/* ---- host and device memory, GPU and CPU threads ---- */

#define MIX_BYTES (9 * MIB + 5)
#define MIX_CASES 6

/* Case k's source: device memory (k 1, 3), pinned host memory (k 4, 5) or pageable; its
 * destination: device memory (k 2, 3, 5) or pageable. */
static bool mix_dev_src(int k)
{
    return k == 1 || k == 3;
}
static bool mix_pinned_src(int k)
{
    return k >= 4;
}
static bool mix_dev_dst(int k)
{
    return k == 2 || k == 3 || k == 5;
}

static int mix_writer(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    cudaStream_t s = my_stream(ctx);
    unsigned char *h = malloc(MIX_BYTES), *d = NULL, *hp = NULL;
    if (!h || !CUDA_OK(cudaMalloc((void **)&d, MIX_BYTES)) ||
        !CUDA_OK(cudaMallocHost((void **)&hp, MIX_BYTES)))
        return 1;
    for (int k = 0; k < MIX_CASES; k++) {
        ct_fill(h, MIX_BYTES, 500 + (uint64_t)k);
        if (mix_dev_src(k)) {
            CUDA_OK(cudaMemcpyAsync(d, h, MIX_BYTES, cudaMemcpyHostToDevice, s));
            CT_OK(utc_conduit_write(c, d, MIX_BYTES, k));
            CUDA_OK(cudaMemsetAsync(d, 0xEE, MIX_BYTES, s));
        } else {
            unsigned char *src = mix_pinned_src(k) ? hp : h;
            if (src == hp)
                memcpy(hp, h, MIX_BYTES);
            my_sync(ctx); /* the host copy: nothing queued reads it */
            CT_OK(utc_conduit_write(c, src, MIX_BYTES, k));
            memset(src, 0xEE, MIX_BYTES); /* host memory: taken when the write returns */
        }
        my_sync(ctx);
    }
    cudaFree(d);
    cudaFreeHost(hp);
    free(h);
    return 0;
}

static int mix_reader(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    cudaStream_t s = my_stream(ctx);
    unsigned char *h = malloc(MIX_BYTES), *d = NULL;
    if (!h || !CUDA_OK(cudaMalloc((void **)&d, MIX_BYTES)))
        return 1;
    for (int k = 0; k < MIX_CASES; k++) {
        size_t got = 0;
        memset(h, 0, MIX_BYTES);
        if (mix_dev_dst(k)) {
            if (CT_OK(utc_conduit_read(c, d, MIX_BYTES, k, &got)))
                CUDA_OK(cudaMemcpyAsync(h, d, MIX_BYTES, cudaMemcpyDeviceToHost, s));
            my_sync(ctx);
        } else {
            CT_OK(utc_conduit_read(c, h, MIX_BYTES, k, &got));
            my_sync(ctx); /* a GPU thread: the copy into h is queued on its stream */
        }
        CT_CHECK(got == MIX_BYTES && ct_verify(h, MIX_BYTES, 500 + (uint64_t)k),
                 "%s source to %s destination, %s reader: wrong data",
                 mix_dev_src(k)      ? "device"
                 : mix_pinned_src(k) ? "pinned host"
                                     : "host",
                 mix_dev_dst(k) ? "device" : "host", ctx->kind == UTC_TASK_GPU ? "GPU" : "CPU");
    }
    cudaFree(d);
    free(h);
    return 0;
}

static void mix_at(int ra, int rb, void *arg)
{
    (void)arg;
    for (int kinds = 0; kinds < 4; kinds++) { /* GPU or CPU writer and reader */
        ct_pair_t p = dev_pair(ra, kinds & 1, rb, kinds & 2, UTC_CONDUIT_SINGLE_ENTRY);
        ct_run2(p.a, mix_writer, p.c, p.b, mix_reader, p.c);
        ct_pair_close(&p);
    }
}

static void test_mixed(void)
{
    ct_begin();
    ct_each_placement(true, mix_at, NULL);
    CT_END();
}

/* ---- owned buffers ---- */

#define OWN_BYTES (3 * MIB + 1)
static void *volatile own_sent; /* the writer's pointer, for the in-process check */
/* In one process the reader waits for this before it takes the owned message: once it has
 * the buffer, the writer's second write_owned of it is a write of the reader's buffer. */
static atomic_int own_checked;

static int owned_writer(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    cudaStream_t s = my_stream(ctx);
    unsigned char *h = malloc(OWN_BYTES), *p = NULL;
    if (!h || !CT_OK(utc_gpu_malloc(OWN_BYTES, (void **)&p)))
        return 1;
    ct_fill(h, OWN_BYTES, 77);
    CUDA_OK(cudaMemcpyAsync(p, h, OWN_BYTES, cudaMemcpyHostToDevice, s));
    CT_EXPECT(utc_conduit_write_owned(c, p, OWN_BYTES + 1, 1), UTC_ERR_INVALID_ARG);
    CT_EXPECT(utc_conduit_write_owned(c, h, 8, 1), UTC_ERR_INVALID_ARG); /* host memory */
    own_sent = p;
    CT_OK(utc_conduit_write_owned(c, p, OWN_BYTES, 1));
    CT_EXPECT(utc_conduit_write_owned(c, p, OWN_BYTES, 1), UTC_ERR_INVALID_ARG); /* gone */
    atomic_store(&own_checked, 1);
    /* a plain write, read as owned */
    ct_fill(h, OWN_BYTES, 78);
    unsigned char *d = NULL;
    if (CUDA_OK(cudaMalloc((void **)&d, OWN_BYTES))) {
        CUDA_OK(cudaMemcpyAsync(d, h, OWN_BYTES, cudaMemcpyHostToDevice, s));
        CT_OK(utc_conduit_write(c, d, OWN_BYTES, 2));
        my_sync(ctx);
        cudaFree(d);
    }
    free(h);
    return 0;
}

static int owned_reader(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    cudaStream_t s = my_stream(ctx);
    unsigned char *h = malloc(OWN_BYTES);
    for (int i = 0; case_ra == case_rb && !atomic_load(&own_checked) && i < 20000; i++)
        usleep(500);
    for (int tag = 1; tag <= 2 && h; tag++) {
        void *q = NULL;
        size_t size = 0;
        if (!CT_OK(utc_conduit_read_owned(c, tag, &q, &size)))
            continue;
        if (tag == 1 && case_ra == case_rb)
            CT_CHECK(q == own_sent, "in-process: the very buffer (%p), got %p", own_sent, q);
        CT_CHECK(size == OWN_BYTES, "size %zu", size);
        CUDA_OK(cudaMemcpyAsync(h, q, OWN_BYTES, cudaMemcpyDeviceToHost, s));
        my_sync(ctx);
        CT_CHECK(ct_verify(h, OWN_BYTES, 76 + (uint64_t)tag), "owned contents, tag %d", tag);
        CT_OK(utc_gpu_free(q));
    }
    free(h);
    return 0;
}

static void owned_at(int ra, int rb, void *arg)
{
    (void)arg;
    case_ra = ra;
    case_rb = rb;
    atomic_store(&own_checked, 0);
    ct_pair_t p = dev_pair(ra, true, rb, true, UTC_CONDUIT_SINGLE_ENTRY);
    ct_run2(p.a, owned_writer, p.c, p.b, owned_reader, p.c);
    ct_pair_close(&p);
}

static void test_owned(void)
{
    ct_begin();
    ct_each_placement(true, owned_at, NULL);
    CT_END();
}

/* ---- owned, in one process, to a reader on another device ---- */

#define XDEV_BYTES (MIB + 9)

/* Owned (tag 1) and plain (tag 2) writes of device 0's memory. */
static int xdev_writer(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    cudaStream_t s = my_stream(ctx);
    unsigned char *h = malloc(XDEV_BYTES), *p = NULL, *d = NULL;
    if (!h || !CT_OK(utc_gpu_malloc(XDEV_BYTES, (void **)&p)) ||
        !CUDA_OK(cudaMalloc((void **)&d, XDEV_BYTES)))
        return 1;
    ct_fill(h, XDEV_BYTES, 81);
    CUDA_OK(cudaMemcpyAsync(p, h, XDEV_BYTES, cudaMemcpyHostToDevice, s));
    CUDA_OK(cudaMemcpyAsync(d, h, XDEV_BYTES, cudaMemcpyHostToDevice, s));
    CT_OK(utc_conduit_write_owned(c, p, XDEV_BYTES, 1));
    CT_OK(utc_conduit_write(c, d, XDEV_BYTES, 2));
    my_sync(ctx);
    cudaFree(d);
    free(h);
    return 0;
}

/* Each message read as owned is a buffer on the reader's device (1), with the data, that
 * it can write on (owned) and free. */
static int xdev_reader(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    cudaStream_t s = my_stream(ctx);
    unsigned char *h = malloc(XDEV_BYTES);
    for (int tag = 1; tag <= 2 && h; tag++) {
        void *q = NULL;
        size_t size = 0;
        if (!CT_OK(utc_conduit_read_owned(c, tag, &q, &size)))
            continue;
        struct cudaPointerAttributes a;
        if (CUDA_OK(cudaPointerGetAttributes(&a, q)))
            CT_CHECK(a.device == 1, "tag %d: the owned buffer is on device %d, the reader's is 1",
                     tag, a.device);
        CUDA_OK(cudaMemcpyAsync(h, q, XDEV_BYTES, cudaMemcpyDeviceToHost, s));
        my_sync(ctx);
        CT_CHECK(size == XDEV_BYTES && ct_verify(h, XDEV_BYTES, 81), "tag %d: contents", tag);
        CT_OK(utc_gpu_free(q));
    }
    free(h);
    return 0;
}

static void test_owned_other_device(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 2) {
        (void)cudaGetLastError();
        printf("\n    one device: nothing to test");
        return;
    }
    ct_begin();
    utc_task_options_t oa = UTC_TASK_OPTIONS_INIT, ob = UTC_TASK_OPTIONS_INIT;
    static const int dev0[] = {0}, dev1[] = {1};
    oa.kind = ob.kind = UTC_TASK_GPU;
    oa.devices = dev0, oa.devices_len = 1;
    ob.devices = dev1, ob.devices_len = 1;
    int r0 = 0;
    ct_pair_t p = {NULL, NULL, NULL};
    UTC_ASSERT_OK(utc_task_create(&ct_ops_a, &r0, 1, &oa, &p.a));
    UTC_ASSERT_OK(utc_task_create(&ct_ops_b, &r0, 1, &ob, &p.b));
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.memory = UTC_CONDUIT_MEM_DEVICE;
    UTC_ASSERT_OK(utc_conduit_create(p.a, p.b, &o, &p.c));
    ct_run2(p.a, xdev_writer, p.c, p.b, xdev_reader, p.c);
    ct_pair_close(&p);
    CT_END();
}

/* ---- all-threads calls: every caller's stream after the transfer ---- */

#define AT_SIZE (2 * MIB + 5)
#define AT_MSGS 6

/* One device buffer per task, shared by its two GPU threads (made by thread 0). */
static unsigned char *at_wbuf, *at_rbuf;
static pthread_barrier_t at_wbar, at_rbar;

/* Thread 0 makes each message on its stream; both threads write it (thread 0 transfers);
 * then thread 1 overwrites the buffer on its own stream at once: the message must not
 * see that. */
static int at_writer(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    cudaStream_t s = my_stream(ctx);
    unsigned char *h = malloc(AT_SIZE);
    if (ctx->local_id == 0)
        CUDA_OK(cudaMalloc((void **)&at_wbuf, AT_SIZE));
    pthread_barrier_wait(&at_wbar);
    for (int i = 0; i < AT_MSGS && h; i++) {
        if (ctx->local_id == 0) {
            ct_fill(h, AT_SIZE, 300 + (uint64_t)i);
            CUDA_OK(cudaMemcpyAsync(at_wbuf, h, AT_SIZE, cudaMemcpyHostToDevice, s));
        }
        CT_OK(utc_conduit_write(c, at_wbuf, AT_SIZE, 0));
        if (ctx->local_id == 1)
            CUDA_OK(cudaMemsetAsync(at_wbuf, 0, AT_SIZE, s));
        my_sync(ctx);
        pthread_barrier_wait(&at_wbar); /* the next message after thread 1's overwrite */
    }
    pthread_barrier_wait(&at_wbar);
    if (ctx->local_id == 0)
        cudaFree(at_wbuf);
    free(h);
    return 0;
}

/* Both threads read each message (thread 0 transfers); thread 1 copies it out on its own
 * stream at once: it must find the message there. */
static int at_reader(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    cudaStream_t s = my_stream(ctx);
    unsigned char *h = malloc(AT_SIZE);
    if (ctx->local_id == 0)
        CUDA_OK(cudaMalloc((void **)&at_rbuf, AT_SIZE));
    pthread_barrier_wait(&at_rbar);
    for (int i = 0; i < AT_MSGS && h; i++) {
        size_t got = 0;
        CT_OK(utc_conduit_read(c, at_rbuf, AT_SIZE, 0, &got));
        if (ctx->local_id == 1) {
            CUDA_OK(cudaMemcpyAsync(h, at_rbuf, AT_SIZE, cudaMemcpyDeviceToHost, s));
            my_sync(ctx);
            CT_CHECK(got == AT_SIZE && ct_verify(h, AT_SIZE, 300 + (uint64_t)i),
                     "message %d as thread 1's stream sees it after the read", i);
        }
        my_sync(ctx);
        pthread_barrier_wait(&at_rbar); /* the next read after thread 1's copy */
    }
    pthread_barrier_wait(&at_rbar);
    if (ctx->local_id == 0)
        cudaFree(at_rbuf);
    free(h);
    return 0;
}

static void all_threads_at(int ra, int rb, void *arg)
{
    (void)arg;
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.kind = UTC_TASK_GPU;
    int pa[2] = {ra, ra}, pb[2] = {rb, rb};
    ct_pair_t p = {NULL, NULL, NULL};
    UTC_ASSERT_OK(utc_task_create(&ct_ops_a, pa, 2, &o, &p.a));
    UTC_ASSERT_OK(utc_task_create(&ct_ops_b, pb, 2, &o, &p.b));
    utc_conduit_options_t co = UTC_CONDUIT_OPTIONS_INIT;
    co.memory = UTC_CONDUIT_MEM_DEVICE;
    UTC_ASSERT_OK(utc_conduit_create(p.a, p.b, &co, &p.c));
    pthread_barrier_init(&at_wbar, NULL, 2);
    pthread_barrier_init(&at_rbar, NULL, 2);
    ct_run2(p.a, at_writer, p.c, p.b, at_reader, p.c);
    pthread_barrier_destroy(&at_wbar);
    pthread_barrier_destroy(&at_rbar);
    ct_pair_close(&p);
}

static void test_all_threads(void)
{
    ct_begin();
    ct_each_placement(true, all_threads_at, NULL);
    CT_END();
}

/* ---- refusals: sendrecv; a device pointer on a host conduit ---- */

static int refuse_job(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t **cs = data; /* [0] device conduit (free mode), [1] host conduit */
    void *d = NULL;
    if (!CUDA_OK(cudaMalloc(&d, 1 << 16)))
        return 1;
    int me = ctx->world_rank;
    CT_EXPECT(utc_conduit_sendrecv(cs[0], me, d, 8, 0, me, (char *)d + 64, 8, 0, NULL),
              UTC_ERR_UNSUPPORTED);
    CT_EXPECT(utc_conduit_write(cs[1], d, 1 << 16, 0), UTC_ERR_INVALID_ARG);
    CT_CHECK(strstr(utc_last_error(), "UTC_CONDUIT_MEM_DEVICE") != NULL, "message: %s",
             utc_last_error());
    cudaFree(d);
    return 0;
}

static void test_refusals(void)
{
    ct_begin();
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.kind = UTC_TASK_GPU;
    int r0 = 0;
    utc_task_t *t = NULL, *u = NULL;
    UTC_ASSERT_OK(utc_task_create(&ct_ops_a, &r0, 1, &o, &t));
    UTC_ASSERT_OK(utc_task_create(&ct_ops_b, &r0, 1, NULL, &u));
    utc_conduit_options_t co = UTC_CONDUIT_OPTIONS_INIT;
    co.memory = UTC_CONDUIT_MEM_DEVICE;
    co.mode = UTC_CONDUIT_FREE;
    utc_conduit_t *cs[2];
    UTC_ASSERT_OK(utc_conduit_create(t, t, &co, &cs[0]));
    UTC_ASSERT_OK(utc_conduit_create(t, u, NULL, &cs[1]));
    ct_run1(t, refuse_job, cs);
    UTC_ASSERT_OK(utc_conduit_destroy(cs[0]));
    UTC_ASSERT_OK(utc_conduit_destroy(cs[1]));
    UTC_ASSERT_OK(utc_task_destroy(t));
    UTC_ASSERT_OK(utc_task_destroy(u));
    CT_END();
}

/* ---- destroy with transfers pending ---- */

static size_t pool_used(void)
{
    cudaMemPool_t pool;
    uint64_t used = 0;
    if (cudaDeviceSynchronize() != cudaSuccess ||
        cudaDeviceGetDefaultMemPool(&pool, 0) != cudaSuccess ||
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) != cudaSuccess)
        return (size_t)-1;
    return (size_t)used;
}

static int pending_writer(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    (void)ctx;
    void *d = NULL;
    utc_request_t *req[4];
    if (!CUDA_OK(cudaMalloc(&d, 4 * MIB)))
        return 1;
    for (int k = 0; k < 4; k++)
        CT_OK(utc_conduit_iwrite(c, (char *)d + (size_t)k * MIB, MIB, k, &req[k]));
    /* in-process they are handed over at once; between ranks they wait for the reader,
     * which never reads: the destroy ends them */
    for (int k = 0; k < 4; k++) {
        utc_status_t rc = utc_request_wait(&req[k], NULL);
        CT_CHECK(rc == UTC_OK || rc == UTC_ERR_CANCELED, "write %d: %s", k, utc_status_string(rc));
    }
    my_sync(ctx);
    cudaFree(d);
    return 0;
}

static void pending_at(int ra, int rb, void *arg)
{
    (void)arg;
    size_t before = pool_used();
    ct_pair_t p = dev_pair(ra, true, rb, true, UTC_CONDUIT_SINGLE_ENTRY);
    static ct_job_t jw;
    jw = (ct_job_t){pending_writer, p.c};
    UTC_ASSERT_OK(utc_task_run(p.a, &jw));
    usleep(300 * 1000);
    UTC_ASSERT_OK(utc_barrier());
    UTC_ASSERT_OK(utc_conduit_destroy(p.c)); /* with the messages unread */
    UTC_ASSERT_OK(utc_task_wait(p.a));       /* no hang */
    UTC_ASSERT_OK(utc_task_destroy(p.a));
    UTC_ASSERT_OK(utc_task_destroy(p.b));
    size_t after = pool_used();
    CU_ASSERT_EQUAL(after, before); /* the handed buffers went back */
    if (after != before)
        fprintf(stderr, "[rank %d] pool used %zu bytes before, %zu after\n", utc_rank(), before,
                after);
}

static void test_destroy_pending(void)
{
    ct_begin();
    ct_each_placement(true, pending_at, NULL);
    CT_END();
}

/* ---- destroy after the reader took a write nobody waited for ---- */

#define TAKEN        (16 * MIB)
#define TAKEN_ROUNDS 3

static unsigned char *taken_w, *taken_r; /* the writer's and the reader's buffers */
static utc_request_t *taken_req;

/* Writes and leaves without waiting for its write. */
static int taken_writer(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    unsigned char *h = malloc(TAKEN);
    if (!h || !CUDA_OK(cudaMalloc((void **)&taken_w, TAKEN)))
        return 1;
    ct_fill(h, TAKEN, 77);
    CUDA_OK(cudaMemcpyAsync(taken_w, h, TAKEN, cudaMemcpyHostToDevice, my_stream(ctx)));
    my_sync(ctx);
    free(h);
    CT_OK(utc_conduit_iwrite(c, taken_w, TAKEN, 0, &taken_req));
    return 0;
}

/* Reads (its copy queued on its stream) and leaves without synchronizing. */
static int taken_reader(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    (void)ctx;
    size_t got = 0;
    if (!CUDA_OK(cudaMalloc((void **)&taken_r, TAKEN)))
        return 1;
    CT_OK(utc_conduit_read(c, taken_r, TAKEN, 0, &got));
    CT_CHECK(got == TAKEN, "got %zu bytes", got);
    return 0;
}

/* The writer's buffer overwritten in its stream's order, after the write ended. */
static int taken_writer_again(utc_ctx_t *ctx, void *data)
{
    (void)data;
    CUDA_OK(cudaMemsetAsync(taken_w, 0, TAKEN, my_stream(ctx)));
    my_sync(ctx);
    return 0;
}

static int taken_reader_sync(utc_ctx_t *ctx, void *data)
{
    (void)data;
    my_sync(ctx);
    return 0;
}

static void taken_at(int ra, int rb, void *arg)
{
    (void)arg;
    /* a staged write moves only while a thread of its rank is in a call: this writer's
     * leaves at once (IPC: the reader's copy needs nothing of the writer's rank) */
    if (!strcmp(expected_path(ra, rb), "staged"))
        return;
    for (int round = 0; round < TAKEN_ROUNDS; round++) {
        taken_w = taken_r = NULL;
        taken_req = NULL;
        ct_pair_t p = dev_pair(ra, true, rb, true, UTC_CONDUIT_SINGLE_ENTRY);
        ct_run2(p.a, taken_writer, p.c, p.b, taken_reader, p.c);
        UTC_ASSERT_OK(utc_conduit_destroy(p.c));
        if (taken_req) { /* the reader took it: delivered */
            utc_status_t rc = utc_request_wait(&taken_req, NULL);
            CT_CHECK(rc == UTC_OK, "round %d: the write of a message read ended %s (%s)", round,
                     utc_status_string(rc), rc ? utc_last_error() : "");
        }
        ct_run2(p.a, taken_writer_again, NULL, p.b, taken_reader_sync, NULL);
        UTC_ASSERT_OK(utc_task_destroy(p.a));
        UTC_ASSERT_OK(utc_task_destroy(p.b));
        if (taken_r) {
            unsigned char *h = malloc(TAKEN);
            if (h && CUDA_OK(cudaMemcpy(h, taken_r, TAKEN, cudaMemcpyDeviceToHost)))
                CT_CHECK(ct_verify(h, TAKEN, 77),
                         "round %d: the read's data was overwritten by its writer", round);
            free(h);
            cudaFree(taken_r);
        }
        if (taken_w)
            cudaFree(taken_w);
        UTC_ASSERT_OK(utc_barrier());
    }
}

static void test_destroy_taken(void)
{
    ct_begin();
    ct_each_placement(true, taken_at, NULL);
    CT_END();
}

/* ---- a failed peer ---- */

/* Its run's value, 5, is no status code: utc_task_wait reports UTC_ERR_TASK_FAILED. */
static int fail_at_once(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    (void)data;
    usleep(100 * 1000);
    return 5;
}

/* Task b: reads from a (which fails without writing), then writes to it until a write
 * fails: both end with UTC_ERR_PEER_FAILED, none hangs. */
static int survivor(utc_ctx_t *ctx, void *data)
{
    utc_conduit_t *c = data;
    (void)ctx;
    void *d = NULL;
    if (!CUDA_OK(cudaMalloc(&d, MIB)))
        return 1;
    CT_EXPECT(utc_conduit_read(c, d, MIB, 0, NULL), UTC_ERR_PEER_FAILED);
    utc_status_t rc = UTC_OK;
    for (int i = 0; i < 200 && rc == UTC_OK; i++)
        if ((rc = utc_conduit_write(c, d, MIB, 0)) == UTC_OK)
            usleep(10 * 1000);
    CT_CHECK(rc == UTC_ERR_PEER_FAILED, "write after the peer failed: %s", utc_status_string(rc));
    my_sync(ctx);
    cudaFree(d);
    return 0;
}

static void failed_at(int ra, int rb, void *arg)
{
    (void)arg;
    ct_pair_t p = dev_pair(ra, true, rb, true, UTC_CONDUIT_SINGLE_ENTRY);
    ct_pair_run_failing(&p, fail_at_once, UTC_ERR_TASK_FAILED, survivor);
    ct_pair_close(&p);
}

static void test_peer_failed(void)
{
    ct_begin();
    ct_each_placement(true, failed_at, NULL);
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
        {"sizes 0 B to 64 MiB, stream order, the path", test_sizes},
        {"both directions from one thread at each end", test_swap},
        {"tags in order, requests, truncation, probes", test_tags},
        {"host and device memory, GPU and CPU threads", test_mixed},
        {"owned buffers", test_owned},
        {"owned, in one process, to a reader on another device", test_owned_other_device},
        {"all-threads calls: each caller's stream after the transfer", test_all_threads},
        {"sendrecv and device memory on a host conduit refused", test_refusals},
        {"destroy with device transfers pending", test_destroy_pending},
        {"destroy after the reader took a write nobody waited for", test_destroy_taken},
        {"a failed peer task", test_peer_failed},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "device conduits", cases);
}
