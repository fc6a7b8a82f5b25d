/*
 * utc_bench_gpu_conduit: device conduits (issue 35) beside CUDA and MPI, in one run.
 *
 * A GPU task W (rank 0, device 0) writes device buffers on conduits created with
 * .memory = UTC_CONDUIT_MEM_DEVICE to a GPU task R0 on rank 0 and, with 2 ranks, to a GPU
 * task R1 on rank 1 (device 0: the ranks share the GPU). Each message is timed end to end:
 * from just before the writer's write to the moment the reader's stream has finished its
 * copy (the reader synchronizes its stream after the read); the reader signals that it is
 * about to read on a host conduit first, so the time holds no waiting for the reader. Both
 * ends read CLOCK_MONOTONIC (utc_wtime), one clock for the ranks of a host. For each size
 * the methods take turns, repetition after repetition; each figure is the best of --reps.
 * Outside the timing, each reader checks the first, middle and last byte of every message
 * (its buffer reset before each), so a transfer that did not happen cannot pass.
 *
 * 1. hand-over (W to R0, in-process): write_owned of a utc_gpu_malloc buffer / read_owned
 *    (target: at most 10 us at every size), and the copy form (write / read between
 *    cudaMalloc buffers) beside cudaMemcpyAsync device-to-device of the same size on W's
 *    stream.
 * 2. IPC (W to R1, 2 ranks): write / read between cudaMalloc buffers, GB/s against the
 *    in-process cudaMemcpy device-to-device of part 1 (target at 64 MiB: at least 0.8x).
 * 3. staged (W to R1 on a conduit created with UTC_DEVICE_IPC=0 set on every rank): GB/s
 *    against the slower of the pinned device-to-host copy (cudaMemcpyAsync into
 *    cudaMallocHost memory on W's stream) and raw MPI (MPI_Send / MPI_Recv of pinned host
 *    buffers between the main threads of ranks 0 and 1, timed the same way) (target at
 *    64 MiB: at least 0.8x).
 * Sizes: 4 KiB to --max-bytes (default 256 MiB), times 4.
 *
 *   scripts/utcrun -np 2 build/apps/microbench/utc_bench_gpu_conduit [--json] [--quick]
 *                  [--reps R] [--max-bytes N]
 *
 * With 1 rank only part 1 runs (the figures of parts 2 and 3 are null). Without a GPU it
 * says so and exits 77. With --json the results go to stdout as one JSON object and the
 * tables to stderr.
 */
#include <cuda_runtime_api.h>
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utc/utc.h>

enum { NSIZES_MAX = 16 };
static const size_t min_bytes = 4096;

/* What is timed. The first four are conduit messages (writer and reader); the others are
 * the baselines. */
typedef enum {
    M_OWNED,  /* hand-over, write_owned / read_owned */
    M_COPY,   /* hand-over, write / read */
    M_IPC,    /* 2 ranks, write / read on the default device conduit */
    M_STAGED, /* 2 ranks, write / read on the conduit made with UTC_DEVICE_IPC=0 */
    M_D2D,    /* cudaMemcpyAsync device to device on W's stream */
    M_D2H,    /* cudaMemcpyAsync device to pinned host on W's stream */
    M_MPI,    /* MPI_Send / MPI_Recv of pinned host buffers, main threads of ranks 0, 1 */
    NMETHODS
} method_t;
static const char *const mnames[NMETHODS] = {"owned",    "copy",       "ipc",    "staged",
                                             "cuda_d2d", "pinned_d2h", "raw_mpi"};

enum { TAG_DATA = 0, TAG_GO = 1 };

/* The bytes every message is checked against (outside the timing): the writer's buffer
 * holds SRC_BYTE, an owned buffer OWNED_BYTE; a reader's buffer is reset to STALE_BYTE
 * before each message, so a transfer that did not happen cannot pass. */
enum { SRC_BYTE = 1, STALE_BYTE = 2, OWNED_BYTE = 5 };

