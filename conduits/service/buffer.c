/* Owned buffers (utc_buf_alloc / utc_buf_free) and their registry (service/buffer.h). */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <utc/conduit.h>
#include <utc/context.h>

#include <uthash.h>

#include "service/buffer.h"

/*
 * Every buffer has a record in a registry (sharded by address), kept apart from the data:
 * utc__buf_* and utc_buf_free look a pointer up instead of reading memory in front of it,
 * so a foreign pointer is refused safely, and a record can outlive its data's access
 * rights (below).
 *
 * A record says whose the buffer is: the caller's (OWNED), handed over by
 * utc_conduit_write_owned and not yet read (HANDED), or freed (FREED). A handed-over
 * buffer written again, or a freed one freed or written again, is then told apart from a
 * live one, with what happened to it. That only holds while no new buffer has the old
 * address: so a freed buffer is not given back to the allocator at once but waits in a
 * quarantine (FIFO) of the last QUAR_MAX_COUNT frees and at most QUAR_MAX_BYTES of memory;
 * its record stays FREED meanwhile. Large buffers (LARGE_MIN, 32 MiB, and up, where holding
 * the memory would cost most) are mapped on their own: in quarantine their pages are given
 * back (MADV_DONTNEED) and made inaccessible (PROT_NONE), so they cost address space only
 * and the old owner's stray reads and writes fault at once instead of corrupting the next
 * user's data. Detection is best effort: once a buffer leaves the quarantine its address
 * may belong to a new buffer, whose owner's calls are then legitimately accepted.
 */
enum buf_state { BUF_OWNED, BUF_HANDED, BUF_FREED };

typedef struct buf_rec {
    void *key; /* the data pointer: the registry key */
    size_t size;
    enum buf_state state; /* under the shard's lock */
    bool was_handed;      /* handed over at least once (for the messages) */
    bool mapped;          /* large: mmap'd on its own, `map_len` bytes */
    bool pinned;          /* from the pinned allocator (utc_buf_alloc_pinned) */
    size_t map_len;
    struct buf_rec *qnext; /* quarantine FIFO link */
    UT_hash_handle hh;
} buf_rec_t;

#define BUF_ALIGN      64
/* From glibc's largest mmap threshold up: malloc maps and unmaps such blocks on every call
 * anyway, so a mapping of our own (and its page faults) costs nothing more; smaller ones
 * come from the heap, where blocks leaving the quarantine are reused without faults. */
#define LARGE_MIN      ((size_t)32 << 20)
#define QUAR_MAX_COUNT 1024
#define QUAR_MAX_BYTES ((size_t)64 << 20) /* resident bytes held by small buffers */

#define BUF_SHARDS 16
static struct {
    pthread_mutex_t lock;
    buf_rec_t *set;
} buf_reg[BUF_SHARDS] = {[0 ... BUF_SHARDS - 1] = {PTHREAD_MUTEX_INITIALIZER, NULL}};

/* Lock order: quarantine, then a shard. */
static struct {
    pthread_mutex_t lock;
    buf_rec_t *head, *tail;
    size_t count, bytes;
} quar = {PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0, 0};

static unsigned buf_shard(const void *p)
{
    return (unsigned)((((uintptr_t)p >> 6) * 0x9e3779b97f4a7c15ull) >> 60) % BUF_SHARDS;
}

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

/* The pinned (page-locked) host allocator of the gpu module, set by the runtime layer at
 * utc_init (utc__buf_set_pinned); NULL: none. */
static _Atomic(utc__buf_pinned_alloc_fn) pinned_alloc;
static _Atomic(utc__buf_pinned_free_fn) pinned_free;

void utc__buf_set_pinned(utc__buf_pinned_alloc_fn alloc, utc__buf_pinned_free_fn free_fn)
{
    /* release: set once at utc_init, before any task thread; free first, so a buffer from
     * the allocator always finds its free */
    atomic_store_explicit(&pinned_free, free_fn, memory_order_release);
    atomic_store_explicit(&pinned_alloc, alloc, memory_order_release);
}

