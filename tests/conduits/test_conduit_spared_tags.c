/*
 * A device conduit's host transports between ranks (node-local and MPI) spare the device
 * layer's own tags from the end of stream (service/transport.h, utc__transport_tag_spared):
 * a staged write's chunks may follow their direction's close, and a reader's answers may
 * follow the close of the other direction. The transports are made by their components,
 * marked as the device layer marks the ones it wraps, and driven as it drives them (its
 * requests, from the main threads of ranks 0 and 1), so no GPU is needed:
 * - messages of the spared tags sent after the close arrive, to a read posted before the
 *   end of stream came and to reads started after it, small and large;
 * - one sent before the close does not count in the end of stream: the user's tag still
 *   ends exactly after its own messages (each read, then UTC_ERR_CLOSED);
 * - the other direction alike (an answer after that direction's close);
 * - any-tag probes and reads never see the spared tags' messages;
 * - unmarked (a host conduit's transport), the top tags are the user's: the end of stream
 *   ends them as any other.
 * Two ranks or more (rank 2 only enters the collective creates).
 */
#include <stdlib.h>
#include <string.h>

#include "conduit_test_util.h"
#include "service/request.h"
#include "service/transport.h"

#define USER_TAG 3
#define LARGE    (64 << 10) /* beyond every transport's eager size */

/* Conduit ids of the transports made here: above any conduit's of this test. */
#define FIRST_ID 1000000

/* Start a transfer on tp and wait for it; its status (and *got, the bytes received). */
static utc_status_t transfer(utc__transport_t *tp, utc__op_t op, int dir, int tag, int peer,
                             void *buf, size_t n, size_t *got)
{
    utc_request_t q;
    utc__req_prepare(&q, op, dir, tag, peer, tp);
    if (op == UTC__OP_SEND)
        q.sbuf = buf;
    else
        q.rbuf = buf;
    q.size = n;
    utc_status_t rc = tp->ops->start(tp, &q);
    if (rc != UTC_OK)
        return rc;
    if (utc__req_state(&q) != UTC__REQ_DONE)
        (void)tp->ops->wait(tp, &q, -1);
    if (got)
        *got = q.received;
    return q.status;
}

static utc_status_t send_fill(utc__transport_t *tp, int dir, int tag, int peer, size_t n,
                              unsigned seed)
{
    char *buf = malloc(n);
    if (!buf)
        return UTC_ERR_NO_MEMORY;
    ct_fill(buf, n, seed);
    utc_status_t rc = transfer(tp, UTC__OP_SEND, dir, tag, peer, buf, n, NULL);
    free(buf);
    return rc;
}

/* A received message of n bytes filled with `seed`: rc is UTC_OK and the contents match. */
static void check_got(utc_status_t rc, const char *buf, size_t got, size_t n, unsigned seed,
                      const char *what)
{
    CT_CHECK(rc == UTC_OK, "%s: %s (%s)", what, utc_status_string(rc), utc_last_error());
    if (rc != UTC_OK)
        return;
    CT_CHECK(got == n && ct_verify(buf, n, seed), "%s: %zu bytes, or contents differ", what, got);
}

/* Rank 0: messages in direction FWD to rank 1, its close among them, then the answer. */
static void writer(utc__transport_t *tp)
{
    int peer = 1;
    /* before the close: a spared message, then a user message after it */
    CT_OK(send_fill(tp, UTC__DIR_FWD, UTC__DEVICE_TAG_DATA, peer, 100, 10));
    CT_OK(send_fill(tp, UTC__DIR_FWD, USER_TAG, peer, 32, 11));
    CT_OK(tp->ops->close(tp, UTC__DIR_FWD, peer));
    /* after it: spared messages, small and large */
    CT_OK(send_fill(tp, UTC__DIR_FWD, UTC__DEVICE_TAG_DATA, peer, 200, 12));
    CT_OK(send_fill(tp, UTC__DIR_FWD, UTC__DEVICE_TAG_DATA, peer, LARGE, 13));
    /* the reader's answer, sent after it closed the other direction */
    char ans[64];
    size_t got = 0;
    utc_status_t rc =
        transfer(tp, UTC__OP_RECV, UTC__DIR_BACK, UTC__DEVICE_TAG_CTL, peer, ans, sizeof ans, &got);
    check_got(rc, ans, got, sizeof ans, 14, "the answer after the other direction's close");
}

