/* Owned buffers (utc_buf_alloc / utc_buf_free) and their registry (service/buffer.h). */
#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <utc/conduit.h>
#include <utc/context.h>

#include <uthash.h>

#include "service/buffer.h"

/*
 * A header in front of every buffer, and a registry of live buffers (sharded by address,
 * the hash handle kept in the header): utc__buf_size and utc_buf_free look a pointer up
 * instead of reading memory in front of it, so a foreign pointer is refused safely.
 */
typedef struct buf_hdr {
    void *key;  /* the data pointer: the registry key */
    size_t size;
    UT_hash_handle hh;
} buf_hdr_t;

#define BUF_HDR 128 /* keeps the data 64-byte aligned */
static_assert(sizeof(buf_hdr_t) <= BUF_HDR, "buffer header fits its slot");

#define BUF_SHARDS 16
static struct {
    pthread_mutex_t lock;
    buf_hdr_t *set;
} buf_reg[BUF_SHARDS] = {[0 ... BUF_SHARDS - 1] = {PTHREAD_MUTEX_INITIALIZER, NULL}};

static unsigned buf_shard(const void *p)
{
    return (unsigned)((((uintptr_t)p >> 7) * 0x9e3779b97f4a7c15ull) >> 60) % BUF_SHARDS;
}

void *utc_buf_alloc(size_t size)
{
    void *p;
    if (size > SIZE_MAX - BUF_HDR || posix_memalign(&p, 64, BUF_HDR + size))
        return NULL;
    buf_hdr_t *h = p;
    h->key = (unsigned char *)p + BUF_HDR;
    h->size = size;
    unsigned k = buf_shard(h->key);
    pthread_mutex_lock(&buf_reg[k].lock);
    HASH_ADD_PTR(buf_reg[k].set, key, h);
    pthread_mutex_unlock(&buf_reg[k].lock);
    return h->key;
}

static buf_hdr_t *buf_find(const void *buf, bool remove)
{
    unsigned k = buf_shard(buf);
    buf_hdr_t *h;
    pthread_mutex_lock(&buf_reg[k].lock);
    HASH_FIND_PTR(buf_reg[k].set, &buf, h);
    if (h && remove)
        HASH_DEL(buf_reg[k].set, h);
    pthread_mutex_unlock(&buf_reg[k].lock);
    return h;
}

void utc_buf_free(void *buf)
{
    if (!buf)
        return;
    buf_hdr_t *h = buf_find(buf, true);
    if (!h) {
        utc_log(UTC_LOG_ERROR, "utc_buf_free: %p is not a buffer from utc_buf_alloc (or was "
                "freed already); ignored", buf);
        return;
    }
    free(h);
}

bool utc__buf_size(const void *buf, size_t *size)
{
    buf_hdr_t *h = buf ? buf_find(buf, false) : NULL;
    if (!h)
        return false;
    *size = h->size;
    return true;
}