/* One command of the writer or a reader: one message (or one baseline copy) of one size. */
typedef struct {
    method_t m;
    size_t bytes;
    utc_conduit_t *data; /* the device conduit */
    utc_conduit_t *go;   /* host conduit reader -> writer: "I am about to read" */
    double t0, t1;       /* writer: start; reader (or a baseline): end */
    int verified;        /* reader: the message's bytes were checked */
    int rc;
    char why[256];
} cmd_t;

/* Each task's buffers, made by its init on its own thread (device 0 current there). */
typedef struct {
    utc_task_t base;
    void *src, *dst; /* device, max_bytes each (writer: src and a D2D target; readers: dst) */
    void *pinned;    /* writer: the D2H baseline's target */
    size_t max_bytes;
} gpu_task_t;

static FILE *table; /* stdout, or stderr with --json */

static int failed(cmd_t *c, const char *what, int rc)
{
    snprintf(c->why, sizeof c->why, "%s: %s: %s", what, utc_status_string(rc), utc_last_error());
    c->rc = rc;
    return 0; /* the run itself succeeds: main reports c->why */
}

static int cuda_failed(cmd_t *c, const char *what, cudaError_t err)
{
    snprintf(c->why, sizeof c->why, "%s: %s", what, cudaGetErrorString(err));
    c->rc = UTC_ERR_GPU;
    return 0;
}

static int task_init(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    gpu_task_t *t = (gpu_task_t *)self;
    t->max_bytes = *(const size_t *)arg;
    if (cudaMalloc(&t->src, t->max_bytes) != cudaSuccess ||
        cudaMalloc(&t->dst, t->max_bytes) != cudaSuccess ||
        cudaMallocHost(&t->pinned, t->max_bytes) != cudaSuccess) {
        int rc = utc_gpu_check("allocating the benchmark's buffers");
        return rc ? rc : UTC_ERR_NO_MEMORY;
    }
    /* touch every page once, outside the timing */
    if (cudaMemset(t->src, SRC_BYTE, t->max_bytes) != cudaSuccess ||
        cudaMemset(t->dst, STALE_BYTE, t->max_bytes) != cudaSuccess)
        return utc_gpu_check("clearing the benchmark's buffers");
    memset(t->pinned, 3, t->max_bytes);
    return utc_gpu_synchronize();
}

static void task_fini(utc_task_t *self, utc_ctx_t *ctx)
{
    (void)ctx;
    gpu_task_t *t = (gpu_task_t *)self;
    cudaFree(t->src);
    cudaFree(t->dst);
    cudaFreeHost(t->pinned);
}

/* The writer: waits for the reader's "go", then writes (or times a baseline alone). */
static int writer_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    gpu_task_t *t = (gpu_task_t *)self;
    cmd_t *c = arg;
    cudaStream_t s = (cudaStream_t)utc_gpu_stream();
    cudaError_t err;
    char token;
    int rc;
    if (c->m == M_D2D || c->m == M_D2H) {
        void *to = c->m == M_D2D ? t->dst : t->pinned;
        c->t0 = utc_wtime();
        err = cudaMemcpyAsync(to, t->src, c->bytes,
                              c->m == M_D2D ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost, s);
        if (err == cudaSuccess)
            err = cudaStreamSynchronize(s);
        c->t1 = utc_wtime();
        return err == cudaSuccess ? 0 : cuda_failed(c, mnames[c->m], err);
    }
    void *owned = NULL;
    if (c->m == M_OWNED) {
        /* a fresh buffer each time, as a producer would make: allocated before the clock */
        if ((rc = utc_gpu_malloc(c->bytes, &owned)))
            return failed(c, "utc_gpu_malloc", rc);
        if ((err = cudaMemsetAsync(owned, OWNED_BYTE, c->bytes, s)) != cudaSuccess ||
            (err = cudaStreamSynchronize(s)) != cudaSuccess)
            return cuda_failed(c, "utc_gpu_malloc", err);
    }
    if ((rc = utc_conduit_read(c->go, &token, 1, TAG_GO, NULL))) {
        utc_gpu_free(owned);
        return failed(c, "reading the reader's go", rc);
    }
    c->t0 = utc_wtime();
    if (c->m == M_OWNED)
        rc = utc_conduit_write_owned(c->data, owned, c->bytes, TAG_DATA);
    else
        rc = utc_conduit_write(c->data, t->src, c->bytes, TAG_DATA);
    if (rc) {
        if (c->m == M_OWNED)
            utc_gpu_free(owned); /* refused: still ours */
        return failed(c, mnames[c->m], rc);
    }
    return 0;
}

