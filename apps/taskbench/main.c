/*
 * utc_taskbench: Task Bench (Slaughter et al., SC20) implemented on UTC.
 *
 *   utcrun -np R utc_taskbench [Task Bench flags] [--threads N] [--layout block|cyclic]
 *                              [--bind none|core|pu|package]
 *
 * Task Bench describes a computation as task graphs: `-steps` rows (timesteps) of
 * `-width` points; the task at (t, p) reads the outputs of its dependencies at t-1 (the
 * pattern: `-type`), runs a kernel and writes an output. Its core (core_c.h) gives the
 * graphs, runs the kernel and checks every input a task receives.
 *
 * Mapping of the graphs onto UTC:
 *
 * - Threads. Each rank runs T task threads (--threads, default: the most points any rank
 *   holds, at most the CPUs this process may use). Global thread g = rank * T + local id.
 * - Points. The points of every graph are dealt to the R * T threads: in contiguous blocks
 *   (--layout block, the default: thread g owns [g*W/(R*T), (g+1)*W/(R*T)), so rank r owns
 *   [r*W/R, (r+1)*W/R) exactly as Task Bench's MPI version splits them) or round robin
 *   (--layout cyclic). A point stays on its thread for the whole run: the thread runs the
 *   point's task at every timestep, so a task of the graph is a call, not a scheduled
 *   object, and costs no allocation or queueing.
 * - Tasks. One UTC task per rank, "taskbench@r", whose T threads live on rank r (proc
 *   list {r, ..., r}). Its rank instance (local shared scope) holds each thread's progress
 *   counter and each point's output slots, so threads of one rank exchange outputs through
 *   shared memory: a consumer reads the producer's output slot in place (no copy, no
 *   message, no allocation) once the producer's progress counter says the timestep is done
 *   (acquire/release atomics; a waiter spins briefly, then sleeps on a futex). A producer
 *   keeps TB_SLOTS output slots per point and runs at most TB_SLOTS - 2 steps ahead of its
 *   local consumers.
 * - Conduits. Dependencies between ranks travel on one conduit per pair of ranks that
 *   exchange anything (between the two ranks' tasks). Per timestep, a thread sends each
 *   thread of another rank it feeds ONE message with the outputs of all its points that
 *   thread needs (batched; iwrite from a slot buffer, no allocation by the app), on a tag
 *   of its own (graph, sender thread, receiver thread), so timesteps arrive in order. The
 *   receiver posts the read (iread) for step t+1 a step ahead, at the top of step t, and
 *   reads the inputs in place in the receive slot.
 * - Timestep of one thread: post the reads of step t+1; wait for the local producers and
 *   the posted reads of step t; check slot reuse against the local consumers; run the
 *   kernel of each owned active point; send the batched outputs to other ranks; retire
 *   the sends of step t-1 that are done; publish progress. Between a message's arrival
 *   and the next send (the path that sets a step's length when ranks exchange every
 *   step) there is only the kernel and the sends: the reads are posted, and the sends
 *   retired, while the inputs are on their way (doc/PERFORMANCE.md, "Task Bench with
 *   conduits: the fourth round"). The main thread runs and waits for each run in one
 *   call (utc_task_run_wait), bound where the rank's last task thread runs: it runs that
 *   thread's share itself, and the thread is not woken for it.
 *   Graphs (`-and`) run one after the other on each thread; each has its own slots and
 *   tags, so a thread may start graph g+1 while others finish graph g.
 * - Global shared data instead (--comm gshared). One UTC task spans all ranks (T threads on
 *   each; threads of one rank share outputs as above) and owns one global shared data
 *   object of 8-byte elements. Each stream (writer thread, reader thread on another rank)
 *   has, in the reader rank's part, a step flag and TB_SLOTS slots (tb_gs_layout). The
 *   writer stores its batched outputs of step t into slot t % TB_SLOTS and then the flag,
 *   t + 1, in one utc_gdata_rstore_signal (on one node: a copy into the reader's memory and
 *   a release store); the reader waits for the flag (utc_gdata_wait_until, local loads)
 *   and runs its kernels on the slot in place: no message, no copy on the reader's side.
 *   Slots are reused only once the reader has acked them: at a step's end, at most every
 *   GS_ACK_EVERY steps, it stores the last step it read into an ack element on the
 *   writer's rank, which the writer waits on when it comes back to a slot (rarely: it has
 *   TB_SLOTS slots). A failing thread raises a flag on every rank so waits end.
 * - Timing, as Task Bench's MPI version: two runs, each between two barriers of all ranks,
 *   the second reported by rank 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <core_c.h>
#include <utc/utc.h>

#include "plan.h"

/* ---- progress counters: one per thread, in the rank instance ---- */

typedef struct tb_progress {
    _Alignas(64) atomic_uint step; /* timesteps completed since the start (all runs) */
    atomic_uint sleepers;          /* threads asleep on step */
} tb_progress_t;

