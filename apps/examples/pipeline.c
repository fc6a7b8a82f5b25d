/*
 * Example 3: a pipeline (doc/guide/tutorial.md, step 3).
 *
 *   generate --conduit--> square (2 threads) --conduit--> check
 *
 * Three tasks, one per rank when there are three ranks (stage i on rank i % ranks), all
 * running at once. Frames of doubles flow down the pipeline; each stage closes its output
 * when it is done (utc_conduit_close), and the next sees UTC_ERR_CLOSED after the last
 * frame.
 * The square task shows the "every local thread" conduit calls: all its threads call
 * utc_conduit_read with the same buffer (a field of the task), local thread 0 receives,
 * each thread squares its half, and all call utc_conduit_write once the frame is done.
 *
 *   utcrun -np 3 example_pipeline --frames 50 --size 4096
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utc/utc.h>

enum { FRAME = 7 }; /* the tag of every frame */

typedef struct {
    utc_task_t base;
    utc_conduit_t *out;
    int frames;
    size_t size; /* doubles per frame */
} generate_t;

typedef struct {
    utc_task_t base;
    utc_conduit_t *in, *out;
    size_t size;
    double *frame; /* shared by the task's threads on this rank */
} square_t;

typedef struct {
    utc_task_t base;
    utc_conduit_t *in;
    size_t size;
    int frames_seen;
    int errors;
} check_t;

/* frame f, element i holds f + i; after the square stage, (f + i)^2 */
static int generate_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    generate_t *g = (generate_t *)self;
    double *frame = malloc(g->size * sizeof *frame);
    if (!frame)
        return UTC_ERR_NO_MEMORY;
    utc_status_t rc = UTC_OK;
    for (int f = 0; f < g->frames && rc == UTC_OK; f++) {
        for (size_t i = 0; i < g->size; i++)
            frame[i] = f + (double)i;
        rc = utc_conduit_write(g->out, frame, g->size * sizeof *frame, FRAME);
    }
    free(frame);
    if (rc == UTC_OK)
        rc = utc_conduit_close(g->out); /* end of stream, after the last frame */
    return rc;
}

/* init runs on every thread of the task before its first run: allocate the shared frame
 * once (one thread does it, the others wait) */
static int alloc_frame(utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    square_t *s = (square_t *)ctx->task;
    s->frame = malloc(s->size * sizeof *s->frame);
    return s->frame ? UTC_OK : UTC_ERR_NO_MEMORY;
}

static int square_init(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)self;
    return utc_ctx_single(ctx, 0, alloc_frame, arg);
}

static int square_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    square_t *s = (square_t *)self;
    size_t bytes = s->size * sizeof *s->frame;
    /* this thread's share of each frame */
    size_t lo = s->size * (size_t)ctx->local_id / (size_t)ctx->local_count;
    size_t hi = s->size * (size_t)(ctx->local_id + 1) / (size_t)ctx->local_count;
    for (;;) {
        size_t got;
        /* every local thread calls it; all return when thread 0 has the frame */
        utc_status_t rc = utc_conduit_read(s->in, s->frame, bytes, FRAME, &got);
        if (rc == UTC_ERR_CLOSED) /* end of stream: pass it on */
            return utc_conduit_close(s->out);
        if (rc != UTC_OK)
            return rc;
        for (size_t i = lo; i < hi; i++)
            s->frame[i] *= s->frame[i];
        /* all halves done before thread 0 sends the frame on */
        utc_ctx_barrier_local(ctx);
        if ((rc = utc_conduit_write(s->out, s->frame, got, FRAME)) != UTC_OK)
            return rc;
    }
}

static void square_fini(utc_task_t *self, utc_ctx_t *ctx)
{
    square_t *s = (square_t *)self;
    if (ctx->local_id == 0) /* fini runs on every thread: free once */
        free(s->frame);
}

static int check_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    check_t *c = (check_t *)self;
    double *frame = malloc(c->size * sizeof *frame);
    if (!frame)
        return UTC_ERR_NO_MEMORY;
    utc_status_t rc;
    for (int f = 0;; f++) {
        size_t got;
        rc = utc_conduit_read(c->in, frame, c->size * sizeof *frame, FRAME, &got);
        if (rc != UTC_OK)
            break;
        for (size_t i = 0; i < c->size; i++) {
            double v = f + (double)i;
            if (frame[i] != v * v)
                c->errors++;
        }
        c->frames_seen++;
    }
    free(frame);
    return rc == UTC_ERR_CLOSED ? UTC_OK : rc; /* the end of the stream */
}

