/*
 * GPU buffers: every memory kind round-trips data for 1D, 2D and 3D shapes and odd
 * element sizes, the same task code runs with the kind taken from the task options, and
 * the byte counters show that a sequence of host and device updates makes no redundant
 * copy. Needs a GPU: exits 77 (skipped) without one.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "utc_test.h"

#define MAX_LOCAL 8

static void test_need_a_gpu(void)
{
    (void)utc_test_need_gpu();
    CU_ASSERT(utc_gpu_supported());
}

/* A task whose threads record the first failed check (line and text) instead of calling
 * CUnit from several threads; the main thread asserts afterwards. */
typedef struct {
    utc_task_t base;
    int failed_line[MAX_LOCAL];
    char failed[MAX_LOCAL][200];
    utc_gpu_data_t *kept[MAX_LOCAL]; /* made in init, used in run, freed in fini */
} data_task_t;

#define CHECK(t, ctx, cond)                                                              \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            int l_ = (ctx)->local_id;                                                    \
            if (!(t)->failed_line[l_]) {                                                 \
                (t)->failed_line[l_] = __LINE__;                                         \
                snprintf((t)->failed[l_], sizeof (t)->failed[l_], "%s (last error: %s)",  \
                         #cond, utc_last_error());                                       \
            }                                                                            \
            return UTC_ERR_TASK_FAILED;                                                  \
        }                                                                                \
    } while (0)

#define CHECK_OK(t, ctx, expr) CHECK(t, ctx, (expr) == UTC_OK)

static int stats_are(utc_gpu_data_t *d, uint64_t h2d, uint64_t d2h, size_t bytes)
{
    utc_gpu_data_stats_t s;
    if (utc_gpu_data_stats(d, &s) != UTC_OK)
        return 0;
    int ok = s.h2d_copies == h2d && s.d2h_copies == d2h && s.h2d_bytes == h2d * bytes &&
             s.d2h_bytes == d2h * bytes;
    if (!ok)
        fprintf(stderr,
                "[rank %d] stats: h2d %llu copies / %llu bytes, d2h %llu / %llu; want %llu and "
                "%llu copies of %zu bytes\n",
                utc_test_rank(), (unsigned long long)s.h2d_copies,
                (unsigned long long)s.h2d_bytes, (unsigned long long)s.d2h_copies,
                (unsigned long long)s.d2h_bytes, (unsigned long long)h2d,
                (unsigned long long)d2h, bytes);
    return ok;
}

static int floats_are(const float *x, size_t n, float scale, float add)
{
    for (size_t i = 0; i < n; i++)
        if (x[i] != (float)i * scale + add)
            return 0;
    return 1;
}

/*
 * The sequence of host and device updates; after each step the counters must show
 * exactly the copies that step needed. The same code runs for every memory kind.
 */
