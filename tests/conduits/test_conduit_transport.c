/*
 * Choosing a conduit's transport: the option `transport` and the environment variable
 * UTC_TRANSPORT. Bad values are refused on every rank with UTC_ERR_INVALID_ARG and a
 * message naming the option or the variable; ranks that resolve the choice differently
 * get UTC_ERR_MISMATCH; a conduit that forces MPI (by the option or the variable) carries
 * messages both ways and says UTC_CONDUIT_MPI between ranks, in-process rings within one;
 * the option wins over the variable; shared conduits take the same choice.
 */
#include "conduit_test_util.h"

#define NMSG 50

/* Echo: a writes NMSG messages, b sends each back; both check the contents. */
static int echo_a(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    for (int i = 0; i < NMSG; i++) {
        uint64_t v = ct_mix((uint64_t)i), back = 0;
        size_t got = 0;
        if (!CT_OK(utc_conduit_write(c, &v, sizeof v, 3)) ||
            !CT_OK(utc_conduit_read(c, &back, sizeof back, 4, &got)))
            return 1;
        CT_CHECK(got == sizeof v && back == v, "message %d came back as %llu", i,
                 (unsigned long long)back);
    }
    return 0;
}

static int echo_b(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    for (int i = 0; i < NMSG; i++) {
        uint64_t v = 0;
        size_t got = 0;
        if (!CT_OK(utc_conduit_read(c, &v, sizeof v, 3, &got)))
            return 1;
        CT_CHECK(v == ct_mix((uint64_t)i), "message %d: %llu", i, (unsigned long long)v);
        if (!CT_OK(utc_conduit_write(c, &v, sizeof v, 4)))
            return 1;
    }
    return 0;
}

/* A pair between ranks (when there are two) with `opts`: messages flow, and the transport
 * between the entries is `want` (in-process with one rank). */
static void pair_echo(const utc_conduit_options_t *opts, utc_conduit_transport_t want)
{
    int ra, rb;
    ct_pair_ranks(&ra, &rb);
    ct_begin();
    ct_pair_t p = ct_pair_open(ra, 1, rb, 1, opts);
    utc_conduit_transport_t got = utc_conduit_transport(p.c);
    if (ra == rb) {
        CU_ASSERT_EQUAL(got, UTC_CONDUIT_INPROC);
    } else if (want == UTC_CONDUIT_NONE) { /* automatic: node-local or MPI */
        CU_ASSERT_TRUE(got == UTC_CONDUIT_MPI || got == UTC_CONDUIT_NODE);
    } else {
        CU_ASSERT_EQUAL(got, want);
    }
    ct_pair_run(&p, echo_a, echo_b);
    ct_pair_close(&p);
    CT_END();
}

static void test_option_mpi(void)
{
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.transport = UTC_CONDUIT_MPI;
    pair_echo(&o, UTC_CONDUIT_MPI);
    o.transport = UTC_CONDUIT_NODE; /* node-local where it reaches, MPI otherwise */
    pair_echo(&o, UTC_CONDUIT_NONE);
    pair_echo(NULL, UTC_CONDUIT_NONE);
}

static void test_env_mpi(void)
{
    CU_ASSERT_EQUAL_FATAL(setenv("UTC_TRANSPORT", "mpi", 1), 0);
    pair_echo(NULL, UTC_CONDUIT_MPI);
    /* the option wins over the variable */
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.transport = UTC_CONDUIT_NODE;
    pair_echo(&o, UTC_CONDUIT_NONE);
    CU_ASSERT_EQUAL_FATAL(setenv("UTC_TRANSPORT", "auto", 1), 0);
    pair_echo(NULL, UTC_CONDUIT_NONE);
    unsetenv("UTC_TRANSPORT");
}

/* Every rank passes the same bad choice: all get UTC_ERR_INVALID_ARG naming `what`. */
static void expect_refused(const utc_conduit_options_t *o, const char *what)
{
    int ra, rb;
    ct_pair_ranks(&ra, &rb);
    utc_task_t *a = ct_task(&ct_ops_a, ra, 1), *b = ct_task(&ct_ops_b, rb, 1);
    utc_conduit_t *c = NULL;
    CU_ASSERT_EQUAL(utc_conduit_create(a, b, o, &c), UTC_ERR_INVALID_ARG);
    CU_ASSERT_PTR_NULL(c);
    CU_ASSERT_PTR_NOT_NULL(strstr(utc_last_error(), what));
    utc_task_t *ws[1] = {a}, *rs[1] = {b};
    CU_ASSERT_EQUAL(utc_conduit_create_shared(ws, 1, rs, 1, UTC_SHARED_PUBLISH, o, &c),
                    UTC_ERR_INVALID_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(utc_last_error(), what));
    UTC_ASSERT_OK(utc_task_destroy(a));
    UTC_ASSERT_OK(utc_task_destroy(b));
}

