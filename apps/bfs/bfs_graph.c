#include "bfs_graph.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_cli.h"
#include "app_memory.h"
#include "app_rand.h"

/* Bytes a graph of n vertices and m edges takes while it is built and searched. */
static double graph_bytes(double n, double m)
{
    /* edge lists (2 x 4 B), adjacency (2 x 4 B), offsets (8 B), levels and frontiers */
    return m * 16.0 + n * 32.0;
}

int bfs_graph_build(int32_t n, int64_t m, const int32_t *eu, const int32_t *ev, bfs_graph_t *g,
                    char *err, size_t errlen)
{
    int64_t *off = calloc((size_t)n + 1, sizeof *off);
    int32_t *adj = malloc((size_t)(2 * m) * sizeof *adj + 1);
    int64_t *pos = malloc(((size_t)n + 1) * sizeof *pos);
    if (!off || !adj || !pos) {
        free(off), free(adj), free(pos);
        snprintf(err, errlen, "out of memory for a graph of %d vertices and %lld edges", n,
                 (long long)m);
        return APP_EXIT_FAIL;
    }
    for (int64_t i = 0; i < m; i++) {
        off[eu[i] + 1]++;
        off[ev[i] + 1]++;
    }
    for (int32_t v = 0; v < n; v++)
        off[v + 1] += off[v];
    memcpy(pos, off, ((size_t)n + 1) * sizeof *pos);
    for (int64_t i = 0; i < m; i++) {
        adj[pos[eu[i]]++] = ev[i];
        adj[pos[ev[i]]++] = eu[i];
    }
    free(pos);
    *g = (bfs_graph_t){.n = n, .m = m, .offsets = off, .adj = adj};
    return 0;
}

int bfs_graph_generate(int64_t n, int64_t m, uint64_t seed, bfs_graph_t *g, char *err,
                       size_t errlen)
{
    if (n > (int64_t)BFS_MAX_VERTEX + 1) {
        snprintf(err, errlen, "%lld vertices: at most %lld", (long long)n,
                 (long long)BFS_MAX_VERTEX + 1);
        return APP_EXIT_USAGE;
    }
    if (app_memory_check(graph_bytes((double)n, (double)m), err, errlen))
        return APP_EXIT_USAGE;
    int32_t *eu = malloc((size_t)m * sizeof *eu), *ev = malloc((size_t)m * sizeof *ev);
    if (!eu || !ev) {
        free(eu), free(ev);
        snprintf(err, errlen, "out of memory for %lld edges", (long long)m);
        return APP_EXIT_FAIL;
    }
    app_rand_t r = app_rand_make(seed, 0);
    for (int64_t i = 0; i < m; i++) {
        eu[i] = (int32_t)app_rand_below(&r, (uint64_t)n);
        ev[i] = (int32_t)app_rand_below(&r, (uint64_t)n);
    }
    int rc = bfs_graph_build((int32_t)n, m, eu, ev, g, err, errlen);
    free(eu), free(ev);
    return rc;
}

/* Growable edge arrays of the reader. */
typedef struct {
    int32_t *u, *v;
    int64_t len, cap;
} edges_t;

static int edges_push(edges_t *e, int32_t u, int32_t v)
{
    if (e->len == e->cap) {
        int64_t cap = e->cap ? 2 * e->cap : 4096;
        int32_t *nu = realloc(e->u, (size_t)cap * sizeof *nu);
        if (!nu)
            return -1;
        e->u = nu;
        int32_t *nv = realloc(e->v, (size_t)cap * sizeof *nv);
        if (!nv)
            return -1;
        e->v = nv;
        e->cap = cap;
    }
    e->u[e->len] = u;
    e->v[e->len] = v;
    e->len++;
    return 0;
}

/* One vertex number at *p (leading blanks skipped); advances *p. 0, or -1 when the text
 * there is not a number, or -2 when it is out of range. */
static int parse_vertex(const char **p, int32_t *out)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s == '-' && s[1] >= '0' && s[1] <= '9')
        return -2;
    if (*s < '0' || *s > '9')
        return -1;
    long long v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (*s - '0');
        if (v > BFS_MAX_VERTEX) {
            *p = s;
            return -2;
        }
    }
    if (*s && *s != ' ' && *s != '\t' && *s != '#') /* "12ab" */
        return -1;
    *out = (int32_t)v;
    *p = s;
    return 0;
}

int bfs_graph_read(const char *path, bfs_graph_t *g, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return APP_EXIT_USAGE;
    }
    edges_t e = {0};
    char *line = NULL;
    size_t cap = 0;
    long long lineno = 0;
    int32_t maxv = -1;
    int rc = 0;
    ssize_t got;
    while ((got = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if ((size_t)got != strlen(line)) {
            snprintf(err, errlen, "%s:%lld: a NUL byte: this is not a text edge list", path,
                     lineno);
            rc = APP_EXIT_USAGE;
            break;
        }
        /* cut the comment and the line end */
        char *cut = strpbrk(line, "#\r\n");
        if (cut)
            *cut = '\0';
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            continue;
        int32_t u, v;
        int ru = parse_vertex(&p, &u);
        int rv = ru == 0 ? parse_vertex(&p, &v) : 0;
        if (ru == -2 || rv == -2) {
            snprintf(err, errlen, "%s:%lld: a vertex number out of range (0 .. %d)", path,
                     lineno, BFS_MAX_VERTEX);
            rc = APP_EXIT_USAGE;
            break;
        }
        while (*p == ' ' || *p == '\t')
            p++;
        if (ru || rv || *p) {
            snprintf(err, errlen, "%s:%lld: expected two vertex numbers 'u v', got '%.60s'",
                     path, lineno, line);
            rc = APP_EXIT_USAGE;
            break;
        }
        if (edges_push(&e, u, v)) {
            snprintf(err, errlen, "%s: out of memory after %lld edges", path, (long long)e.len);
            rc = APP_EXIT_FAIL;
            break;
        }
        if (u > maxv)
            maxv = u;
        if (v > maxv)
            maxv = v;
    }
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "%s: read error: %s", path, strerror(errno));
        rc = APP_EXIT_USAGE;
    }
    if (rc == 0 && e.len == 0) {
        snprintf(err, errlen, "%s: no edges (expected lines 'u v')", path);
        rc = APP_EXIT_USAGE;
    }
    free(line);
    fclose(f);
    if (rc == 0) {
        char why[256];
        if (app_memory_check(graph_bytes((double)maxv + 1.0, (double)e.len), why, sizeof why)) {
            snprintf(err, errlen, "%s: %s", path, why);
            rc = APP_EXIT_USAGE;
        } else {
            rc = bfs_graph_build(maxv + 1, e.len, e.u, e.v, g, err, errlen);
        }
    }
    free(e.u);
    free(e.v);
    return rc;
}

void bfs_graph_fini(bfs_graph_t *g)
{
    free(g->offsets);
    free(g->adj);
    g->offsets = NULL;
    g->adj = NULL;
}
