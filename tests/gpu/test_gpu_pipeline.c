/*
 * Overlapped GPU pipelines (utc_gpu_pipeline_*) on a device: items written by a CPU task
 * on the last rank (another rank at 2 ranks) go through a GPU task on rank 0, whose
 * results a third task collects (or a host callback keeps). At every depth the results
 * are byte-equal to the host's computation and to the depth-1 (non-overlapped) run; the
 * kernel spins a little so that an unsafe reuse of a slot would show. Also: the loop and
 * callback forms, `count` without a close, lowered result sizes, the end of the stream; a
 * writer that waits for each result before it writes the next item (items and results on
 * one conduit, tags 0 and 1); an empty stream closed, and the collector's own writing
 * closed, before the pipeline is created;
 * and each of them again with owned items (the feeder hands over utc_buf_alloc_pinned
 * buffers with utc_conduit_write_owned, the pipeline reads them with in_owned), byte-equal
 * to the copied items' depth-1 run.
 * Needs a GPU: exits 77 (skipped) without one.
 *
 * Also runs on cudahost (tests/cudahost: the kernel's host version on the item's stream,
 * the streams' random delays beside the spin).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels.h"
#include "utc_test.h"

#define NITEMS  61
#define MAXITEM 70001
#define SPIN_NS 20000ull

enum { MODE_LOOP, MODE_CALLBACK, MODE_COUNT, MODE_ECHO, MODE_EMPTY };

typedef struct {
    int depth, mode;
    int owned;               /* owned items: write_owned of pinned buffers, in_owned */
    utc_conduit_t *in, *out; /* feeder -> GPU, GPU -> collector */
} round_t;

typedef struct {
    utc_task_t base;
    unsigned char *results; /* NITEMS * MAXITEM */
    size_t sizes[NITEMS];
    int got;   /* results received */
    int extra; /* results beyond NITEMS, or out of order */
    int rc;    /* the GPU side's status */
    char why[300];
} side_t;

static size_t item_size(int j)
{
    return 1 + ((size_t)j * 7919u) % MAXITEM;
}

static unsigned char item_byte(int j, size_t k)
{
    return (unsigned char)(k * 31u + (size_t)j * 101u + (k >> 8));
}

static unsigned char mixed_byte(int j, size_t k)
{
    return (unsigned char)(item_byte(j, k) * 7u + k * 13u + (unsigned long long)j);
}

/* ---- the feeder ---- */

static int feed_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    side_t *t = (side_t *)self;
    round_t *r = arg;
    if (r->mode == MODE_EMPTY)
        return utc_conduit_close(r->in);
    unsigned char *buf = malloc(MAXITEM);
    if (!buf)
        return UTC_ERR_NO_MEMORY;
    int rc = 0;
    for (int j = 0; j < NITEMS && rc == 0; j++) {
        size_t n = item_size(j);
        unsigned char *b = r->owned ? utc_buf_alloc_pinned(n) : buf;
        if (!b) {
            rc = UTC_ERR_NO_MEMORY;
            break;
        }
        for (size_t k = 0; k < n; k++)
            b[k] = item_byte(j, k);
        if (!r->owned) {
            rc = utc_conduit_write(r->in, b, n, 0);
        } else if ((rc = utc_conduit_write_owned(r->in, b, n, 0)) != 0) {
            utc_buf_free(b); /* still ours on an error */
        }
        if (rc == 0 && r->mode == MODE_ECHO) { /* item j's result before item j + 1 */
            size_t got = 0;
            rc = utc_conduit_read(r->in, t->results + (size_t)j * MAXITEM, MAXITEM, 1, &got);
            if (rc == 0)
                t->sizes[t->got++] = got;
        }
    }
    if (rc == 0 && r->mode != MODE_COUNT)
        rc = utc_conduit_close(r->in);
    free(buf);
    return rc;
}

/* ---- the GPU side ---- */

static int launch(utc_gpu_item_t *it, void *arg)
{
    (void)arg;
    it->out_size = it->in_size; /* the result is as long as the item */
    return utc_test_mix(it->in, it->out, it->in_size, it->index, SPIN_NS, it->stream);
}

static int keep_result(const void *res, size_t size, uint64_t index, void *arg)
{
    side_t *t = arg;
    if (index != (uint64_t)t->got || index >= NITEMS || size > MAXITEM) {
        t->extra++;
        return 0;
    }
    memcpy(t->results + index * MAXITEM, res, size);
    t->sizes[index] = size;
    t->got++;
    return 0;
}