static void test_refused(void)
{
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.transport = UTC_CONDUIT_INPROC;
    expect_refused(&o, "UTC_CONDUIT_INPROC");
    o.transport = (utc_conduit_transport_t)7;
    expect_refused(&o, "transport 7");
    CU_ASSERT_EQUAL_FATAL(setenv("UTC_TRANSPORT", "shm", 1), 0);
    expect_refused(NULL, "UTC_TRANSPORT='shm'");
    unsetenv("UTC_TRANSPORT");
}

/* Rank 0 alone forces MPI through the variable: the ranks disagree, so every rank gets
 * UTC_ERR_MISMATCH and nothing is made. */
static void test_mismatch(void)
{
    if (utc_test_nranks() < 2) {
        printf("\n    (needs two ranks: skipped)\n");
        return;
    }
    utc_task_t *a = ct_task(&ct_ops_a, 0, 1), *b = ct_task(&ct_ops_b, 1, 1);
    if (utc_test_rank() == 0)
        CU_ASSERT_EQUAL_FATAL(setenv("UTC_TRANSPORT", "mpi", 1), 0);
    utc_conduit_t *c = NULL;
    CU_ASSERT_EQUAL(utc_conduit_create(a, b, NULL, &c), UTC_ERR_MISMATCH);
    CU_ASSERT_PTR_NULL(c);
    unsetenv("UTC_TRANSPORT");
    /* the same through the option on one rank */
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    if (utc_test_rank() == 0)
        o.transport = UTC_CONDUIT_MPI;
    CU_ASSERT_EQUAL(utc_conduit_create(a, b, &o, &c), UTC_ERR_MISMATCH);
    /* agreeing again: made */
    UTC_ASSERT_OK(utc_conduit_create(a, b, NULL, &c));
    UTC_ASSERT_OK(utc_conduit_destroy(c));
    UTC_ASSERT_OK(utc_task_destroy(a));
    UTC_ASSERT_OK(utc_task_destroy(b));
}

/* A shared conduit of two writers and one reader, forced to MPI: every message arrives. */
static int shared_write(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    for (int i = 0; i < NMSG; i++) {
        uint64_t v = (uint64_t)i;
        if (!CT_OK(utc_conduit_write(c, &v, sizeof v, 1)))
            return 1;
    }
    return CT_OK(utc_conduit_close(c)) ? 0 : 1;
}

static int shared_read(utc_ctx_t *ctx, void *data)
{
    (void)ctx;
    utc_conduit_t *c = data;
    uint64_t v, sum = 0;
    size_t got;
    int n = 0;
    utc_status_t rc;
    while ((rc = utc_conduit_read(c, &v, sizeof v, 1, &got)) == UTC_OK) {
        sum += v;
        n++;
    }
    CT_CHECK(rc == UTC_ERR_CLOSED, "the reads ended with %d, not UTC_ERR_CLOSED", rc);
    CT_CHECK(n == 2 * NMSG && sum == (uint64_t)NMSG * (NMSG - 1), "%d messages, sum %llu", n,
             (unsigned long long)sum);
    return 0;
}

static void test_shared_mpi(void)
{
    int ra, rb;
    ct_pair_ranks(&ra, &rb);
    ct_begin();
    utc_task_t *w[2] = {ct_task(&ct_ops_a, ra, 1), ct_task(&ct_ops_b, rb, 1)};
    utc_task_t *r = ct_task(&ct_ops_c, rb, 1);
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    o.transport = UTC_CONDUIT_MPI;
    utc_conduit_t *c;
    UTC_ASSERT_OK(utc_conduit_create_shared(w, 2, &r, 1, UTC_SHARED_PUBLISH, &o, &c));
    CU_ASSERT_EQUAL(utc_conduit_transport(c), ra == rb ? UTC_CONDUIT_INPROC : UTC_CONDUIT_MPI);
    ct_job_t jw = {shared_write, c}, jr = {shared_read, c};
    UTC_ASSERT_OK(utc_task_run(w[0], &jw));
    UTC_ASSERT_OK(utc_task_run(w[1], &jw));
    UTC_ASSERT_OK(utc_task_run(r, &jr));
    for (int i = 0; i < 2; i++)
        UTC_ASSERT_OK(utc_task_wait(w[i]));
    UTC_ASSERT_OK(utc_task_wait(r));
    UTC_ASSERT_OK(utc_conduit_destroy(c));
    for (int i = 0; i < 2; i++)
        UTC_ASSERT_OK(utc_task_destroy(w[i]));
    UTC_ASSERT_OK(utc_task_destroy(r));
    CT_END();
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"option: MPI forced, node asked for, automatic", test_option_mpi},
        {"UTC_TRANSPORT=mpi and auto; the option wins", test_env_mpi},
        {"refused: UTC_CONDUIT_INPROC, an unknown value, UTC_TRANSPORT=shm", test_refused},
        {"ranks that choose differently: UTC_ERR_MISMATCH", test_mismatch},
        {"a shared conduit forced to MPI", test_shared_mpi},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "conduit transport choice", cases);
}