static int no_redundant_copies(data_task_t *t, utc_ctx_t *ctx)
{
    const size_t n = ((size_t)1 << 18) + 3 + (size_t)ctx->local_id, B = n * sizeof(float);
    float *src = malloc(B), *out = malloc(B);
    CHECK(t, ctx, src && out);
    for (size_t i = 0; i < n; i++)
        src[i] = (float)i;
    utc_gpu_data_t *d;
    CHECK_OK(t, ctx, utc_gpu_data_create_default(sizeof(float), n, 1, 1, &d));
    float *h = utc_gpu_data_host(d);
    void *stream = utc_gpu_stream();
    CHECK(t, ctx, stats_are(d, 0, 0, B));

    CHECK_OK(t, ctx, utc_gpu_data_put_host(d, src)); /* host current, CPU copy only */
    CHECK(t, ctx, stats_are(d, 0, 0, B));
    CHECK_OK(t, ctx, utc_gpu_data_sync_device(d));   /* one H2D */
    CHECK(t, ctx, stats_are(d, 1, 0, B));
    CHECK_OK(t, ctx, utc_gpu_data_sync_device(d));   /* already current */
    CHECK_OK(t, ctx, utc_gpu_data_sync_host(d));     /* still current */
    CHECK_OK(t, ctx, utc_gpu_data_fetch_host(d, out));
    CHECK(t, ctx, floats_are(out, n, 1, 0));
    memset(out, 0, B);
    CHECK_OK(t, ctx, utc_gpu_data_fetch_device(d, out)); /* host copy is current: no copy */
    CHECK(t, ctx, floats_are(out, n, 1, 0));
    CHECK(t, ctx, stats_are(d, 1, 0, B));

    /* a kernel writes the device copy: x = 2x + 1 */
    CHECK(t, ctx, utc_test_scale(utc_gpu_data_device(d), 2, 1, n, stream) == 0);
    CHECK_OK(t, ctx, utc_gpu_data_mark_device(d));
    CHECK_OK(t, ctx, utc_gpu_data_sync_device(d));   /* device is the current copy */
    CHECK(t, ctx, stats_are(d, 1, 0, B));
    CHECK_OK(t, ctx, utc_gpu_data_sync_host(d));     /* one D2H */
    CHECK(t, ctx, stats_are(d, 1, 1, B));
    CHECK_OK(t, ctx, utc_gpu_data_sync_host(d));
    CHECK(t, ctx, stats_are(d, 1, 1, B));
    CHECK(t, ctx, floats_are(h, n, 2, 1));          /* read through the host pointer */

    /* again; fetch_device copies straight out and leaves the host copy stale */
    CHECK(t, ctx, utc_test_scale(utc_gpu_data_device(d), 2, 1, n, stream) == 0);
    CHECK_OK(t, ctx, utc_gpu_data_mark_device(d));
    CHECK_OK(t, ctx, utc_gpu_data_fetch_device(d, out)); /* one D2H into out */
    CHECK(t, ctx, floats_are(out, n, 4, 3));
    CHECK(t, ctx, stats_are(d, 1, 2, B));
    memset(out, 0, B);
    CHECK_OK(t, ctx, utc_gpu_data_fetch_host(d, out)); /* host was stale: one D2H */
    CHECK(t, ctx, floats_are(out, n, 4, 3));
    CHECK(t, ctx, stats_are(d, 1, 3, B));

    /* the host writes through its pointer */
    for (size_t i = 0; i < n; i++)
        h[i] = (float)i * 0.5f;
    CHECK_OK(t, ctx, utc_gpu_data_mark_host(d));
    CHECK_OK(t, ctx, utc_gpu_data_fetch_device(d, out)); /* from the host copy */
    CHECK(t, ctx, floats_are(out, n, 0.5f, 0));
    CHECK(t, ctx, stats_are(d, 1, 3, B));
    CHECK_OK(t, ctx, utc_gpu_data_sync_device(d));       /* one H2D */
    CHECK(t, ctx, stats_are(d, 2, 3, B));

    /* a whole-buffer put needs no copy of the stale side first */
    CHECK(t, ctx, utc_test_scale(utc_gpu_data_device(d), 2, 0, n, stream) == 0);
    CHECK_OK(t, ctx, utc_gpu_data_mark_device(d));
    CHECK_OK(t, ctx, utc_gpu_data_put_host(d, src));     /* overwrites: no D2H */
    CHECK(t, ctx, stats_are(d, 2, 3, B));
    CHECK_OK(t, ctx, utc_gpu_data_sync_device(d));       /* one H2D */
    CHECK(t, ctx, stats_are(d, 3, 3, B));
    for (size_t i = 0; i < n; i++)
        src[i] = 7.0f + (float)i;
    CHECK_OK(t, ctx, utc_gpu_data_put_device(d, src));   /* one H2D, straight in */
    CHECK(t, ctx, stats_are(d, 4, 3, B));
    CHECK_OK(t, ctx, utc_gpu_data_fetch_host(d, out));   /* one D2H */
    CHECK(t, ctx, floats_are(out, n, 1, 7));
    CHECK(t, ctx, stats_are(d, 4, 4, B));
    CHECK_OK(t, ctx, utc_gpu_data_fetch_host(d, out));
    CHECK_OK(t, ctx, utc_gpu_data_fetch_device(d, out));
    CHECK(t, ctx, stats_are(d, 4, 4, B));

    CHECK_OK(t, ctx, utc_gpu_data_reset_stats(d));
    CHECK(t, ctx, stats_are(d, 0, 0, B));
    utc_gpu_data_destroy(d);
    free(out);
    free(src);
    return 0;
}

/* Byte patterns through 1D, 2D and 3D buffers of odd element sizes. */
static int shapes_round_trip(data_task_t *t, utc_ctx_t *ctx)
{
    static const size_t shapes[][4] = {
        /* elem, nx, ny, nz */
        {1, 1, 1, 1},    {3, 1001, 1, 1}, {4, 100, 37, 1},
        {24, 17, 5, 9},  {8, 64, 64, 16}, {1, 4097, 3, 2},
    };
    utc_mem_kind_t kind = utc_task_mem_kind(ctx->task);
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        const size_t *s = shapes[k];
        size_t bytes = s[0] * s[1] * s[2] * s[3];
        unsigned char *in = malloc(bytes), *out = malloc(bytes);
        CHECK(t, ctx, in && out);
        for (size_t i = 0; i < bytes; i++)
            in[i] = (unsigned char)(i * 31 + k + (size_t)ctx->global_id);
        utc_gpu_data_t *d;
        CHECK_OK(t, ctx, utc_gpu_data_create(s[0], s[1], s[2], s[3], kind, &d));
        size_t nx, ny, nz;
        CHECK_OK(t, ctx, utc_gpu_data_dims(d, &nx, &ny, &nz));
        CHECK(t, ctx, nx == s[1] && ny == s[2] && nz == s[3]);
        CHECK(t, ctx, utc_gpu_data_size(d) == bytes && utc_gpu_data_elem_size(d) == s[0]);
        CHECK(t, ctx, utc_gpu_data_kind(d) == kind);
        CHECK(t, ctx, utc_gpu_data_device_id(d) == utc_gpu_device());
        /* one pointer for unified memory, two otherwise */
        CHECK(t, ctx, (utc_gpu_data_host(d) == utc_gpu_data_device(d)) == (kind == UTC_MEM_UNIFIED));

        /* host -> device -> kernel -> host */
        CHECK_OK(t, ctx, utc_gpu_data_put_host(d, in));
        CHECK_OK(t, ctx, utc_gpu_data_sync_device(d));
        CHECK(t, ctx, utc_test_xor_bytes(utc_gpu_data_device(d), 0x5a, bytes, utc_gpu_stream()) == 0);
        CHECK_OK(t, ctx, utc_gpu_data_mark_device(d));
        CHECK_OK(t, ctx, utc_gpu_data_fetch_host(d, out));
        for (size_t i = 0; i < bytes; i++)
            CHECK(t, ctx, out[i] == (unsigned char)(in[i] ^ 0x5a));
        /* straight into the device copy and back out of it */
        CHECK_OK(t, ctx, utc_gpu_data_put_device(d, in));
        memset(out, 0, bytes);
        CHECK_OK(t, ctx, utc_gpu_data_fetch_device(d, out));
        CHECK(t, ctx, memcmp(in, out, bytes) == 0);
        /* and the host copy follows when asked */
        CHECK_OK(t, ctx, utc_gpu_data_sync_host(d));
        CHECK(t, ctx, memcmp(utc_gpu_data_host(d), in, bytes) == 0);
        utc_gpu_data_destroy(d);
        free(out);
        free(in);
    }
    return 0;
}