static int gpu_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    side_t *t = (side_t *)self;
    round_t *r = arg;
    utc_gpu_pipeline_options_t o = UTC_GPU_PIPELINE_OPTIONS_INIT;
    o.in = r->in;
    o.in_size = MAXITEM;
    o.out_size = MAXITEM;
    o.depth = r->depth;
    o.in_owned = r->owned;
    const uint64_t want = r->mode == MODE_EMPTY ? 0 : NITEMS;
    if (r->mode == MODE_EMPTY)
        usleep(300000); /* the stream is closed, and so is the collector's writing */
    int rc;
    if (r->mode == MODE_CALLBACK) {
        o.on_result = keep_result;
        o.result_arg = t;
        uint64_t n = 0;
        rc = utc_gpu_pipeline_run(&o, launch, NULL, &n);
        if (rc == 0 && n != NITEMS)
            rc = UTC_ERR_INTERNAL;
    } else {
        o.out = r->out;
        o.out_tag = 1;
        o.count = r->mode == MODE_COUNT ? NITEMS : 0;
        utc_gpu_pipeline_t *p = NULL;
        rc = utc_gpu_pipeline_create(&o, &p);
        utc_gpu_item_t it;
        uint64_t n = 0;
        while (rc == 0 && (rc = utc_gpu_pipeline_next(p, &it)) == UTC_OK) {
            if (it.index != n++ || it.in_size != item_size((int)it.index)) {
                rc = UTC_ERR_INTERNAL;
                break;
            }
            if ((rc = launch(&it, NULL)) != 0 || (rc = utc_gpu_pipeline_done(p, &it)) != 0)
                break;
        }
        if (rc == UTC_ERR_CLOSED) { /* a second next at the end says the same */
            rc = utc_gpu_pipeline_next(p, &it) == UTC_ERR_CLOSED && n == want ? UTC_OK
                                                                              : UTC_ERR_INTERNAL;
        }
        utc_gpu_pipeline_destroy(p);
        if (rc == 0)
            rc = utc_conduit_close(r->out);
    }
    t->rc = rc;
    snprintf(t->why, sizeof t->why, "%s", rc ? utc_last_error() : "");
    return 0;
}

/* ---- the collector ---- */

static int collect_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    side_t *t = (side_t *)self;
    round_t *r = arg;
    if (r->mode == MODE_EMPTY && utc_conduit_close(r->out) != UTC_OK)
        return 1; /* its own writing, which the pipeline's does not concern */
    for (;;) {
        size_t got = 0;
        int i = t->got < NITEMS ? t->got : NITEMS - 1;
        int rc = utc_conduit_read(r->out, t->results + (size_t)i * MAXITEM, MAXITEM, 1, &got);
        if (rc == UTC_ERR_CLOSED)
            return 0;
        if (rc != 0)
            return rc;
        if (t->got >= NITEMS)
            t->extra++;
        else
            t->sizes[t->got++] = got;
    }
}

static const utc_task_ops_t feed_ops = {
    .name = "pipe-feed", .size = sizeof(side_t), .run = feed_run};
static const utc_task_ops_t gpu_ops = {.name = "pipe-gpu", .size = sizeof(side_t), .run = gpu_run};
static const utc_task_ops_t collect_ops = {
    .name = "pipe-collect", .size = sizeof(side_t), .run = collect_run};

/* Whether the results held by `t` are the `want` first of the host's computation; copies
 * them to `keep`. */
static int results_ok(const side_t *t, int want, unsigned char *keep)
{
    if (t->got != want || t->extra) {
        fprintf(stderr, "[rank %d] %d results (want %d), %d extra\n", utc_test_rank(), t->got,
                want, t->extra);
        return 0;
    }
    for (int j = 0; j < want; j++) {
        const unsigned char *res = t->results + (size_t)j * MAXITEM;
        if (t->sizes[j] != item_size(j)) {
            fprintf(stderr, "[rank %d] result %d: %zu bytes, want %zu\n", utc_test_rank(), j,
                    t->sizes[j], item_size(j));
            return 0;
        }
        for (size_t k = 0; k < t->sizes[j]; k++)
            if (res[k] != mixed_byte(j, k)) {
                fprintf(stderr, "[rank %d] result %d byte %zu: %u, want %u\n", utc_test_rank(), j,
                        k, res[k], mixed_byte(j, k));
                return 0;
            }
    }
    memcpy(keep, t->results, (size_t)want * MAXITEM);
    return 1;
}