/* Outside the timing: three bytes of what arrived (first, middle, last) are `want`. */
static void check_bytes(cmd_t *c, const void *buf, int want, cudaStream_t s)
{
    const size_t at[3] = {0, c->bytes / 2, c->bytes - 1};
    unsigned char got[3] = {0, 0, 0};
    cudaError_t err = cudaSuccess;
    for (int k = 0; k < 3 && err == cudaSuccess; k++)
        err = cudaMemcpyAsync(&got[k], (const unsigned char *)buf + at[k], 1,
                              cudaMemcpyDeviceToHost, s);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(s);
    if (err != cudaSuccess) {
        cuda_failed(c, "reading back the message", err);
        return;
    }
    for (int k = 0; k < 3; k++)
        if (got[k] != want) {
            snprintf(c->why, sizeof c->why, "%s: byte %zu of the message is %d, not %d",
                     mnames[c->m], at[k], got[k], want);
            c->rc = UTC_ERR_INTERNAL;
            return;
        }
    c->verified = 1;
}

/* A reader: says "go", reads, and stops the clock once its stream has the data. */
static int reader_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    gpu_task_t *t = (gpu_task_t *)self;
    cmd_t *c = arg;
    cudaStream_t s = (cudaStream_t)utc_gpu_stream();
    char token = 1;
    void *owned = NULL;
    size_t got = 0;
    cudaError_t err;
    if (c->m != M_OWNED &&
        ((err = cudaMemsetAsync(t->dst, STALE_BYTE, c->bytes, s)) != cudaSuccess ||
         (err = cudaStreamSynchronize(s)) != cudaSuccess))
        return cuda_failed(c, "resetting the reader's buffer", err);
    int rc = utc_conduit_write(c->go, &token, 1, TAG_GO);
    if (rc)
        return failed(c, "writing go", rc);
    if (c->m == M_OWNED)
        rc = utc_conduit_read_owned(c->data, TAG_DATA, &owned, &got);
    else
        rc = utc_conduit_read(c->data, t->dst, c->bytes, TAG_DATA, &got);
    if (rc)
        return failed(c, mnames[c->m], rc);
    err = cudaStreamSynchronize(s);
    c->t1 = utc_wtime();
    if (err != cudaSuccess)
        return cuda_failed(c, mnames[c->m], err);
    if (got == c->bytes) /* the first, middle and last byte arrived */
        check_bytes(c, owned ? owned : t->dst, owned ? OWNED_BYTE : SRC_BYTE, s);
    if (owned) {
        if ((rc = utc_gpu_free(owned)))
            return failed(c, "utc_gpu_free", rc);
        if ((err = cudaStreamSynchronize(s)) != cudaSuccess)
            return cuda_failed(c, "utc_gpu_free", err);
    }
    if (got != c->bytes) {
        snprintf(c->why, sizeof c->why, "%s: read %zu bytes of %zu", mnames[c->m], got, c->bytes);
        c->rc = UTC_ERR_INTERNAL;
    }
    return 0;
}

static const utc_task_ops_t writer_ops = {.name = "device-writer",
                                          .size = sizeof(gpu_task_t),
                                          .init = task_init,
                                          .run = writer_run,
                                          .fini = task_fini};
static const utc_task_ops_t reader_ops = {.name = "device-reader",
                                          .size = sizeof(gpu_task_t),
                                          .init = task_init,
                                          .run = reader_run,
                                          .fini = task_fini};

