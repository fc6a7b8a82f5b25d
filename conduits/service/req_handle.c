/* Request handles with generations (service/req_handle.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "base/handle.h"
#include "base/sync.h"
#include "service/req_handle.h"

#define CELL_MAGIC 0x52514843u /* "CHQR" */

typedef struct cell {
    uint32_t magic;        /* CELL_MAGIC: tells a cell from any other memory */
    _Atomic uint32_t word; /* generation << 1 | busy; the generation is 16 bits */
    /* an owned cell's owner (utc__olock_self() of its maker), else NULL; and the owner's
     * claim, made without a locked instruction (see utc__req_handle_claim) */
    _Atomic(const void *) owner;
    atomic_uint obusy;
    utc_request_t *req;    /* the live request (&utc__req_done: completed at start) */
    size_t done_size;      /* a completed-at-start write's size */
    struct cell *next;     /* on a free list */
} cell_t;

#define SLAB 256    /* cells per allocation */
#define LOCAL_MAX 64 /* cells a thread keeps for itself */

/* Every slab, for the record (never freed: an old handle may still be read); the shared
 * free list. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cell_t *shared_free;
static void **slabs;
static size_t nslabs, slabs_cap;

/* A thread's own free cells: the common case (a request made and waited for by one
 * thread) takes no lock. */
static _Thread_local cell_t *local_free;
static _Thread_local int local_n;

static inline uint32_t word_of(uint16_t gen, bool busy) { return (uint32_t)gen << 1 | busy; }
static inline uint16_t gen_of(uint32_t word) { return (uint16_t)(word >> 1); }

/* Under the lock: a new slab onto the shared list. False when out of memory (or when the
 * system hands out addresses a generation cannot be put on). */
static bool grow(void)
{
    if (nslabs == slabs_cap) {
        size_t cap = slabs_cap ? 2 * slabs_cap : 16;
        void **s = realloc(slabs, cap * sizeof *s);
        if (!s)
            return false;
        slabs = s;
        slabs_cap = cap;
    }
    cell_t *c = calloc(SLAB, sizeof *c);
    if (!c)
        return false;
    if (!utc__handle_taggable(c + SLAB)) {
        free(c);
        return false;
    }
    slabs[nslabs++] = c;
    for (int i = 0; i < SLAB; i++) {
        c[i].magic = CELL_MAGIC;
        c[i].next = shared_free;
        shared_free = &c[i];
    }
    return true;
}

static cell_t *cell_get(void)
{
    cell_t *c = local_free;
    if (c) {
        local_free = c->next;
        local_n--;
        return c;
    }
    pthread_mutex_lock(&lock);
    if (!shared_free && !grow()) {
        pthread_mutex_unlock(&lock);
        return NULL;
    }
    c = shared_free;
    shared_free = c->next;
    pthread_mutex_unlock(&lock);
    return c;
}

static void cell_put(cell_t *c)
{
    if (local_n < LOCAL_MAX) {
        c->next = local_free;
        local_free = c;
        local_n++;
        return;
    }
    pthread_mutex_lock(&lock);
    c->next = shared_free;
    shared_free = c;
    pthread_mutex_unlock(&lock);
}

/* A handle for req in a fresh cell owned by `owner` (NULL: none). */
static utc_request_t *handle_new(utc_request_t *req, const void *owner)
{
    cell_t *c = cell_get();
    if (!c)
        return NULL;
    c->req = req;
    /* relaxed: as the generation below */
    atomic_store_explicit(&c->owner, owner, memory_order_relaxed);
    /* relaxed: the handle reaches other threads only through the caller's own
     * synchronization, which orders this store before it */
    uint16_t gen = gen_of(atomic_load_explicit(&c->word, memory_order_relaxed));
    return utc__handle_make(c, gen);
}

utc_request_t *utc__req_handle_new(utc_request_t *req)
{
    return handle_new(req, NULL);
}

utc_request_t *utc__req_handle_new_owned(utc_request_t *req)
{
    return handle_new(req, utc__olock_self());
}

utc_request_t utc__req_done = {.magic = UTC__REQ_MAGIC, .op = UTC__OP_SEND, .heap = true,
                               .state = UTC__REQ_DONE};

utc_request_t *utc__req_handle_new_done(size_t size)
{
    utc_request_t *h = utc__req_handle_new_owned(&utc__req_done);
    if (h)
        ((cell_t *)utc__handle_ptr(h))->done_size = size;
    return h;
}

