/*
 * Values out of range (issue 23, item 4) and stale owned buffers (item 1, owned buffers),
 * on both transports: in-process (both tasks on rank 0) and, at 2 and 3 ranks, MPI (the
 * reader on the last rank). A NaN timeout and sizes no buffer can have are refused with
 * UTC_ERR_INVALID_ARG; an owned buffer handed over twice, or freed and then handed over,
 * with UTC_ERR_INVALID_HANDLE, and the reader gets the message once; a buffer freed twice
 * with a new one allocated between leaves the new one alone. Then a run's own return
 * value is named by utc_task_wait, and a window that cannot be allocated says out of memory
 * and its size.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "utc_test.h"

static atomic_int failures;

#define EXPECT(ctx, expr, want, text)                                                      \
    do {                                                                                   \
        int rc_ = (expr);                                                                  \
        if (rc_ != (want) || ((want) != UTC_OK && !strstr(utc_last_error(), (text)))) {     \
            fprintf(stderr, "rank %d, line %d: %s gave %d (%s), wanted %d with '%s'\n",   \
                    (ctx)->world_rank, __LINE__, #expr, rc_, utc_last_error(), (want),     \
                    (text));                                                               \
            atomic_fetch_add(&failures, 1);                                                \
        } else if ((want) != UTC_OK && (ctx)->world_rank == 0) {                           \
            printf("  %s\n", utc_last_error());                                            \
        }                                                                                  \
    } while (0)

typedef struct {
    utc_conduit_t *c;
} pair_t;

static bool filled(const unsigned char *b, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != v)
            return false;
    return true;
}

static int writer_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self;
    utc_conduit_t *c = ((pair_t *)arg)->c;
    unsigned char small[64] = {0};
    utc_request_t *req = NULL;
    /* the reported hang: an in-process iwrite of (size_t)-1 bytes from 64 */
    EXPECT(ctx, utc_conduit_iwrite(c, small, (size_t)-1, 0, &req), UTC_ERR_INVALID_ARG,
           "PTRDIFF_MAX");
    EXPECT(ctx, utc_conduit_write(c, small, (size_t)PTRDIFF_MAX + 1, 0), UTC_ERR_INVALID_ARG,
           "larger than any buffer");

    /* the same owned buffer handed over twice while the first is unread: the second is
     * refused (once the reader has it, it is the reader's: the record cannot tell a second
     * hand-over from the new owner's, so the reader waits for tag 4 before it reads) */
    unsigned char *b = utc_buf_alloc(64);
    memset(b, 'A', 64);
    EXPECT(ctx, utc_conduit_write_owned(c, b, 64, 1), UTC_OK, "");
    EXPECT(ctx, utc_conduit_write_owned(c, b, 64, 1), UTC_ERR_INVALID_HANDLE,
           "handed over already");
    int go = 4;
    EXPECT(ctx, utc_conduit_write(c, &go, sizeof go, 4), UTC_OK, "");

    /* freed, then handed over */
    unsigned char *f = utc_buf_alloc(64);
    utc_buf_free(f);
    EXPECT(ctx, utc_conduit_write_owned(c, f, 64, 1), UTC_ERR_INVALID_HANDLE, "was freed");

    /* freed twice with a new buffer allocated between: the new one is not freed */
    unsigned char *d = utc_buf_alloc(64);
    utc_buf_free(d);
    unsigned char *n = utc_buf_alloc(64);
    if (n == d) {
        fprintf(stderr, "rank %d: a freed buffer's address came back at once\n",
                ctx->world_rank);
        atomic_fetch_add(&failures, 1);
    }
    utc_buf_free(d); /* logged and ignored */
    memset(n, 'N', 64);
    EXPECT(ctx, utc_conduit_write_owned(c, n, 64, 2), UTC_OK, "");

    /* a large one (mapped on its own), freed: refused too */
    unsigned char *big = utc_buf_alloc((size_t)32 << 20);
    big[0] = 1;
    utc_buf_free(big);
    EXPECT(ctx, utc_conduit_write_owned(c, big, 64, 1), UTC_ERR_INVALID_HANDLE, "was freed");

    int v = 3;
    EXPECT(ctx, utc_conduit_write(c, &v, sizeof v, 3), UTC_OK, "");
    return 0;
}