static int data_init(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    data_task_t *t = (data_task_t *)self;
    if (ctx->local_id >= MAX_LOCAL)
        return UTC_ERR_OUT_OF_RANGE;
    CHECK_OK(t, ctx, utc_gpu_data_create_default(sizeof(double), 1000, 1, 1, &t->kept[ctx->local_id]));
    CHECK(t, ctx, utc_gpu_data_kind(t->kept[ctx->local_id]) == utc_task_mem_kind(self));
    return 0;
}

static int data_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    data_task_t *t = (data_task_t *)self;
    int rc = no_redundant_copies(t, ctx);
    if (rc == 0)
        rc = shapes_round_trip(t, ctx);
    /* the buffer made in init, used from run */
    double v[1000];
    for (int i = 0; i < 1000; i++)
        v[i] = i * 1.5;
    utc_gpu_data_t *k = t->kept[ctx->local_id];
    CHECK_OK(t, ctx, utc_gpu_data_put_device(k, v));
    memset(v, 0, sizeof v);
    CHECK_OK(t, ctx, utc_gpu_data_fetch_host(k, v));
    CHECK(t, ctx, v[999] == 999 * 1.5 && v[1] == 1.5);
    return rc;
}

static void data_fini(utc_task_t *self, utc_ctx_t *ctx)
{
    data_task_t *t = (data_task_t *)self;
    utc_gpu_data_destroy(t->kept[ctx->local_id]);
    t->kept[ctx->local_id] = NULL;
}

static const utc_task_ops_t data_ops = {.name = "gpu-data",
                                        .size = sizeof(data_task_t),
                                        .init = data_init,
                                        .run = data_run,
                                        .fini = data_fini};

/* The same task code, with the memory kind given as a creation option. */
static void run_with_kind(utc_mem_kind_t kind)
{
    int procs[3 * 2];
    int n = utc_procs_spread(procs, 6, 0, utc_nranks(), 2);
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.kind = UTC_TASK_GPU;
    o.mem_kind = kind;
    utc_task_t *task;
    UTC_ASSERT_OK(utc_task_create(&data_ops, procs, n, &o, &task));
    CU_ASSERT_EQUAL(utc_task_mem_kind(task), kind);
    int rc = utc_task_init(task, NULL);
    if (rc == UTC_OK) {
        UTC_ASSERT_OK(utc_task_run(task, NULL));
        rc = utc_task_wait(task);
    }
    data_task_t *t = (data_task_t *)task;
    for (int i = 0; i < utc_task_local_nthreads(task); i++) {
        if (t->failed_line[i])
            fprintf(stderr, "[rank %d] kind %d thread %d: line %d: %s\n", utc_test_rank(),
                    (int)kind, i, t->failed_line[i], t->failed[i]);
        CU_ASSERT_EQUAL(t->failed_line[i], 0);
    }
    CU_ASSERT_EQUAL(rc, UTC_OK);
    UTC_ASSERT_OK(utc_task_destroy(task));
}

static void test_pageable(void) { run_with_kind(UTC_MEM_PAGEABLE); }
static void test_pinned(void) { run_with_kind(UTC_MEM_PINNED); }
static void test_unified(void) { run_with_kind(UTC_MEM_UNIFIED); }

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"a GPU is present (else skip)", test_need_a_gpu},
        {"pageable: round trips, no redundant copies", test_pageable},
        {"pinned: round trips, no redundant copies", test_pinned},
        {"unified: round trips, no redundant copies", test_unified},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "gpu data", cases);
}
