/* bfs: hand-made graphs (disconnected parts, self loops, repeated edges, an isolated start,
 * frontiers wider than a thread's local block) give the right levels in every CPU version
 * and thread count; the edge-list reader accepts what the format allows and refuses the
 * rest with FILE:LINE messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bfs_expand.h"
#include "bfs_graph.h"
#include "bfs_impl.h"
#include "utc_test.h"

/* Levels of g in every version and several thread counts must equal want. */
static void check_levels(const bfs_graph_t *g, const int32_t *want)
{
    int32_t *got = malloc((size_t)g->n * sizeof *got);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    app_opts_t o = {.threads = 1, .reps = 2};
    double secs;
    CU_ASSERT_EQUAL(bfs_run_seq(g, got, &o, &secs), APP_EXIT_OK);
    CU_ASSERT_EQUAL(memcmp(got, want, (size_t)g->n * sizeof *got), 0);
    static const int threads[] = {1, 2, 3, 7};
    for (size_t k = 0; k < sizeof threads / sizeof *threads; k++) {
        o.threads = threads[k];
        memset(got, 0x55, (size_t)g->n * sizeof *got);
        CU_ASSERT_EQUAL(bfs_run_omp(g, got, &o, &secs), APP_EXIT_OK);
        CU_ASSERT_EQUAL(memcmp(got, want, (size_t)g->n * sizeof *got), 0);
        memset(got, 0x55, (size_t)g->n * sizeof *got);
        CU_ASSERT_EQUAL(bfs_run_utc(g, got, &o, &secs), APP_EXIT_OK);
        if (memcmp(got, want, (size_t)g->n * sizeof *got) != 0)
            fprintf(stderr, "utc, %d threads: wrong levels\n", threads[k]);
        CU_ASSERT_EQUAL(memcmp(got, want, (size_t)g->n * sizeof *got), 0);
    }
    free(got);
}

static void check_edges(int32_t n, const int32_t (*edges)[2], int64_t m, const int32_t *want)
{
    int32_t *eu = malloc((size_t)m * sizeof *eu), *ev = malloc((size_t)m * sizeof *ev);
    for (int64_t i = 0; i < m; i++)
        eu[i] = edges[i][0], ev[i] = edges[i][1];
    bfs_graph_t g;
    char err[256];
    CU_ASSERT_EQUAL_FATAL(bfs_graph_build(n, m, eu, ev, &g, err, sizeof err), 0);
    CU_ASSERT_EQUAL(g.offsets[n], 2 * m);
    check_levels(&g, want);
    bfs_graph_fini(&g);
    free(eu);
    free(ev);
}

static void test_disconnected(void)
{
    static const int32_t e[][2] = {{0, 1}, {1, 2}, {3, 4}, {5, 5}};
    static const int32_t want[] = {0, 1, 2, -1, -1, -1};
    check_edges(6, e, 4, want);
}

static void test_self_loops_and_repeats(void)
{
    static const int32_t e[][2] = {{0, 0}, {0, 1}, {0, 1}, {1, 0}, {1, 2},
                                   {2, 2}, {2, 3}, {3, 1}, {3, 1}};
    static const int32_t want[] = {0, 1, 2, 2};
    check_edges(4, e, 9, want);
}

static void test_isolated_start(void)
{
    static const int32_t e[][2] = {{1, 2}, {2, 3}, {3, 1}};
    static const int32_t want[] = {0, -1, -1, -1};
    check_edges(4, e, 3, want);
}

/* 0 -> 1000 leaves -> one more vertex each, and a 300-vertex path hanging off the last one:
 * frontiers wider than BFS_LOCAL_BLOCK and many levels. */