static void die(const char *what)
{
    fprintf(stderr, "utc_bench_gpu_conduit: rank %d: %s: %s\n", utc_rank(), what, utc_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static utc_task_t *gpu_task(const utc_task_ops_t *ops, int rank, size_t max_bytes)
{
    static const int dev0[1] = {0};
    utc_task_options_t o = UTC_TASK_OPTIONS_INIT;
    o.kind = UTC_TASK_GPU;
    o.devices = dev0;
    o.devices_len = 1;
    o.window_size = 0; /* no global shared data here */
    utc_task_t *t;
    if (utc_task_create(ops, &rank, 1, &o, &t) != UTC_OK)
        die("creating a GPU task");
    if (utc_task_init(t, &max_bytes) != UTC_OK)
        die("allocating a task's buffers");
    return t;
}

/* A command that failed: its message, and the whole job ends (the other end may be
 * blocked on the message that will not come). */
static void check(const cmd_t *c)
{
    if (!c->rc)
        return;
    fprintf(stderr, "utc_bench_gpu_conduit: rank %d, %s of %zu bytes: %s\n", utc_rank(),
            mnames[c->m], c->bytes, c->why);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Collective: both tasks' commands (the reader only where the method has one). */
static void run_pair(utc_task_t *w, utc_task_t *r, cmd_t *cw, cmd_t *cr)
{
    if (utc_task_run(w, cw) != UTC_OK || (r && utc_task_run(r, cr) != UTC_OK))
        die(mnames[cw->m]);
    if (utc_task_wait(w) != UTC_OK)
        die(mnames[cw->m]);
    check(cw);
    if (r && utc_task_wait(r) != UTC_OK)
        die(mnames[cw->m]);
    if (r)
        check(cr);
}

/* Raw MPI, one message of `bytes` from rank 0 to rank 1 after a 1-byte "go" the other
 * way, as the conduits are timed. Collective over the world's ranks. */
static void raw_mpi(MPI_Comm comm, void *buf, size_t bytes, double *t0, double *t1)
{
    int me;
    char token = 1;
    MPI_Comm_rank(comm, &me);
    if (me == 0) {
        MPI_Recv(&token, 1, MPI_CHAR, 1, TAG_GO, comm, MPI_STATUS_IGNORE);
        *t0 = utc_wtime();
        MPI_Send(buf, (int)bytes, MPI_BYTE, 1, TAG_DATA, comm);
    } else if (me == 1) {
        MPI_Send(&token, 1, MPI_CHAR, 0, TAG_GO, comm);
        MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, TAG_DATA, comm, MPI_STATUS_IGNORE);
        *t1 = utc_wtime();
    }
}

static const char usage_text[] =
    "usage: utc_bench_gpu_conduit [--json] [--quick] [--reps R] [--max-bytes N]\n"
    "Device conduits, 4 KiB to --max-bytes (default 256 MiB), beside CUDA and MPI: the\n"
    "in-process hand-over (owned and copy forms) beside cudaMemcpy device to device and,\n"
    "with 2 ranks on one GPU (scripts/utcrun -np 2), the IPC path beside the same copy\n"
    "and the staged path (UTC_DEVICE_IPC=0) beside pinned device-to-host copies and raw\n"
    "MPI. Best of --reps (default 10, --quick 5). Exits 77 without a GPU.\n";

/* A whole decimal number in [lo, hi], or -1 after a message naming the option. */
static long long parse_count(const char *opt, const char *text, long long lo, long long hi)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr,
                "utc_bench_gpu_conduit: %s needs a whole number from %lld to %lld, got '%s'\n", opt,
                lo, hi, text);
        return -1;
    }
    return v;
}

static void json_num(const char *key, double v, int last)
{
    if (isfinite(v))
        printf("\"%s\": %.4g%s", key, v, last ? "" : ", ");
    else
        printf("\"%s\": null%s", key, last ? "" : ", ");
}

static double gbps(size_t bytes, double s)
{
    return s > 0 ? (double)bytes / s / 1e9 : NAN;
}