typedef struct tb_task {
    utc_task_t base;
    tb_world_t *world;
    tb_progress_t *progress; /* [T] */
    tb_plan_t **plan;        /* [T][ngraphs] */
    atomic_int failed;       /* a thread failed: waiters give up */
    /* the CPUs of the rank's last task thread (whose share of a run utc_task_wait lends
     * the caller's core to): the main thread waits for the runs bound there */
    cpu_set_t last_cpus;
    bool last_cpus_known;
} tb_task_t;

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int reached(const tb_progress_t *p, uint32_t target)
{
    /* acquire: pairs with tb_publish's store, so the producer's outputs are visible */
    return (int32_t)(atomic_load_explicit(&p->step, memory_order_acquire) - target) >= 0;
}

/* Wait until p->step >= target: spin ~50 us (yielding after ~5 us), then sleep. */
static int tb_wait(tb_task_t *tk, tb_progress_t *p, uint32_t target)
{
    if (reached(p, target))
        return UTC_OK;
    double t0 = 0;
    for (unsigned i = 1;; i++) {
        if (reached(p, target))
            return UTC_OK;
        cpu_relax();
        if ((i & 63) == 0) {
            double t = now_s();
            if (t0 == 0)
                t0 = t;
            else if (t - t0 > 50e-6)
                break;
            else if (t - t0 > 5e-6)
                sched_yield();
        }
    }
    for (;;) {
        atomic_fetch_add(&p->sleepers, 1); /* seq_cst: see tb_publish */
        unsigned v = atomic_load(&p->step);
        if ((int32_t)(v - target) >= 0 || atomic_load(&tk->failed)) {
            atomic_fetch_sub(&p->sleepers, 1);
            return atomic_load(&tk->failed) ? UTC_ERR_TASK_FAILED : UTC_OK;
        }
        syscall(SYS_futex, &p->step, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
        atomic_fetch_sub(&p->sleepers, 1);
    }
}

static void tb_publish(tb_progress_t *p, uint32_t step)
{
    /* seq_cst store then seq_cst load of sleepers: either the waiter sees the new step or
     * we see the waiter (Dekker), so no wake-up is lost */
    atomic_store(&p->step, step);
    if (atomic_load(&p->sleepers))
        syscall(SYS_futex, &p->step, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void tb_fail(tb_task_t *tk)
{
    atomic_store(&tk->failed, 1);
    for (int i = 0; i < tk->world->threads; i++) {
        atomic_fetch_add(&tk->progress[i].step, 0);
        syscall(SYS_futex, &tk->progress[i].step, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    }
}

static int report(tb_task_t *tk, utc_ctx_t *ctx, const char *what, int rc)
{
    fprintf(stderr, "utc_taskbench: rank %d thread %d: %s: %s (%s)\n", ctx->world_rank,
            ctx->local_id, what, utc_status_string(rc), utc_last_error());
    tb_fail(tk);
    return rc;
}

/* ---- --comm gshared: flags and acks in this rank's part of the global shared data ---- */

/* Wait until element idx of this rank's part, a step count, reaches target (*seen gets
 * it): utc_gdata_wait_until, which spins briefly and then sleeps. Every 0.1 s it looks
 * whether a thread of this rank failed, or one of another rank raised the failure flag
 * (element 0), and gives up if so. */
static int gs_wait(tb_task_t *tk, utc_gdata_t *gd, long idx, uint32_t target, uint32_t *seen)
{
    for (;;) {
        int64_t v = 0;
        /* a step count of 32 bits (it wraps), stored as an int64_t */
        int rc = utc_gdata_wait_until(gd, (size_t)idx, UTC_CMP_GE, (int64_t)target, 0.1, &v);
        if (rc == UTC_OK) {
            *seen = (uint32_t)v;
            return UTC_OK;
        }
        if (rc != UTC_ERR_TIMEOUT)
            return rc;
        if (atomic_load(&tk->failed) ||
            utc_gdata_wait_until(gd, 0, UTC_CMP_NE, 0, 0, NULL) == UTC_OK)
            return UTC_ERR_TASK_FAILED;
    }
}

/* A thread failed: raise the failure flag on every rank, so their waits end. */
static void gs_fail_all(const tb_world_t *w, utc_gdata_t *gd)
{
    int64_t one = 1;
    for (int r = 0; r < w->nranks; r++)
        (void)utc_gdata_rstore(gd, r, 0, &one);
    (void)utc_gdata_quiet(gd);
}

/* ---- the task ---- */

static int tb_init(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    tb_task_t *tk = (tb_task_t *)self;
    tb_world_t *w = tk->world;
    int me = w->rank * w->threads + ctx->local_id;
    tb_plan_t *pl = tk->plan[ctx->local_id];
    int rc;
    if (ctx->local_id == w->threads - 1) /* (this thread's own mask) */
        tk->last_cpus_known = sched_getaffinity(0, sizeof tk->last_cpus, &tk->last_cpus) == 0;
    for (long g = 0; g < w->ngraphs; g++)
        if ((rc = tb_plan_points(&pl[g], w, g, me)) != UTC_OK)
            return rc;
    /* every local point's slots are known: now inputs can point at them */
    if ((rc = utc_ctx_barrier_local(ctx)) != UTC_OK)
        return rc;
    for (long g = 0; g < w->ngraphs; g++)
        if ((rc = tb_plan_links(&pl[g], w, g, me)) != UTC_OK)
            return rc;
    if (w->comm == TB_COMM_GSHARED) {
        /* collective over the task's threads on every rank; freed with the task */
        utc_gdata_t *gd;
        if ((rc = utc_gdata_create(ctx, 8, (size_t)w->gs_count, &gd)) != UTC_OK)
            return rc;
        int64_t *part = utc_gdata_ptr(gd);
        for (long g = 0; g < w->ngraphs; g++) {
            pl[g].gd = gd;
            for (int i = 0; i < pl[g].nin; i++) /* the slots follow the flag */
                pl[g].in[i].gs_in = (const char *)(part + pl[g].in[i].gs_flag + 1);
        }
    }
    return UTC_OK;
}

static void tb_fini(utc_task_t *self, utc_ctx_t *ctx)
{
    tb_task_t *tk = (tb_task_t *)self;
    tb_plan_t *pl = tk->plan[ctx->local_id];
    for (long g = 0; g < tk->world->ngraphs; g++)
        tb_plan_fini(&pl[g]);
}

/* A reader acks its reads of a stream at a step's end (gs_ack) at most this many steps
 * after its last ack, so a writer that reuses a slot TB_SLOTS steps after writing it finds
 * it acked without waiting, and an ack is stored every few steps, not every step. */
#define GS_ACK_EVERY 4

/* gshared, at the end of step `now`, after its kernels: ack the reads due to their
 * writers. `last`: the graph's last step, after which every read is acked (the next run's
 * writers reuse the slots). */
static int gs_ack(tb_plan_t *pl, uint32_t now, bool last)
{
    for (int i = 0; i < pl->nin; i++) {
        tb_stream_t *st = &pl->in[i];
        if (st->gs_read == st->gs_acked ||
            (!last && (int32_t)(now - st->gs_acked) < GS_ACK_EVERY))
            continue;
        int rc = utc_gdata_rstore_signal(pl->gd, st->gs_rank, 0, 0, NULL, (size_t)st->gs_ackidx,
                                         st->gs_read);
        if (rc != UTC_OK)
            return rc;
        st->gs_acked = st->gs_read;
    }
    return UTC_OK;
}

/* One graph on one thread. `base` is the progress value at the graph's first timestep. */
static int run_graph(tb_task_t *tk, utc_ctx_t *ctx, tb_plan_t *pl, long g, uint32_t base)
{
    tb_world_t *w = tk->world;
    task_graph_t gr = pl->graph;
    tb_progress_t *mine = &tk->progress[ctx->local_id];
    size_t ob = gr.output_bytes_per_task, sb = gr.scratch_bytes_per_task;
    size_t stride = (ob + 63) & ~(size_t)63;
    long np = pl->npoints;
    int rc;
    bool gs = w->comm == TB_COMM_GSHARED;

    /* the timesteps' shapes (the plan's table): step t's values carry over to t+1 */
    tb_shape_t cur = tb_plan_shape(pl, 0), prev = tb_plan_shape(pl, -1);
    long d = cur.dset, off = cur.off, wid = cur.wid, poff = prev.off, pwid = prev.wid;
    for (long t = 0; t < gr.timesteps; t++) {
        uint32_t now = base + (uint32_t)t;
        unsigned ps = (unsigned)(t - 1) & (TB_SLOTS - 1), s = (unsigned)t & (TB_SLOTS - 1);
        tb_shape_t next = t + 1 < gr.timesteps ? tb_plan_shape(pl, t + 1) : (tb_shape_t){0};
        long dn = next.dset;

        /* the inputs of step t+1 from other ranks: their reads are posted now, a step
         * ahead, while step t's inputs are on their way (see the opening comment) */
        for (int i = 0; i < pl->nin && t + 1 < gr.timesteps; i++) {
            tb_stream_t *st = &pl->in[i];
            long lo, hi;
            tb_stream_range(st, dn, off, wid, &lo, &hi);
            st->lo[s] = lo;
            st->n[s] = hi - lo;
            if (hi == lo || gs)
                continue;
            if ((rc = utc_conduit_iread(st->link, st->buf + s * st->slot_bytes,
                                        (size_t)(hi - lo) * ob, st->tag, &st->req[s])) != UTC_OK)
                return report(tk, ctx, "utc_conduit_iread", rc);
        }
        if (t > 0) {
            /* inputs from this rank: the producers have finished step t-1 */
            for (long k = pl->prod_off[d]; k < pl->prod_off[d + 1]; k++)
                if ((rc = tb_wait(tk, &tk->progress[pl->prod[k]], now)) != UTC_OK)
                    return rc;
            /* inputs from other ranks: the reads posted after step t-1 */
            for (int i = 0; i < pl->nin && gs; i++) {
                tb_stream_t *st = &pl->in[i];
                if (!st->n[ps])
                    continue;
                /* the writer stored the slot and then its flag (utc_gdata_rstore_signal):
                 * once the flag says step t-1, the slot is here */
                uint32_t seen;
                if ((rc = gs_wait(tk, pl->gd, st->gs_flag, now, &seen)) != UTC_OK)
                    return report(tk, ctx, "waiting for inputs in global shared data", rc);
                /* read in place (st->gs_in); acked at the step's end, after the kernels */
                st->gs_read = now;
            }
            for (int i = 0; i < pl->nin && !gs; i++) {
                tb_stream_t *st = &pl->in[i];
                if (!st->req[ps])
                    continue;
                size_t got = 0;
                if ((rc = utc_request_wait(&st->req[ps], &got)) != UTC_OK)
                    return report(tk, ctx, "reading a message", rc);
                if (got != (size_t)st->n[ps] * ob) {
                    fprintf(stderr,
                            "utc_taskbench: graph %ld step %ld: message of %zu bytes, "
                            "expected %zu\n",
                            g, t, got, (size_t)st->n[ps] * ob);
                    tb_fail(tk);
                    return UTC_ERR_INTERNAL;
                }
            }
        }
        /* slot s last held step t - TB_SLOTS: its local readers are past step t-TB_SLOTS+1 */
        if (t >= TB_SLOTS - 1)
            for (int k = 0; k < pl->ncons; k++)
                if ((rc = tb_wait(tk, &tk->progress[pl->cons[k]], now - TB_SLOTS + 2)) != UTC_OK)
                    return rc;

        for (long j = 0; j < np; j++) {
            long q = pl->points[j];
            if (q < off || q >= off + wid)
                continue;
            size_t n = 0;
            for (long x = pl->dep_off[d * np + j]; x < pl->dep_off[d * np + j + 1]; x++) {
                const tb_dep_t *dep = &pl->deps[x];
                if (dep->point < poff || dep->point >= poff + pwid)
                    continue;
                if (dep->local) {
                    pl->in_ptr[n++] = dep->local + ps * stride;
                } else {
                    const tb_stream_t *st = &pl->in[dep->stream];
                    const char *slot = gs ? st->gs_in + ps * st->gs_slot * 8
                                          : st->buf + ps * st->slot_bytes;
                    pl->in_ptr[n++] = slot + (size_t)(dep->idx - st->lo[ps]) * ob;
                }
            }
            char *out = w->ring[g][q] + s * stride;
            task_graph_execute_point_scratch(gr, t, q, out, ob, pl->in_ptr, pl->in_bytes, n,
                                             sb ? pl->scratch + (size_t)j * sb : NULL, sb);
        }

        if (t + 1 < gr.timesteps) {
            /* outputs needed on other ranks: one message per receiving thread */
            for (int i = 0; i < pl->nout; i++) {
                tb_stream_t *st = &pl->outs[i];
                long lo, hi;
                const long *L = tb_stream_range(st, dn, off, wid, &lo, &hi);
                if (hi == lo)
                    continue;
                if (gs) {
                    /* the reader's copy of this slot's last message must be done */
                    uint32_t need = st->gs_last[s];
                    if (need && (int32_t)(st->gs_acked - need) < 0 &&
                        (rc = gs_wait(tk, pl->gd, st->gs_ackidx, need, &st->gs_acked)) != UTC_OK)
                        return report(tk, ctx, "waiting for a reader's ack", rc);
                } else if (st->req[s] && (rc = utc_request_wait(&st->req[s], NULL)) != UTC_OK) {
                    return report(tk, ctx, "sending a message", rc);
                }
                char *buf = st->buf + s * st->slot_bytes;
                for (long k = lo; k < hi; k++)
                    memcpy(buf + (size_t)(k - lo) * ob, w->ring[g][L[k]] + s * stride, ob);
                if (gs) {
                    /* the slot, then its step flag: the reader sees the flag after the slot */
                    size_t nel = ((size_t)(hi - lo) * ob + 7) / 8;
                    if ((rc = utc_gdata_rstore_signal(pl->gd, st->gs_rank,
                                                      (size_t)(st->gs_flag + 1 + s * st->gs_slot),
                                                      nel, buf, (size_t)st->gs_flag,
                                                      (int64_t)now + 1)) != UTC_OK)
                        return report(tk, ctx, "utc_gdata_rstore_signal", rc);
                    st->gs_last[s] = now + 1;
                } else if ((rc = utc_conduit_iwrite(st->link, buf, (size_t)(hi - lo) * ob,
                                                    st->tag, &st->req[s])) != UTC_OK) {
                    return report(tk, ctx, "utc_conduit_iwrite", rc);
                }
            }
        }
        /* retire the previous step's sends, so the slot-reuse check before a send
         * rarely has one to wait */
        for (int i = 0; i < pl->nout && !gs && t + 1 < gr.timesteps; i++) {
            int done;
            if (pl->outs[i].req[ps] &&
                (rc = utc_request_test(&pl->outs[i].req[ps], &done, NULL)) != UTC_OK)
                return report(tk, ctx, "sending a message", rc);
        }
        if (gs && (rc = gs_ack(pl, now, t + 1 == gr.timesteps)) != UTC_OK)
            return report(tk, ctx, "acking reads in global shared data", rc);
        if (w->threads > 1) /* a thread alone on its rank has no local reader to tell */
            tb_publish(mine, now + 1);
        if (t + 1 < gr.timesteps) {
            poff = off;
            pwid = wid;
            d = dn;
            off = next.off;
            wid = next.wid;
        }
    }
    /* the last sends must be done before the slots are reused by the next run */
    for (int i = 0; i < pl->nout; i++)
        for (int k = 0; k < TB_SLOTS; k++)
            if (pl->outs[i].req[k] && (rc = utc_request_wait(&pl->outs[i].req[k], NULL)) != UTC_OK)
                return report(tk, ctx, "sending a message", rc);
    return UTC_OK;
}

static int tb_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    tb_task_t *tk = (tb_task_t *)self;
    tb_world_t *w = tk->world;
    uint32_t run = *(const uint32_t *)arg;
    for (long g = 0; g < w->ngraphs; g++) {
        int rc = run_graph(tk, ctx, &tk->plan[ctx->local_id][g], g,
                           run * w->steps_per_run + w->step_base[g]);
        if (rc != UTC_OK) {
            tb_fail(tk);
            if (w->comm == TB_COMM_GSHARED)
                gs_fail_all(w, tk->plan[ctx->local_id][g].gd);
            return rc;
        }
    }
    return UTC_OK;
}

static const utc_task_ops_t tb_ops = {.name = "taskbench",
                                      .size = sizeof(tb_task_t),
                                      .init = tb_init,
                                      .run = tb_run,
                                      .fini = tb_fini};

/* --comm gshared: the most elements (8 bytes) of global shared data per rank (1 GiB) */
#define GS_MAX_ELEMS (1L << 27)

/* ---- command line ---- */

typedef struct options {
    int threads; /* 0: default */
    tb_layout_t layout;
    tb_comm_t comm;
    int bind; /* a utc_bind_mode_t, or -1: default */
} options_t;

static void usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: utcrun -np R %s [TASK BENCH FLAGS] [OPTIONS]\n"
            "Task Bench on UTC: T task threads per rank, conduits (or global shared data)\n"
            "between ranks.\n"
            "Task Bench's flags (-steps, -width, -type, -kernel, -iter, -and, ...): see %s -h.\n"
            "With them alone, the points of each graph are spread evenly over the R ranks.\n"
            "\n"
            "Options:\n"
            "  --threads N            task threads per rank (default: the most points a rank\n"
            "                         holds, at most the CPUs this process may use)\n"
            "  --layout block|cyclic  points to threads in contiguous blocks (default) or\n"
            "                         round robin over all ranks' threads\n"
            "  --comm auto|gshared|conduit\n"
            "                         between ranks, outputs travel as stores with a signal\n"
            "                         into global shared data of one task over all ranks\n"
            "                         (gshared), or as messages on conduits between tasks of\n"
            "                         one rank each; auto (default): gshared on 2+ ranks when\n"
            "                         its slots fit in 1 GiB per rank, else conduit\n"
            "  --bind none|core|pu|package\n"
            "                         pinning of the task threads (default: core when this\n"
            "                         node's ranks x threads fit in its CPUs, else none)\n"
            "  --help                 this text\n",
            prog, prog);
}

static int bad(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "utc_taskbench: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, " (see utc_taskbench --help)\n");
    return 2;
}

/* Task Bench's flags that take a value, and those that do not. */
static const char *const tb_value_flags[] = {
    "-steps",  "-width",   "-type",   "-radix",     "-period", "-fraction", "-kernel", "-iter",
    "-output", "-scratch", "-sample", "-imbalance", "-nodes",  "-field",    NULL};
static const char *const tb_plain_flags[] = {"-h", "-v", "-vv", "-and", "-skip-graph-validation",
                                             NULL};

static int in_list(const char *const *l, const char *s)
{
    for (; *l; l++)
        if (!strcmp(*l, s))
            return 1;
    return 0;
}

/* Split argv into our options and Task Bench's flags (tb_argv, NULL-terminated). Returns 0,
 * 2 on a bad flag, or -1 for --help. */
static int parse(int argc, char **argv, options_t *o, int *tb_argc, char **tb_argv)
{
    *tb_argc = 0;
    tb_argv[(*tb_argc)++] = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help"))
            return -1;
        if (!strncmp(a, "--", 2)) {
            const char *v = i + 1 < argc ? argv[i + 1] : NULL;
            if (strcmp(a, "--threads") && strcmp(a, "--layout") && strcmp(a, "--bind") &&
                strcmp(a, "--comm"))
                return bad("unknown option '%s'%s", a, "");
            if (!v)
                return bad("option %s needs a value%s", a, "");
            i++;
            if (!strcmp(a, "--threads")) {
                char *end;
                errno = 0;
                long n = strtol(v, &end, 10);
                if (errno || *end || end == v || n < 1 || n > UTC_TASK_MAX_THREADS)
                    return bad("--threads needs a number from 1 to 4096, not '%s'%s", v, "");
                o->threads = (int)n;
            } else if (!strcmp(a, "--layout")) {
                if (!strcmp(v, "block"))
                    o->layout = TB_LAYOUT_BLOCK;
                else if (!strcmp(v, "cyclic"))
                    o->layout = TB_LAYOUT_CYCLIC;
                else
                    return bad("unknown --layout '%s' (block or cyclic)%s", v, "");
            } else if (!strcmp(a, "--comm")) {
                if (!strcmp(v, "conduit"))
                    o->comm = TB_COMM_CONDUIT;
                else if (!strcmp(v, "gshared"))
                    o->comm = TB_COMM_GSHARED;
                else if (!strcmp(v, "auto"))
                    o->comm = TB_COMM_AUTO;
                else
                    return bad("unknown --comm '%s' (auto, gshared or conduit)%s", v, "");
            } else {
                if (!strcmp(v, "none"))
                    o->bind = UTC_BIND_NONE;
                else if (!strcmp(v, "core"))
                    o->bind = UTC_BIND_CORE;
                else if (!strcmp(v, "pu"))
                    o->bind = UTC_BIND_PU;
                else if (!strcmp(v, "package"))
                    o->bind = UTC_BIND_PACKAGE;
                else
                    return bad("unknown --bind '%s' (none, core, pu or package)%s", v, "");
            }
            continue;
        }
        if (in_list(tb_value_flags, a)) {
            if (i + 1 >= argc)
                return bad("Task Bench flag %s needs a value%s", a, "");
            tb_argv[(*tb_argc)++] = argv[i++];
            tb_argv[(*tb_argc)++] = argv[i];
            continue;
        }
        if (in_list(tb_plain_flags, a)) {
            tb_argv[(*tb_argc)++] = argv[i];
            continue;
        }
        if (a[0] == '-')
            return bad("unknown flag '%s'%s: not a Task Bench flag (-h lists them) nor an option",
                       a, "");
        return bad("unexpected argument '%s'%s", a, "");
    }
    tb_argv[*tb_argc] = NULL;
    return 0;
}

