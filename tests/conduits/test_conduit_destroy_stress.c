/*
 * Destroy at a random moment against traffic in flight, many rounds: a writer streams
 * messages of 0 B to 1 MiB (blocking and asynchronous writes in turn), a reader takes them
 * (blocking and asynchronous reads in turn), and the main thread destroys the conduit
 * after a random pause. No crash, no hang; every operation ends with UTC_OK,
 * UTC_ERR_CANCELED or (started after the destroy) UTC_ERR_INVALID_HANDLE; every message a
 * read returned UTC_OK for is whole (its sequence number and its bytes checked). Leaks are
 * the sanitizer pass's to find. Rounds: UTC_STRESS_ROUNDS (default 1000), half in-process,
 * half between ranks when there are two or more.
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "conduit_test_util.h"

#define MAX_MSG (1 << 20)

static atomic_long delivered, canceled;

static bool allowed(int rc)
{
    return rc == UTC_OK || rc == UTC_ERR_CANCELED || rc == UTC_ERR_INVALID_HANDLE;
}

/* Message i: a size from a mix biased to small ones; its first 8 bytes carry i, the rest
 * comes from ct_fill with seed i. */
static size_t msg_size(uint64_t i)
{
    uint64_t h = ct_mix(i * 7919 + 1);
    switch (h % 4) {
    case 0: return h % 8;           /* tiny: no room for the sequence number */
    case 1: return 8 + h % 120;
    case 2: return 8 + h % 4096;
    default: return 8 + h % (MAX_MSG - 8);
    }
}

static void make_msg(unsigned char *buf, uint64_t i, size_t n)
{
    if (n < 8)
        return;
    memcpy(buf, &i, 8);
    ct_fill(buf + 8, n - 8, i);
}

static int stress_writer(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    unsigned char *buf = malloc(MAX_MSG);
    if (!buf)
        return UTC_ERR_NO_MEMORY;
    int rc = UTC_OK;
    for (uint64_t i = 0; rc == UTC_OK; i++) {
        size_t n = msg_size(i);
        make_msg(buf, i, n);
        if (i & 1) {
            utc_request_t *r = NULL;
            if ((rc = utc_conduit_iwrite(d, buf, n, 1, &r)) == UTC_OK)
                rc = utc_request_wait(&r, NULL);
        } else {
            rc = utc_conduit_write(d, buf, n, 1);
        }
    }
    CT_CHECK(allowed(rc), "a write ended with %d (%s): %s", rc, utc_status_string(rc),
             utc_last_error());
    free(buf);
    return 0;
}

static int stress_reader(utc_ctx_t *ctx, void *d)
{
    (void)ctx;
    unsigned char *buf = malloc(MAX_MSG);
    if (!buf)
        return UTC_ERR_NO_MEMORY;
    int rc = UTC_OK;
    for (uint64_t i = 0; rc == UTC_OK; i++) {
        size_t got = 0;
        if (i & 1) {
            utc_request_t *r = NULL;
            if ((rc = utc_conduit_iread(d, buf, MAX_MSG, 1, &r)) == UTC_OK)
                rc = utc_request_wait(&r, &got);
        } else {
            rc = utc_conduit_read(d, buf, MAX_MSG, 1, &got);
        }
        if (rc != UTC_OK)
            break;
        size_t want = msg_size(i);
        uint64_t seq = i;
        if (got >= 8)
            memcpy(&seq, buf, 8);
        CT_CHECK(got == want && seq == i && (got < 8 || ct_verify(buf + 8, got - 8, i)),
                 "message %llu: %zu bytes (want %zu), sequence %llu", (unsigned long long)i,
                 got, want, (unsigned long long)seq);
        atomic_fetch_add(&delivered, 1);
    }
    if (rc == UTC_ERR_CANCELED)
        atomic_fetch_add(&canceled, 1);
    CT_CHECK(allowed(rc), "a read ended with %d (%s): %s", rc, utc_status_string(rc),
             utc_last_error());
    free(buf);
    return 0;
}

static void test_destroy_under_traffic(void)
{
    ct_begin();
    const char *env = getenv("UTC_STRESS_ROUNDS");
    int rounds = env && atoi(env) > 0 ? atoi(env) : 1000;
    int ra, rb;
    ct_pair_ranks(&ra, &rb);
    utc_task_t *pa[2] = {ct_task(&ct_ops_a, 0, 1), ct_task(&ct_ops_a, ra, 1)};
    utc_task_t *pb[2] = {ct_task(&ct_ops_b, 0, 1), ct_task(&ct_ops_b, rb, 1)};
    srand(1234u + (unsigned)utc_rank());
    for (int k = 0; k < rounds && atomic_load(&ct_failures) == 0; k++) {
        int pl = k & 1; /* in-process, then between ranks (with two or more) */
        utc_conduit_t *c;
        UTC_ASSERT_OK(utc_conduit_create(pa[pl], pb[pl], NULL, &c));
        static ct_job_t ja, jb;
        ja = (ct_job_t){stress_writer, c};
        jb = (ct_job_t){stress_reader, c};
        UTC_ASSERT_OK(utc_task_run(pa[pl], &ja));
        UTC_ASSERT_OK(utc_task_run(pb[pl], &jb));
        usleep((useconds_t)(rand() % 3000)); /* 0 .. 3 ms: before, during, after traffic */
        UTC_ASSERT_OK(utc_conduit_destroy(c));
        UTC_ASSERT_OK(utc_task_wait(pa[pl]));
        UTC_ASSERT_OK(utc_task_wait(pb[pl]));
    }
    UTC_ASSERT_OK(utc_barrier());
    for (int i = 0; i < 2; i++) {
        UTC_ASSERT_OK(utc_task_destroy(pa[i]));
        UTC_ASSERT_OK(utc_task_destroy(pb[i]));
    }
    if (utc_rank() == 0)
        printf("\n  %d rounds: %ld messages delivered whole, %ld reads canceled\n", rounds,
               atomic_load(&delivered), atomic_load(&canceled));
    CT_END();
}

int main(int argc, char **argv)
{
    return utc_test_main(argc, argv, "conduit destroy stress",
                         (utc_test_case_t[]){
                             {"destroy at a random moment, under traffic",
                              test_destroy_under_traffic},
                             {NULL, NULL}});
}
