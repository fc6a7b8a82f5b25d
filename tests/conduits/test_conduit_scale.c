/*
 * Many conduits (label `scale`): 10,000 in-process conduits between two tasks of one thread
 * on rank 0, one message each way on every one of them, then all destroyed. Every message
 * must arrive whole, and resident memory must grow by less than 200 MB while they are all
 * alive (an idle in-process conduit holds a few KiB: doc/PERFORMANCE.md). The times are
 * printed, never asserted. Built with a sanitizer or run under valgrind, the memory bound
 * is not checked (their own bookkeeping grows with every allocation).
 */
#include <unistd.h>

#include "conduit_test_util.h"

#define NCONDUITS 10000
#define RSS_BOUND ((long)200 << 20)
#define MAXLEN    64

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif
#ifndef UNDER_SANITIZER
#define UNDER_SANITIZER 0
#endif

/* valgrind preloads its core into the program */
static bool under_valgrind(void)
{
    const char *p = getenv("LD_PRELOAD");
    return p && strstr(p, "vgpreload");
}

static size_t msg_len(int i)
{
    return 1 + (size_t)(i % MAXLEN);
}
static uint64_t msg_seed(int i, int dir)
{
    return ((uint64_t)dir << 40) ^ (uint64_t)i;
}

typedef struct {
    utc_conduit_t **c;
    int n;
} scale_t;

/* Source: a message out on every conduit, then the answer from each. */
static int scale_src(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    scale_t *s = d;
    unsigned char buf[MAXLEN];
    for (int i = 0; i < s->n; i++) {
        ct_fill(buf, msg_len(i), msg_seed(i, 0));
        if (!CT_OK(utc_conduit_write(s->c[i], buf, msg_len(i), 1)))
            return -1;
    }
    for (int i = 0; i < s->n; i++) {
        size_t got = 0;
        if (!CT_OK(utc_conduit_read(s->c[i], buf, sizeof buf, 2, &got)))
            return -1;
        CT_CHECK(got == msg_len(i) && ct_verify(buf, got, msg_seed(i, 1)),
                 "conduit %d: answer of %zu bytes (want %zu) or contents wrong", i, got,
                 msg_len(i));
    }
    return 0;
}

/* Destination: read each message, check it, answer on the same conduit. */
static int scale_dst(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    scale_t *s = d;
    unsigned char buf[MAXLEN];
    for (int i = 0; i < s->n; i++) {
        size_t got = 0;
        if (!CT_OK(utc_conduit_read(s->c[i], buf, sizeof buf, 1, &got)))
            return -1;
        CT_CHECK(got == msg_len(i) && ct_verify(buf, got, msg_seed(i, 0)),
                 "conduit %d: message of %zu bytes (want %zu) or contents wrong", i, got,
                 msg_len(i));
        ct_fill(buf, msg_len(i), msg_seed(i, 1));
        if (!CT_OK(utc_conduit_write(s->c[i], buf, msg_len(i), 2)))
            return -1;
    }
    return 0;
}

static void test_inproc_10k(void)
{
    ct_begin();
    utc_task_t *a = ct_task(&ct_ops_a, 0, 1), *b = ct_task(&ct_ops_b, 0, 1);
    utc_conduit_t **c = calloc(NCONDUITS, sizeof *c);
    CU_ASSERT_FATAL(c != NULL);
    long rss0 = utc_test_rss_bytes();
    double t0 = utc_wtime();
    int made = 0;
    for (; made < NCONDUITS; made++) {
        utc_status_t rc = utc_conduit_create(a, b, NULL, &c[made]);
        if (rc != UTC_OK) {
            utc_test_report_(__FILE__, __LINE__, "utc_conduit_create", rc);
            break;
        }
        CU_ASSERT(utc_conduit_transport(c[made]) == UTC_CONDUIT_INPROC);
    }
    CU_ASSERT_EQUAL(made, NCONDUITS);
    double t1 = utc_wtime();
    long rss1 = utc_test_rss_bytes();
    scale_t s = {c, made};
    ct_run2(a, scale_src, &s, b, scale_dst, &s);
    double t2 = utc_wtime();
    long rss2 = utc_test_rss_bytes();
    for (int i = 0; i < made; i++)
        UTC_ASSERT_OK(utc_conduit_destroy(c[i]));
    double t3 = utc_wtime();
    long grown = (rss1 > rss2 ? rss1 : rss2) - rss0;
    printf("\n    rank %d: %d in-process conduits: create %.3f s (%.1f us each), one message "
           "each way %.3f s, destroy %.3f s (%.1f us each), total %.3f s; resident memory "
           "+%.1f MB (%.1f KiB per conduit) while alive",
           utc_rank(), made, t1 - t0, (t1 - t0) * 1e6 / NCONDUITS, t2 - t1, t3 - t2,
           (t3 - t2) * 1e6 / NCONDUITS, t3 - t0, grown / 1e6, grown / 1024.0 / NCONDUITS);
    CU_ASSERT(rss0 > 0 && rss2 > 0);
    if (UNDER_SANITIZER || under_valgrind())
        printf(" (memory bound not checked under a sanitizer or valgrind)");
    else
        CU_ASSERT(grown < RSS_BOUND);
    free(c);
    UTC_ASSERT_OK(utc_task_destroy(a));
    UTC_ASSERT_OK(utc_task_destroy(b));
    CT_END();
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"10,000 in-process conduits: one message each way, memory bound", test_inproc_10k},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "conduit scale", cases);
}