/* Rank 1: closes direction BACK first, reads everything, answers. */
static void reader(utc__transport_t *tp)
{
    int peer = 0;
    CT_OK(tp->ops->close(tp, UTC__DIR_BACK, peer));
    char *buf = malloc(LARGE);
    CT_CHECK(buf != NULL, "malloc");
    if (!buf)
        return;
    /* a spared read posted before the end of stream came: the message sent before it */
    utc_request_t early;
    utc__req_prepare(&early, UTC__OP_RECV, UTC__DIR_FWD, UTC__DEVICE_TAG_DATA, peer, tp);
    early.rbuf = buf;
    early.size = LARGE;
    CT_OK(tp->ops->start(tp, &early));
    /* the user's tag: its one message, then the end of stream */
    char m[32];
    size_t got = 0;
    utc_status_t rc = transfer(tp, UTC__OP_RECV, UTC__DIR_FWD, USER_TAG, peer, m, sizeof m, &got);
    check_got(rc, m, got, sizeof m, 11, "the user's message before the close");
    rc = transfer(tp, UTC__OP_RECV, UTC__DIR_FWD, USER_TAG, peer, m, sizeof m, &got);
    CT_CHECK(rc == UTC_ERR_CLOSED, "the user's tag after its messages: %s, expected CLOSED",
             utc_status_string(rc));
    /* the end of stream has come: the posted read still gets its message, and reads
     * started now get the ones sent after the close */
    if (utc__req_state(&early) != UTC__REQ_DONE)
        (void)tp->ops->wait(tp, &early, -1);
    check_got(early.status, buf, early.received, 100, 10, "the spared message before the close");
    rc = transfer(tp, UTC__OP_RECV, UTC__DIR_FWD, UTC__DEVICE_TAG_DATA, peer, buf, LARGE, &got);
    check_got(rc, buf, got, 200, 12, "a spared message after the close");
    rc = transfer(tp, UTC__OP_RECV, UTC__DIR_FWD, UTC__DEVICE_TAG_DATA, peer, buf, LARGE, &got);
    check_got(rc, buf, got, LARGE, 13, "a large spared message after the close");
    free(buf);
    CT_OK(send_fill(tp, UTC__DIR_BACK, UTC__DEVICE_TAG_CTL, peer, 64, 14));
}

/* Any-tag probes and reads pass over the spared tags: rank 0 sends two spared messages,
 * then a user message; rank 1 finds the user message alone by any-tag probe and read, the
 * spared ones stay for their own reads, and an any-tag probe then finds nothing. */
static void any_tag(utc__transport_t *tp)
{
    if (utc_rank() == 0) {
        CT_OK(send_fill(tp, UTC__DIR_FWD, UTC__DEVICE_TAG_DATA, 1, 300, 20));
        CT_OK(send_fill(tp, UTC__DIR_FWD, UTC__DEVICE_TAG_CTL, 1, 40, 21));
        CT_OK(send_fill(tp, UTC__DIR_FWD, USER_TAG, 1, 16, 22));
        return;
    }
    utc_request_t pr;
    utc_status_t rc;
    do { /* until the user message came: the spared ones came before it */
        utc__req_prepare(&pr, UTC__OP_RECV, UTC__DIR_FWD, UTC_ANY_TAG, 0, tp);
        rc = tp->ops->probe(tp, &pr);
    } while (rc == UTC_ERR_TIMEOUT);
    CT_CHECK(rc == UTC_OK && pr.tag == USER_TAG && pr.received == 16,
             "any-tag probe: %s, tag %d, %zu bytes (tag %d, 16 expected)", utc_status_string(rc),
             pr.tag, pr.received, USER_TAG);
    char buf[512];
    utc_request_t q;
    utc__req_prepare(&q, UTC__OP_RECV, UTC__DIR_FWD, UTC_ANY_TAG, 0, tp);
    q.rbuf = buf;
    q.size = sizeof buf;
    CT_OK(tp->ops->start(tp, &q));
    if (utc__req_state(&q) != UTC__REQ_DONE)
        (void)tp->ops->wait(tp, &q, -1);
    CT_CHECK(q.tag == USER_TAG, "any-tag read: tag %d, %d expected", q.tag, USER_TAG);
    check_got(q.status, buf, q.received, 16, 22, "the any-tag read");
    utc__req_prepare(&pr, UTC__OP_RECV, UTC__DIR_FWD, UTC_ANY_TAG, 0, tp);
    rc = tp->ops->probe(tp, &pr);
    CT_CHECK(rc == UTC_ERR_TIMEOUT, "any-tag probe with only spared messages left: %s (tag %d)",
             utc_status_string(rc), pr.tag);
    size_t got = 0;
    rc = transfer(tp, UTC__OP_RECV, UTC__DIR_FWD, UTC__DEVICE_TAG_DATA, 0, buf, sizeof buf, &got);
    check_got(rc, buf, got, 300, 20, "the spared data message");
    rc = transfer(tp, UTC__OP_RECV, UTC__DIR_FWD, UTC__DEVICE_TAG_CTL, 0, buf, sizeof buf, &got);
    check_got(rc, buf, got, 40, 21, "the spared control message");
}

