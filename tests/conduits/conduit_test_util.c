/* Helpers shared by the conduit suites: see conduit_test_util.h. */
#include "conduit_test_util.h"

atomic_int ct_failures;

static int ct_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self;
    ct_job_t *job = arg;
    return job->fn(ctx, job->data);
}

const utc_task_ops_t ct_ops_a = {.name = "task-a", .size = sizeof(ct_task_t), .run = ct_run};
const utc_task_ops_t ct_ops_b = {.name = "task-b", .size = sizeof(ct_task_t), .run = ct_run};
const utc_task_ops_t ct_ops_c = {.name = "task-c", .size = sizeof(ct_task_t), .run = ct_run};

void ct_begin(void) { atomic_store(&ct_failures, 0); }

utc_task_t *ct_task_procs(const utc_task_ops_t *ops, const int *procs, int n)
{
    utc_task_t *t = NULL;
    utc_status_t rc = utc_task_create(ops, procs, n, NULL, &t);
    if (rc != UTC_OK)
        utc_test_report_(__FILE__, __LINE__, "utc_task_create", rc);
    CU_ASSERT_FATAL(rc == UTC_OK);
    return t;
}

utc_task_t *ct_task(const utc_task_ops_t *ops, int rank, int n)
{
    int procs[64];
    for (int i = 0; i < n && i < 64; i++)
        procs[i] = rank;
    return ct_task_procs(ops, procs, n);
}

void ct_pair_ranks(int *a, int *b)
{
    int n = utc_test_nranks();
    *a = n >= 3 ? 1 : 0;
    *b = n >= 3 ? 2 : n - 1;
}

bool ct_remote_ranks(int *a, int *b)
{
    ct_pair_ranks(a, b);
    if (*a == *b)
        printf("\n    one rank: nothing between ranks to test");
    return *a != *b;
}

void ct_run2(utc_task_t *a, ct_fn_t fa, void *da, utc_task_t *b, ct_fn_t fb, void *db)
{
    ct_job_t ja = {fa, da}, jb = {fb, db};
    UTC_ASSERT_OK(utc_task_run(a, &ja));
    UTC_ASSERT_OK(utc_task_run(b, &jb));
    UTC_ASSERT_OK(utc_task_wait(a));
    UTC_ASSERT_OK(utc_task_wait(b));
    /* ranks that hold neither task wait here, asleep, rather than in the next MPI
     * collective, where Open MPI would spin on a core the busy ranks need */
    UTC_ASSERT_OK(utc_barrier());
}

void ct_run1(utc_task_t *a, ct_fn_t fa, void *da)
{
    ct_job_t ja = {fa, da};
    UTC_ASSERT_OK(utc_task_run(a, &ja));
    UTC_ASSERT_OK(utc_task_wait(a));
    UTC_ASSERT_OK(utc_barrier());
}

int ct_idle(utc_ctx_t *ctx, void *data)
{
    (void)ctx, (void)data;
    return 0;
}

ct_pair_t ct_pair_open_procs(const int *pa, int na, const int *pb, int nb,
                             const utc_conduit_options_t *opts)
{
    ct_pair_t p = {ct_task_procs(&ct_ops_a, pa, na), ct_task_procs(&ct_ops_b, pb, nb), NULL};
    UTC_ASSERT_OK(utc_conduit_create(p.a, p.b, opts, &p.c));
    return p;
}

ct_pair_t ct_pair_open(int ra, int na, int rb, int nb, const utc_conduit_options_t *opts)
{
    ct_pair_t p = {ct_task(&ct_ops_a, ra, na), ct_task(&ct_ops_b, rb, nb), NULL};
    UTC_ASSERT_OK(utc_conduit_create(p.a, p.b, opts, &p.c));
    return p;
}

void ct_pair_close(ct_pair_t *p)
{
    UTC_ASSERT_OK(utc_conduit_destroy(p->c));
    UTC_ASSERT_OK(utc_task_destroy(p->a));
    UTC_ASSERT_OK(utc_task_destroy(p->b));
}

void ct_pair_run(const ct_pair_t *p, ct_fn_t fa, ct_fn_t fb)
{
    ct_run2(p->a, fa, p->c, p->b, fb, p->c);
}

void ct_pair_run_failing(const ct_pair_t *p, ct_fn_t fa, int fa_rc, ct_fn_t fb)
{
    static ct_job_t ja, jb; /* outlive the runs */
    ja = (ct_job_t){fa, p->c};
    jb = (ct_job_t){fb, p->c};
    UTC_ASSERT_OK(utc_task_run(p->a, &ja));
    UTC_ASSERT_OK(utc_task_run(p->b, &jb));
    int rc = utc_task_wait(p->a);
    CU_ASSERT(rc == (utc_task_is_local(p->a) ? fa_rc : UTC_OK));
    UTC_ASSERT_OK(utc_task_wait(p->b));
    UTC_ASSERT_OK(utc_barrier());
}

void ct_each_placement(bool distinct, ct_place_fn_t fn, void *arg)
{
    int ra, rb;
    ct_pair_ranks(&ra, &rb);
    fn(0, 0, arg);
    if (!distinct || ra != rb)
        fn(ra, rb, arg);
}

typedef struct placement_run {
    int na, nb;
    ct_fn_t fa, fb;
} placement_run_t;

static void placement_run(int ra, int rb, void *arg)
{
    const placement_run_t *r = arg;
    ct_pair_t p = ct_pair_open(ra, r->na, rb, r->nb, NULL);
    ct_pair_run(&p, r->fa, r->fb);
    ct_pair_close(&p);
}

void ct_each_placement_run(int na, ct_fn_t fa, int nb, ct_fn_t fb)
{
    placement_run_t r = {na, nb, fa, fb};
    ct_each_placement(false, placement_run, &r);
}

uint64_t ct_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Word i of the contents for a seed already mixed. */
static uint64_t fill_word(uint64_t s, size_t i)
{
    uint64_t w = s + i * 0x9e3779b97f4a7c15ull;
    return w ^ (w >> 29);
}

void ct_fill(void *buf, size_t n, uint64_t seed)
{
    unsigned char *p = buf;
    size_t words = n / 8;
    uint64_t s = ct_mix(seed);
    for (size_t i = 0; i < words; i++) {
        uint64_t w = fill_word(s, i);
        memcpy(p + 8 * i, &w, 8);
    }
    uint64_t t = ct_mix(s ^ n);
    memcpy(p + 8 * words, &t, n - 8 * words);
}

bool ct_verify(const void *buf, size_t n, uint64_t seed)
{
    const unsigned char *p = buf;
    size_t words = n / 8;
    uint64_t s = ct_mix(seed);
    for (size_t i = 0; i < words; i++) {
        uint64_t v;
        memcpy(&v, p + 8 * i, 8);
        if (v != fill_word(s, i))
            return false;
    }
    uint64_t t = ct_mix(s ^ n);
    return memcmp(p + 8 * words, &t, n - 8 * words) == 0;
}
