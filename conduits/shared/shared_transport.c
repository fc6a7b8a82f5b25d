/*
 * The shared conduit's transport: a set of writer tasks joined to a set of reader tasks
 * (utc_conduit_create_shared), built from one inner transport per (writer, reader) pair:
 * the component utc__transport_pick gives the two entry ranks. The conduit drives it
 * like any transport (so the every-thread protocol, _by, requests, timeouts and the
 * lifetime rules are the ones of every conduit); it drives the inner transports through
 * their ops tables and never calls back into the conduit object.
 *
 * Direction 0 of a pair carries the writer's messages to the reader. Direction 1 carries
 * nothing in publish mode, and the reader's asks in share mode.
 *
 * - publish: a write starts one inner send per reader (an owned buffer goes to the first
 *   reader, copies to the others) and ends when they all have. A read takes the next
 *   message of its tag from any writer: it probes the pairs in turn, from where this
 *   reader's last read left off (so no writer is starved), and reads the pair where one
 *   is. Each pair keeps its writer's order.
 * - share: a read first tops up its reader's asks of this tag (empty messages of the tag
 *   in direction 1) to each writer whose stream has not ended, then reads as in publish
 *   mode. The asks a reader has sent and not yet had answered by a read (pending) cover
 *   its reads of the tag in flight plus `credits - 1` more, its credit window: so while it
 *   works on one message, the next are on their way, and no read waits for an ask that
 *   was never sent (reads started together each have one). A write waits for an ask of
 *   its tag from any reader, taking them in turn, and sends its message to that reader.
 *   So every message goes to exactly one reader, one that asked, and a reader is ahead by
 *   at most `credits` messages per writer: a slow one takes fewer. A message answers an
 *   ask of its reader for good: it waits there for that reader's next read, whatever
 *   happens to the others (a reader that stops reading before the end of stream leaves
 *   up to credits - 1 unread; the destroy says so). An ask that an in-process ring cannot
 *   take yet waits in the ring's backlog on a request of the reader's own (ask_req_t), so
 *   a read never blocks on one.
 * - close: the writer's end of stream on each of its pairs; a read ends with
 *   UTC_ERR_CLOSED once every pair has ended its stream and nothing is left.
 *
 * With one pair to look at (one writer for a reader; one reader for a share-mode writer)
 * the operation goes straight to that pair's transport, and waits as it does. With
 * several, a waiting operation polls the pairs (the transports have no wait over several
 * of them), sleeping between looks rather than yielding (choose_pause).
 */
#include <errno.h>
#include <time.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "utc_internal.h"
#include "service/buffer.h"
#include "service/request.h"
#include "service/transport.h"
#include "service/wait.h"

/* One writer and one reader. */
typedef struct pair {
    utc__transport_t *tp; /* NULL on a rank that holds neither entry */
    int wrank, rrank;     /* the writer's and the reader's entry ranks */
    atomic_bool ended;    /* reader side: its stream ended (seen by a probe) */
} pair_t;

/* A reader's asks of one tag (share mode), under its member's lock. */
typedef struct ask_line {
    int tag;
    int reads;               /* its reads of the tag in flight */
    UT_hash_handle hh;
    int pending[];           /* per writer: asks sent and not yet answered by a read */
} ask_line_t;

/* An ask whose send did not complete at once (an in-process ring full of unread asks):
 * it stays in the inner transport's backlog until the writer's side makes room. */
typedef struct ask_req {
    utc_request_t q;         /* first: the inner send */
    ask_line_t *line;        /* the line that counts it, and its writer */
    int w;
    struct ask_req *next;
} ask_req_t;

/* What a member's threads on its entry rank share. */
typedef struct member {
    pthread_mutex_t lock; /* its choices of a pair, and its asks */
    unsigned next;        /* where its next choice starts looking */
    ask_line_t *asks;     /* a reader in share mode */
    ask_req_t *asks_out;  /* asks on their way (not complete at their start) */
    ask_req_t *asks_free; /* requests for the next asks */
} member_t;

typedef struct shared_tp {
    utc__transport_t base;
    utc_shared_mode_t mode;
    int credits;          /* share mode: each reader's credit window (>= 1) */
    int nw, nr;
    pair_t *pairs;        /* [w * nr + r] */
    member_t *m;          /* nw + nr: writers, then readers */
    atomic_int down;      /* the shutdown's status; 0 while up */
} shared_tp_t;

/* Where an operation stands. */
typedef enum {
    PH_CHOOSE,  /* a read looks for a pair with a message; a share-mode write for an ask */
    PH_INNER,   /* one inner request in flight on the chosen pair */
    PH_SENDS    /* a publish write: one inner send per reader */
} phase_t;

typedef struct sub {
    phase_t phase;
    int pair;               /* the chosen pair (PH_INNER) */
    int n;                  /* inner requests in use */
    bool ask_taken;         /* share-mode write: the inner request took an ask; the send is
                             * next */
    ask_line_t *line;       /* share-mode read: the ask line that counts it in flight */
    utc_request_t inner[];  /* PH_SENDS: nr; else 1 */
} sub_t;

static shared_tp_t *st_of(utc__transport_t *tp) { return (shared_tp_t *)tp; }