/* Unmarked: after the end of stream, a read of a top tag ends with UTC_ERR_CLOSED. */
static void unmarked(utc__transport_t *tp)
{
    char m[8];
    size_t got = 0;
    if (utc_rank() == 0) {
        CT_OK(tp->ops->close(tp, UTC__DIR_FWD, 1));
        return;
    }
    utc_status_t rc =
        transfer(tp, UTC__OP_RECV, UTC__DIR_FWD, UTC__DEVICE_TAG_DATA, 0, m, sizeof m, &got);
    CT_CHECK(rc == UTC_ERR_CLOSED, "an unmarked transport's top tag after the close: %s",
             utc_status_string(rc));
}

/* Make component `comp`'s transport between ranks 0 and 1 (entered by every rank: the
 * collective ones need it), `mark` it as a device conduit's, run `fn` on ranks 0 and 1. */
static void on_transport(const utc__transport_component_t *comp, int id, bool mark,
                         void (*fn)(utc__transport_t *))
{
    int k = -1;
    for (int i = 0; i < utc__transport_ncomponents; i++)
        if (utc__transport_components[i] == comp)
            k = i;
    CU_ASSERT_FATAL(k >= 0);
    if (!comp->reaches(0, 1)) {
        if (utc_rank() == 0)
            printf("  (transport '%s' does not reach ranks 0 and 1 here: left out)\n", comp->name);
        return;
    }
    utc_conduit_options_t o = UTC_CONDUIT_OPTIONS_INIT;
    static const int members[2] = {0, 1};
    utc__transport_args_t args = {.conduit_id = id, .opts = &o, .members = members, .nmembers = 2};
    utc__transport_t *tp = NULL;
    bool mine = utc_rank() < 2;
    if (!comp->collective && !mine)
        return;
    utc_status_t rc = utc__transport_create(k, &args, &tp);
    if (rc == UTC_ERR_UNSUPPORTED) {
        if (utc_rank() == 0)
            printf("  (transport '%s' is off in this run: %s)\n", comp->name, utc_last_error());
        return;
    }
    UTC_ASSERT_OK(rc);
    if (!tp)
        return; /* not a member */
    tp->device_tags = mark;
    ct_begin();
    fn(tp);
    CT_END();
    tp->ops->shutdown(tp, UTC_ERR_CANCELED);
    tp->ops->destroy(tp);
}

static void both_ends(utc__transport_t *tp)
{
    if (utc_rank() == 0)
        writer(tp);
    else
        reader(tp);
}

static void test_node(void)
{
    on_transport(&utc__node_component, FIRST_ID, true, both_ends);
}

static void test_mpi(void)
{
    on_transport(&utc__mpi_component, FIRST_ID + 1, true, both_ends);
}

static void test_any_tag(void)
{
    on_transport(&utc__node_component, FIRST_ID + 4, true, any_tag);
    on_transport(&utc__mpi_component, FIRST_ID + 5, true, any_tag);
}

static void test_unmarked(void)
{
    on_transport(&utc__node_component, FIRST_ID + 2, false, unmarked);
    on_transport(&utc__mpi_component, FIRST_ID + 3, false, unmarked);
}

int main(int argc, char **argv)
{
    static const utc_test_case_t cases[] = {
        {"spared tags past the end of stream: the node transport", test_node},
        {"spared tags past the end of stream: MPI", test_mpi},
        {"any-tag probes and reads pass over the spared tags", test_any_tag},
        {"unmarked: the top tags end with the stream", test_unmarked},
        UTC_TEST_END};
    return utc_test_main(argc, argv, "device tags and the end of stream", cases);
}
