/*
 * The shared conduit's transport: a set of writer tasks joined to a set of reader tasks
 * (utc_conduit_create_shared), built from one inner transport per (writer, reader) pair:
 * in-process rings when the two entry ranks are one, MPI otherwise. conduit.c drives it
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
 * - share: a read first asks each writer it has no ask of this tag pending with (an empty
 *   message of the tag in direction 1), then reads as in publish mode. A write waits for
 *   an ask of its tag from any reader, taking them in turn, and sends its message to that
 *   reader. So every message goes to exactly one reader, one that asked, and a reader is
 *   ahead by at most one message per writer: a slow one takes fewer.
 * - close: the writer's end of stream on each of its pairs; a read ends with
 *   UTC_ERR_CLOSED once every pair has ended its stream and nothing is left.
 *
 * With one pair to look at (one writer for a reader; one reader for a share-mode writer)
 * the operation goes straight to that pair's transport, and waits as it does. With
 * several, a waiting read polls the pairs with the conduits' back-off (service/wait.h):
 * the transports have no wait over several of them.
 */
#include <pthread.h>
#include <stdatomic.h>
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

/* A reader's asks of one tag (share mode): which writers have one pending. */
typedef struct ask_line {
    int tag;
    UT_hash_handle hh;
    unsigned char pending[]; /* per writer */
} ask_line_t;

/* What a member's threads on its entry rank share. */
typedef struct member {
    pthread_mutex_t lock; /* its choices of a pair, and its asks */
    unsigned next;        /* where its next choice starts looking */
    ask_line_t *asks;     /* a reader in share mode */
} member_t;

typedef struct shared_tp {
    utc__transport_t base;
    utc_shared_mode_t mode;
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
    utc_request_t inner[];  /* PH_SENDS: nr; else 1 */
} sub_t;

static shared_tp_t *st_of(utc__transport_t *tp) { return (shared_tp_t *)tp; }

static pair_t *pair_at(shared_tp_t *t, int w, int r) { return &t->pairs[w * t->nr + r]; }

static bool is_writer(const shared_tp_t *t, int member) { return member < t->nw; }

/* Finish the outer request: drop its state. */
static void finish(utc_request_t *req, utc_status_t status)
{
    free(req->sub);
    req->sub = NULL;
    utc__req_finish(req, status);
}

/* Why operations end now without a transfer: the shutdown or a member's failure; 0. */
static utc_status_t stopped(shared_tp_t *t)
{
    int d = atomic_load(&t->down);
    if (d)
        return (utc_status_t)d;
    if (atomic_load_explicit(&t->base.failed, memory_order_relaxed))
        return (utc_status_t)atomic_load(&t->base.fail_why);
    return UTC_OK;
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
    if (!(a = calloc(1, sizeof *a + (size_t)t->nw)))
        return NULL;
    a->tag = tag;
    HASH_ADD_INT(rm->asks, tag, a);
    return a;
}

/* A read of `tag` by reader r: ask each writer that has no ask of it pending and whose
 * stream has not ended. The asks are tiny messages, sent before the read looks. */
static utc_status_t send_asks(shared_tp_t *t, int r, int tag)
{
    member_t *rm = &t->m[t->nw + r];
    utc_status_t rc = UTC_OK;
    pthread_mutex_lock(&rm->lock);
    ask_line_t *a = ask_line(t, rm, tag);
    if (!a)
        rc = utc__error(UTC_ERR_NO_MEMORY, "shared conduit %d: out of memory for an ask",
                        t->base.conduit_id);
    for (int w = 0; a && w < t->nw && rc == UTC_OK; w++) {
        pair_t *p = pair_at(t, w, r);
        if (a->pending[w] || atomic_load(&p->ended))
            continue;
        utc_request_t q;
        inner_prepare(&q, p, UTC__OP_SEND, UTC__DIR_BACK, tag, false);
        if ((rc = p->tp->ops->start(p->tp, &q)) == UTC_OK) {
            (void)p->tp->ops->wait(p->tp, &q, -1); /* empty: in the ring, or MPI's eager */
            rc = q.status;
        }
        if (rc == UTC_OK)
            a->pending[w] = 1;
    }
    pthread_mutex_unlock(&rm->lock);
    return rc;
}

/* Reader r got a message of `tag` from writer w: that writer's ask is answered. */
static void ask_answered(shared_tp_t *t, int r, int w, int tag)
{
    member_t *rm = &t->m[t->nw + r];
    pthread_mutex_lock(&rm->lock);
    ask_line_t *a;
    HASH_FIND_INT(rm->asks, &tag, a);
    if (a)
        a->pending[w] = 0;
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
            rc = send_asks(t, r, req->tag);
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
    if (rc != UTC_OK) {
        req->sub = NULL;
        free(s);
        return rc;
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
            finish(req, q->status);
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
        req->mpi_err = q->mpi_err;
        if (q->status == UTC_OK || q->status == UTC_ERR_TRUNCATE) {
            req->tag = q->tag;
            req->peer = p->wrank;
        }
        if (q->status == UTC_OK && t->mode == UTC_SHARED_SHARE)
            ask_answered(t, req->member - t->nw, s->pair / t->nr, q->tag);
    } else {
        req->mpi_err = q->mpi_err;
    }
    finish(req, q->status);
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
                if (s->inner[i].mpi_err)
                    req->mpi_err = s->inner[i].mpi_err;
            }
            finish(req, first);
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
                finish(req, st);
                return true;
            }
            utc_status_t rc = choose(t, req);
            if (rc == UTC_OK)
                continue;
            if (rc == UTC_ERR_TIMEOUT)
                return false;
            finish(req, rc);
            return true;
        }
        }
    }
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
        utc__poll_step(&p);
    }
}