/* Register the data p of record h (filled in) and return p. */
static void *buf_register(buf_rec_t *h, void *p)
{
    h->key = p;
    unsigned k = buf_shard(p);
    pthread_mutex_lock(&buf_reg[k].lock);
    HASH_ADD_PTR(buf_reg[k].set, key, h);
    pthread_mutex_unlock(&buf_reg[k].lock);
    return p;
}

void *utc_buf_alloc_pinned(size_t size)
{
    /* acquire: pairs with utc__buf_set_pinned */
    utc__buf_pinned_alloc_fn alloc = atomic_load_explicit(&pinned_alloc, memory_order_acquire);
    void *p = alloc ? alloc(size ? size : 1) : NULL;
    if (!p)
        return utc_buf_alloc(size); /* no GPU (or no pinned memory left): an ordinary one */
    buf_rec_t *h = malloc(sizeof *h);
    if (!h) {
        atomic_load_explicit(&pinned_free, memory_order_acquire)(p, size ? size : 1);
        return NULL;
    }
    *h = (buf_rec_t){.size = size, .pinned = true};
    return buf_register(h, p);
}

bool utc_buf_is_pinned(const void *buf)
{
    if (!buf)
        return false;
    unsigned k = buf_shard(buf);
    buf_rec_t *h;
    pthread_mutex_lock(&buf_reg[k].lock);
    HASH_FIND_PTR(buf_reg[k].set, &buf, h);
    bool pinned = h && h->state != BUF_FREED && h->pinned;
    pthread_mutex_unlock(&buf_reg[k].lock);
    return pinned;
}

