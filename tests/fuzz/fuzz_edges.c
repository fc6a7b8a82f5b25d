/*
 * Fuzz harness: the bfs app's edge-list reader (bfs_graph_read), fed through an
 * in-memory file. Any input either builds a CSR graph that agrees with itself (every
 * neighbour a vertex, offsets rising to 2 m) or fails with a message.
 *
 * The harness supplies app_memory_check (in place of apps/common/app_memory.c) with a
 * small machine of 16 MiB, so a file naming vertex 2000000 is refused as too large
 * for this machine, as it would be on a real one, instead of filling the fuzzer's memory.
 */
#include "fuzz_util.h" /* first: it defines _GNU_SOURCE */
#include "bfs_graph.h"

#define FUZZ_MACHINE_BYTES (16.0 * 1024 * 1024)

int app_memory_check(double bytes, char *err, size_t errlen)
{
    if (bytes > FUZZ_MACHINE_BYTES) {
        snprintf(err, errlen, "needs %.1f MiB of memory, this machine has %.1f MiB",
                 bytes / 1048576.0, FUZZ_MACHINE_BYTES / 1048576.0);
        return -1;
    }
    return 0;
}

void *app_alloc(size_t bytes)
{
    return malloc(bytes ? bytes : 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    if (fuzz_memfile(data, size, path, sizeof path) != 0)
        return 0;
    bfs_graph_t g;
    memset(&g, 0, sizeof g);
    char err[256] = "";
    int rc = bfs_graph_read(path, &g, err, sizeof err);
    if (rc != 0) {
        FUZZ_CHECK(rc > 0); /* an exit status: APP_EXIT_USAGE or APP_EXIT_FAIL */
        fuzz_check_message(err, sizeof err);
        FUZZ_CHECK(g.offsets == NULL && g.adj == NULL);
        return 0;
    }
    FUZZ_CHECK(g.n > 0 && g.m > 0);
    FUZZ_CHECK(g.offsets[0] == 0 && g.offsets[g.n] == 2 * g.m);
    for (int32_t v = 0; v < g.n; v++) {
        FUZZ_CHECK(g.offsets[v] <= g.offsets[v + 1]);
        for (int64_t k = g.offsets[v]; k < g.offsets[v + 1]; k++)
            FUZZ_CHECK(g.adj[k] >= 0 && g.adj[k] < g.n);
    }
    bfs_graph_fini(&g);
    return 0;
}