static bool shared_cancel(utc__transport_t *tp, utc_request_t *req)
{
    (void)tp;
    sub_t *s = req->sub;
    if (!s || req->op != UTC__OP_RECV)
        return false;
    if (s->phase == PH_INNER) {
        utc_request_t *q = &s->inner[0];
        if (!q->tp->ops->cancel(q->tp, q))
            return false; /* matched meanwhile: it completes */
    }
    free(s);
    req->sub = NULL;
    return true;
}

/* Publish mode (conduit.c refuses probes in share mode): the next message of the tag from
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

static void shared_shutdown(utc__transport_t *tp, utc_status_t status)
{
    shared_tp_t *t = st_of(tp);
    atomic_store(&t->down, (int)status);
    for (int i = 0; i < t->nw * t->nr; i++)
        if (t->pairs[i].tp)
            t->pairs[i].tp->ops->shutdown(t->pairs[i].tp, status);
}

/* A member failed here (its index is base.fail_end): every operation of the conduit ends,
 * on every pair this rank holds. */
static void shared_fail(utc__transport_t *tp, utc_status_t status)
{
    shared_tp_t *t = st_of(tp);
    int member = atomic_load(&tp->fail_end);
    int rank = atomic_load(&tp->fail_rank), rc = atomic_load(&tp->fail_rc);
    for (int i = 0; i < t->nw * t->nr; i++) {
        utc__transport_t *in = t->pairs[i].tp;
        if (in && utc__transport_mark_failed(in, is_writer(t, member) ? 0 : 1, rank, rc, status))
            in->ops->fail(in, status);
    }
}

/* Tell the other ranks of the pairs of `member` that it failed here. */
static void shared_notify_failed(utc__transport_t *tp, int member, utc_status_t rc)
{
    shared_tp_t *t = st_of(tp);
    bool writer = is_writer(t, member);
    for (int i = 0; i < t->nw * t->nr; i++) {
        int w = i / t->nr, r = i % t->nr;
        utc__transport_t *in = t->pairs[i].tp;
        if (in && in->ops->notify_failed &&
            (writer ? w == member : r == member - t->nw))
            in->ops->notify_failed(in, writer ? 0 : 1, rc);
    }
}

static void shared_destroy(utc__transport_t *tp)
{
    shared_tp_t *t = st_of(tp);
    for (int i = 0; i < t->nw * t->nr; i++)
        if (t->pairs[i].tp)
            t->pairs[i].tp->ops->destroy(t->pairs[i].tp);
    for (int i = 0; i < t->nw + t->nr; i++) {
        ask_line_t *a, *tmp;
        HASH_ITER(hh, t->m[i].asks, a, tmp) {
            HASH_DEL(t->m[i].asks, a);
            free(a);
        }
        pthread_mutex_destroy(&t->m[i].lock);
    }
    free(t->pairs);
    free(t->m);
    free(t);
}

static const utc__transport_ops_t shared_ops = {
    .name = "shared",
    .start = shared_start,
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
    t->base.kind = UTC_CONDUIT_MPI;
    t->mode = mode;
    t->nw = nwriters;
    t->nr = nreaders;
    for (int i = 0; i < nm; i++)
        pthread_mutex_init(&t->m[i].lock, NULL);
    /* every rank makes the pairs in the same order: the MPI ones are collective */
    utc_status_t rc = UTC_OK;
    bool all_here = true;
    for (int w = 0; w < nwriters; w++) {
        for (int r = 0; r < nreaders; r++) {
            pair_t *p = pair_at(t, w, r);
            p->wrank = entry[w];
            p->rrank = entry[nwriters + r];
            atomic_init(&p->ended, false);
            all_here &= p->wrank == p->rrank;
            utc_status_t prc = UTC_OK;
            if (p->wrank != p->rrank) {
                int members[2] = {p->wrank < p->rrank ? p->wrank : p->rrank,
                                  p->wrank < p->rrank ? p->rrank : p->wrank};
                prc = utc__mpi_transport_create(conduit_id, members, 2, &p->tp);
            } else if (me == p->wrank) {
                prc = utc__shm_transport_create(conduit_id, opts, &p->tp);
            }
            if (rc == UTC_OK)
                rc = prc; /* the collective creations go on, so every rank meets them */
        }
    }
    if (all_here)
        t->base.kind = UTC_CONDUIT_INPROC;
    if (rc != UTC_OK) {
        shared_destroy(&t->base);
        return rc;
    }
    *out = &t->base;
    return UTC_OK;
}