static pair_t *pair_at(shared_tp_t *t, int w, int r) { return &t->pairs[w * t->nr + r]; }

static bool is_writer(const shared_tp_t *t, int member) { return member < t->nw; }

/* The end a failure notice of this transport names: NOTICE_END + the member's index (an
 * inner transport's own ends are 0 and 1). */
#define NOTICE_END 2

static void read_ended(shared_tp_t *t, const utc_request_t *req, const sub_t *s, bool got);
static void shared_fail_pairs(shared_tp_t *t, int member, int rank, int rc,
                              utc_status_t status);
static void notify_all(shared_tp_t *t, int member, int rank, utc_status_t rc);

/* An operation ends on a failure that an inner transport saw (a notice from another rank
 * that a member of its pair failed, or was destroyed): the conduit fails here as a whole,
 * on record with that member, so every operation of this rank ends and their messages
 * name the member that failed, not this pair's other end. */
static void adopt_failure(shared_tp_t *t)
{
    if (atomic_load(&t->base.seen.state) != UTC__FAIL_NONE || utc__transport_marked(&t->base))
        return;
    for (int i = 0; i < t->nw * t->nr; i++) {
        utc__transport_t *in = t->pairs[i].tp;
        utc__fail_info_t f;
        if (!in || !utc__fail_record_get(&in->fail, &f))
            continue;
        int member = f.end >= NOTICE_END ? f.end - NOTICE_END
                     : f.end == 0        ? i / t->nr
                                         : t->nw + i % t->nr;
        if (member < 0 || member >= t->nw + t->nr)
            member = f.end == 0 ? i / t->nr : t->nw + i % t->nr;
        /* on base's `seen`, not its mark: a run failure here, of a member that gets this
         * status and returns it, still marks the conduit and tells the other ranks
         * (failures.c), as it did before this rank knew */
        if (!utc__fail_record_set(&t->base.seen, member, f.rank, f.rc, f.why))
            return; /* another thread adopts one */
        shared_fail_pairs(t, member, f.rank, f.rc, f.why);
        if (f.why == UTC_ERR_PEER_FAILED) /* a destroy is every rank's own: no notice */
            notify_all(t, member, f.rank, (utc_status_t)f.rc);
        return;
    }
}

/* Finish the outer request: a share-mode read leaves its ask line; drop its state. */
static void finish(shared_tp_t *t, utc_request_t *req, utc_status_t status)
{
    sub_t *s = req->sub;
    if (s && s->line)
        read_ended(t, req, s, status == UTC_OK);
    free(s);
    req->sub = NULL;
    if (status == UTC_ERR_PEER_FAILED || status == UTC_ERR_CANCELED)
        adopt_failure(t);
    utc__req_finish(req, status);
}

/* Why operations end now without a transfer: the shutdown or a member's failure; 0. */
static utc_status_t stopped(shared_tp_t *t)
{
    int d = atomic_load(&t->down);
    if (d)
        return (utc_status_t)d;
    return utc__transport_fail_status(&t->base); /* its mark, or a failure adopted */
}

/* An inner request on pair p, in direction dir, to or from the other end's entry rank. */
static void inner_prepare(utc_request_t *q, const pair_t *p, utc__op_t op, int dir, int tag,
                          bool at_writer)
{
    utc__req_prepare(q, op, dir, tag, at_writer ? p->rrank : p->wrank, p->tp);
}

/* Start q; an inner start that fails ends q with its status (an outer request whose inner
 * ones are in flight cannot take its start back). */
static void inner_start(utc_request_t *q)
{
    utc_status_t rc = q->tp->ops->start(q->tp, q);
    if (rc != UTC_OK)
        utc__req_finish(q, rc);
}

static bool inner_done(utc_request_t *q)
{
    return utc__req_state(q) == UTC__REQ_DONE || q->tp->ops->progress(q->tp, q);
}

/* ---- share mode: asks ---- */

/* The ask line of `tag` of reader member `rm` (under its lock), made when missing. */
static ask_line_t *ask_line(shared_tp_t *t, member_t *rm, int tag)
{
    ask_line_t *a;
    HASH_FIND_INT(rm->asks, &tag, a);
    if (a)
        return a;
    if (!(a = calloc(1, sizeof *a + sizeof(int) * (size_t)t->nw)))
        return NULL;
    a->tag = tag;
    HASH_ADD_INT(rm->asks, tag, a);
    return a;
}

/* Under rm's lock: the asks on their way that have left; one that failed (the conduit
 * shut down or failed) never reached its writer, so it is pending no more. */
static void reap_asks(member_t *rm)
{
    for (ask_req_t **pp = &rm->asks_out, *k; (k = *pp);) {
        if (!inner_done(&k->q)) {
            pp = &k->next;
            continue;
        }
        if (k->q.status != UTC_OK && k->line->pending[k->w] > 0)
            k->line->pending[k->w]--;
        *pp = k->next;
        k->next = rm->asks_free;
        rm->asks_free = k;
    }
}

/* Under rm's lock: one more ask of line a's tag from reader r to writer w. It counts as
 * pending once started: an ask that does not complete at once stays on its way. */
