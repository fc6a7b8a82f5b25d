/* cudahost: the CUDA runtime calls UTC's device layer makes, answered on the host, so that
 * the device conduits' bookkeeping (descriptors, the stash, probes, any-tag reads, the
 * staged engine, IPC handle caches, close and cancel) runs in the tests of a machine that
 * has no GPU; with the launches of the kernels it has a host version of (kernels_*.c),
 * so do the GPU tasks' suites and RYR's GPU presets.
 *
 * It is a test tool, never linked into libutc: the tests that use it put the library it
 * builds (named as CUDA's runtime, libcudart.so.N) first on LD_LIBRARY_PATH, so the same
 * binaries that run on a GPU run on it. It proves nothing about a GPU (speed, DMA, the
 * driver) and replaces none of the GPU check (scripts/gpu-check.sh).
 *
 * What it keeps of CUDA, to catch what a GPU would:
 *   - device memory is a memfd mapped twice: the address handed out has no access (a CPU
 *     that touches device memory faults, as on a GPU) and a second mapping is what the
 *     copies use; stream-ordered allocations (cudaMallocAsync) are refused for legacy IPC,
 *     as CUDA refuses them;
 *   - streams run their work in order on a thread of their own, after a random delay
 *     (UTC_CUDAHOST_DELAY_US, default 40), so a caller that does not wait sees NotReady;
 *     the legacy stream (0) waits for every blocking stream and runs in the caller;
 *   - copies from pageable memory take the source at the call, copies to pageable memory
 *     return when done (CUDA's rules); a copy out of an allocation's bounds is refused,
 *     and so is one whose cudaMemcpyKind does not match its pointers
 *     (cudaErrorInvalidMemcpyDirection: undefined behaviour in CUDA);
 *   - events number their records as they are queued (in shared memory when
 *     interprocess): a wait or query is over when the last record before it ran, whatever
 *     later records do;
 *   - IPC handles name the exporter's memfd (/proc/PID/fd/N, checked by name and id),
 *     opened once per process and counted; a handle of the calling process is refused;
 *   - frees: cudaFree and cudaFreeHost wait for the device; after cudaFreeAsync the
 *     allocation is refused at once; freed memory of every kind is unmapped (a late copy
 *     faults);
 *   - kernels run on their stream after its earlier work; a launch's shape is checked as
 *     CUDA checks it; a kernel without a host version fails to launch
 *     (cudaErrorInvalidDeviceFunction); a kernel's reach outside its allocations, or into
 *     pageable memory, aborts (an illegal address).
 * Where it is looser than CUDA (a fault of these kinds would pass here):
 *   - the legacy default stream runs its work in the caller, after the blocking streams:
 *     work queued on stream 0 is never seen unfinished (cudaStreamPerThread is a stream of
 *     the thread's own, as in CUDA);
 *   - streams and events have no device: a record or wait across devices is not refused.
 * Devices: UTC_CUDAHOST_DEVICES (default 1; 0 is not a GPU-less machine: use none). */
#ifndef UTC_TESTS_CUDAHOST_H
#define UTC_TESTS_CUDAHOST_H

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CH_EXPORT __attribute__((visibility("default")))

/* ---- errors (errors.c) --------------------------------------------------------------- */

/* Sets the calling thread's last error and returns it. */
cudaError_t ch_fail(cudaError_t err);

/* ---- devices (device.c) -------------------------------------------------------------- */

int ch_device_count(void);
int ch_current_device(void);

/* ---- allocations (memory.c) ---------------------------------------------------------- */

typedef enum ch_kind {
    CH_DEVICE,   /* cudaMalloc: legacy IPC capable */
    CH_POOL,     /* cudaMallocAsync: stream ordered, not legacy IPC capable */
    CH_IMPORTED, /* cudaIpcOpenMemHandle: another process's CH_DEVICE */
    CH_PINNED,   /* cudaHostAlloc, cudaMallocHost */
    CH_MANAGED,  /* cudaMallocManaged */
} ch_kind_t;

typedef struct ch_alloc {
    char *base;   /* the address the user sees (no access for device kinds) */
    char *shadow; /* what copies read and write (base itself for host kinds) */
    size_t size, mapped;
    ch_kind_t kind;
    int device;
    unsigned long long id;
    int fd;      /* the memfd of device kinds */
    pid_t owner; /* CH_IMPORTED: the exporter, its allocation id, the opens */
    unsigned long long owner_id;
    int opens;
    bool freeing; /* cudaFreeAsync was called: no use from then on */
    struct ch_alloc *next;
} ch_alloc_t;

