/*
 * The node engine: one per process, the FIFOs between this rank and the other ranks of its
 * host, shared by every node-local conduit between them (node_transport.c dispatches what
 * comes out of them).
 *
 * A FIFO (writer W -> reader R) is a ring of records in POSIX shared memory. W creates its
 * first segment (a control page, node_ctl_t, then a 64 KiB ring) at set-up; R maps it.
 * A record is a header (node_rec_t) and its payload, on whole cache lines, contiguous in
 * the ring (a PAD record fills the end when the next one does not fit). W publishes a
 * record by writing its header word `seq` = its absolute position + 1 last (release); R
 * takes the record at its head when that word reads head + 1 (acquire), and hands the
 * room back by storing its head in the control page (release), which W reads only when
 * its ring looks full. Before publishing, W clears the header word of the line after the
 * record, so a word left by an earlier lap (or by payload bytes there) never reads as
 * ready; so W keeps one line of room spare.
 *
 * Growth: when a record does not fit and the ring may grow, W creates a ring four times
 * as large (up to RING_MAX) as a segment of its own, writes a SWITCH record (its size and
 * generation) as the old ring's last record and goes on at the start of the new ring. R
 * takes the old ring's records first (the order holds), then maps the new one and drops
 * the old. W unmaps its old ring, and removes the new segment's name, once R's head has
 * passed the switch (R has mapped it). Names carry a job key (rank 0's choice at set-up),
 * the two ranks and the generation: /utc-node-KEY-W-R-GEN. A name left behind (R never
 * mapped a ring) is removed at utc_finalize, once every rank is in it (so no reader still
 * reads).
 *
 * Waking: each process sleeps, for one peer, on the bell in the peer's control page of
 * the FIFO towards it (ctl(peer -> me).bell), counting itself in `sleepers`. The peer
 * bumps that bell after it publishes a record, frees room in the other FIFO or finishes a
 * CMA copy, and this process's own threads bump it when one completes another's
 * operation; all only when someone sleeps. The pair is a Dekker pair across processes:
 * the wakers' side is utc__fence_global_light (a compiler barrier in a process registered
 * for global membarrier), the sleepers' side utc__fence_global_heavy. Sleeps last at most
 * SLICE_S; between them a waiter asks whether the peer's process still lives (kill(pid, 0)
 * and /proc/PID/stat, every 50 ms at most), so a killed peer ends its waits.
 *
 * Cross-memory attach (process_vm_readv) is probed once at set-up: every reader reads a
 * word from every writer of its host; the answer is agreed over the world (any failure,
 * or UTC_NODE_CMA=0 on any rank, turns it off everywhere).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "node/node_engine.h"

#define NODE_MAGIC 0x4e4f4445u /* "NODE" */
#define CTL_BYTES (((sizeof(node_ctl_t) + 4095) / 4096) * 4096)
#define RING0 ((size_t)64 << 10)
/* The largest ring: 1 MiB, what a pipelined large message needs (node_transport.c's
 * PIPE_RING). More only held bursts of small unread messages, and a ring never shrinks:
 * 4-8 MiB a pair kept for the run after one burst (a soak's resident memory grew 16%). */
#define RING_MAX ((size_t)1 << 20)
/* Longest sleep between looks at the peer's life. */
#define SLICE_S 0.1

static struct {
    pthread_mutex_t lock;
    int state;             /* 0: not set up; 1: on; -1: off (rc says why) */
    utc_status_t rc;
    bool cma;              /* the kernel lets every reader read every writer */
    bool cma_use;          /* ... and large messages go that way (UTC_NODE_CMA) */
    uint64_t key;
    int nranks;
    node_pair_t **by_rank; /* world rank -> pair (NULL: not on this host, or this rank) */
    node_pair_t *pairs;
    int npairs;
} eng = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void seg_name(char *buf, size_t n, int writer, int reader, unsigned gen)
{
    snprintf(buf, n, "/utc-node-%016llx-%d-%d-%u", (unsigned long long)eng.key, writer, reader,
             gen);
}