static const utc_task_ops_t generate_ops = {
    .name = "generate", .size = sizeof(generate_t), .run = generate_run};
static const utc_task_ops_t square_ops = {.name = "square",
                                          .size = sizeof(square_t),
                                          .init = square_init,
                                          .run = square_run,
                                          .fini = square_fini};
static const utc_task_ops_t check_ops = {
    .name = "check", .size = sizeof(check_t), .run = check_run};

static int usage(const char *prog, int rc)
{
    printf("usage: %s [--frames N] [--size DOUBLES] [--help] [--version]\n"
           "Runs a three-stage pipeline (generate, square with 2 threads, check) over N\n"
           "frames (default 20) of DOUBLES numbers (default 10000).\n"
           "Launch with: utcrun -np 1|2|3 %s\n", prog, prog);
    return rc;
}

int main(int argc, char **argv)
{
    int frames = 20;
    long size = 10000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return usage(argv[0], 0);
        if (!strcmp(argv[i], "--version")) {
            printf("example_pipeline (UTC) %s\n", utc_version_string());
            return 0;
        }
        if (!strcmp(argv[i], "--frames") && i + 1 < argc)
            frames = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--size") && i + 1 < argc)
            size = atol(argv[++i]);
        else
            return usage(argv[0], 2);
    }
    if (frames < 0 || size < 1) {
        fprintf(stderr, "--frames must be >= 0 and --size >= 1\n");
        return 2;
    }
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "utc_init: %s\n", utc_last_error());
        return 1;
    }
    int n = utc_nranks();
    int gen_procs[1] = {0};
    int sq_procs[2] = {1 % n, 1 % n}; /* two threads on one rank */
    int chk_procs[1] = {2 % n};

    utc_task_t *gen = NULL, *sq = NULL, *chk = NULL;
    utc_conduit_t *c1 = NULL, *c2 = NULL;
    utc_status_t rc = utc_task_create(&generate_ops, gen_procs, 1, NULL, &gen);
    if (rc == UTC_OK)
        rc = utc_task_create(&square_ops, sq_procs, 2, NULL, &sq);
    if (rc == UTC_OK)
        rc = utc_task_create(&check_ops, chk_procs, 1, NULL, &chk);
    if (rc == UTC_OK)
        rc = utc_conduit_create(gen, sq, NULL, &c1);
    if (rc == UTC_OK)
        rc = utc_conduit_create(sq, chk, NULL, &c2);
    if (rc == UTC_OK) {
        generate_t *g = (generate_t *)gen;
        square_t *s = (square_t *)sq;
        check_t *c = (check_t *)chk;
        g->out = s->in = c1;
        s->out = c->in = c2;
        g->size = s->size = c->size = (size_t)size;
        g->frames = frames;
        rc = utc_task_init(sq, NULL); /* synchronous: allocates the shared frame */
    }
    /* start all three stages, then wait for them */
    if (rc == UTC_OK)
        rc = utc_task_run(gen, NULL);
    if (rc == UTC_OK)
        rc = utc_task_run(sq, NULL);
    if (rc == UTC_OK)
        rc = utc_task_run(chk, NULL);
    double t0 = utc_wtime();
    if (rc == UTC_OK) {
        utc_status_t w[3] = {utc_task_wait(gen), utc_task_wait(sq), utc_task_wait(chk)};
        for (int i = 0; i < 3 && rc == UTC_OK; i++)
            rc = w[i];
    }
    if (rc == UTC_OK && utc_rank() == chk_procs[0]) {
        check_t *c = (check_t *)chk;
        printf("check: %d frames of %ld doubles in %.3f s, %d wrong values\n", c->frames_seen,
               size, utc_wtime() - t0, c->errors);
        if (c->frames_seen != frames || c->errors)
            rc = UTC_ERR_INTERNAL;
    }
    if (rc != UTC_OK)
        fprintf(stderr, "rank %d: %s (%s)\n", utc_rank(), utc_status_string(rc),
                utc_last_error());
    if (c2)
        utc_conduit_destroy(c2);
    if (c1)
        utc_conduit_destroy(c1);
    if (chk)
        utc_task_destroy(chk);
    if (sq)
        utc_task_destroy(sq);
    if (gen)
        utc_task_destroy(gen);
    utc_status_t frc = utc_finalize(); /* fails when, say, the UTC_TRACE file was lost */
    if (frc != UTC_OK)
        fprintf(stderr, "utc_finalize: %s\n", utc_last_error());
    return rc == UTC_OK && frc == UTC_OK ? 0 : 1;
}
