/* cudahost: streams (a thread each, running its work in order after a random delay),
 * events, and the copies, sets, allocations and frees that go through them. The legacy
 * stream (0) waits for every blocking stream and runs its work in the caller. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cudahost.h"

typedef enum { OP_COPY, OP_SET, OP_RECORD, OP_WAIT, OP_FREE, OP_HOST_FN } op_kind_t;

typedef struct op {
    op_kind_t kind;
    void *dst;
    const void *src;
    size_t n;
    int value;
    void *staging; /* a pageable source, taken at the call */
    cudaEvent_t ev;
    uint64_t gen;
    cudaHostFn_t fn; /* OP_HOST_FN: fn(dst) */
    struct op *next;
} op_t;

struct CUstream_st {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    op_t *head, *tail;
    uint64_t given, ran;
    bool stop;
    unsigned flags;
    unsigned long long id;
    unsigned seed;
    struct CUstream_st *next;
};

static pthread_mutex_t streams_mu = PTHREAD_MUTEX_INITIALIZER;
static struct CUstream_st *streams;
static unsigned long long next_stream_id = 1;
static _Atomic unsigned long long next_event_id = 1;

void ch_nap(void)
{
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
}

static bool legacy(cudaStream_t s)
{
    return s == NULL || s == cudaStreamLegacy;
}

/* The calling thread's default stream (cudaStreamPerThread): a blocking stream of its own,
 * made at its first use and destroyed when the thread ends; it waits for the legacy stream
 * and the legacy stream waits for it, as in CUDA, and nothing else orders it. */
static pthread_key_t per_thread_key;
static pthread_once_t per_thread_once = PTHREAD_ONCE_INIT;

static void per_thread_end(void *s)
{
    (void)cudaStreamDestroy(s);
}

static void per_thread_init(void)
{
    (void)pthread_key_create(&per_thread_key, per_thread_end);
}

/* s itself, the calling thread's stream for cudaStreamPerThread (NULL, the legacy stream,
 * if it cannot be made). */
static cudaStream_t stream_of(cudaStream_t s)
{
    if (s != cudaStreamPerThread)
        return s;
    pthread_once(&per_thread_once, per_thread_init);
    cudaStream_t mine = pthread_getspecific(per_thread_key);
    if (!mine && cudaStreamCreateWithFlags(&mine, cudaStreamDefault) == cudaSuccess)
        (void)pthread_setspecific(per_thread_key, mine);
    return mine;
}

static unsigned max_delay_us(void)
{
    static int v = -1;
    if (v < 0) {
        const char *s = getenv("UTC_CUDAHOST_DELAY_US");
        v = s ? atoi(s) : 40;
        if (v < 0)
            v = 0;
    }
    return (unsigned)v;
}

/* ---- events -------------------------------------------------------------------------- */

static void event_put(cudaEvent_t e)
{
    if (atomic_fetch_sub(&e->refs, 1) != 1)
        return;
    if (e->fd >= 0) {
        munmap(e->st, sizeof *e->st);
        close(e->fd);
    } else {
        free(e->st);
    }
    free(e);
}