static utc_status_t send_ask(shared_tp_t *t, member_t *rm, ask_line_t *a, int w, int r)
{
    ask_req_t *k = rm->asks_free;
    if (k)
        rm->asks_free = k->next;
    else if (!(k = malloc(sizeof *k)))
        return utc__error(UTC_ERR_NO_MEMORY, "shared conduit %d: out of memory for an ask",
                          t->base.conduit_id);
    pair_t *p = pair_at(t, w, r);
    inner_prepare(&k->q, p, UTC__OP_SEND, UTC__DIR_BACK, a->tag, false);
    k->line = a;
    k->w = w;
    utc_status_t rc = p->tp->ops->start(p->tp, &k->q);
    if (rc == UTC_OK && !inner_done(&k->q)) {
        k->next = rm->asks_out;
        rm->asks_out = k;
        a->pending[w]++;
        return UTC_OK;
    }
    if (rc == UTC_OK && (rc = k->q.status) == UTC_OK)
        a->pending[w]++;
    k->next = rm->asks_free;
    rm->asks_free = k;
    return rc;
}

/* A read of `tag` by reader r starts: it joins the tag's reads in flight (s->line), and
 * each writer whose stream has not ended is asked until this reader's pending asks of it
 * cover those reads and credits - 1 more. The asks are tiny messages, sent before the
 * read looks. */
static utc_status_t send_asks(shared_tp_t *t, int r, int tag, sub_t *s)
{
    member_t *rm = &t->m[t->nw + r];
    utc_status_t rc = UTC_OK;
    pthread_mutex_lock(&rm->lock);
    ask_line_t *a = ask_line(t, rm, tag);
    if (!a) {
        rc = utc__error(UTC_ERR_NO_MEMORY, "shared conduit %d: out of memory for an ask",
                        t->base.conduit_id);
        goto out;
    }
    if (rm->asks_out)
        reap_asks(rm);
    int want = a->reads + t->credits; /* the reads in flight with this one, + credits - 1 */
    for (int w = 0; w < t->nw && rc == UTC_OK; w++) {
        if (atomic_load(&pair_at(t, w, r)->ended))
            continue;
        while (rc == UTC_OK && a->pending[w] < want)
            rc = send_ask(t, rm, a, w, r);
    }
    if (rc == UTC_OK) {
        a->reads++;
        s->line = a;
    }
out:
    pthread_mutex_unlock(&rm->lock);
    return rc;
}

/* A share-mode read ends (done, failed, withdrawn): it leaves its tag's reads in flight;
 * when it got a message (`got`), its writer's ask is answered. */
static void read_ended(shared_tp_t *t, const utc_request_t *req, const sub_t *s, bool got)
{
    member_t *rm = &t->m[req->member];
    int w = s->pair / t->nr;
    pthread_mutex_lock(&rm->lock);
    s->line->reads--;
    if (got && s->line->pending[w] > 0)
        s->line->pending[w]--;
    pthread_mutex_unlock(&rm->lock);
}

/* ---- choosing a pair ---- */

/*
 * Under the caller's member lock: look once, without blocking, at the caller's pairs in
 * turn (from where its last choice left off, so none starves) for what its operation
 * waits for: for a read, a message of its tag (or any tag) from a writer; for a share-mode
 * write, an ask of its tag from a reader. UTC_OK: *pair is that pair's index and `look`
 * the probe of it (size and tag). UTC_ERR_TIMEOUT: none yet. UTC_ERR_CLOSED: a read with
 * every stream ended and nothing of the tag left (a write never gets it: readers do not
 * close). Else the status that ends the operation.
 */
static utc_status_t look_pairs(shared_tp_t *t, const utc_request_t *req, utc_request_t *look,
                               int *pair)
{
    bool writer = is_writer(t, req->member);
    int me = writer ? req->member : req->member - t->nw;
    int n = writer ? t->nr : t->nw;
    unsigned next = t->m[req->member].next;
    utc_status_t rc = UTC_ERR_CLOSED;
    for (int k = 0; k < n; k++) {
        int other = (int)((next + (unsigned)k) % (unsigned)n);
        *pair = writer ? me * t->nr + other : other * t->nr + me;
        pair_t *p = &t->pairs[*pair];
        inner_prepare(look, p, UTC__OP_RECV, writer ? UTC__DIR_BACK : UTC__DIR_FWD, req->tag,
                      writer);
        utc_status_t prc = p->tp->ops->probe(p->tp, look);
        if (prc == UTC_OK || (prc != UTC_ERR_CLOSED && prc != UTC_ERR_TIMEOUT))
            return prc;
        if (prc == UTC_ERR_TIMEOUT)
            rc = UTC_ERR_TIMEOUT;
        else if (!writer)
            atomic_store(&p->ended, true);
    }
    return rc;
}

/* Look once for the pair the operation goes to (look_pairs); found, the inner request is
 * started there (PH_INNER): the probe's tag, so an any-tag read gets that very message. */
