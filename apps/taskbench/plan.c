/*
 * Building a thread's plan for one task graph (plan.h): owned points, the source of each
 * input, the local threads to wait for, and the message streams to and from other ranks.
 * Runs once, in the task's init; nothing here is on the timestep path.
 */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tb_owner(tb_layout_t layout, long w, int nthreads_total, long p)
{
    long n = nthreads_total;
    if (layout == TB_LAYOUT_CYCLIC)
        return (int)(p % n);
    /* block: thread g owns [g*w/n, (g+1)*w/n), as Task Bench's MPI splits over ranks */
    long g = (p * n) / w;
    while (g > 0 && (g * w) / n > p)
        g--;
    while (g + 1 < n && ((g + 1) * w) / n <= p)
        g++;
    return (int)g;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        fprintf(stderr, "utc_taskbench: out of memory\n");
    return p;
}

int tb_plan_points(tb_plan_t *pl, const tb_world_t *w, long g, int me)
{
    memset(pl, 0, sizeof *pl);
    pl->graph = w->graphs[g];
    pl->ndsets = task_graph_max_dependence_sets(pl->graph);
    long width = pl->graph.max_width;
    size_t ob = pl->graph.output_bytes_per_task, sb = pl->graph.scratch_bytes_per_task;

    for (long p = 0; p < width; p++)
        if (w->owner[g][p] == me)
            pl->npoints++;
    if (!(pl->points = xcalloc((size_t)pl->npoints, sizeof *pl->points)))
        return UTC_ERR_NO_MEMORY;
    long j = 0;
    for (long p = 0; p < width; p++)
        if (w->owner[g][p] == me)
            pl->points[j++] = p;

    /* 64-byte aligned slots: no two threads write one cache line */
    size_t slot = (ob + 63) & ~(size_t)63;
    pl->out = aligned_alloc(64, slot * TB_SLOTS * (size_t)(pl->npoints ? pl->npoints : 1));
    pl->scratch = sb ? malloc(sb * (size_t)pl->npoints + 1) : NULL;
    if (!pl->out || (sb && !pl->scratch)) {
        fprintf(stderr, "utc_taskbench: out of memory for %ld points\n", pl->npoints);
        return UTC_ERR_NO_MEMORY;
    }
    memset(pl->out, 0, slot * TB_SLOTS * (size_t)(pl->npoints ? pl->npoints : 1));
    if (sb)
        task_graph_prepare_scratch(pl->scratch, sb * (size_t)pl->npoints);
    for (j = 0; j < pl->npoints; j++)
        w->ring[g][pl->points[j]] = pl->out + (size_t)j * slot * TB_SLOTS;
    /* the shapes of the timesteps, asked of the core here rather than on every timestep
     * (each call copies the graph by value into the core: ~6 ns, three a timestep) */
    long T = pl->graph.timesteps;
    if (T <= TB_SHAPE_MAX) {
        if (!(pl->shape = malloc(sizeof *pl->shape * (size_t)(T + 1)))) {
            fprintf(stderr, "utc_taskbench: out of memory for %ld timesteps\n", T);
            return UTC_ERR_NO_MEMORY;
        }
        for (long t = -1; t < T; t++)
            pl->shape[t + 1] = tb_plan_shape(&(tb_plan_t){.graph = pl->graph}, t);
    }
    return UTC_OK;
}

/* A growable list of longs. */
typedef struct {
    long *v;
    long n, cap;
} lvec_t;