cudaError_t ch_event_new(cudaEvent_t *out, unsigned flags, int fd_to_map)
{
    cudaError_t err = cudaSuccess;
    cudaEvent_t e = NULL;
    if (!out || ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)))
        err = cudaErrorInvalidValue;
    else if (!(e = calloc(1, sizeof *e)))
        err = cudaErrorMemoryAllocation;
    if (err != cudaSuccess) {
        if (fd_to_map >= 0)
            close(fd_to_map);
        return ch_fail(err);
    }
    e->flags = flags;
    e->fd = fd_to_map;
    atomic_init(&e->refs, 1);
    if (fd_to_map < 0 && (flags & cudaEventInterprocess)) {
        char name[64];
        e->id = atomic_fetch_add(&next_event_id, 1);
        snprintf(name, sizeof name, "cudahost-event-%llu", e->id);
        e->fd = memfd_create(name, MFD_CLOEXEC);
        if (e->fd >= 0 && ftruncate(e->fd, sizeof *e->st) != 0) {
            close(e->fd);
            e->fd = -1;
        }
        if (e->fd < 0) {
            free(e);
            return ch_fail(cudaErrorMemoryAllocation);
        }
    }
    if (e->fd >= 0) {
        e->st = mmap(NULL, sizeof *e->st, PROT_READ | PROT_WRITE, MAP_SHARED, e->fd, 0);
        if (e->st == MAP_FAILED) {
            close(e->fd);
            free(e);
            return ch_fail(cudaErrorMapBufferObjectFailed);
        }
    } else if (!(e->st = calloc(1, sizeof *e->st))) {
        free(e);
        return ch_fail(cudaErrorMemoryAllocation);
    }
    *out = e;
    return cudaSuccess;
}

CH_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    return ch_event_new(e, flags, -1);
}

CH_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    return ch_event_new(e, cudaEventDefault, -1);
}

CH_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    if (!e)
        return ch_fail(cudaErrorInvalidResourceHandle);
    event_put(e); /* pending records keep it until they ran, as in CUDA */
    return cudaSuccess;
}

static bool reached(cudaEvent_t e, uint64_t gen)
{
    return gen == 0 || atomic_load(&e->st->ran[gen % CH_EVENT_WINDOW]) >= gen;
}

CH_EXPORT cudaError_t cudaEventQuery(cudaEvent_t e)
{
    if (!e)
        return ch_fail(cudaErrorInvalidResourceHandle);
    return reached(e, atomic_load(&e->st->recorded)) ? cudaSuccess : cudaErrorNotReady;
}

CH_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    if (!e)
        return ch_fail(cudaErrorInvalidResourceHandle);
    uint64_t gen = atomic_load(&e->st->recorded);
    while (!reached(e, gen))
        ch_nap();
    return cudaSuccess;
}

/* The time between the last records of two events, as CUDA measures it: both recorded,
 * both ran, neither made without timing. */
CH_EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    if (!ms)
        return ch_fail(cudaErrorInvalidValue);
    if (!start || !end || ((start->flags | end->flags) & cudaEventDisableTiming))
        return ch_fail(cudaErrorInvalidResourceHandle);
    uint64_t g0 = atomic_load(&start->st->recorded), g1 = atomic_load(&end->st->recorded);
    if (g0 == 0 || g1 == 0)
        return ch_fail(cudaErrorInvalidResourceHandle);
    if (!reached(start, g0) || !reached(end, g1))
        return cudaErrorNotReady;
    double t0 = (double)atomic_load(&start->st->at_ns[g0 % CH_EVENT_WINDOW]);
    double t1 = (double)atomic_load(&end->st->at_ns[g1 % CH_EVENT_WINDOW]);
    *ms = (float)((t1 - t0) / 1e6);
    return cudaSuccess;
}

/* ---- running work -------------------------------------------------------------------- */

static void run_op(op_t *op)
{
    switch (op->kind) {
    case OP_COPY:
        memmove(op->dst, op->staging ? op->staging : op->src, op->n);
        break;
    case OP_SET:
        memset(op->dst, op->value, op->n);
        break;
    case OP_RECORD: {
        _Atomic uint64_t *slot = &op->ev->st->ran[op->gen % CH_EVENT_WINDOW];
        atomic_store(&op->ev->st->at_ns[op->gen % CH_EVENT_WINDOW], ch_kernel_clock_ns());
        uint64_t c = atomic_load(slot);
        while (c < op->gen && !atomic_compare_exchange_weak(slot, &c, op->gen))
            ;
        break;
    }
    case OP_WAIT:
        while (!reached(op->ev, op->gen))
            ch_nap();
        break;
    case OP_HOST_FN:
        op->fn(op->dst);
        break;
    case OP_FREE:
        if (ch_free_device(op->dst) != cudaSuccess) { /* checked at the call */
            fprintf(stderr, "cudahost: internal error: a queued free of %p failed\n", op->dst);
            abort();
        }
        break;
    }
}