/* One round: feeder and collector on the last rank, the GPU task on rank 0. */
static void one_round(int depth, int mode, int owned, unsigned char *keep)
{
    int last = utc_nranks() - 1, zero = 0;
    utc_task_options_t go = UTC_TASK_OPTIONS_INIT;
    go.kind = UTC_TASK_GPU;
    utc_task_t *feed, *gpu, *coll;
    UTC_ASSERT_OK(utc_task_create(&feed_ops, &last, 1, NULL, &feed));
    UTC_ASSERT_OK(utc_task_create(&gpu_ops, &zero, 1, &go, &gpu));
    UTC_ASSERT_OK(utc_task_create(&collect_ops, &last, 1, NULL, &coll));
    round_t r = {.depth = depth, .mode = mode, .owned = owned};
    const int want = mode == MODE_EMPTY ? 0 : NITEMS; /* results */
    UTC_ASSERT_OK(utc_conduit_create(feed, gpu, NULL, &r.in));
    if (mode == MODE_ECHO) /* results back to the feeder on the items' conduit */
        r.out = r.in;
    else
        UTC_ASSERT_OK(utc_conduit_create(gpu, coll, NULL, &r.out));
    side_t *g = (side_t *)gpu, *c = (side_t *)coll;
    side_t *holder = mode == MODE_CALLBACK ? g : mode == MODE_ECHO ? (side_t *)feed : c;
    int holds = utc_rank() == (mode == MODE_CALLBACK ? 0 : last);
    if (holds) {
        holder->results = calloc(NITEMS, MAXITEM);
        CU_ASSERT_PTR_NOT_NULL_FATAL(holder->results);
    }
    UTC_ASSERT_OK(utc_task_run(feed, &r));
    UTC_ASSERT_OK(utc_task_run(gpu, &r));
    if (mode != MODE_CALLBACK && mode != MODE_ECHO)
        UTC_ASSERT_OK(utc_task_run(coll, &r));
    UTC_ASSERT_OK(utc_task_wait(feed));
    UTC_ASSERT_OK(utc_task_wait(gpu));
    UTC_ASSERT_OK(utc_task_wait(coll));
    if (utc_rank() == 0) {
        if (g->rc)
            fprintf(stderr, "[rank 0] depth %d mode %d: %d: %s\n", depth, mode, g->rc, g->why);
        CU_ASSERT_EQUAL(g->rc, 0);
    }
    if (holds) {
        int ok = results_ok(holder, want, keep);
        if (!ok)
            fprintf(stderr, "[rank %d] depth %d, mode %d: wrong results\n", utc_rank(), depth,
                    mode);
        CU_ASSERT(ok);
        free(holder->results);
    }
    if (r.out != r.in)
        UTC_ASSERT_OK(utc_conduit_destroy(r.out));
    UTC_ASSERT_OK(utc_conduit_destroy(r.in));
    UTC_ASSERT_OK(utc_task_destroy(coll));
    UTC_ASSERT_OK(utc_task_destroy(gpu));
    UTC_ASSERT_OK(utc_task_destroy(feed));
}

/* An empty stream: the feeder closes at once, the collector closes its own writing on the
 * results' conduit, and only then the GPU task creates its pipeline: no item, no result,
 * no error. */
static void test_closed_before_create(void)
{
    (void)utc_test_need_gpu();
    unsigned char keep[1];
    one_round(2, MODE_EMPTY, 0, keep);
}

static void rounds(int mode)
{
    (void)utc_test_need_gpu();
    static const int depths[] = {1, 2, 3, 5};
    unsigned char *first = malloc((size_t)NITEMS * MAXITEM);
    unsigned char *now = malloc((size_t)NITEMS * MAXITEM);
    CU_ASSERT_PTR_NOT_NULL_FATAL(first);
    CU_ASSERT_PTR_NOT_NULL_FATAL(now);
    size_t nd = sizeof depths / sizeof depths[0];
    /* copied items at every depth, then owned ones (in_owned) at every depth */
    for (size_t i = 0; i < 2 * nd; i++) {
        one_round(depths[i % nd], mode, i >= nd, i == 0 ? first : now);
        /* byte-equal to the copied depth-1 run, where this rank holds the results */
        if (i > 0 && utc_rank() == (mode == MODE_CALLBACK ? 0 : utc_nranks() - 1))
            CU_ASSERT(memcmp(first, now, (size_t)NITEMS * MAXITEM) == 0);
    }
    free(now);
    free(first);
}

static void test_loop_to_a_conduit(void)
{
    rounds(MODE_LOOP);
}
static void test_run_with_a_callback(void)
{
    rounds(MODE_CALLBACK);
}
static void test_count_without_close(void)
{
    rounds(MODE_COUNT);
}
static void test_writer_waits_for_each_result(void)
{
    rounds(MODE_ECHO);
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"next/done loop, results to a conduit, depths 1 2 3 5, copied and owned items",
         test_loop_to_a_conduit},
        {"utc_gpu_pipeline_run, results to a callback", test_run_with_a_callback},
        {"count items, the writer never closes", test_count_without_close},
        {"a writer that waits for each result before the next item",
         test_writer_waits_for_each_result},
        {"an empty stream closed before the pipeline starts", test_closed_before_create},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "gpu pipeline", cases);
}