static int lvec_push(lvec_t *l, long x)
{
    if (l->n == l->cap) {
        long cap = l->cap ? 2 * l->cap : 16;
        long *v = realloc(l->v, sizeof *v * (size_t)cap);
        if (!v)
            return UTC_ERR_NO_MEMORY;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = x;
    return UTC_OK;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static long sort_unique(long *v, long n)
{
    if (n == 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_long);
    long k = 1;
    for (long i = 1; i < n; i++)
        if (v[i] != v[k - 1])
            v[k++] = v[i];
    return k;
}

/* A stream under construction: per dependence set, the points it carries. */
typedef struct {
    int peer;
    lvec_t *per_dset;
} sbuild_t;

static int find_stream(sbuild_t **s, int *n, int *cap, int peer, long ndsets)
{
    for (int i = 0; i < *n; i++)
        if ((*s)[i].peer == peer)
            return i;
    if (*n == *cap) {
        int c = *cap ? 2 * *cap : 4;
        sbuild_t *v = realloc(*s, sizeof *v * (size_t)c);
        if (!v)
            return UTC_ERR_NO_MEMORY;
        *s = v;
        *cap = c;
    }
    (*s)[*n].peer = peer;
    if (!((*s)[*n].per_dset = xcalloc((size_t)ndsets, sizeof(lvec_t))))
        return UTC_ERR_NO_MEMORY;
    return (*n)++;
}

/* Turn the built lists into streams: sorted unique points per dset, slot buffers. */
static int finish_streams(sbuild_t *b, int n, tb_stream_t **out, const tb_world_t *w, long g,
                          int me, int sending, long ndsets, size_t ob)
{
    tb_stream_t *s = xcalloc((size_t)n, sizeof *s);
    if (!s)
        return UTC_ERR_NO_MEMORY;
    *out = s;
    int T = w->threads;
    for (int i = 0; i < n; i++) {
        tb_stream_t *st = &s[i];
        st->peer = b[i].peer;
        int from = sending ? me : st->peer, to = sending ? st->peer : me;
        st->link = w->link[sending ? to / T : from / T];
        /* one tag per (graph, sender thread, receiver thread): timesteps keep their order */
        st->tag = (int)((g * T + from % T) * T + to % T);
        if (!(st->off = xcalloc((size_t)ndsets + 1, sizeof *st->off)))
            return UTC_ERR_NO_MEMORY;
        long total = 0, most = 0;
        for (long d = 0; d < ndsets; d++) {
            lvec_t *l = &b[i].per_dset[d];
            l->n = sort_unique(l->v, l->n);
            total += l->n;
            if (l->n > most)
                most = l->n;
        }
        if (!(st->pts = xcalloc((size_t)total, sizeof *st->pts)))
            return UTC_ERR_NO_MEMORY;
        for (long d = 0; d < ndsets; d++) {
            lvec_t *l = &b[i].per_dset[d];
            st->off[d + 1] = st->off[d] + l->n;
            if (l->n)
                memcpy(st->pts + st->off[d], l->v, sizeof(long) * (size_t)l->n);
        }
        /* rounded to 8 bytes: --comm gshared stores a slot whole, in 8-byte elements */
        st->slot_bytes = ((size_t)most * ob + 7) & ~(size_t)7;
        if (w->comm == TB_COMM_GSHARED) {
            int rt = w->nranks * T;
            st->gs_rank = st->peer / T;
            st->gs_slot = w->gs_slot[g];
            st->gs_flag = w->gs_in[g] + ((long)from * T + to % T) * (1 + TB_SLOTS * w->gs_slot[g]);
            st->gs_ackidx = w->gs_ack[g] + (long)(from % T) * rt + to;
        }
        if (!(st->buf = malloc(st->slot_bytes * TB_SLOTS + 1)))
            return UTC_ERR_NO_MEMORY;
    }
    return UTC_OK;
}

static void free_build(sbuild_t *b, int n, long ndsets)
{
    for (int i = 0; i < n; i++) {
        for (long d = 0; d < ndsets; d++)
            free(b[i].per_dset[d].v);
        free(b[i].per_dset);
    }
    free(b);
}

int tb_gs_layout(tb_world_t *w)
{
    long n = w->ngraphs, rt = (long)w->nranks * w->threads, T = w->threads;
    if (!(w->gs_in = xcalloc((size_t)n, sizeof(long))) ||
        !(w->gs_ack = xcalloc((size_t)n, sizeof(long))) ||
        !(w->gs_slot = xcalloc((size_t)n, sizeof(long))))
        return UTC_ERR_NO_MEMORY;
    long at = 1; /* element 0: the failure flag */
    for (long g = 0; g < n; g++) {
        task_graph_t gr = w->graphs[g];
        /* a message holds outputs of its writer's points: at most ceil(W / RT) of them */
        long most = (gr.max_width + rt - 1) / rt;
        w->gs_slot[g] = (long)((most * (long)gr.output_bytes_per_task + 7) / 8);
        w->gs_in[g] = at;
        at += rt * T * (1 + TB_SLOTS * w->gs_slot[g]);
        w->gs_ack[g] = at;
        at += T * rt;
    }
    w->gs_count = at;
    return UTC_OK;
}

long tb_lower_bound(const long *v, long n, long x)
{
    long lo = 0, hi = n;
    while (lo < hi) {
        long mid = (lo + hi) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const long *tb_stream_range(const tb_stream_t *st, long d, long off, long wid, long *lo,
                            long *hi)
{
    const long *L = st->pts + st->off[d];
    long m = st->off[d + 1] - st->off[d];
    *lo = tb_lower_bound(L, m, off);
    *hi = tb_lower_bound(L, m, off + wid);
    return L;
}

int tb_plan_links(tb_plan_t *pl, const tb_world_t *w, long g, int me)
{
    task_graph_t gr = pl->graph;
    long nd = pl->ndsets, np = pl->npoints;
    int T = w->threads, myrank = me / T;
    size_t ob = gr.output_bytes_per_task;
    int rc = UTC_ERR_NO_MEMORY;

    sbuild_t *inb = NULL, *outb = NULL;
    int nin = 0, capin = 0, nout = 0, capout = 0;
    lvec_t deps = {0}, prod = {0};
    char *cons = xcalloc((size_t)T, 1), *seen = xcalloc((size_t)T, 1);
    tb_dep_t *dv = NULL;
    long ndv = 0, capdv = 0;
    if (!(pl->dep_off = xcalloc((size_t)(nd * np + 1), sizeof *pl->dep_off)) ||
        !(pl->prod_off = xcalloc((size_t)nd + 1, sizeof *pl->prod_off)) || !cons || !seen)
        goto out;

    long max_deps = 0;
    for (long d = 0; d < nd; d++) {
        memset(seen, 0, (size_t)T);
        for (long j = 0; j < np; j++) {
            long q = pl->points[j];
            /* inputs of q, in the order execute_point expects them */
            interval_list_t il = task_graph_dependencies(gr, d, q);
            long ni = interval_list_num_intervals(il), count = 0;
            for (long k = 0; k < ni; k++) {
                interval_t iv = interval_list_interval(il, k);
                for (long p = iv.start; p <= iv.end; p++) {
                    int a = w->owner[g][p];
                    if (ndv == capdv) {
                        capdv = capdv ? 2 * capdv : 64;
                        tb_dep_t *v = realloc(dv, sizeof *v * (size_t)capdv);
                        if (!v) {
                            interval_list_destroy(il);
                            goto out;
                        }
                        dv = v;
                    }
                    tb_dep_t *dep = &dv[ndv++];
                    dep->point = p;
                    dep->local = NULL;
                    dep->stream = -1;
                    dep->idx = 0;
                    if (a / T == myrank) {
                        dep->local = w->ring[g][p];
                        if (a != me && !seen[a % T]) {
                            seen[a % T] = 1;
                            if (lvec_push(&prod, a % T)) {
                                interval_list_destroy(il);
                                goto out;
                            }
                        }
                    } else {
                        int s = find_stream(&inb, &nin, &capin, a, nd);
                        if (s < 0 || lvec_push(&inb[s].per_dset[d], p)) {
                            interval_list_destroy(il);
                            goto out;
                        }
                        dep->stream = s;
                    }
                    count++;
                }
            }
            interval_list_destroy(il);
            pl->dep_off[d * np + j + 1] = ndv;
            if (count > max_deps)
                max_deps = count;

            /* who reads q's output: local consumers, and streams to other ranks */
            il = task_graph_reverse_dependencies(gr, d, q);
            ni = interval_list_num_intervals(il);
            for (long k = 0; k < ni; k++) {
                interval_t iv = interval_list_interval(il, k);
                for (long r = iv.start; r <= iv.end; r++) {
                    int b = w->owner[g][r];
                    if (b / T == myrank) {
                        if (b != me)
                            cons[b % T] = 1;
                    } else {
                        int s = find_stream(&outb, &nout, &capout, b, nd);
                        if (s < 0 || lvec_push(&outb[s].per_dset[d], q)) {
                            interval_list_destroy(il);
                            goto out;
                        }
                    }
                }
            }
            interval_list_destroy(il);
        }
        pl->prod_off[d + 1] = prod.n;
    }
    pl->deps = dv;
    dv = NULL;
    pl->prod = prod.v;
    prod.v = NULL;
    if (!(pl->cons = xcalloc((size_t)T, sizeof *pl->cons)))
        goto out;
    for (int t = 0; t < T; t++)
        if (cons[t])
            pl->cons[pl->ncons++] = t;

    if ((rc = finish_streams(inb, nin, &pl->in, w, g, me, 0, nd, ob)) != UTC_OK)
        goto out;
    pl->nin = nin;
    if ((rc = finish_streams(outb, nout, &pl->outs, w, g, me, 1, nd, ob)) != UTC_OK)
        goto out;
    pl->nout = nout;

    /* remote inputs: their place in the stream's sorted list */
    for (long d = 0; d < nd; d++)
        for (long x = pl->dep_off[d * np]; x < pl->dep_off[(d + 1) * np]; x++) {
            tb_dep_t *dep = &pl->deps[x];
            if (dep->local)
                continue;
            tb_stream_t *st = &pl->in[dep->stream];
            dep->idx = tb_lower_bound(st->pts + st->off[d], st->off[d + 1] - st->off[d], dep->point);
        }

    if (!(pl->in_ptr = xcalloc((size_t)max_deps, sizeof *pl->in_ptr)) ||
        !(pl->in_bytes = xcalloc((size_t)max_deps, sizeof *pl->in_bytes))) {
        rc = UTC_ERR_NO_MEMORY;
        goto out;
    }
    for (long k = 0; k < max_deps; k++)
        pl->in_bytes[k] = ob;
    rc = UTC_OK;
out:
    if (inb)
        free_build(inb, nin, nd);
    if (outb)
        free_build(outb, nout, nd);
    free(deps.v);
    free(prod.v);
    free(dv);
    free(cons);
    free(seen);
    return rc;
}

static void free_streams(tb_stream_t *s, int n)
{
    if (!s)
        return;
    for (int i = 0; i < n; i++) {
        free(s[i].pts);
        free(s[i].off);
        free(s[i].buf);
    }
    free(s);
}

void tb_plan_fini(tb_plan_t *pl)
{
    free(pl->points);
    free(pl->shape);
    free(pl->out);
    free(pl->scratch);
    free(pl->dep_off);
    free(pl->deps);
    free(pl->prod);
    free(pl->prod_off);
    free(pl->cons);
    free_streams(pl->in, pl->nin);
    free_streams(pl->outs, pl->nout);
    free((void *)pl->in_ptr);
    free(pl->in_bytes);
    memset(pl, 0, sizeof *pl);
}