static void op_done(op_t *op)
{
    if (op->ev)
        event_put(op->ev);
    free(op->staging);
    free(op);
}

static void *worker(void *arg)
{
    struct CUstream_st *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->head && !s->stop)
            pthread_cond_wait(&s->cv, &s->mu);
        if (!s->head)
            break;
        op_t *op = s->head;
        pthread_mutex_unlock(&s->mu);
        unsigned d = max_delay_us();
        if (d)
            usleep(rand_r(&s->seed) % (d + 1));
        run_op(op);
        pthread_mutex_lock(&s->mu);
        s->head = op->next;
        if (!s->head)
            s->tail = NULL;
        s->ran++;
        pthread_cond_broadcast(&s->cv);
        op_done(op);
    }
    pthread_mutex_unlock(&s->mu);
    /* destroyed, its work done: out of the list that cudaFree and the legacy stream wait
     * on (until now it was in it, as CUDA's destroyed streams still run their work) */
    pthread_mutex_lock(&streams_mu);
    struct CUstream_st **l = &streams;
    while (*l && *l != s)
        l = &(*l)->next;
    if (*l)
        *l = s->next;
    pthread_mutex_unlock(&streams_mu);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
    return NULL;
}

/* Waits until s ran its first `upto` operations (lock not held). */
static void stream_wait(struct CUstream_st *s, uint64_t upto)
{
    pthread_mutex_lock(&s->mu);
    while (s->ran < upto)
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
}

void ch_sync_all(bool blocking_only)
{
    pthread_mutex_lock(&streams_mu);
    for (struct CUstream_st *s = streams; s; s = s->next) {
        if (blocking_only && (s->flags & cudaStreamNonBlocking))
            continue;
        pthread_mutex_lock(&s->mu);
        uint64_t upto = s->given;
        pthread_mutex_unlock(&s->mu);
        stream_wait(s, upto);
    }
    pthread_mutex_unlock(&streams_mu);
}

/* Under s->mu: op at the end of s's work. Returns its number in s. */
static uint64_t append(struct CUstream_st *s, op_t *op)
{
    if (s->tail)
        s->tail->next = op;
    else
        s->head = op;
    s->tail = op;
    pthread_cond_broadcast(&s->cv);
    return ++s->given;
}

/* Gives op to stream s (the legacy stream runs it here, after every blocking stream); a
 * record gets its number as it is queued. With `until_done`, returns when it ran. Takes
 * op. */
static void submit(cudaStream_t s, op_t *op, bool until_done)
{
    s = stream_of(s);
    if (legacy(s)) {
        ch_sync_all(true);
        if (op->kind == OP_RECORD)
            op->gen = atomic_fetch_add(&op->ev->st->recorded, 1) + 1;
        run_op(op);
        op_done(op);
        return;
    }
    pthread_mutex_lock(&s->mu);
    if (op->kind == OP_RECORD)
        op->gen = atomic_fetch_add(&op->ev->st->recorded, 1) + 1;
    uint64_t mine = append(s, op);
    pthread_mutex_unlock(&s->mu);
    if (until_done)
        stream_wait(s, mine);
}

static op_t *op_new(op_kind_t kind)
{
    op_t *op = calloc(1, sizeof *op);
    if (op)
        op->kind = kind;
    return op;
}

/* ---- streams ------------------------------------------------------------------------- */

CH_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *out, unsigned int flags)
{
    if (!out)
        return ch_fail(cudaErrorInvalidValue);
    struct CUstream_st *s = calloc(1, sizeof *s);
    if (!s)
        return ch_fail(cudaErrorMemoryAllocation);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->flags = flags;
    pthread_mutex_lock(&streams_mu);
    s->id = next_stream_id++;
    s->seed = (unsigned)s->id * 2654435761u ^ (unsigned)getpid();
    pthread_t th;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &at, worker, s);
    pthread_attr_destroy(&at);
    if (rc != 0) {
        pthread_mutex_unlock(&streams_mu);
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
        free(s);
        return ch_fail(cudaErrorMemoryAllocation);
    }
    s->next = streams;
    streams = s;
    pthread_mutex_unlock(&streams_mu);
    *out = s;
    return cudaSuccess;
}