static int reader_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self;
    utc_conduit_t *c = ((pair_t *)arg)->c;
    unsigned char small[64];
    size_t got = 0;
    /* the reported hang: a NaN timeout waited for ever */
    EXPECT(ctx, utc_conduit_read_timeout(c, small, sizeof small, 1, &got, NAN),
           UTC_ERR_INVALID_ARG, "NaN");
    EXPECT(ctx, utc_conduit_read(c, small, (size_t)-1, 1, &got), UTC_ERR_INVALID_ARG,
           "capacity");

    int go = 0;
    EXPECT(ctx, utc_conduit_read(c, &go, sizeof go, 4, &got), UTC_OK, "");
    void *ob = NULL;
    EXPECT(ctx, utc_conduit_read_owned(c, 1, &ob, &got), UTC_OK, "");
    if (!ob || got != 64 || !filled(ob, 64, 'A')) {
        fprintf(stderr, "rank %d: owned message wrong\n", ctx->world_rank);
        atomic_fetch_add(&failures, 1);
    }
    utc_buf_free(ob);
    /* the second hand-over was refused: no second message (before: one pointer twice) */
    EXPECT(ctx, utc_conduit_read_timeout(c, small, sizeof small, 1, &got, 0.3), UTC_ERR_TIMEOUT,
           "within");
    EXPECT(ctx, utc_conduit_read_owned(c, 2, &ob, &got), UTC_OK, "");
    if (!ob || got != 64 || !filled(ob, 64, 'N')) {
        fprintf(stderr, "rank %d: owned message after the double free wrong\n",
                ctx->world_rank);
        atomic_fetch_add(&failures, 1);
    }
    utc_buf_free(ob);
    int v = 0;
    /* negative: no limit (documented), the message is there */
    EXPECT(ctx, utc_conduit_read_timeout(c, &v, sizeof v, 3, &got, -1.0), UTC_OK, "");
    if (v != 3)
        atomic_fetch_add(&failures, 1);
    return 0;
}

static const utc_task_ops_t writer_ops = {.name = "bv-writer", .size = sizeof(utc_task_t),
                                          .run = writer_run};
static const utc_task_ops_t reader_ops = {.name = "bv-reader", .size = sizeof(utc_task_t),
                                          .run = reader_run};

static void values_between(int wrank, int rrank)
{
    utc_task_t *w = NULL, *r = NULL;
    UTC_ASSERT_OK(utc_task_create(&writer_ops, &wrank, 1, NULL, &w));
    UTC_ASSERT_OK(utc_task_create(&reader_ops, &rrank, 1, NULL, &r));
    pair_t p = {NULL};
    UTC_ASSERT_OK(utc_conduit_create(w, r, NULL, &p.c));
    CU_ASSERT_EQUAL(utc_conduit_transport(p.c),
                    utc_test_transport(wrank, rrank));
    UTC_ASSERT_OK(utc_task_run(w, &p));
    UTC_ASSERT_OK(utc_task_run(r, &p));
    UTC_ASSERT_OK(utc_task_wait(w));
    UTC_ASSERT_OK(utc_task_wait(r));
    UTC_ASSERT_OK(utc_conduit_destroy(p.c));
    UTC_ASSERT_OK(utc_task_destroy(r));
    UTC_ASSERT_OK(utc_task_destroy(w));
    CU_ASSERT_EQUAL(atomic_load(&failures), 0);
}

static void test_in_process(void) { values_between(0, 0); }

static void test_mpi(void)
{
    if (utc_test_nranks() < 2)
        return; /* one rank: no MPI conduit */
    values_between(0, utc_test_nranks() - 1);
}

/* A run that returns the user's own 7: utc_task_wait names it. */
static int seven_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self, (void)ctx, (void)arg;
    return 7;
}

static const utc_task_ops_t seven_ops = {.name = "bv-seven", .size = sizeof(utc_task_t),
                                         .run = seven_run};

static void test_run_value(void)
{
    int procs[1] = {0};
    utc_task_t *t = NULL;
    UTC_ASSERT_OK(utc_task_create(&seven_ops, procs, 1, NULL, &t));
    UTC_ASSERT_OK(utc_task_run(t, NULL));
    int rc = utc_task_wait(t);
    if (utc_test_rank() == 0) {
        CU_ASSERT_EQUAL(rc, UTC_ERR_TASK_FAILED);
        printf("  %s\n", utc_last_error());
        CU_ASSERT_PTR_NOT_NULL(strstr(utc_last_error(), "returned 7"));
    } else {
        CU_ASSERT_EQUAL(rc, UTC_OK); /* no thread here */
    }
    UTC_ASSERT_OK(utc_task_destroy(t));
}

static void test_window_too_large(void)
{
    int n = utc_test_nranks();
    int procs[3] = {0, n > 1 ? 1 : 0, n > 2 ? 2 : 0};
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.window_size = (size_t)1 << 40; /* 1 TiB per rank */
    utc_task_t *t = NULL;
    int rc = utc_task_create(&seven_ops, procs, n, &o, &t);
    CU_ASSERT_EQUAL(rc, UTC_ERR_NO_MEMORY);
    const char *msg = utc_last_error();
    if (utc_test_rank() == 0)
        printf("  %s\n", msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "1099511627776"));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "out of memory"));
    CU_ASSERT_PTR_NULL(t);
    /* and then a task with a window that fits */
    o.window_size = 4096;
    UTC_ASSERT_OK(utc_task_create(&seven_ops, procs, n, &o, &t));
    UTC_ASSERT_OK(utc_task_destroy(t));
}

static const utc_test_case_t cases[] = {
    {"in-process: NaN timeout, sizes, owned buffers twice / freed", test_in_process},
    {"MPI: NaN timeout, sizes, owned buffers twice / freed", test_mpi},
    {"a run's own return value in the message", test_run_value},
    {"a window too large: out of memory and its size", test_window_too_large},
    UTC_TEST_END};

int main(int argc, char **argv)
{
    return utc_test_main(argc, argv, "bad values", cases);
}
