/*
 * The plan of one task thread for one task graph: which points it owns, where each input
 * of each of its points comes from, and the message streams it exchanges with threads on
 * other ranks. Built once, in the task's init; read on every timestep. See main.c's opening
 * comment for the mapping.
 */
#ifndef TB_PLAN_H
#define TB_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include <core_c.h>
#include <utc/utc.h>

/** Output slots per point (a power of two): a producer runs at most TB_SLOTS - 2 steps
 * ahead of its slowest consumer on the same rank. */
#define TB_SLOTS 8

/** How points are dealt to the threads (rank r's threads are r*T .. r*T+T-1). */
typedef enum tb_layout {
    TB_LAYOUT_BLOCK = 0, /**< contiguous blocks, in thread order (ranks get blocks too) */
    TB_LAYOUT_CYCLIC = 1 /**< point p to thread p % (ranks * threads) */
} tb_layout_t;

/** How outputs move between ranks. */
typedef enum tb_comm {
    TB_COMM_CONDUIT = 0, /**< one conduit per pair of ranks: a message per stream and step */
    TB_COMM_GSHARED = 1, /**< global shared data: stores with a signal into readers' slots */
    TB_COMM_AUTO = 2     /**< the option's default: gshared on 2+ ranks when it fits */
} tb_comm_t;

/** What every rank knows: the graphs and where each point lives. Read-only in the run. */
typedef struct tb_world {
    long ngraphs;
    task_graph_t *graphs;
    int nranks;
    int rank;    /**< this rank */
    int threads; /**< task threads per rank (the same on every rank) */
    tb_layout_t layout;
    int **owner;            /**< owner[g][p]: global thread of point p (rank * threads + local) */
    utc_conduit_t **link;   /**< link[s]: the conduit between this rank's task and rank s's */
    uint32_t *step_base;    /**< step_base[g]: timesteps of the graphs before g */
    uint32_t steps_per_run; /**< timesteps of all graphs */
    char ***ring;           /**< ring[g][p]: output slots of a point of this rank (else NULL) */
    tb_comm_t comm;
    /* --comm gshared: the layout of each rank's part of the global shared data object, in
     * 8-byte elements (tb_gs_layout): element 0 is the failure flag; per graph g, gs_in[g]
     * starts the reader blocks, one per (writer global thread, reader local thread), each
     * a step flag and TB_SLOTS slots of gs_slot[g] elements; gs_ack[g] starts the acks, one
     * per (writer local thread, reader global thread): the reader's last step consumed. */
    long *gs_in, *gs_ack, *gs_slot;
    long gs_count; /**< elements of each rank's part */
} tb_world_t;

/** A stream of batched outputs between two threads on different ranks, for one graph: one
 * message per timestep holding the outputs of the sender's points the receiver needs. */
typedef struct tb_stream {
    utc_conduit_t *link;
    int tag;
    int peer;  /**< global thread at the other end */
    long *pts; /**< per dependence set d: pts[off[d] .. off[d+1]-1], ascending */
    long *off; /**< ndsets + 1 entries */
    char *buf; /**< TB_SLOTS slots of slot_bytes */
    size_t slot_bytes;
    utc_request_t *req[TB_SLOTS];
    long lo[TB_SLOTS]; /**< index in pts of the slot's first point (receive side) */
    long n[TB_SLOTS];  /**< points in the slot's message */
    /* --comm gshared */
    int gs_rank;      /**< the reader's rank (a writer's stream) or the writer's (a reader's) */
    long gs_flag;     /**< the reader block's step flag, on the reader's rank; slots follow */
    long gs_ackidx;   /**< the ack, on the writer's rank */
    long gs_slot;     /**< elements per slot */
    const char *gs_in; /**< reader: its slots in this rank's part, read in place */
    uint32_t gs_last[TB_SLOTS]; /**< writer: the ack each slot's last message needs (0: none) */
    uint32_t gs_acked;          /**< writer: the last ack seen; reader: the last ack stored */
    uint32_t gs_read;           /**< reader: the step of its last read (acked by gs_ack) */
} tb_stream_t;

/** Where one input of a point comes from. */
typedef struct tb_dep {
    long point;        /**< the producing point (at the previous timestep) */
    const char *local; /**< its output slots, when it lives on this rank; else NULL */
    int stream;        /**< otherwise: index of the in-stream that brings it */
    long idx;          /**< and its index in that stream's pts for the dependence set */
} tb_dep_t;

/** A timestep's shape: the core's offset, width and dependence set at that timestep. */
typedef struct tb_shape {
    long off, wid, dset;
} tb_shape_t;

/** Graphs of at most this many timesteps get a shape table (24 bytes a timestep). */
#define TB_SHAPE_MAX (1L << 20)

/** One thread's plan for one graph. */
typedef struct tb_plan {
    task_graph_t graph;
    /** shape[t + 1] for t = -1 .. timesteps - 1, asked of the core once at init (the loop
     * then makes no call into the core but the kernel's); NULL for a longer graph */
    tb_shape_t *shape;
    utc_gdata_t *gd; /**< --comm gshared: the task's object (set by the task's init) */
    long ndsets;
    long npoints;
    long *points;  /**< owned points, ascending */
    char *out;     /**< npoints * TB_SLOTS * output bytes */
    char *scratch; /**< npoints * scratch bytes */
    long *dep_off; /**< ndsets * npoints + 1 offsets into deps ([d * npoints + j]) */
    tb_dep_t *deps;
    long *prod;     /**< per dset: local threads (ids) this thread waits for */
    long *prod_off; /**< ndsets + 1 */
    int *cons;      /**< local threads that read this thread's outputs (any dset) */
    int ncons;
    tb_stream_t *in; /**< from threads on other ranks */
    int nin;
    tb_stream_t *outs; /**< to threads on other ranks */
    int nout;
    const char **in_ptr; /**< room for one point's inputs */
    size_t *in_bytes;
} tb_plan_t;

/** --comm gshared: fill w's gs_* layout (graphs, ranks, threads set). UTC_ERR_NO_MEMORY. */
int tb_gs_layout(tb_world_t *w);

/** Global thread that owns point p of a graph of width w. */
int tb_owner(tb_layout_t layout, long w, int nthreads_total, long p);

/** First pass (each thread, before the others build): own points and output slots, and
 * publish them in world->ring. */
int tb_plan_points(tb_plan_t *pl, const tb_world_t *w, long g, int me);

/** Second pass (after every local thread has run the first): inputs, producers,
 * consumers and streams. */
int tb_plan_links(tb_plan_t *pl, const tb_world_t *w, long g, int me);

/* The first index of the sorted v[0..n) whose value is >= x (n if none). */
long tb_lower_bound(const long *v, long n, long x);

/** The points of stream st at dependence set d that fall in [off, off + wid): indices
 * [*lo, *hi) of st->pts, counted from st->pts + st->off[d] (returned). */
const long *tb_stream_range(const tb_stream_t *st, long d, long off, long wid, long *lo,
                            long *hi);

/** The shape of timestep t (-1 .. timesteps - 1) of pl's graph. */
static inline tb_shape_t tb_plan_shape(const tb_plan_t *pl, long t)
{
    if (pl->shape)
        return pl->shape[t + 1];
    task_graph_t gr = pl->graph;
    return (tb_shape_t){task_graph_offset_at_timestep(gr, t), task_graph_width_at_timestep(gr, t),
                        t >= 0 ? task_graph_dependence_set_at_timestep(gr, t) : 0};
}

/** Free a plan (requests must be complete). */
void tb_plan_fini(tb_plan_t *pl);

#endif /* TB_PLAN_H */