/* The path a device conduit uses here, or why it cannot say. */
static const char *path_of(utc_conduit_t *c, char *buf, size_t len)
{
    const char *name = NULL;
    if (utc_conduit_device_path(c, &name) != UTC_OK || !name)
        snprintf(buf, len, "unknown (%s)", utc_last_error());
    else
        snprintf(buf, len, "%s", name);
    for (char *q = buf; *q; q++) /* it goes into the JSON as a string */
        if (*q == '"' || *q == '\\' || (unsigned char)*q < 0x20)
            *q = '\'';
    return buf;
}

int main(int argc, char **argv)
{
    int json = 0, quick = 0, reps = 0;
    size_t max_bytes = (size_t)256 << 20;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long long v;
        if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--quick")) {
            quick = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage_text, stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            printf("utc_bench_gpu_conduit (UTC) %s\n", utc_version_string());
            return 0;
        } else if ((!strcmp(a, "--reps") || !strcmp(a, "--max-bytes")) && i + 1 >= argc) {
            fprintf(stderr, "utc_bench_gpu_conduit: %s needs a value (see --help)\n", a);
            return 2;
        } else if (!strcmp(a, "--reps")) {
            if ((v = parse_count(a, argv[++i], 1, 10000)) < 0)
                return 2;
            reps = (int)v;
        } else if (!strcmp(a, "--max-bytes")) {
            /* MPI_Send counts are ints: at most 1 GiB here */
            if ((v = parse_count(a, argv[++i], (long long)min_bytes, (long long)1 << 30)) < 0)
                return 2;
            max_bytes = (size_t)v;
        } else {
            fprintf(stderr, "utc_bench_gpu_conduit: unknown argument '%s'\n%s", a, usage_text);
            return 2;
        }
    }
    if (reps == 0)
        reps = quick ? 5 : 10;
    table = json ? stderr : stdout;
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "utc_bench_gpu_conduit: utc_init: %s\n", utc_last_error());
        return 1;
    }
    int me = utc_rank(), nranks = utc_nranks();
    if (nranks > 2) {
        if (me == 0)
            fprintf(stderr,
                    "utc_bench_gpu_conduit: run with 1 or 2 ranks (got %d): rank 1 is "
                    "the other end of the IPC and staged paths\n",
                    nranks);
        utc_finalize();
        return 2;
    }
    int ndev = utc_gpu_device_count();
    if (ndev <= 0) {
        if (me == 0)
            printf("utc_bench_gpu_conduit: no usable GPU: %s: nothing to measure (skipped)\n",
                   ndev < 0 ? utc_last_error() : utc_gpu_unavailable_reason());
        utc_finalize();
        return 77;
    }
    size_t sizes[NSIZES_MAX];
    int nsizes = 0;
    for (size_t b = min_bytes; b <= max_bytes && nsizes < NSIZES_MAX; b *= 4)
        sizes[nsizes++] = b;
    max_bytes = sizes[nsizes - 1];

    /* W and R0 on rank 0, R1 on rank 1, all on device 0 */
    utc_task_t *w = gpu_task(&writer_ops, 0, max_bytes);
    utc_task_t *r0 = gpu_task(&reader_ops, 0, max_bytes);
    utc_task_t *r1 = nranks == 2 ? gpu_task(&reader_ops, 1, max_bytes) : NULL;
    utc_conduit_options_t dev = UTC_CONDUIT_OPTIONS_INIT;
    dev.memory = UTC_CONDUIT_MEM_DEVICE;
    utc_conduit_t *hand, *go0, *ipc = NULL, *staged = NULL, *go1 = NULL;
    if (utc_conduit_create(w, r0, &dev, &hand) != UTC_OK ||
        utc_conduit_create(r0, w, NULL, &go0) != UTC_OK)
        die("creating the in-process conduits");
    MPI_Comm comm = MPI_COMM_NULL;
    void *mpi_buf = NULL;
    if (r1) {
        if (utc_conduit_create(w, r1, &dev, &ipc) != UTC_OK ||
            utc_conduit_create(r1, w, NULL, &go1) != UTC_OK)
            die("creating the conduits between ranks");
        /* the staged path: IPC turned off, on every rank alike, for this conduit only */
        const char *was = getenv("UTC_DEVICE_IPC");
        char saved[64] = "";
        if (was)
            snprintf(saved, sizeof saved, "%s", was);
        setenv("UTC_DEVICE_IPC", "0", 1);
        if (utc_conduit_create(w, r1, &dev, &staged) != UTC_OK)
            die("creating the staged conduit (UTC_DEVICE_IPC=0)");
        if (was)
            setenv("UTC_DEVICE_IPC", saved, 1);
        else
            unsetenv("UTC_DEVICE_IPC");
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        if (cudaMallocHost(&mpi_buf, max_bytes) != cudaSuccess)
            die("cudaMallocHost for raw MPI");
        memset(mpi_buf, 4, max_bytes);
    }

    /* t0 and t1 of every method, size and repetition; each rank fills what it timed, then
     * a sum over the ranks gathers them on rank 0 */
    size_t nt = (size_t)NMETHODS * (size_t)nsizes * (size_t)(reps + 1);
    double *t0 = calloc(nt, sizeof *t0), *t1 = calloc(nt, sizeof *t1);
    if (!t0 || !t1)
        die("out of memory");