CH_EXPORT cudaError_t cudaStreamGetFlags(cudaStream_t s, unsigned int *flags)
{
    if (!flags)
        return ch_fail(cudaErrorInvalidValue);
    s = stream_of(s);
    *flags = legacy(s) ? cudaStreamDefault : s->flags;
    return cudaSuccess;
}

CH_EXPORT cudaError_t cudaStreamCreate(cudaStream_t *out)
{
    return cudaStreamCreateWithFlags(out, cudaStreamDefault);
}

CH_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    if (legacy(s) || s == cudaStreamPerThread)
        return ch_fail(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&streams_mu);
    struct CUstream_st *l = streams;
    while (l && l != s)
        l = l->next;
    bool known = l != NULL;
    if (known) { /* its work still runs; then its thread unlists and frees it */
        pthread_mutex_lock(&s->mu);
        known = !s->stop;
        s->stop = true;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
    }
    pthread_mutex_unlock(&streams_mu);
    return known ? cudaSuccess : ch_fail(cudaErrorInvalidResourceHandle);
}

CH_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    s = stream_of(s);
    if (legacy(s))
        return cudaSuccess; /* its work ran in its callers */
    pthread_mutex_lock(&s->mu);
    uint64_t upto = s->given;
    pthread_mutex_unlock(&s->mu);
    stream_wait(s, upto);
    return cudaSuccess;
}

CH_EXPORT cudaError_t cudaStreamGetId(cudaStream_t s, unsigned long long *id)
{
    if (!id)
        return ch_fail(cudaErrorInvalidValue);
    s = stream_of(s);
    *id = legacy(s) ? 0 : s->id;
    return cudaSuccess;
}

CH_EXPORT cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    if (!e)
        return ch_fail(cudaErrorInvalidResourceHandle);
    op_t *op = op_new(OP_RECORD);
    if (!op)
        return ch_fail(cudaErrorMemoryAllocation);
    atomic_fetch_add(&e->refs, 1);
    op->ev = e;
    submit(s, op, false); /* numbers it */
    return cudaSuccess;
}

CH_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
    (void)flags;
    if (!e)
        return ch_fail(cudaErrorInvalidResourceHandle);
    uint64_t gen = atomic_load(&e->st->recorded);
    if (reached(e, gen))
        return cudaSuccess;
    op_t *op = op_new(OP_WAIT);
    if (!op)
        return ch_fail(cudaErrorMemoryAllocation);
    atomic_fetch_add(&e->refs, 1);
    op->ev = e;
    op->gen = gen;
    submit(s, op, false);
    return cudaSuccess;
}

CH_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void *data)
{
    if (!fn)
        return ch_fail(cudaErrorInvalidValue);
    op_t *op = op_new(OP_HOST_FN);
    if (!op)
        return ch_fail(cudaErrorMemoryAllocation);
    op->fn = fn;
    op->dst = data;
    submit(s, op, false);
    return cudaSuccess;
}

/* ---- copies, sets, stream-ordered memory --------------------------------------------- */

/* Whether memory of kind k (ch_kind_t, or -1: pageable) is on the host side (host) or the
 * device side (!host) of a copy: managed memory is both. */
static bool on_side(int k, bool host)
{
    if (k == CH_MANAGED)
        return true;
    bool is_host = k < 0 || k == CH_PINNED;
    return host == is_host;
}