static utc_status_t choose(shared_tp_t *t, utc_request_t *req)
{
    sub_t *s = req->sub;
    bool writer = is_writer(t, req->member);
    member_t *mm = &t->m[req->member];
    utc_request_t look;
    int pair;
    pthread_mutex_lock(&mm->lock); /* two of its threads never take the same one */
    utc_status_t rc = look_pairs(t, req, &look, &pair);
    if (rc == UTC_OK) {
        utc_request_t *q = &s->inner[0];
        inner_prepare(q, &t->pairs[pair], UTC__OP_RECV, look.dir, look.tag, writer);
        if (!writer) {
            q->rbuf = req->rbuf;
            q->size = req->size;
            q->owned = req->owned;
        }
        inner_start(q);
        s->pair = pair;
        s->phase = PH_INNER;
        s->n = 1;
        s->ask_taken = writer; /* a write took an ask; its message goes next */
        /* the other member of the pair is its writer (a read) or reader (a write) */
        mm->next = (unsigned)(writer ? pair % t->nr : pair / t->nr) + 1;
    }
    pthread_mutex_unlock(&mm->lock);
    return rc;
}

/* ---- the ops ---- */

/* A publish write: one inner send per reader. An owned buffer goes to the first reader;
 * the others get copies of their own (each reader owns, and frees, what it reads). */
static utc_status_t start_publish_write(shared_tp_t *t, utc_request_t *req, sub_t *s)
{
    int w = req->member;
    void **copies = NULL;
    if (req->owned && t->nr > 1) {
        if (!(copies = calloc((size_t)t->nr, sizeof *copies)))
            return utc__error(UTC_ERR_NO_MEMORY, "shared conduit %d: out of memory",
                              t->base.conduit_id);
        for (int r = 1; r < t->nr; r++) {
            size_t cap = 0;
            if (!(copies[r] = utc_buf_alloc(req->size ? req->size : 1))) {
                for (int k = 1; k < r; k++)
                    utc_buf_free(copies[k]);
                free(copies);
                return utc__error(UTC_ERR_NO_MEMORY, "shared conduit %d: out of memory for "
                                  "a reader's copy of an owned %zu-byte message",
                                  t->base.conduit_id, req->size);
            }
            memcpy(copies[r], req->sbuf, req->size);
            (void)utc__buf_hand_over(copies[r], &cap);
        }
    }
    s->phase = PH_SENDS;
    s->n = t->nr;
    for (int r = 0; r < t->nr; r++) {
        utc_request_t *q = &s->inner[r];
        inner_prepare(q, pair_at(t, w, r), UTC__OP_SEND, UTC__DIR_FWD, req->tag, true);
        q->sbuf = copies && r > 0 ? copies[r] : req->sbuf;
        q->size = req->size;
        q->owned = req->owned;
        inner_start(q);
    }
    free(copies);
    return UTC_OK;
}

static bool shared_progress(utc__transport_t *tp, utc_request_t *req);

static utc_status_t shared_start(utc__transport_t *tp, utc_request_t *req)
{
    shared_tp_t *t = st_of(tp);
    utc_status_t st = stopped(t);
    if (st) {
        utc__req_finish(req, st);
        return UTC_OK;
    }
    bool writer = is_writer(t, req->member);
    int ninner = writer && t->mode == UTC_SHARED_PUBLISH ? t->nr : 1;
    /* not zeroed: every inner request is prepared before use (a request is ~1 KiB) */
    sub_t *s = malloc(sizeof *s + sizeof(utc_request_t) * (size_t)ninner);
    if (!s)
        return utc__error(UTC_ERR_NO_MEMORY, "shared conduit %d: out of memory",
                          t->base.conduit_id);
    req->sub = s;
    *s = (sub_t){.phase = PH_CHOOSE};
    utc_status_t rc = UTC_OK;
    if (writer && t->mode == UTC_SHARED_PUBLISH) {
        rc = start_publish_write(t, req, s);
    } else if (writer && t->nr == 1) {
        /* one reader: wait for its ask on its pair itself */
        utc_request_t *q = &s->inner[0];
        inner_prepare(q, pair_at(t, req->member, 0), UTC__OP_RECV, UTC__DIR_BACK, req->tag,
                      true);
        inner_start(q);
        s->phase = PH_INNER;
        s->pair = req->member * t->nr;
        s->n = 1;
        s->ask_taken = true;
    } else if (!writer) {
        int r = req->member - t->nw;
        if (t->mode == UTC_SHARED_SHARE)
            rc = send_asks(t, r, req->tag, s);
        if (rc == UTC_OK && t->nw == 1) {
            /* one writer: read its pair itself */
            utc_request_t *q = &s->inner[0];
            inner_prepare(q, pair_at(t, 0, r), UTC__OP_RECV, UTC__DIR_FWD, req->tag, false);
            q->rbuf = req->rbuf;
            q->size = req->size;
            q->owned = req->owned;
            inner_start(q);
            s->phase = PH_INNER;
            s->pair = r;
            s->n = 1;
        }
    }
    if (rc == UTC_ERR_NO_MEMORY || rc == UTC_ERR_MPI || rc == UTC_ERR_INTERNAL) {
        /* not started; the message says why */
        req->sub = NULL;
        free(s);
        return rc;
    }
    if (rc != UTC_OK) { /* an ask's status: the conduit failed, shut down, or MPI's error */
        finish(t, req, rc);
        return UTC_OK;
    }
    (void)shared_progress(tp, req);
    return UTC_OK;
}

