/*
 * Page-locked host memory for owned buffers (utc_buf_alloc_pinned): cudaHostAlloc, with a
 * pool of freed blocks for reuse, since pinning costs far more than a copy (about a
 * millisecond for a few MiB) and a producer that hands a buffer over per item allocates
 * one per item. The pool keeps at most POOL_MAX_BYTES; a block beyond that is given back
 * to CUDA. Blocks are portable (pinned for every device's context).
 */
#include <pthread.h>
#include <stdlib.h>

#include "../gpu_module.h"
#include "gpu_cuda.h"

#define POOL_MAX_BYTES ((size_t)256 << 20)
#define POOL_GRAIN     ((size_t)64 << 10) /* sizes are rounded up to this, so blocks match */

typedef struct block {
    void *p;
    size_t bytes; /* rounded size */
    struct block *next;
} block_t;

static struct {
    pthread_mutex_t lock;
    block_t *free_list;
    size_t bytes;
} pool = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};

static size_t rounded(size_t size)
{
    return size > SIZE_MAX - POOL_GRAIN ? 0 : (size + POOL_GRAIN - 1) / POOL_GRAIN * POOL_GRAIN;
}

void *utc__gpu_pinned_alloc(size_t size)
{
    size_t bytes = rounded(size);
    if (bytes == 0 || utc_gpu_device_count() <= 0)
        return NULL;
    pthread_mutex_lock(&pool.lock);
    for (block_t **b = &pool.free_list; *b; b = &(*b)->next) {
        if ((*b)->bytes != bytes)
            continue;
        block_t *hit = *b;
        *b = hit->next;
        pool.bytes -= bytes;
        pthread_mutex_unlock(&pool.lock);
        void *p = hit->p;
        free(hit);
        return p;
    }
    pthread_mutex_unlock(&pool.lock);
    void *p = NULL;
    if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return p;
}

void utc__gpu_pinned_free(void *p, size_t size)
{
    size_t bytes = rounded(size);
    block_t *b = malloc(sizeof *b);
    pthread_mutex_lock(&pool.lock);
    if (b && pool.bytes + bytes <= POOL_MAX_BYTES) {
        *b = (block_t){p, bytes, pool.free_list};
        pool.free_list = b;
        pool.bytes += bytes;
        pthread_mutex_unlock(&pool.lock);
        return;
    }
    pthread_mutex_unlock(&pool.lock);
    free(b);
    (void)cudaFreeHost(p);
    (void)cudaGetLastError();
}
