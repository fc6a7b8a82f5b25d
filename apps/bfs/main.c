/*
 * bfs: level-synchronous breadth-first search from vertex 0 of an undirected graph,
 * after the dissertation's BFS benchmark. Sizes: vertices x edges (appendix A: S 64K x
 * 160K, M 27K x 740K, L 1M x 5M), or an edge list file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_cli.h"
#include "app_compare.h"
#include "app_report.h"
#include "app_utc.h"
#include "bfs_graph.h"
#include "bfs_impl.h"

static const app_info_t bfs_info = {
    .name = "bfs",
    .summary = "Breadth-first search from vertex 0: the level of every vertex (-1: unreachable).",
    .sizes = {{"S", 65536, 163840}, {"M", 27648, 757760}, {"L", 1048576, 5242880}},
    .size_help = "V vertices x E random undirected edges",
    .input_help = "read the graph from an edge list ('u v' per line, '#' comments)",
    .output_help = "write 'vertex level' per line, for every vertex ('-': stdout)",
    .gpu_max_threads = 1,
};

static int bfs_run(const app_opts_t *o, const bfs_graph_t *g, int32_t *level, double *secs)
{
    switch (o->impl) {
    case APP_IMPL_SEQ: return bfs_run_seq(g, level, o, secs);
    case APP_IMPL_OMP: return bfs_run_omp(g, level, o, secs);
    case APP_IMPL_UTC: return bfs_run_utc(g, level, o, secs);
    case APP_IMPL_GPU:
#ifdef APP_WITH_CUDA
        return bfs_run_gpu(g, level, o, secs);
#else
        break; /* app_gpu_check has refused it already */
#endif
    }
    return APP_EXIT_NO_GPU;
}

/* "vertex level" lines to path, or to stdout when path is "-". */
static int write_levels(const char *path, const int32_t *level, int32_t n)
{
    int to_stdout = strcmp(path, "-") == 0;
    FILE *f = to_stdout ? stdout : fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bfs: --output: %s: cannot create: %s\n", path, strerror(errno));
        return APP_EXIT_FAIL;
    }
    for (int32_t v = 0; v < n; v++)
        fprintf(f, "%d %d\n", v, level[v]);
    int bad = ferror(f);
    if ((to_stdout ? fflush(f) : fclose(f)) != 0 || bad) {
        fprintf(stderr, "bfs: --output: %s: write error: %s\n", path, strerror(errno));
        return APP_EXIT_FAIL;
    }
    return APP_EXIT_OK;
}

int main(int argc, char **argv)
{
    app_opts_t o;
    int rc = app_cli_parse(&bfs_info, NULL, argc, argv, &o);
    if (rc != APP_CLI_RUN)
        return rc == APP_CLI_DONE ? APP_EXIT_OK : APP_EXIT_USAGE;
    if (o.impl == APP_IMPL_UTC || o.impl == APP_IMPL_GPU) {
        if ((rc = app_utc_start("bfs", &argc, &argv)) != APP_EXIT_OK)
            return rc;
        if (o.impl == APP_IMPL_GPU && (rc = app_gpu_check("bfs")) != APP_EXIT_OK) {
            return app_utc_stop("bfs", rc);
        }
    }

    bfs_graph_t g = {0};
    int32_t *level = NULL, *ref = NULL;
    app_verified_t verified = APP_VERIFY_SKIPPED;
    char err[768];
    double secs = 0.0;
    rc = o.input ? bfs_graph_read(o.input, &g, err, sizeof err)
                 : bfs_graph_generate(o.size.a, o.size.b, o.seed, &g, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "bfs: %s\n", err);
        goto out;
    }
    if (o.input)
        snprintf(o.size.label, sizeof o.size.label, "%dx%lld", g.n, (long long)g.m);
    level = malloc((size_t)g.n * sizeof *level);
    if (!level) {
        fprintf(stderr, "bfs: out of memory for %d levels\n", g.n);
        rc = APP_EXIT_FAIL;
        goto out;
    }
    if ((rc = bfs_run(&o, &g, level, &secs)) != APP_EXIT_OK)
        goto out;

    if (o.verify) {
        app_opts_t once = o;
        double unused;
        once.reps = 1;
        ref = malloc((size_t)g.n * sizeof *ref);
        if (!ref || bfs_run_seq(&g, ref, &once, &unused) != APP_EXIT_OK) {
            fprintf(stderr, "bfs: out of memory for the reference levels\n");
            rc = APP_EXIT_FAIL;
            goto out;
        }
        long long at = app_compare_bytes(level, ref, (size_t)g.n * sizeof *level);
        verified = at < 0 ? APP_VERIFY_OK : APP_VERIFY_MISMATCH;
        if (at >= 0) {
            long long v = at / (long long)sizeof *level;
            fprintf(stderr, "bfs: --verify: vertex %lld has level %d, seq says %d\n", v,
                    level[v], ref[v]);
            rc = APP_EXIT_MISMATCH;
        }
    }
    if (o.output && write_levels(o.output, level, g.n) != APP_EXIT_OK)
        rc = APP_EXIT_FAIL;

    int32_t reached = 0, depth = 0;
    for (int32_t v = 0; v < g.n; v++) {
        reached += level[v] >= 0;
        depth = level[v] > depth ? level[v] : depth;
    }
    char detail[160];
    snprintf(detail, sizeof detail, "%d vertices, %lld edges; %d reached, %d levels", g.n,
             (long long)g.m, reached, depth + 1);
    app_report(&bfs_info, &o, secs, verified, detail);

out:
    free(ref);
    free(level);
    bfs_graph_fini(&g);
    return app_utc_stop("bfs", rc);
}