/* The inner request of PH_INNER is done: what it means for the outer one. */
static void inner_finished(shared_tp_t *t, utc_request_t *req)
{
    sub_t *s = req->sub;
    utc_request_t *q = &s->inner[0];
    pair_t *p = &t->pairs[s->pair];
    if (s->ask_taken) {
        /* a share-mode write took its reader's ask: now the message, on that pair */
        if (q->status != UTC_OK) {
            finish(t, req, q->status);
            return;
        }
        inner_prepare(q, p, UTC__OP_SEND, UTC__DIR_FWD, req->tag, true);
        q->sbuf = req->sbuf;
        q->size = req->size;
        q->owned = req->owned;
        s->ask_taken = false;
        inner_start(q);
        return;
    }
    if (req->op == UTC__OP_RECV) {
        req->received = q->received;
        req->owned_buf = q->owned_buf;
        req->tp_err = q->tp_err;
        if (q->status == UTC_OK || q->status == UTC_ERR_TRUNCATE) {
            req->tag = q->tag;
            req->peer = p->wrank;
        } else if (q->status == UTC_ERR_CLOSED) {
            atomic_store(&p->ended, true); /* its writer is asked no more */
        }
    } else {
        req->tp_err = q->tp_err;
    }
    finish(t, req, q->status);
}

static bool shared_progress(utc__transport_t *tp, utc_request_t *req)
{
    shared_tp_t *t = st_of(tp);
    if (utc__req_state(req) == UTC__REQ_DONE)
        return true;
    sub_t *s = req->sub;
    for (;;) {
        switch (s->phase) {
        case PH_SENDS: {
            utc_status_t first = UTC_OK;
            for (int i = 0; i < s->n; i++) {
                if (!inner_done(&s->inner[i]))
                    return false;
                if (first == UTC_OK)
                    first = s->inner[i].status;
                if (s->inner[i].tp_err)
                    req->tp_err = s->inner[i].tp_err;
            }
            finish(t, req, first);
            return true;
        }
        case PH_INNER:
            if (!inner_done(&s->inner[0]))
                return false;
            inner_finished(t, req);
            if (utc__req_state(req) == UTC__REQ_DONE)
                return true;
            continue; /* a share-mode write's send is next */
        case PH_CHOOSE: {
            utc_status_t st = stopped(t);
            if (st) {
                finish(t, req, st);
                return true;
            }
            utc_status_t rc = choose(t, req);
            if (rc == UTC_OK)
                continue;
            if (rc == UTC_ERR_TIMEOUT)
                return false;
            finish(t, req, rc);
            return true;
        }
        }
    }
}

/*
 * One step of a wait that polls several pairs (PH_CHOOSE): spin ~10 us, then sleep in steps
 * of 1/16 of the time waited so far, at least 50 us and at most 1 ms. Unlike utc__poll_step
 * it never yields: a thread that yields stays runnable, and on a core it shares with a busy
 * thread (a farm's dispatcher beside a worker) it runs again only when that thread's time
 * slice ends, milliseconds later; a sleeper that wakes preempts it. So a writer waiting
 * for an ask answers within a sleep step of its coming, not a time slice (measured: the
 * guide's farm's workers idled 13-28% of their run with the yields, 0.1-4% without). The
 * short spin and the 50 us floor keep what the wait costs the busy thread beside it low
 * (the farm's dispatcher: 50-100 us of CPU per job, against 120-160 us with a 50 us spin
 * and a 20 us floor).
 */
static void choose_pause(utc__poll_t *p)
{
    if (p->iter++ == 0)
        p->start = utc_wtime();
    double waited = (p->iter & 15) == 0 || p->waited >= 10e-6 ? utc_wtime() - p->start
                                                                : p->waited;
    p->waited = waited;
    if (waited < 10e-6) {
        utc__cpu_relax();
        return;
    }
    double s = waited / 16;
    s = s < 50e-6 ? 50e-6 : s > 1e-3 ? 1e-3 : s;
    struct timespec ts = {0, (long)(s * 1e9)};
    nanosleep(&ts, NULL);
}

static bool shared_wait(utc__transport_t *tp, utc_request_t *req, double timeout_s)
{
    double deadline = utc__deadline(timeout_s);
    utc__poll_t p = UTC__POLL_INIT;
    for (;;) {
        if (shared_progress(tp, req))
            return true;
        sub_t *s = req->sub;
        double left = deadline < 0 ? -1 : deadline - utc_wtime();
        if (deadline >= 0 && left <= 0)
            return false;
        if (s->phase == PH_INNER) {
            utc_request_t *q = &s->inner[0];
            if (!q->tp->ops->wait(q->tp, q, left))
                return false;
            continue;
        }
        if (s->phase == PH_SENDS) {
            for (int i = 0; i < s->n; i++) {
                utc_request_t *q = &s->inner[i];
                if (utc__req_state(q) != UTC__REQ_DONE && !q->tp->ops->wait(q->tp, q, left))
                    return false;
            }
            continue;
        }
        choose_pause(&p);
    }
}

