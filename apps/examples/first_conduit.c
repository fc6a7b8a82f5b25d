/*
 * Example 2: a first conduit (doc/guide/tutorial.md, step 2).
 *
 * Two tasks, a producer and a consumer, joined by a conduit. The producer writes --count
 * messages of 4 ints with tag DATA; the consumer reads them, sums them, and answers with
 * the sum on tag SUM, the other direction of the same conduit. With one rank both tasks
 * live in one process and the conduit is an in-memory ring; with two or more the consumer
 * is on the last rank and the conduit uses MPI. The task code is the same.
 *
 *   utcrun -np 2 example_first_conduit --count 100
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utc/utc.h>

enum { DATA = 0, SUM = 1 }; /* message tags */

typedef struct {
    utc_task_t base;
    utc_conduit_t *link; /* set by main before the task runs */
    int count;           /* messages to send */
    long long sum;       /* what the consumer answered */
} producer_t;

typedef struct {
    utc_task_t base;
    utc_conduit_t *link;
    int count;
    long long sum; /* what the consumer added up */
} consumer_t;

static int producer_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    producer_t *p = (producer_t *)self;
    for (int i = 0; i < p->count; i++) {
        int msg[4] = {i, i + 1, i + 2, i + 3};
        /* returns once msg may be reused (at once for small in-process messages) */
        utc_status_t rc = utc_conduit_write(p->link, msg, sizeof msg, DATA);
        if (rc != UTC_OK)
            return rc;
    }
    /* the answer comes back on the same conduit, with another tag */
    return utc_conduit_read(p->link, &p->sum, sizeof p->sum, SUM, NULL);
}

static int consumer_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    consumer_t *c = (consumer_t *)self;
    c->sum = 0;
    for (int i = 0; i < c->count; i++) {
        int msg[4];
        size_t got;
        /* blocks (sleeping, not spinning) until a message with tag DATA arrives */
        utc_status_t rc = utc_conduit_read(c->link, msg, sizeof msg, DATA, &got);
        if (rc != UTC_OK)
            return rc;
        if (got != sizeof msg)
            return UTC_ERR_INTERNAL;
        c->sum += msg[0] + msg[1] + msg[2] + msg[3];
    }
    return utc_conduit_write(c->link, &c->sum, sizeof c->sum, SUM);
}

static const utc_task_ops_t producer_ops = {
    .name = "producer", .size = sizeof(producer_t), .run = producer_run};
static const utc_task_ops_t consumer_ops = {
    .name = "consumer", .size = sizeof(consumer_t), .run = consumer_run};

static int usage(const char *prog, int rc)
{
    printf("usage: %s [--count N] [--help] [--version]\n"
           "A producer task sends N messages (default 100) through a conduit to a consumer\n"
           "task, which answers with their sum. Launch with: utcrun -np 1|2 %s\n", prog, prog);
    return rc;
}

int main(int argc, char **argv)
{
    int count = 100;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return usage(argv[0], 0);
        if (!strcmp(argv[i], "--version")) {
            printf("example_first_conduit (UTC) %s\n", utc_version_string());
            return 0;
        }
        if (!strcmp(argv[i], "--count") && i + 1 < argc)
            count = atoi(argv[++i]);
        else
            return usage(argv[0], 2);
    }
    if (count < 0) {
        fprintf(stderr, "--count must be >= 0\n");
        return 2;
    }
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "utc_init: %s\n", utc_last_error());
        return 1;
    }
    int last = utc_nranks() - 1;
    int producer_procs[1] = {0};    /* one thread on rank 0 */
    int consumer_procs[1] = {last}; /* one thread on the last rank */

    /* tasks first, then the conduit between them: all collective, in the same order */
    utc_task_t *prod = NULL, *cons = NULL;
    utc_conduit_t *link = NULL;
    utc_status_t rc = utc_task_create(&producer_ops, producer_procs, 1, NULL, &prod);
    if (rc == UTC_OK)
        rc = utc_task_create(&consumer_ops, consumer_procs, 1, NULL, &cons);
    if (rc == UTC_OK)
        rc = utc_conduit_create(prod, cons, NULL, &link);
    if (rc == UTC_OK) {
        if (utc_rank() == 0)
            printf("conduit %d uses %s\n", utc_conduit_id(link),
                   utc_conduit_transport(link) == UTC_CONDUIT_INPROC ? "in-process rings"
                   : utc_conduit_transport(link) == UTC_CONDUIT_NODE ? "node-local shared memory"
                                                                     : "MPI");
        /* every rank holds both rank instances: set their fields before they run */
        producer_t *p = (producer_t *)prod;
        consumer_t *c = (consumer_t *)cons;
        p->link = c->link = link;
        p->count = c->count = count;
        /* start both (asynchronous), then wait for both; a rank that holds no thread of
         * a task returns at once */
        rc = utc_task_run(prod, NULL);
        if (rc == UTC_OK)
            rc = utc_task_run(cons, NULL);
        utc_status_t rc2 = utc_task_wait(prod), rc3 = utc_task_wait(cons);
        if (rc == UTC_OK)
            rc = rc2 != UTC_OK ? rc2 : rc3;
    }
    /* 4 ints per message: i, i+1, i+2, i+3 -> 4i + 6 */
    long long expect = 4LL * count * (count - 1) / 2 + 6LL * count;
    if (rc == UTC_OK && utc_rank() == 0) {
        long long got = ((producer_t *)prod)->sum;
        printf("producer: the consumer added up %lld (expected %lld)\n", got, expect);
        if (got != expect)
            rc = UTC_ERR_INTERNAL;
    }
    if (rc != UTC_OK)
        fprintf(stderr, "rank %d: %s (%s)\n", utc_rank(), utc_status_string(rc),
                utc_last_error());
    if (link)
        utc_conduit_destroy(link); /* conduits before their tasks */
    if (cons)
        utc_task_destroy(cons);
    if (prod)
        utc_task_destroy(prod);
    utc_status_t frc = utc_finalize(); /* fails when, say, the UTC_TRACE file was lost */
    if (frc != UTC_OK)
        fprintf(stderr, "utc_finalize: %s\n", utc_last_error());
    return rc == UTC_OK && frc == UTC_OK ? 0 : 1;
}