#define AT(m, s, r)                                                                                \
    ((((size_t)(m) * (size_t)nsizes) + (size_t)(s)) * (size_t)(reps + 1) + (size_t)(r))
    long long checked = 0, messages = 0; /* conduit messages whose bytes were checked; run */
    /* repetition 0 warms up (handles opened, pools grown) and is not counted */
    for (int s = 0; s < nsizes; s++)
        for (int r = 0; r <= reps; r++)
            for (int m = 0; m < NMETHODS; m++) {
                cmd_t cw = {.m = (method_t)m, .bytes = sizes[s]}, cr = cw;
                utc_task_t *reader = NULL;
                switch ((method_t)m) {
                case M_OWNED:
                case M_COPY:
                    cw.data = cr.data = hand, cw.go = cr.go = go0, reader = r0;
                    break;
                case M_IPC:
                case M_STAGED:
                    if (!r1)
                        continue;
                    cw.data = cr.data = m == M_IPC ? ipc : staged;
                    cw.go = cr.go = go1, reader = r1;
                    break;
                case M_D2D:
                case M_D2H:
                    break;
                case M_MPI:
                    if (comm != MPI_COMM_NULL)
                        raw_mpi(comm, mpi_buf, sizes[s], &t0[AT(m, s, r)], &t1[AT(m, s, r)]);
                    continue;
                default:
                    continue;
                }
                run_pair(w, reader, &cw, &cr);
                if (utc_task_is_local(w) == 1)
                    t0[AT(m, s, r)] = cw.t0;
                if (reader && utc_task_is_local(reader) == 1) {
                    t1[AT(m, s, r)] = cr.t1;
                    checked += cr.verified;
                } else if (!reader && utc_task_is_local(w) == 1)
                    t1[AT(m, s, r)] = cw.t1;
                messages += reader != NULL;  /* counted alike on every rank */
                if (utc_barrier() != UTC_OK) /* idle ranks sleep here, not in the next call */
                    die("barrier");
            }
    MPI_Allreduce(MPI_IN_PLACE, t0, (int)nt, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, t1, (int)nt, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &checked, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);

    if (me == 0) {
        char pbuf[3][160];
        const char *paths[3] = {path_of(hand, pbuf[0], sizeof pbuf[0]),
                                ipc ? path_of(ipc, pbuf[1], sizeof pbuf[1]) : NULL,
                                staged ? path_of(staged, pbuf[2], sizeof pbuf[2]) : NULL};
        /* best of the repetitions, in seconds (NaN: not measured) */
        double best[NMETHODS][NSIZES_MAX];
        for (int m = 0; m < NMETHODS; m++)
            for (int s = 0; s < nsizes; s++) {
                best[m][s] = NAN;
                for (int r = 1; r <= reps; r++) {
                    double a = t0[AT(m, s, r)], b = t1[AT(m, s, r)];
                    if (a > 0 && b > 0 && (isnan(best[m][s]) || b - a < best[m][s]))
                        best[m][s] = b - a;
                }
            }
        double load[3] = {NAN, NAN, NAN};
        if (getloadavg(load, 3) < 1)
            load[0] = NAN;
        struct cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess)
            snprintf(prop.name, sizeof prop.name, "device 0");
        fprintf(table,
                "utc_bench_gpu_conduit: %s, %d rank(s), best of %d, load %.2f\n"
                "paths: hand-over %s, ipc %s, staged %s; %lld of %lld messages' bytes checked\n",
                prop.name, nranks, reps, load[0], paths[0], paths[1] ? paths[1] : "-",
                paths[2] ? paths[2] : "-", checked, messages);
        fprintf(table,
                "\n1. hand-over in-process (us per message; target: owned at most 10 at "
                "every size)\n%10s %10s %10s %10s %10s\n",
                "bytes", "owned us", "copy us", "cuda d2d", "copy/cuda");
        double owned_max = 0, owned_min = INFINITY;
        for (int s = 0; s < nsizes; s++) {
            fprintf(table, "%10zu %10.2f %10.2f %10.2f %10.2f\n", sizes[s], best[M_OWNED][s] * 1e6,
                    best[M_COPY][s] * 1e6, best[M_D2D][s] * 1e6, best[M_COPY][s] / best[M_D2D][s]);
            owned_max = fmax(owned_max, best[M_OWNED][s]);
            owned_min = fmin(owned_min, best[M_OWNED][s]);
        }
        int at64 = -1;
        for (int s = 0; s < nsizes; s++)
            if (sizes[s] == (size_t)64 << 20)
                at64 = s;
        double ipc_ratio = NAN, staged_ratio = NAN, staged_base = NAN;
        if (r1) {
            fprintf(table,
                    "\n2. IPC between 2 ranks on one GPU (GB/s; target at 64 MiB: at "
                    "least 0.8x cuda d2d)\n%10s %10s %10s %10s %10s\n",
                    "bytes", "ipc us", "ipc GB/s", "cuda d2d", "ratio");
            for (int s = 0; s < nsizes; s++)
                fprintf(table, "%10zu %10.2f %10.2f %10.2f %10.2f\n", sizes[s],
                        best[M_IPC][s] * 1e6, gbps(sizes[s], best[M_IPC][s]),
                        gbps(sizes[s], best[M_D2D][s]), best[M_D2D][s] / best[M_IPC][s]);
            fprintf(table,
                    "\n3. staged between 2 ranks, IPC off (GB/s; target at 64 MiB: at "
                    "least 0.8x the slower of pinned d2h and raw MPI)\n"
                    "%10s %10s %10s %10s %10s %10s\n",
                    "bytes", "staged us", "GB/s", "pinned d2h", "raw MPI", "ratio");
            for (int s = 0; s < nsizes; s++) {
                double base = fmin(gbps(sizes[s], best[M_D2H][s]), gbps(sizes[s], best[M_MPI][s]));
                fprintf(table, "%10zu %10.2f %10.2f %10.2f %10.2f %10.2f\n", sizes[s],
                        best[M_STAGED][s] * 1e6, gbps(sizes[s], best[M_STAGED][s]),
                        gbps(sizes[s], best[M_D2H][s]), gbps(sizes[s], best[M_MPI][s]),
                        gbps(sizes[s], best[M_STAGED][s]) / base);
                if (s == at64)
                    staged_base = base;
            }
            if (at64 >= 0) {
                ipc_ratio = best[M_D2D][at64] / best[M_IPC][at64];
                staged_ratio = gbps(sizes[at64], best[M_STAGED][at64]) / staged_base;
            }
        }
        fprintf(table, "\ntargets: hand-over owned max %.2f us (<= 10: %s, max/min %.2f); ",
                owned_max * 1e6, owned_max <= 10e-6 ? "met" : "MISSED", owned_max / owned_min);
        if (isnan(ipc_ratio))
            fprintf(table, "IPC and staged at 64 MiB: not measured (%s)\n",
                    r1 ? "--max-bytes below 64 MiB" : "1 rank");
        else
            fprintf(table,
                    "IPC 64 MiB %.2fx cuda d2d (>= 0.8: %s); staged 64 MiB %.2fx the "
                    "slower baseline (>= 0.8: %s)\n",
                    ipc_ratio, ipc_ratio >= 0.8 ? "met" : "MISSED", staged_ratio,
                    staged_ratio >= 0.8 ? "met" : "MISSED");
        fflush(table);
        if (json) {
            printf("{\"bench\": \"utc_bench_gpu_conduit\", \"device\": \"%s\", \"ranks\": %d, "
                   "\"reps\": %d, \"messages\": %lld, \"messages_checked\": %lld, ",
                   prop.name, nranks, reps, messages, checked);
            json_num("load", load[0], 0);
            printf("\"paths\": {\"handover\": \"%s\", \"ipc\": %s%s%s, \"staged\": %s%s%s},\n"
                   " \"points\": [",
                   paths[0], paths[1] ? "\"" : "", paths[1] ? paths[1] : "null",
                   paths[1] ? "\"" : "", paths[2] ? "\"" : "", paths[2] ? paths[2] : "null",
                   paths[2] ? "\"" : "");
            for (int s = 0; s < nsizes; s++) {
                printf("%s\n  {\"bytes\": %zu, ", s ? "," : "", sizes[s]);
                for (int m = 0; m < NMETHODS; m++) {
                    char key[64];
                    snprintf(key, sizeof key, "%s_us", mnames[m]);
                    json_num(key, best[m][s] * 1e6, 0);
                    snprintf(key, sizeof key, "%s_gbps", mnames[m]);
                    json_num(key, gbps(sizes[s], best[m][s]), 0);
                }
                json_num("copy_over_cuda_d2d_time", best[M_COPY][s] / best[M_D2D][s], 0);
                json_num("ipc_over_cuda_d2d_gbps", best[M_D2D][s] / best[M_IPC][s], 0);
                json_num("staged_over_slower_baseline_gbps",
                         gbps(sizes[s], best[M_STAGED][s]) /
                             fmin(gbps(sizes[s], best[M_D2H][s]), gbps(sizes[s], best[M_MPI][s])),
                         1);
                printf("}");
            }
            printf("],\n \"targets\": {\"handover_owned_max_us\": {");
            json_num("value", owned_max * 1e6, 0);
            printf("\"target\": \"<= 10\", \"met\": %s}, ", owned_max <= 10e-6 ? "true" : "false");
            printf("\"ipc_64MiB_over_cuda_d2d\": {");
            json_num("value", ipc_ratio, 0);
            printf("\"target\": \">= 0.8\", \"met\": %s}, ", isnan(ipc_ratio)   ? "null"
                                                             : ipc_ratio >= 0.8 ? "true"
                                                                                : "false");
            printf("\"staged_64MiB_over_slower_of_pinned_d2h_and_raw_mpi\": {");
            json_num("value", staged_ratio, 0);
            printf("\"target\": \">= 0.8\", \"met\": %s}}}\n", isnan(staged_ratio)   ? "null"
                                                               : staged_ratio >= 0.8 ? "true"
                                                                                     : "false");
        }
        fflush(stdout);
    }
#undef AT
    free(t0);
    free(t1);
    if (comm != MPI_COMM_NULL)
        MPI_Comm_free(&comm);
    cudaFreeHost(mpi_buf);
    utc_conduit_t *cs[5] = {staged, go1, ipc, go0, hand};
    for (int k = 0; k < 5; k++)
        if (cs[k])
            utc_conduit_destroy(cs[k]);
    utc_task_t *ts[3] = {r1, r0, w};
    for (int k = 0; k < 3; k++)
        if (ts[k])
            utc_task_destroy(ts[k]);
    return utc_finalize() == UTC_OK ? 0 : 1;
}