static bool shared_cancel(utc__transport_t *tp, utc_request_t *req)
{
    sub_t *s = req->sub;
    if (!s || req->op != UTC__OP_RECV)
        return false;
    if (s->phase == PH_INNER) {
        utc_request_t *q = &s->inner[0];
        if (!q->tp->ops->cancel(q->tp, q))
            return false; /* matched meanwhile: it completes */
    }
    if (s->line) /* its asks stay: a message that answers one waits for the next read */
        read_ended(st_of(tp), req, s, false);
    free(s);
    req->sub = NULL;
    return true;
}

/* Publish mode (route.c refuses probes in share mode): the next message of the tag from
 * any writer, as choose() would find it; nothing is taken. */
static utc_status_t shared_probe(utc__transport_t *tp, utc_request_t *req)
{
    shared_tp_t *t = st_of(tp);
    utc_status_t rc = stopped(t);
    if (rc)
        return rc;
    member_t *rm = &t->m[req->member];
    utc_request_t look;
    int pair;
    pthread_mutex_lock(&rm->lock);
    rc = look_pairs(t, req, &look, &pair);
    pthread_mutex_unlock(&rm->lock);
    if (rc == UTC_OK) {
        req->received = look.received;
        req->tag = look.tag;
        req->peer = t->pairs[pair].wrank;
    }
    return rc;
}

/* Writer member `w` is done: its end of stream to every reader. */
static utc_status_t shared_close(utc__transport_t *tp, int dir, int w)
{
    shared_tp_t *t = st_of(tp);
    (void)dir;
    utc_status_t rc = stopped(t);
    for (int r = 0; r < t->nr && rc == UTC_OK; r++) {
        pair_t *p = pair_at(t, w, r);
        rc = p->tp->ops->close(p->tp, UTC__DIR_FWD, p->rrank);
    }
    return rc;
}

/* Share mode, before the shutdown drops what the pairs hold: say so when a reader here
 * leaves messages that were handed to it unread (it stopped reading a tag before its end
 * of stream, or the conduit failed). A look at each of its pairs; between ranks only what
 * has arrived is seen. */
static void warn_unread(shared_tp_t *t)
{
    int me = utc_rank();
    for (int r = 0; r < t->nr; r++) {
        int holding = 0, rank = -1;
        for (int w = 0; w < t->nw; w++) {
            pair_t *p = pair_at(t, w, r);
            if (!p->tp || p->rrank != me)
                continue;
            utc_request_t look;
            inner_prepare(&look, p, UTC__OP_RECV, UTC__DIR_FWD, UTC_ANY_TAG, false);
            rank = p->rrank;
            holding += p->tp->ops->probe(p->tp, &look) == UTC_OK;
        }
        if (holding)
            utc_log(UTC_LOG_WARN, "shared conduit %d: reader %d (rank %d) never read messages "
                    "handed to it by %d of its %d writer(s); they are dropped with the "
                    "conduit. In share mode a reader asks up to its credit window (%d) ahead "
                    "of its reads: read until UTC_ERR_CLOSED, or create the conduit with "
                    "credits 1 (a failed member leaves such messages too)",
                    t->base.conduit_id, r, rank, holding, t->nw, t->credits);
    }
}

static void shared_shutdown(utc__transport_t *tp, utc_status_t status)
{
    shared_tp_t *t = st_of(tp);
    if (t->mode == UTC_SHARED_SHARE && !atomic_load(&t->down))
        warn_unread(t);
    atomic_store(&t->down, (int)status);
    for (int i = 0; i < t->nw * t->nr; i++)
        if (t->pairs[i].tp)
            t->pairs[i].tp->ops->shutdown(t->pairs[i].tp, status);
}

/* Member `member` failed on `rank` with `rc`: every operation of the conduit ends with
 * `status`, on every pair this rank holds. */
static void shared_fail_pairs(shared_tp_t *t, int member, int rank, int rc, utc_status_t status)
{
    for (int i = 0; i < t->nw * t->nr; i++) {
        utc__transport_t *in = t->pairs[i].tp;
        if (in && utc__transport_mark_failed(in, is_writer(t, member) ? 0 : 1, rank, rc, status))
            in->ops->fail(in, status);
    }
}

/* A member failed here (the mark's end is its index). */
static void shared_fail(utc__transport_t *tp, utc_status_t status)
{
    utc__fail_info_t f;
    if (utc__fail_record_get(&tp->fail, &f))
        shared_fail_pairs(st_of(tp), f.end, f.rank, f.rc, status);
}

/* Tell the other rank of every pair held here (between ranks) that member `member` failed
 * on world rank `rank` with `rc`. The notice's end is NOTICE_END + member, so that a rank
 * that is no end of the member's pairs still names it (adopt_failure); a rank that learns
 * it passes it on once, so it reaches every rank that holds a member. */
static void notify_all(shared_tp_t *t, int member, int rank, utc_status_t rc)
{
    for (int i = 0; i < t->nw * t->nr; i++) {
        utc__transport_t *in = t->pairs[i].tp;
        if (in) /* one within this rank has nothing to tell */
            in->ops->notify_failed(in, NOTICE_END + member, rank, rc);
    }
}

/* A member's run failed on `rank` (here): tell the ranks of the pairs (notify_all). */
static void shared_notify_failed(utc__transport_t *tp, int member, int rank, utc_status_t rc)
{
    notify_all(st_of(tp), member, rank, rc);
}