/* CUDA: a kind that does not match the pointers is undefined behaviour; refused here. */
static bool kind_fits(enum cudaMemcpyKind kind, int dk, int sk)
{
    switch (kind) {
    case cudaMemcpyDefault:
        return true;
    case cudaMemcpyHostToHost:
        return on_side(sk, true) && on_side(dk, true);
    case cudaMemcpyHostToDevice:
        return on_side(sk, true) && on_side(dk, false);
    case cudaMemcpyDeviceToHost:
        return on_side(sk, false) && on_side(dk, true);
    case cudaMemcpyDeviceToDevice:
        return on_side(sk, false) && on_side(dk, false);
    }
    return false; /* not a cudaMemcpyKind */
}

static cudaError_t copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                        cudaStream_t s)
{
    if (n == 0)
        return cudaSuccess;
    if (!dst || !src)
        return ch_fail(cudaErrorInvalidValue);
    void *d, *sr;
    int dk, sk;
    cudaError_t err = ch_resolve(dst, n, &d, &dk);
    if (err == cudaSuccess)
        err = ch_resolve(src, n, &sr, &sk);
    if (err != cudaSuccess)
        return err;
    if (!kind_fits(kind, dk, sk))
        return ch_fail(cudaErrorInvalidMemcpyDirection);
    op_t *op = op_new(OP_COPY);
    if (!op)
        return ch_fail(cudaErrorMemoryAllocation);
    op->dst = d;
    op->src = sr;
    op->n = n;
    if (sk < 0) { /* pageable source: CUDA takes it before it returns */
        if (!(op->staging = malloc(n))) {
            free(op);
            return ch_fail(cudaErrorMemoryAllocation);
        }
        memcpy(op->staging, sr, n);
    }
    submit(s, op, dk < 0); /* pageable destination: done when the call returns */
    return cudaSuccess;
}

CH_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n,
                                      enum cudaMemcpyKind kind, cudaStream_t s)
{
    return copy(dst, src, n, kind, s);
}

CH_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    return copy(dst, src, n, kind, NULL);
}

static cudaError_t set(void *dst, int value, size_t n, cudaStream_t s)
{
    if (n == 0)
        return cudaSuccess;
    void *d;
    int dk;
    cudaError_t err = ch_resolve(dst, n, &d, &dk);
    if (err != cudaSuccess)
        return err;
    if (dk < 0)
        return ch_fail(cudaErrorInvalidValue); /* CUDA sets device-accessible memory only */
    op_t *op = op_new(OP_SET);
    if (!op)
        return ch_fail(cudaErrorMemoryAllocation);
    op->dst = d;
    op->value = value;
    op->n = n;
    submit(s, op, false);
    return cudaSuccess;
}

CH_EXPORT cudaError_t cudaMemsetAsync(void *dst, int value, size_t n, cudaStream_t s)
{
    return set(dst, value, n, s);
}

CH_EXPORT cudaError_t cudaMemset(void *dst, int value, size_t n)
{
    return set(dst, value, n, NULL);
}

CH_EXPORT cudaError_t cudaMallocAsync(void **p, size_t size, cudaStream_t s)
{
    (void)s;
    return ch_alloc_device(p, size, CH_POOL);
}

CH_EXPORT cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    if (!p)
        return cudaSuccess;
    op_t *op = op_new(OP_FREE);
    if (!op)
        return ch_fail(cudaErrorMemoryAllocation);
    if (!ch_mark_freeing(p)) { /* none, or freed already */
        free(op);
        return ch_fail(cudaErrorInvalidValue);
    }
    op->dst = p;
    submit(s, op, false);
    return cudaSuccess;
}

CH_EXPORT cudaError_t cudaMemPrefetchAsync(const void *p, size_t n, struct cudaMemLocation loc,
                                           unsigned int flags, cudaStream_t s)
{
    (void)loc;
    (void)flags;
    (void)s;
    ch_alloc_t a;
    if (!ch_lookup(p, &a) || a.kind != CH_MANAGED || n > a.size - (size_t)((char *)p - a.base))
        return ch_fail(cudaErrorInvalidValue);
    return cudaSuccess;
}