size_t utc__req_handle_done_size(utc_request_t *h)
{
    return ((cell_t *)utc__handle_ptr(h))->done_size;
}

/* True when the calling thread holds cell c by the owner's claim. */
static inline bool owner_holds(cell_t *c)
{
    /* relaxed: only the owner stores obusy = 1, so a 1 here is this thread's own claim */
    return atomic_load_explicit(&c->obusy, memory_order_relaxed) &&
           atomic_load_explicit(&c->owner, memory_order_relaxed) == utc__olock_self();
}

/*
 * An owned cell's owner claims it with plain stores: it stores obusy and, after a light
 * fence, looks at the word; any other thread claims it with the compare-and-swap and,
 * after a heavy fence, looks at obusy (an asymmetric Dekker pair, base/sync.h): one of
 * them sees the other, and the one that sees the other's claim backs off (UTC__CLAIM_BUSY;
 * both may, as two threads racing for one request may both be told it is busy). The
 * owner's retire moves the word on before it clears obusy, so another thread whose claim
 * overlapped it finds the word moved on (stale).
 */
utc_request_t *utc__req_handle_claim(utc_request_t *h, utc__claim_t *why)
{
    cell_t *c = utc__handle_ptr(h);
    if (c->magic != CELL_MAGIC) {
        *why = UTC__CLAIM_NOT_HANDLE;
        return NULL;
    }
    uint16_t gen = utc__handle_gen(h);
    uint32_t expect = word_of(gen, false);
    /* relaxed: set when the cell was made, before the handle reached this thread */
    const void *owner = atomic_load_explicit(&c->owner, memory_order_relaxed);
    if (owner && owner == utc__olock_self()) {
        atomic_store_explicit(&c->obusy, 1, memory_order_relaxed);
        utc__fence_light(); /* the light side: obusy before the look at the word */
        /* acquire: what the previous claimant wrote is seen */
        uint32_t w = atomic_load_explicit(&c->word, memory_order_acquire);
        if (w == expect)
            return c->req;
        atomic_store_explicit(&c->obusy, 0, memory_order_release);
        *why = gen_of(w) == gen ? UTC__CLAIM_BUSY : UTC__CLAIM_STALE;
        return NULL;
    }
    /* acquire: what the previous claimant wrote (the request's progress) is seen */
    if (!atomic_compare_exchange_strong_explicit(&c->word, &expect, word_of(gen, true),
                                                 memory_order_acquire, memory_order_relaxed)) {
        *why = gen_of(expect) == gen ? UTC__CLAIM_BUSY : UTC__CLAIM_STALE;
        return NULL;
    }
    if (owner) { /* the owner claims without the exchange: the heavy side of the pair */
        utc__fence_heavy();
        /* acquire: pairs with the owner's release of obusy after its retire */
        if (atomic_load_explicit(&c->obusy, memory_order_acquire)) {
            expect = word_of(gen, true);
            atomic_compare_exchange_strong(&c->word, &expect, word_of(gen, false));
            *why = UTC__CLAIM_BUSY;
            return NULL;
        }
        if (atomic_load_explicit(&c->word, memory_order_acquire) != word_of(gen, true)) {
            *why = UTC__CLAIM_STALE; /* the owner completed it meanwhile */
            return NULL;
        }
    }
    return c->req;
}

void utc__req_handle_unclaim(utc_request_t *h)
{
    cell_t *c = utc__handle_ptr(h);
    if (owner_holds(c)) { /* release: pairs with the next claim's acquire */
        atomic_store_explicit(&c->obusy, 0, memory_order_release);
        return;
    }
    /* release: pairs with the next claim's acquire */
    atomic_store_explicit(&c->word, word_of(utc__handle_gen(h), false), memory_order_release);
}

void utc__req_handle_retire(utc_request_t *h)
{
    cell_t *c = utc__handle_ptr(h);
    bool mine = owner_holds(c);
    c->req = NULL;
    atomic_store_explicit(&c->word, word_of((uint16_t)(utc__handle_gen(h) + 1), false),
                          memory_order_release);
    if (mine) /* release: after the word (see utc__req_handle_claim) */
        atomic_store_explicit(&c->obusy, 0, memory_order_release);
    cell_put(c);
}