static void shared_destroy(utc__transport_t *tp)
{
    shared_tp_t *t = st_of(tp);
    for (int i = 0; i < t->nw * t->nr; i++)
        if (t->pairs[i].tp)
            t->pairs[i].tp->ops->destroy(t->pairs[i].tp);
    /* after the inner transports: an in-process one ends its backlog (asks among it) */
    for (int i = 0; i < t->nw + t->nr; i++) {
        member_t *m = &t->m[i];
        ask_line_t *a, *tmp;
        HASH_ITER(hh, m->asks, a, tmp) {
            HASH_DEL(m->asks, a);
            free(a);
        }
        for (ask_req_t *lists[2] = {m->asks_out, m->asks_free}, **l = lists; l < lists + 2; l++)
            for (ask_req_t *k = *l, *next; k; k = next) {
                next = k->next;
                free(k);
            }
        pthread_mutex_destroy(&m->lock);
    }
    free(t->pairs);
    free(t->m);
    free(t);
}

static const utc__transport_ops_t shared_ops = {
    .name = "shared",
    .start = shared_start,
    .send_now = utc__transport_no_send_now,
    .progress = shared_progress,
    .wait = shared_wait,
    .cancel = shared_cancel,
    .probe = shared_probe,
    .close = shared_close,
    .shutdown = shared_shutdown,
    .fail = shared_fail,
    .notify_failed = shared_notify_failed,
    .destroy = shared_destroy,
};

utc_status_t utc__shared_transport_create(int conduit_id, utc_shared_mode_t mode,
                                          const int *entry, int nwriters, int nreaders,
                                          const utc_conduit_options_t *opts,
                                          utc__transport_t **out)
{
    shared_tp_t *t = calloc(1, sizeof *t);
    int npairs = nwriters * nreaders, nm = nwriters + nreaders, me = utc_rank();
    if (!t || !(t->pairs = calloc((size_t)npairs, sizeof *t->pairs)) ||
        !(t->m = calloc((size_t)nm, sizeof *t->m))) {
        if (t)
            free(t->pairs);
        free(t);
        return utc__error(UTC_ERR_NO_MEMORY, "utc_conduit_create_shared: out of memory");
    }
    t->base.ops = &shared_ops;
    t->base.conduit_id = conduit_id;
    t->mode = mode;
    t->nw = nwriters;
    t->nr = nreaders;
    for (int i = 0; i < nm; i++)
        pthread_mutex_init(&t->m[i].lock, NULL);
    /* checked before the collective part (utc_conduit_create_shared): no rank fails here */
    utc_status_t rc = utc__shared_credits(opts, mode, &t->credits);
    if (rc != UTC_OK) {
        shared_destroy(&t->base);
        return rc;
    }
    /* every rank makes the pairs in the same order, each with the component the pick gives
     * its two entry ranks: a collective one's create is entered by every rank */
    int widest = 0; /* the kind of the widest component used: the last in the table */
    for (int w = 0; w < nwriters; w++) {
        for (int r = 0; r < nreaders; r++) {
            pair_t *p = pair_at(t, w, r);
            p->wrank = entry[w];
            p->rrank = entry[nwriters + r];
            atomic_init(&p->ended, false);
            int members[2] = {p->wrank < p->rrank ? p->wrank : p->rrank,
                              p->wrank < p->rrank ? p->rrank : p->wrank};
            utc__transport_args_t args = {.conduit_id = conduit_id, .opts = opts,
                                          .members = members,
                                          .nmembers = p->wrank == p->rrank ? 1 : 2};
            utc_status_t prc;
            int comp;
            do { /* again when a collective component refused: off now, on every rank */
                prc = UTC_OK;
                comp = utc__transport_pick(p->wrank, p->rrank, opts);
                if (comp < 0)
                    prc = utc__error(UTC_ERR_INTERNAL, "utc_conduit_create_shared: no "
                                     "transport reaches rank %d from rank %d", p->rrank,
                                     p->wrank);
                else if (utc__transport_components[comp]->collective || me == p->wrank ||
                         me == p->rrank)
                    prc = utc__transport_create(comp, &args, &p->tp);
            } while (prc == UTC_ERR_UNSUPPORTED && utc__transport_off(comp));
            if (comp > widest)
                widest = comp;
            if (rc == UTC_OK)
                rc = prc; /* the collective creations go on, so every rank meets them */
        }
    }
    t->base.kind = utc__transport_components[widest]->kind;
    if (rc != UTC_OK) {
        shared_destroy(&t->base);
        return rc;
    }
    *out = &t->base;
    return UTC_OK;
}