static void test_wide_and_deep(void)
{
    enum { LEAVES = 1000, PATH = 300, N = 1 + 2 * LEAVES + PATH };
    static int32_t e[2 * LEAVES + PATH][2], want[N];
    int m = 0;
    want[0] = 0;
    for (int i = 1; i <= LEAVES; i++) {
        e[m][0] = 0, e[m][1] = i, m++;
        e[m][0] = LEAVES + i, e[m][1] = i, m++; /* written back to front on purpose */
        want[i] = 1;
        want[LEAVES + i] = 2;
    }
    for (int k = 0; k < PATH; k++) {
        int32_t from = k == 0 ? 2 * LEAVES : 2 * LEAVES + k;
        e[m][0] = from, e[m][1] = 2 * LEAVES + 1 + k, m++;
        want[2 * LEAVES + 1 + k] = 3 + k;
    }
    CU_ASSERT(BFS_LOCAL_BLOCK < LEAVES);
    check_edges(N, (const int32_t(*)[2])e, m, want);
}

static void test_generated_graph(void)
{
    bfs_graph_t g;
    char err[256];
    CU_ASSERT_EQUAL_FATAL(bfs_graph_generate(5000, 9000, 3, &g, err, sizeof err), 0);
    int32_t *want = malloc((size_t)g.n * sizeof *want);
    app_opts_t o = {.threads = 1, .reps = 1};
    double secs;
    CU_ASSERT_EQUAL(bfs_run_seq(&g, want, &o, &secs), APP_EXIT_OK);
    int reached = 0;
    for (int v = 0; v < g.n; v++)
        reached += want[v] >= 0;
    CU_ASSERT(reached > 1000 && reached < g.n); /* a giant component, not everything */
    check_levels(&g, want);
    free(want);
    bfs_graph_fini(&g);
}

/* ---- the reader ---- */

static char tmpdir[64];

static const char *write_tmp(const char *name, const char *text)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_reader_accepts(void)
{
    const char *p = write_tmp("ok.txt", "# a comment\n\n 0 1\n1\t2   # trailing\r\n"
                                        "  \t\n4 3\n2 2\n0 1\n");
    bfs_graph_t g;
    char err[256] = "";
    CU_ASSERT_EQUAL_FATAL(bfs_graph_read(p, &g, err, sizeof err), 0);
    CU_ASSERT_EQUAL(g.n, 5);
    CU_ASSERT_EQUAL(g.m, 5);
    static const int32_t want[] = {0, 1, 2, -1, -1};
    check_levels(&g, want);
    bfs_graph_fini(&g);
}

static void test_reader_refuses(void)
{
    static const struct {
        const char *text, *needle;
    } cases[] = {
        {"0 1\n1 2 3\n", ":2:"},          {"0 1\n\n7\n", ":3:"},
        {"a b\n", ":1:"},                 {"0 1\n-1 2\n", "out of range"},
        {"0 99999999999\n", "out of range"}, {"1.5 2\n", ":1:"},
        {"0 1x\n", ":1:"},                {"", "no edges"},
        {"# only a comment\n\n", "no edges"}, {"0 1\n2,3\n", ":2:"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *p = write_tmp("bad.txt", cases[i].text);
        bfs_graph_t g = {0};
        char err[256] = "";
        int rc = bfs_graph_read(p, &g, err, sizeof err);
        CU_ASSERT_EQUAL(rc, APP_EXIT_USAGE);
        if (!strstr(err, cases[i].needle))
            fprintf(stderr, "case %zu: unexpected message '%s'\n", i, err);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i].needle));
        CU_ASSERT_PTR_NOT_NULL(strstr(err, p)); /* names the file */
    }
    bfs_graph_t g;
    char err[256] = "";
    CU_ASSERT_EQUAL(bfs_graph_read("/nonexistent/graph.txt", &g, err, sizeof err),
                    APP_EXIT_USAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot open"));
}

int main(int argc, char **argv)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/utc-bfs-test-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    static const utc_test_case_t cases[] = {
        {"disconnected parts", test_disconnected},
        {"self loops and repeated edges", test_self_loops_and_repeats},
        {"vertex 0 isolated", test_isolated_start},
        {"wide frontiers, many levels", test_wide_and_deep},
        {"generated graph: versions agree", test_generated_graph},
        {"reader: comments, blanks, tabs, CRLF", test_reader_accepts},
        {"reader: malformed files refused with FILE:LINE", test_reader_refuses},
        UTC_TEST_END};
    int rc = utc_test_main(argc, argv, "bfs", cases);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