/* Create (writer) a segment of `bytes`, mapped; NULL with errno on failure. */
static void *seg_create(int reader, unsigned gen, size_t bytes)
{
    char name[96];
    seg_name(name, sizeof name, utc_rank(), reader, gen);
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0)
        return NULL;
    void *m = MAP_FAILED;
    if (ftruncate(fd, (off_t)bytes) == 0)
        m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = errno;
    close(fd);
    if (m == MAP_FAILED) {
        shm_unlink(name);
        errno = err;
        return NULL;
    }
    return m;
}

/* Map (reader) the writer's segment `gen`, of `bytes` (0: its whole size, in *got). */
static void *seg_open(int writer, unsigned gen, size_t bytes, size_t *got)
{
    char name[96];
    seg_name(name, sizeof name, writer, utc_rank(), gen);
    int fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0)
        return NULL;
    struct stat st;
    void *m = MAP_FAILED;
    if (!bytes && fstat(fd, &st) == 0)
        bytes = (size_t)st.st_size;
    if (bytes)
        m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = errno;
    close(fd);
    if (m == MAP_FAILED) {
        errno = err;
        return NULL;
    }
    if (got)
        *got = bytes;
    return m;
}

static void seg_unlink(int writer, int reader, unsigned gen)
{
    char name[96];
    seg_name(name, sizeof name, writer, reader, gen);
    shm_unlink(name);
}

/* Agree over the world: the minimum of `v`. */
static int agree_min(int v)
{
    int out = v;
    if (MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_MIN, utc__world_comm()) != MPI_SUCCESS)
        return 0;
    return out;
}

static bool cma_probe(const node_pair_t *p)
{
    uint64_t got = 0;
    struct iovec l = {&got, sizeof got};
    struct iovec r = {(void *)(uintptr_t)p->ictl->probe_addr, sizeof got};
    return process_vm_readv(p->peer_pid, &l, 1, &r, 1, 0) == (ssize_t)sizeof got &&
           got == p->ictl->probe_word;
}

static void pairs_free(void)
{
    for (int i = 0; i < eng.npairs; i++) {
        node_pair_t *p = &eng.pairs[i];
        /* Each piece once: the first ring (the pages after a control page) may be
         * unmapped already (retire_old, follow_switch), and its addresses reused by another
         * mapping since, which unmapping the whole first segment would take away. */
        if (p->octl) {
            munmap(p->oring, p->ocap); /* the rings still mapped, the first among them */
            for (int k = 0; k < p->nold; k++)
                munmap(p->old[k].ring, p->old[k].bytes);
            munmap(p->octl, CTL_BYTES);
        }
        for (unsigned g = p->unlinked_gen + 1; g <= p->ogen; g++)
            seg_unlink(utc_rank(), p->peer, g);
        if (p->ictl) {
            unsigned char *first = (unsigned char *)p->ictl + CTL_BYTES;
            if (p->iring == first) {
                munmap(p->ictl, p->ictl_bytes);
            } else { /* the first ring went at the switch from it */
                munmap(p->iring, p->icap);
                munmap(p->ictl, CTL_BYTES);
                size_t tail = CTL_BYTES + (size_t)p->ictl0_ring;
                if (p->ictl_bytes > tail)
                    munmap((unsigned char *)p->ictl + tail, p->ictl_bytes - tail);
            }
        }
    }
    free(eng.pairs);
    free(eng.by_rank);
    eng.pairs = NULL;
    eng.by_rank = NULL;
    eng.npairs = 0;
}