/* Every call below takes the registry's lock itself. */
cudaError_t ch_alloc_device(void **out, size_t size, ch_kind_t kind);
cudaError_t ch_free_device(void *p);
cudaError_t ch_alloc_host(void **out, size_t size, ch_kind_t kind);

/* Where copies touch [p, p+n): the shadow of a device range, p itself for host memory.
 * Sets *kind to the allocation's kind, or -1 for memory CUDA does not know (pageable).
 * cudaErrorInvalidValue when the range leaves its allocation. */
cudaError_t ch_resolve(const void *p, size_t n, void **where, int *kind);

/* What a kernel running now on `device` reads and writes for [p, p+n) of device, pinned
 * or managed memory (an allocation whose cudaFreeAsync is queued included); NULL where a
 * kernel on a GPU could not go: pageable memory, freed memory, a range that leaves its
 * allocation, another device's memory (no peer access). */
void *ch_kernel_view(const void *p, size_t n, int device);

/* The allocation holding p, copied out (false: none). */
bool ch_lookup(const void *p, ch_alloc_t *out);

/* The bytes stream-ordered allocations hold now (the pool's UsedMemCurrent). */
unsigned long long ch_pool_used(void);

/* ---- IPC opens (memory.c) ------------------------------------------------------------ */

cudaError_t ch_import(void **out, pid_t pid, int fd, unsigned long long id, size_t size);
cudaError_t ch_unimport(void *p);

/* ---- events and streams (streams.c) -------------------------------------------------- */

/* Records are numbered 1, 2, ... when queued; a wait or query names the last one queued
 * before it, and is over when that record ran (CUDA: "not affected by later calls to
 * cudaEventRecord"), whichever later record ran first. */
#define CH_EVENT_WINDOW 64
typedef struct ch_evstate {
    _Atomic uint64_t recorded;             /* records queued */
    _Atomic uint64_t ran[CH_EVENT_WINDOW]; /* ran[g % W] >= g: record g ran */
    _Atomic uint64_t at_ns[CH_EVENT_WINDOW]; /* when it ran (ch_kernel_clock_ns) */
} ch_evstate_t;

struct CUevent_st {
    ch_evstate_t *st; /* in a memfd's mapping when interprocess */
    int fd;
    unsigned long long id; /* an interprocess one's, in its memfd's name */
    unsigned flags;
    _Atomic int refs; /* the user's, and each pending operation's */
};

/* A new event; with fd_to_map >= 0 (which it takes, even on failure), the interprocess
 * state in that memfd. */
cudaError_t ch_event_new(cudaEvent_t *out, unsigned flags, int fd_to_map);

/* Marks the stream-ordered (or device) allocation at p as being freed: false if there is
 * none, or it is being freed already. */
bool ch_mark_freeing(void *p);

/* Waits (sleeping) until every stream has run what it was given. */
void ch_sync_all(bool blocking_only);

/* Sleeps about a tick: the polls of cross-process state. */
void ch_nap(void);

/* ---- kernels (kernels.c; their host versions: kernels_*.c) --------------------------- */

#define CH_MAX_KERNEL_ARGS 12

/* The host version of a kernel. It is found by the kernel's name and its parameters as
 * the compiler mangles them (the nvcc stub registers "_ZL13render_kernel17ryr_...Ph" or
 * "_ZN<anonymous namespace>11vadd_kernelEPKfS1_Pfm": name "vadd_kernel", params
 * "PKfS1_Pfm"), so a kernel whose parameters change no longer matches and its launch
 * fails; two kernels of one binary that match one host version (same name and parameters
 * in two files) both fail. `run` gets the launch's grid and block and the arguments,
 * copied at the launch (arg_size[i] bytes each), and runs on the stream's thread: it
 * reaches device memory through ch_kernel_mem and covers the threads the grid has, no
 * more. */
typedef struct ch_kernel {
    const char *name, *params;
    unsigned nargs;
    size_t arg_size[CH_MAX_KERNEL_ARGS];
    void (*run)(dim3 grid, dim3 block, void **args);
} ch_kernel_t;

/* The host versions each file of them gives, a NULL name last. */
extern const ch_kernel_t ch_kernels_tests[], ch_kernels_ryr[], ch_kernels_apps[],
    ch_kernels_examples[];

/* In a kernel's run: ch_kernel_view(p, n), or, where a GPU would fault (an illegal
 * address), a message naming the kernel and an abort, as a faulting kernel ends its
 * context. */
void *ch_kernel_mem(const void *p, size_t n);

/* In a kernel's run: the time in ns (a GPU's %globaltimer), and a wait of ns on it (the
 * kernels that spin on the timer). */
unsigned long long ch_kernel_clock_ns(void);
void ch_kernel_sleep_ns(unsigned long long ns);

#endif