static int cpus_allowed(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static void die(const char *what, utc_status_t rc)
{
    fprintf(stderr, "utc_taskbench: rank %d: %s: %s (%s)\n", utc_rank(), what,
            utc_status_string(rc), utc_last_error());
    exit(1); /* without utc_finalize: mpirun ends the other ranks */
}

/* Free the world main set up (arrays NULL or not yet filled are fine). */
static void free_world(tb_world_t *w)
{
    for (long g = 0; g < w->ngraphs && w->owner && w->ring; g++) {
        free(w->owner[g]);
        free(w->ring[g]);
    }
    free(w->graphs);
    free(w->step_base);
    free(w->owner);
    free(w->ring);
    free(w->link);
    free(w->gs_in);
    free(w->gs_ack);
    free(w->gs_slot);
}

/* Leave before any task exists (a refused configuration, said on rank 0): status 2. */
static int early_exit(tb_world_t *w, task_graph_list_t gl, app_t app, char **tb_argv)
{
    utc_finalize();
    free_world(w);
    free(tb_argv);
    task_graph_list_destroy(gl);
    app_destroy(app);
    return 2;
}

int main(int argc, char **argv)
{
    options_t o = {0, TB_LAYOUT_BLOCK, TB_COMM_AUTO, -1};
    int tb_argc;
    char **tb_argv = calloc((size_t)argc + 1, sizeof *tb_argv);
    if (!tb_argv)
        return 1;
    int prc = parse(argc, argv, &o, &tb_argc, tb_argv);
    if (prc != 0) {
        free(tb_argv);
        if (prc > 0)
            return prc;
        usage(stdout, argv[0]);
        return 0;
    }

    /* Task Bench parses its flags (and prints -h, or an error, and stops) */
    app_t app = app_create(tb_argc, tb_argv);

    utc_status_t rc = utc_init(&argc, &argv);
    if (rc != UTC_OK) {
        fprintf(stderr, "utc_taskbench: utc_init: %s (%s)\n", utc_status_string(rc),
                utc_last_error());
        return 1;
    }
    int R = utc_nranks(), rank = utc_rank();

    task_graph_list_t gl = app_task_graphs(app);
    tb_world_t w = {0};
    w.ngraphs = task_graph_list_num_task_graphs(gl);
    w.nranks = R;
    w.rank = rank;
    w.layout = o.layout;
    w.graphs = calloc((size_t)w.ngraphs, sizeof *w.graphs);
    w.step_base = calloc((size_t)w.ngraphs, sizeof *w.step_base);
    w.owner = calloc((size_t)w.ngraphs, sizeof *w.owner);
    w.ring = calloc((size_t)w.ngraphs, sizeof *w.ring);
    w.link = calloc((size_t)R, sizeof *w.link);
    if (!w.graphs || !w.step_base || !w.owner || !w.ring || !w.link)
        die("setup", UTC_ERR_NO_MEMORY);

    long most = 1, total_steps = 0;
    for (long g = 0; g < w.ngraphs; g++) {
        w.graphs[g] = task_graph_list_task_graph(gl, g);
        long W = w.graphs[g].max_width;
        most = W / R + (W % R != 0) > most ? W / R + (W % R != 0) : most;
        w.step_base[g] = (uint32_t)total_steps;
        total_steps += w.graphs[g].timesteps;
    }
    if (total_steps > (1L << 29)) {
        if (rank == 0)
            fprintf(stderr, "utc_taskbench: too many timesteps (%ld, at most 2^29)\n", total_steps);
        return early_exit(&w, gl, app, tb_argv);
    }
    w.steps_per_run = (uint32_t)total_steps;
    int T = o.threads ? o.threads : (most < cpus_allowed() ? (int)most : cpus_allowed());
    w.threads = T;
    /* how outputs cross ranks (--comm) */
    w.comm = o.comm == TB_COMM_CONDUIT || (o.comm == TB_COMM_AUTO && R == 1) ? TB_COMM_CONDUIT
                                                                              : TB_COMM_GSHARED;
    if (w.comm == TB_COMM_GSHARED && tb_gs_layout(&w) != UTC_OK)
        die("setup", UTC_ERR_NO_MEMORY);
    if (w.comm == TB_COMM_GSHARED && w.gs_count > GS_MAX_ELEMS) {
        if (o.comm == TB_COMM_GSHARED) {
            if (rank == 0)
                fprintf(stderr, "utc_taskbench: --comm gshared needs %ld MiB of global shared "
                        "data per rank for these graphs (at most %ld): use --comm conduit\n",
                        w.gs_count >> 17, GS_MAX_ELEMS >> 17);
            return early_exit(&w, gl, app, tb_argv);
        }
        w.comm = TB_COMM_CONDUIT; /* auto: too large, messages instead */
    }
    o.comm = w.comm;

    /* conduits: a tag per (graph, writer thread, reader thread) */
    if ((long)R * T > INT_MAX / 2 ||
        (w.comm == TB_COMM_CONDUIT && w.ngraphs * T * T > UTC_CONDUIT_TAG_MAX + 1L)) {
        if (rank == 0)
            fprintf(stderr,
                    "utc_taskbench: %ld graphs x %d threads per rank need more message "
                    "tags than a conduit has (%d): use fewer threads\n",
                    w.ngraphs, T, UTC_CONDUIT_TAG_MAX + 1);
        return early_exit(&w, gl, app, tb_argv);
    }

    /* where every point lives, and which rank pairs exchange outputs */
    char *pair = calloc((size_t)R * R, 1);
    if (!pair)
        die("setup", UTC_ERR_NO_MEMORY);
    for (long g = 0; g < w.ngraphs; g++) {
        task_graph_t gr = w.graphs[g];
        long W = gr.max_width;
        if (!(w.owner[g] = malloc(sizeof(int) * (size_t)W)) ||
            !(w.ring[g] = calloc((size_t)W, sizeof(char *))))
            die("setup", UTC_ERR_NO_MEMORY);
        for (long p = 0; p < W; p++)
            w.owner[g][p] = tb_owner(o.layout, W, R * T, p);
        if (R == 1)
            continue;
        long nd = task_graph_max_dependence_sets(gr);
        for (long d = 0; d < nd; d++)
            for (long q = 0; q < W; q++) {
                interval_list_t il = task_graph_dependencies(gr, d, q);
                long ni = interval_list_num_intervals(il);
                for (long k = 0; k < ni; k++) {
                    interval_t iv = interval_list_interval(il, k);
                    for (long p = iv.start; p <= iv.end; p++) {
                        int a = w.owner[g][p] / T, b = w.owner[g][q] / T;
                        if (a != b)
                            pair[a < b ? a * R + b : b * R + a] = 1;
                    }
                }
                interval_list_destroy(il);
            }
    }

    /* conduit: one task per rank (collective: every rank creates all of them, in order).
     * gshared: one task over all ranks, T threads on each, with a window for the object */
    int ntasks = o.comm == TB_COMM_GSHARED ? 1 : R;
    utc_task_t **tasks = calloc((size_t)R, sizeof *tasks);
    int *procs = malloc(sizeof(int) * (size_t)R * (size_t)T);
    if (!tasks || !procs)
        die("setup", UTC_ERR_NO_MEMORY);
    utc_task_options_t topts = UTC_TASK_OPTIONS_INIT;
    if (o.bind < 0) {
        /* Pinned, two busy threads of one rank stay on two cores; unpinned, a thread woken
         * from a futex lands beside its waker and they share a core (measured: stencil_1d,
         * -iter 512..8192, 2-4x slower unpinned on the 2-core VM). Pin when it fits. */
        const char *ls = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
        long local = ls && atol(ls) > 0 ? atol(ls) : R;
        o.bind = local * T <= cpus_allowed() ? UTC_BIND_CORE : UTC_BIND_NONE;
    }
    topts.bind = (utc_bind_mode_t)o.bind;
    topts.window_size = 0; /* conduit: outputs move by memory and conduits */
    if (o.comm == TB_COMM_GSHARED) {
        /* the object, and room for the window's own bookkeeping */
        topts.window_size = (size_t)w.gs_count * 8 + ((size_t)64 << 10);
        for (int r = 0; r < R; r++)
            for (int i = 0; i < T; i++)
                procs[r * T + i] = r;
        if ((rc = utc_task_create(&tb_ops, procs, R * T, &topts, &tasks[0])) != UTC_OK)
            die("utc_task_create", rc);
        tasks[rank] = tasks[0]; /* this rank's instance */
    } else {
        for (int r = 0; r < R; r++) {
            for (int i = 0; i < T; i++)
                procs[i] = r;
            if ((rc = utc_task_create(&tb_ops, procs, T, &topts, &tasks[r])) != UTC_OK)
                die("utc_task_create", rc);
        }
    }
    /* one conduit per pair of ranks that exchange outputs (collective, same order) */
    utc_conduit_t **links = calloc((size_t)R * R, sizeof *links);
    if (!links)
        die("setup", UTC_ERR_NO_MEMORY);
    for (int a = 0; a < R; a++)
        for (int b = a + 1; b < R; b++) {
            if (!pair[a * R + b] || o.comm == TB_COMM_GSHARED)
                continue;
            if ((rc = utc_conduit_create(tasks[a], tasks[b], NULL, &links[a * R + b])) != UTC_OK)
                die("utc_conduit_create", rc);
            if (a == rank)
                w.link[b] = links[a * R + b];
            if (b == rank)
                w.link[a] = links[a * R + b];
        }

    tb_task_t *tk = (tb_task_t *)tasks[rank];
    tk->world = &w;
    tk->progress = aligned_alloc(64, sizeof(tb_progress_t) * (size_t)T);
    tk->plan = calloc((size_t)T, sizeof *tk->plan);
    if (!tk->progress || !tk->plan)
        die("setup", UTC_ERR_NO_MEMORY);
    for (int i = 0; i < T; i++) {
        atomic_init(&tk->progress[i].step, 0);
        atomic_init(&tk->progress[i].sleepers, 0);
        if (!(tk->plan[i] = calloc((size_t)w.ngraphs, sizeof(tb_plan_t))))
            die("setup", UTC_ERR_NO_MEMORY);
    }
    atomic_init(&tk->failed, 0);
    if ((rc = utc_task_init(tasks[rank], NULL)) != UTC_OK)
        die("building the plan (task init)", rc);

    if (rank == 0) {
        int nlinks = 0;
        for (int i = 0; i < R * R; i++)
            nlinks += links[i] != NULL;
        app_display(app);
        static const char *const binds[] = {"none", "package", "core", "pu"};
        if (o.comm == TB_COMM_GSHARED)
            printf("UTC: %d rank(s) x %d task thread(s), layout %s, bind %s, global shared "
                   "data between ranks (%ld KiB per rank)\n",
                   R, T, o.layout ? "cyclic" : "block", binds[o.bind], w.gs_count / 128);
        else
            printf("UTC: %d rank(s) x %d task thread(s), layout %s, bind %s, %d conduit(s) "
                   "between ranks\n",
                   R, T, o.layout ? "cyclic" : "block", binds[o.bind], nlinks);
    }

    /* The main thread runs and waits for each run in utc_task_run_wait, which lends its
     * core to the run where cores are scarce: it runs the last task thread's share, bound
     * as that thread is, without waking that thread (a wake-up and two switches on the
     * shared core: 5-9 us a run). Unbound, it would move to that core at each run and away
     * after (measured: 15-60 us a run, before the first step; MPI's one-thread ranks never
     * move), so it waits bound there from now on. */
    if (o.bind != UTC_BIND_NONE && tk->last_cpus_known)
        (void)sched_setaffinity(0, sizeof tk->last_cpus, &tk->last_cpus);

    double elapsed = 0;
    uint32_t runs[2] = {0, 1};
    for (int it = 0; it < 2; it++) {
        if ((rc = utc_barrier()) != UTC_OK)
            die("utc_barrier", rc);
        double t0 = utc_wtime();
        if ((rc = utc_task_run_wait(tasks[rank], &runs[it])) != UTC_OK)
            die("running the graphs", rc);
        if ((rc = utc_barrier()) != UTC_OK)
            die("utc_barrier", rc);
        elapsed = utc_wtime() - t0;
    }
    if (rank == 0) {
        app_report_timing(app, elapsed);
        fflush(stdout);
    }

    for (int a = 0; a < R; a++)
        for (int b = a + 1; b < R; b++)
            if (links[a * R + b])
                utc_conduit_destroy(links[a * R + b]);
    tb_progress_t *progress = tk->progress;
    tb_plan_t **plans = tk->plan;
    for (int r = 0; r < ntasks; r++) /* fini frees the plans; the rank instance goes */
        utc_task_destroy(tasks[r]);
    int status = 0;
    if (utc_finalize() != UTC_OK) { /* fails when, say, the UTC_TRACE file was lost */
        fprintf(stderr, "utc_taskbench: utc_finalize: %s\n", utc_last_error());
        status = 1;
    }

    for (int i = 0; i < T; i++)
        free(plans[i]);
    free(plans);
    free(progress);
    free_world(&w);
    free(links);
    free(pair);
    free(procs);
    free(tasks);
    free(tb_argv);
    task_graph_list_destroy(gl);
    app_destroy(app);
    return status;
}