utc_status_t utc__shared_credits(const utc_conduit_options_t *opts, utc_shared_mode_t mode,
                                 int *credits)
{
    static const char fn[] = "utc_conduit_create_shared";
    if (mode != UTC_SHARED_SHARE) {
        if (opts->credits != 0)
            return utc__error(UTC_ERR_INVALID_ARG, "%s: credits %d: a credit window is for "
                              "share mode (UTC_SHARED_SHARE); in publish mode every reader "
                              "gets every message, so leave it 0", fn, opts->credits);
        *credits = 0;
        return UTC_OK;
    }
    if (opts->credits != 0) {
        *credits = opts->credits;
        return UTC_OK;
    }
    const char *env = getenv("UTC_SHARE_CREDITS");
    if (!env || !*env) {
        *credits = UTC_CONDUIT_CREDITS_DEFAULT;
        return UTC_OK;
    }
    char *end;
    errno = 0;
    long v = strtol(env, &end, 10);
    if (errno || end == env || *end || v < 1 || v > UTC_CONDUIT_CREDITS_MAX)
        return utc__error(UTC_ERR_INVALID_ARG, "%s: UTC_SHARE_CREDITS='%.40s' is not a credit "
                          "window (a whole number 1..%d; unset, the default is %d)", fn, env,
                          UTC_CONDUIT_CREDITS_MAX, UTC_CONDUIT_CREDITS_DEFAULT);
    *credits = (int)v;
    return UTC_OK;
}

int utc__shared_transport_peer(const utc__transport_t *tp, int member)
{
    const shared_tp_t *t = (const shared_tp_t *)tp;
    if (is_writer(t, member))
        return t->pairs[member * t->nr].rrank;
    return t->pairs[member - t->nw].wrank;
}

/* The entry ranks of the members on the other side of `member`, ascending and each once,
 * as "0, 1, 2" (cut short with "..." when buf is full). Their number goes to *n. */
static void other_ranks(const shared_tp_t *t, int member, char *buf, size_t size, int *n)
{
    bool writer = is_writer(t, member);
    int me = writer ? member : member - t->nw, count = writer ? t->nr : t->nw, last = -1;
    size_t len = 0;
    buf[0] = '\0';
    *n = 0;
    for (;;) { /* the next larger rank: members are few, and this runs only for a report */
        int next = -1;
        for (int k = 0; k < count; k++) {
            const pair_t *p = writer ? &t->pairs[me * t->nr + k] : &t->pairs[k * t->nr + me];
            int rank = writer ? p->rrank : p->wrank;
            if (rank > last && (next < 0 || rank < next))
                next = rank;
        }
        if (next < 0)
            return;
        int wrote = snprintf(buf + len, size - len, "%s%d", *n ? ", " : "", next);
        if (wrote < 0 || (size_t)wrote >= size - len) {
            if (size > 4)
                snprintf(buf + (len < size - 4 ? len : size - 4), 4, "...");
            return;
        }
        len += (size_t)wrote;
        last = next;
        ++*n;
    }
}

/* The watchdog's account of a wait (utc__wait_detail_t): the conduit, the member, whom it
 * waits for on which ranks, and a share-mode reader's asks of the tag. */
static void shared_wait_describe(const utc__wait_detail_t *d, char *buf, size_t n)
{
    const utc__shared_wait_t *sw = (const utc__shared_wait_t *)d;
    shared_tp_t *t = st_of(sw->tp);
    bool writer = is_writer(t, sw->member), share = t->mode == UTC_SHARED_SHARE;
    char ranks[96], tag[24] = "";
    int nranks;
    other_ranks(t, sw->member, ranks, sizeof ranks, &nranks);
    if (sw->tag >= 0)
        snprintf(tag, sizeof tag, " of tag %d", sw->tag);
    const char *on = nranks == 1 ? "rank" : "ranks";
    if (writer && share) {
        snprintf(buf, n, "shared conduit %d (share mode): writer %d waits for a reader to ask "
                 "for a message%s (%d reader(s), on %s %s)", t->base.conduit_id, sw->member,
                 tag, t->nr, on, ranks);
    } else if (writer) {
        snprintf(buf, n, "shared conduit %d (publish mode): writer %d waits for its %d "
                 "reader(s), on %s %s, to take a message%s", t->base.conduit_id, sw->member,
                 t->nr, on, ranks, tag);
    } else if (!share) {
        snprintf(buf, n, "shared conduit %d (publish mode): reader %d waits for a message%s "
                 "from its %d writer(s), on %s %s", t->base.conduit_id, sw->member - t->nw,
                 tag, t->nw, on, ranks);
    } else {
        int asked = 0, reads = 0;
        member_t *rm = &t->m[sw->member];
        pthread_mutex_lock(&rm->lock);
        ask_line_t *a = NULL;
        if (sw->tag >= 0)
            HASH_FIND_INT(rm->asks, &sw->tag, a);
        for (int w = 0; a && w < t->nw; w++)
            asked += a->pending[w];
        if (a)
            reads = a->reads;
        pthread_mutex_unlock(&rm->lock);
        snprintf(buf, n, "shared conduit %d (share mode, credit window %d): reader %d waits "
                 "for a message%s from its %d writer(s), on %s %s; %d asked for and not yet "
                 "read, %d read(s) waiting", t->base.conduit_id, t->credits,
                 sw->member - t->nw, tag, t->nw, on, ranks, asked, reads);
    }
}

void utc__shared_wait_init(utc__shared_wait_t *w, utc__transport_t *tp, int member, int tag)
{
    *w = (utc__shared_wait_t){.base = {.describe = shared_wait_describe}, .tp = tp,
                              .member = member, .tag = tag};
}