static utc_status_t setup_locked(void)
{
    int me = utc_rank(), n = utc_nranks();
    uint64_t key = 0;
    if (me == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        key = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20);
    }
    if (MPI_Bcast(&key, 1, MPI_UINT64_T, 0, utc__world_comm()) != MPI_SUCCESS)
        return utc__error(UTC_ERR_MPI, "node transport set-up: MPI_Bcast failed");
    eng.key = key;
    eng.nranks = n;
    eng.by_rank = calloc((size_t)n, sizeof *eng.by_rank);
    int npeers = 0;
    for (int r = 0; r < n; r++)
        npeers += r != me && utc__same_host(r, me);
    eng.pairs = calloc((size_t)(npeers ? npeers : 1), sizeof *eng.pairs);
    int ok = eng.by_rank && eng.pairs;
    const char *why = ok ? NULL : "out of memory";
    int err = 0;
    /* 1. every writer creates its first segment towards each peer of its host */
    for (int r = 0; r < n && ok; r++) {
        if (r == me || !utc__same_host(r, me))
            continue;
        node_pair_t *p = &eng.pairs[eng.npairs++];
        eng.by_rank[r] = p;
        p->peer = r;
        p->tx_lock = (utc__olock_t)UTC__OLOCK_INIT;
        p->rx_lock = (utc__olock_t)UTC__OLOCK_INIT;
        atomic_init(&p->dead, false);
        atomic_init(&p->txq_waiting, false);
        p->obytes_seg0 = CTL_BYTES + RING0;
        if (!(p->octl = seg_create(r, 0, p->obytes_seg0))) {
            ok = 0;
            err = errno;
            why = "shm_open/ftruncate/mmap of a segment";
            break;
        }
        p->octl->magic = NODE_MAGIC;
        p->octl->writer = me;
        p->octl->writer_pid = (int32_t)getpid();
        p->octl->ring0 = (int32_t)RING0;
        p->octl->probe_word = key ^ 0x5a5a5a5a5a5a5a5aull ^ (uint64_t)r;
        p->octl->probe_addr = (uint64_t)(uintptr_t)&p->octl->probe_word;
        p->oring = (unsigned char *)p->octl + CTL_BYTES;
        p->ocap = RING0;
    }
    ok = agree_min(ok);
    /* 2. every reader maps its peers' segments towards it and probes CMA */
    int cma = 1;
    const char *env = getenv("UTC_NODE_CMA");
    if (env && !strcmp(env, "0"))
        cma = 0;
    /* auto: one copy by the reader alone only where ranks outnumber the host's CPUs (a
     * writer off its core stalls a pipeline); else the pipeline, where writer and reader
     * copy at once, is the faster (doc/PERFORMANCE.md: 1.5-1.8x at 4-64 MiB) */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    bool use = (env && !strcmp(env, "1")) || (ncpu > 0 && eng.npairs + 1 > ncpu);
    for (int i = 0; i < eng.npairs && ok; i++) {
        node_pair_t *p = &eng.pairs[i];
        if (!(p->ictl = seg_open(p->peer, 0, 0, &p->ictl_bytes)) ||
            p->ictl_bytes < CTL_BYTES + RING0 || p->ictl->magic != NODE_MAGIC) {
            ok = 0;
            err = errno;
            why = "mapping a peer's segment";
            break;
        }
        p->peer_pid = (pid_t)p->ictl->writer_pid;
        p->iring = (unsigned char *)p->ictl + CTL_BYTES;
        p->icap = p->ictl0_ring = (size_t)p->ictl->ring0;
        if (cma && !cma_probe(p))
            cma = 0;
    }
    ok = agree_min(ok);
    eng.cma = agree_min(cma) != 0;
    eng.cma_use = eng.cma && use;
    /* every reader has mapped its segments (or set-up failed): the names go */
    for (int i = 0; i < eng.npairs; i++)
        if (eng.pairs[i].octl)
            seg_unlink(me, eng.pairs[i].peer, 0);
    if (!ok) {
        pairs_free();
        if (why)
            return utc__error(UTC_ERR_UNSUPPORTED, "node transport set-up on rank %d: %s "
                              "failed (%s); conduits between ranks use MPI", me, why,
                              err ? strerror(err) : "no details");
        return utc__error(UTC_ERR_UNSUPPORTED, "node transport set-up failed on another rank; "
                          "conduits between ranks use MPI");
    }
    utc__fence_global_init();
    utc_log(UTC_LOG_DEBUG, "node transport: %d peer(s) on this host, cross-memory attach %s%s",
            eng.npairs, eng.cma ? "possible" : "refused or off",
            eng.cma_use ? ", used for large messages" : "; large messages pipelined");
    return UTC_OK;
}

utc_status_t utc__node_engine_setup(void)
{
    pthread_mutex_lock(&eng.lock);
    if (eng.state == 0) {
        eng.rc = setup_locked();
        eng.state = eng.rc == UTC_OK ? 1 : -1;
        if (eng.state == 1) { /* utc__node_pair's view */
            utc__node_nranks = eng.nranks;
            utc__node_by_rank = eng.by_rank;
        }
        if (eng.rc != UTC_OK)
            utc_log(UTC_LOG_WARN, "%s", utc_last_error());
    }
    utc_status_t rc = eng.rc;
    pthread_mutex_unlock(&eng.lock);
    return rc;
}