void *utc_buf_alloc(size_t size)
{
    buf_rec_t *h = malloc(sizeof *h);
    if (!h)
        return NULL;
    *h = (buf_rec_t){.size = size};
    void *p = NULL;
    if (size >= LARGE_MIN) {
        size_t pg = page_size();
        if (size > SIZE_MAX - pg)
            goto fail;
        h->map_len = (size + pg - 1) / pg * pg;
        p = mmap(NULL, h->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            goto fail;
        h->mapped = true;
    } else if (posix_memalign(&p, BUF_ALIGN, size ? size : 1)) {
        goto fail;
    }
    return buf_register(h, p);
fail:
    free(h);
    return NULL;
}

/* Give a record's memory back for good and drop the record (it left the quarantine). */
static void buf_release(buf_rec_t *h)
{
    unsigned k = buf_shard(h->key);
    pthread_mutex_lock(&buf_reg[k].lock);
    HASH_DEL(buf_reg[k].set, h);
    pthread_mutex_unlock(&buf_reg[k].lock);
    if (h->pinned) /* acquire: pairs with utc__buf_set_pinned */
        atomic_load_explicit(&pinned_free, memory_order_acquire)(h->key, h->size ? h->size : 1);
    else if (h->mapped)
        munmap(h->key, h->map_len);
    else
        free(h->key);
    free(h);
}

/* Put a FREED record in the quarantine; release the oldest beyond the limits. */
static void buf_quarantine(buf_rec_t *h)
{
    if (h->mapped) {
        /* keep the address range, not the pages; the old owner's accesses fault */
        (void)madvise(h->key, h->map_len, MADV_DONTNEED);
        (void)mprotect(h->key, h->map_len, PROT_NONE);
    }
    buf_rec_t *out = NULL; /* released after the lock, in a list of their own */
    pthread_mutex_lock(&quar.lock);
    h->qnext = NULL;
    if (quar.tail)
        quar.tail->qnext = h;
    else
        quar.head = h;
    quar.tail = h;
    quar.count++;
    quar.bytes += h->mapped ? 0 : h->size;
    while (quar.head && (quar.count > QUAR_MAX_COUNT || quar.bytes > QUAR_MAX_BYTES)) {
        buf_rec_t *old = quar.head;
        quar.head = old->qnext;
        if (!quar.head)
            quar.tail = NULL;
        quar.count--;
        quar.bytes -= old->mapped ? 0 : old->size;
        old->qnext = out;
        out = old;
    }
    pthread_mutex_unlock(&quar.lock);
    while (out) {
        buf_rec_t *next = out->qnext;
        buf_release(out);
        out = next;
    }
}

/* What buf_move found. */
enum { BUF_NONE = -1, BUF_FREED_HANDED = BUF_FREED + 1 /* freed after a hand-over */ };

/* Look buf up and, under the shard's lock, move it to `to` when its state is one of
 * `from` (a bit mask); *rec is the record when it was moved to FREED. Returns what was
 * found (the state before, BUF_FREED_HANDED, or BUF_NONE), with *size. */
static int buf_move(const void *buf, unsigned from, enum buf_state to, bool hand,
                    buf_rec_t **rec, size_t *size)
{
    unsigned k = buf_shard(buf);
    buf_rec_t *h;
    int found = BUF_NONE;
    pthread_mutex_lock(&buf_reg[k].lock);
    HASH_FIND_PTR(buf_reg[k].set, &buf, h);
    if (h) {
        enum buf_state st = h->state;
        found = st == BUF_FREED && h->was_handed ? BUF_FREED_HANDED : (int)st;
        if (size)
            *size = h->size;
        if (from & (1u << st)) {
            h->state = to;
            h->was_handed |= hand;
            if (to == BUF_FREED)
                *rec = h;
        }
    }
    pthread_mutex_unlock(&buf_reg[k].lock);
    return found;
}

void utc_buf_free(void *buf)
{
    if (!buf)
        return;
    buf_rec_t *h = NULL;
    /* the reader of a handed-over buffer frees it while it may still read HANDED (its
     * utc__buf_received comes after the transport's hand-over): both states are its own */
    int was = buf_move(buf, 1u << BUF_OWNED | 1u << BUF_HANDED, BUF_FREED, false, &h, NULL);
    if (was == BUF_NONE) {
        utc_log(UTC_LOG_ERROR, "utc_buf_free: %p is not a buffer from utc_buf_alloc (or was "
                "freed long ago); ignored", buf);
        return;
    }
    if (was >= BUF_FREED) {
        utc_log(UTC_LOG_ERROR, "utc_buf_free: buffer %p was freed already%s; ignored", buf,
                was == BUF_FREED_HANDED ? " (after it was handed over with "
                                          "utc_conduit_write_owned)" : "");
        return;
    }
    buf_quarantine(h);
}

void utc__buf_discard(void *buf)
{
    if (!buf)
        return;
    buf_rec_t *h = NULL;
    int was = buf_move(buf, 1u << BUF_OWNED, BUF_FREED, false, &h, NULL);
    if (was != BUF_OWNED) {
        utc_log(UTC_LOG_ERROR, "internal: a transport discarded buffer %p, %s; ignored", buf,
                was == BUF_NONE ? "not from utc_buf_alloc" : "not the runtime's own");
        return;
    }
    buf_release(h);
}

bool utc__buf_size(const void *buf, size_t *size)
{
    buf_rec_t *h = NULL;
    int was = buf ? buf_move(buf, 0, BUF_OWNED, false, &h, size) : BUF_NONE;
    return was == BUF_OWNED;
}

utc__buf_check_t utc__buf_hand_over(const void *buf, size_t *size)
{
    buf_rec_t *h = NULL;
    switch (buf_move(buf, 1u << BUF_OWNED, BUF_HANDED, true, &h, size)) {
    case BUF_OWNED:
        return UTC__BUF_OK;
    case BUF_HANDED:
        return UTC__BUF_HANDED;
    case BUF_FREED:
        return UTC__BUF_FREED;
    case BUF_FREED_HANDED:
        return UTC__BUF_FREED_HANDED;
    default:
        return UTC__BUF_UNKNOWN;
    }
}

void utc__buf_hand_back(const void *buf)
{
    buf_rec_t *h = NULL;
    (void)buf_move(buf, 1u << BUF_HANDED, BUF_OWNED, false, &h, NULL);
}

void utc__buf_received(const void *buf)
{
    utc__buf_hand_back(buf); /* the same move: now its reader's */
}

void utc__buf_quarantined(size_t *count, size_t *bytes)
{
    pthread_mutex_lock(&quar.lock);
    *count = quar.count;
    *bytes = quar.bytes;
    pthread_mutex_unlock(&quar.lock);
}