void utc__node_engine_finalize(void)
{
    /* A writer's grown ring keeps its name until its reader maps it, and a reader still
     * reading (its rank not yet here) would find the name gone and lose what the ring
     * holds. Every rank comes here from utc_finalize once its tasks are destroyed, and the
     * set-up was collective (the same state on every rank): wait for all of them. */
    if (eng.state == 1)
        MPI_Barrier(utc__world_comm());
    pthread_mutex_lock(&eng.lock);
    utc__node_by_rank = NULL;
    if (eng.state == 1)
        pairs_free();
    eng.state = 0;
    eng.rc = UTC_OK;
    pthread_mutex_unlock(&eng.lock);
}

node_pair_t **utc__node_by_rank;
int utc__node_nranks;

bool utc__node_cma_on(void) { return eng.cma_use; }

/* ---- liveness ---- */

/* Whether process `pid` is gone (or a zombie its parent has not reaped yet). */
static bool pid_gone(pid_t pid)
{
    if (kill(pid, 0) != 0)
        return errno == ESRCH;
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return errno == ENOENT;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = 0;
    const char *paren = strrchr(buf, ')');
    return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

bool utc__node_alive(node_pair_t *p)
{
    if (atomic_load(&p->dead))
        return false;
    double now = utc_wtime();
    /* relaxed: a hint; two threads may both look */
    if (now < atomic_load_explicit(&p->next_alive, memory_order_relaxed))
        return true;
    atomic_store_explicit(&p->next_alive, now + 0.05, memory_order_relaxed);
    if (!pid_gone(p->peer_pid))
        return true;
    if (!atomic_exchange(&p->dead, true))
        utc_log(UTC_LOG_WARN, "node transport: rank %d (pid %d) on this host is gone; "
                "operations with it end with UTC_ERR_PEER_FAILED", p->peer, (int)p->peer_pid);
    return false;
}

/* ---- waking ---- */

static void bell_ring(node_ctl_t *c)
{
    /* the light side of the Dekker pair with utc__node_sleep's heavy fence: what the
     * caller wrote before comes before the look at sleepers */
    utc__fence_global_light();
    /* relaxed: ordered by the fences */
    if (atomic_load_explicit(&c->sleepers, memory_order_relaxed) == 0)
        return;
    atomic_fetch_add(&c->bell, 1); /* seq_cst: a sleeper's futex check sees it */
    utc__futex_wake_shared(&c->bell, INT_MAX);
}

void utc__node_wake_local(node_pair_t *p) { bell_ring(p->ictl); }

void utc__node_wake_peer(node_pair_t *p) { bell_ring(p->octl); }

void utc__node_sleep(node_pair_t *p, unsigned seen, double deadline, bool (*ready)(void *),
                     void *arg)
{
    node_ctl_t *c = p->ictl;
    atomic_fetch_add(&c->sleepers, 1);
    /* the heavy side: our count before the look below, and every waker's change before
     * its look at the count */
    utc__fence_global_heavy();
    if (!ready || !ready(arg)) {
        double slice = SLICE_S;
        if (deadline >= 0) {
            double left = deadline - utc_wtime();
            slice = left < slice ? left : slice;
        }
        if (slice > 0)
            utc__futex_wait_shared(&c->bell, seen, slice);
    }
    atomic_fetch_sub(&c->sleepers, 1);
}

/* ---- writing ---- */

static inline node_rec_t *rec_at(unsigned char *ring, size_t cap, uint64_t base, uint64_t pos)
{
    return (node_rec_t *)(ring + ((pos - base) & (cap - 1)));
}

/* Room in p's ring, with the reader's head as last read (`reload`: read it again). */
static size_t room_of(node_pair_t *p, bool reload)
{
    if (reload) /* acquire: pairs with the reader's release of its head */
        p->ohead_seen = atomic_load_explicit(&p->octl->head, memory_order_acquire);
    uint64_t from = p->ohead_seen > p->obase ? p->ohead_seen : p->obase;
    return p->ocap - (size_t)(p->tail - from);
}

/* The reader has passed switches: the rings they left go, and the names of the rings they
 * led to (the reader has mapped those). */
static void retire_old(node_pair_t *p)
{
    if (!p->nold)
        return;
    room_of(p, true);
    int n = 0;
    while (n < p->nold && p->ohead_seen >= p->old[n].until) {
        /* the first ring is the pages after the control page: unmapped alone all the same */
        munmap(p->old[n].ring, p->old[n].bytes);
        seg_unlink(utc_rank(), p->peer, ++p->unlinked_gen);
        n++;
    }
    if (n) {
        memmove(p->old, p->old + n, sizeof p->old[0] * (size_t)(p->nold - n));
        p->nold -= n;
    }
}

static void clear_next(node_pair_t *p, uint64_t pos)
{
    node_rec_t *n = rec_at(p->oring, p->ocap, p->obase, pos);
    /* relaxed: published by the release of the record before it */
    atomic_store_explicit(&n->seq, 0, memory_order_relaxed);
}

void utc__node_publish(node_pair_t *p, node_rec_t *r, size_t len, int kind)
{
    r->len = (uint32_t)len;
    r->kind = (uint8_t)kind;
    clear_next(p, p->tail + len);
    /* release: the record's contents (and the cleared word after it) before its seq */
    atomic_store_explicit(&r->seq, p->tail + 1, memory_order_release);
    p->tail += len;
    bell_ring(p->octl);
}

/* Move to a ring four times as large. False if it cannot now. */
static bool grow(node_pair_t *p)
{
    if (p->nold == (int)(sizeof p->old / sizeof p->old[0]) || p->ocap >= RING_MAX ||
        room_of(p, true) < NODE_ALIGN)
        return false;
    size_t ncap = p->ocap * 4 > RING_MAX ? RING_MAX : p->ocap * 4;
    unsigned gen = p->ogen + 1;
    unsigned char *ring = seg_create(p->peer, gen, ncap);
    if (!ring) {
        static atomic_bool told;
        if (!atomic_exchange(&told, true))
            utc_log(UTC_LOG_WARN, "node transport: a %zu-byte ring towards rank %d could not "
                    "be made (%s); the ring stays at %zu bytes", ncap, p->peer,
                    strerror(errno), p->ocap);
        return false;
    }
    node_rec_t *r = rec_at(p->oring, p->ocap, p->obase, p->tail);
    r->nbytes = 2 * sizeof(uint64_t);
    uint64_t *pl = (uint64_t *)node_rec_data(r);
    pl[0] = ncap;
    pl[1] = gen;
    /* no next line to clear: the reader leaves this ring after the switch */
    /* release: as in utc__node_publish */
    r->len = NODE_ALIGN;
    r->kind = NODE_REC_SWITCH;
    atomic_store_explicit(&r->seq, p->tail + 1, memory_order_release);
    p->tail += NODE_ALIGN;
    p->old[p->nold].ring = p->oring;
    p->old[p->nold].bytes = p->ocap;
    p->old[p->nold].until = p->tail;
    p->nold++;
    p->oring = ring;
    p->ocap = ncap;
    p->obase = p->tail;
    p->ogen = gen;
    bell_ring(p->octl);
    return true;
}

node_rec_t *utc__node_claim(node_pair_t *p, size_t len, bool may_grow)
{
    retire_old(p);
    for (int tries = 0; tries < 3; tries++) {
        size_t off = (size_t)(p->tail - p->obase) & (p->ocap - 1);
        size_t pad = off + len > p->ocap ? p->ocap - off : 0;
        /* the record, its pad, the next line (cleared) and a line kept for a switch */
        size_t need = pad + len + 2 * NODE_ALIGN;
        if (len + 2 * NODE_ALIGN <= p->ocap &&
            (room_of(p, false) >= need || room_of(p, true) >= need)) {
            if (pad) {
                node_rec_t *r = rec_at(p->oring, p->ocap, p->obase, p->tail);
                r->nbytes = 0;
                utc__node_publish(p, r, pad, NODE_REC_PAD);
            }
            node_rec_t *r = rec_at(p->oring, p->ocap, p->obase, p->tail);
            r->flags = 0;
            return r;
        }
        if (!may_grow || !grow(p))
            return NULL;
    }
    return NULL;
}

size_t utc__node_room(node_pair_t *p)
{
    retire_old(p);
    size_t room = room_of(p, true);
    if (room <= 2 * NODE_ALIGN)
        return 0;
    room -= 2 * NODE_ALIGN; /* the next line, and a line kept for a switch */
    size_t contig = p->ocap - ((size_t)(p->tail - p->obase) & (p->ocap - 1));
    /* a record fits before the ring's end, or pads to its start and fits after */
    size_t best = contig < room ? contig : room;
    if (room > contig && room - contig > best)
        best = room - contig;
    return best > NODE_REC_HDR ? (best - NODE_REC_HDR) & ~(size_t)(NODE_ALIGN - 1) : 0;
}

/* ---- reading ---- */

/* The record that ends a pipelined message early: its writer stopped (its conduit was
 * destroyed there). */
static void assembly_cut(node_pair_t *p)
{
    if (p->as.on) {
        utc__node_assembled(p);
        p->as.on = false;
    }
}

/* Under rx_lock: follow the writer to its next ring. False: it could not be mapped. */
static bool follow_switch(node_pair_t *p, node_rec_t *r)
{
    const uint64_t *pl = (const uint64_t *)node_rec_data(r);
    size_t ncap = (size_t)pl[0];
    unsigned gen = (unsigned)pl[1];
    uint64_t base = p->head + r->len; /* r is in the ring unmapped below */
    unsigned char *ring = seg_open(p->peer, gen, ncap, NULL);
    if (!ring) {
        utc_log(UTC_LOG_ERROR, "node transport: the %zu-byte ring from rank %d could not be "
                "mapped (%s): messages from it are lost", ncap, p->peer, strerror(errno));
        return false;
    }
    seg_unlink(p->peer, utc_rank(), gen); /* mapped: the name may go */
    munmap(p->iring, p->icap); /* the first ring: the pages after the control page */
    p->iring = ring;
    p->icap = ncap;
    p->ibase = base;
    return true;
}

bool utc__node_drain(node_pair_t *p) { return utc__node_drain_until(p, NULL); }

void utc__node_drain_all(void)
{
    for (int i = 0; i < eng.npairs; i++)
        (void)utc__node_drain(&eng.pairs[i]);
}

bool utc__node_drain_until(node_pair_t *p, utc_request_t *until)
{
    if (!utc__olock_trylock(&p->rx_lock, true))
        return false; /* another thread drains: it dispatches ours too */
    bool any = false;
    for (;;) {
        node_rec_t *r = rec_at(p->iring, p->icap, p->ibase, p->head);
        /* acquire: pairs with the writer's release in utc__node_publish */
        if (atomic_load_explicit(&r->seq, memory_order_acquire) != p->head + 1)
            break;
        any = true;
        uint32_t len = r->len;
        switch (r->kind) {
        case NODE_REC_PAD:
            break;
        case NODE_REC_SWITCH:
            if (!follow_switch(p, r)) {
                atomic_store(&p->dead, true); /* nothing more can come from it */
                goto out;
            }
            break;
        case NODE_REC_CHUNK:
            if (p->as.on) {
                size_t n = r->nbytes;
                if (n > p->as.size - p->as.got)
                    n = p->as.size - p->as.got;
                if (p->as.dst && n)
                    memcpy((unsigned char *)p->as.dst + p->as.got, node_rec_data(r), n);
                p->as.got += n;
                if (p->as.got >= p->as.size) {
                    utc__node_assembled(p);
                    p->as.on = false;
                }
            }
            break;
        default:
            assembly_cut(p);
            utc__node_dispatch(p, r);
            if (p->as.on && p->as.got >= p->as.size) { /* a FIRST that held it all */
                utc__node_assembled(p);
                p->as.on = false;
            }
            break;
        }
        p->head += len;
        /* release: our reads of the record before the writer's reuse of its room */
        atomic_store_explicit(&p->ictl->head, p->head, memory_order_release);
        /* the waiter's request is done: the look at the next record's line waits for the
         * next drain. That line is where the writer just cleared the next header word
         * (utc__node_publish), so the look is a miss on the peer's cache, between the
         * message's arrival and the waiter's return. */
        if (until && utc__req_state(until) == UTC__REQ_DONE)
            break;
    }
out:
    utc__olock_unlock(&p->rx_lock);
    if (any)
        bell_ring(p->octl); /* the peer may wait for room */
    return any;
}
