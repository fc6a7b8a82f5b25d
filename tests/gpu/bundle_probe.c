/*
 * bundle_probe: a 2-rank UTC program for the gpubundle test (check_bundle.sh). A task of
 * one thread per rank whose threads meet at a task-wide barrier (MPI between the ranks);
 * then every rank reads /proc/self/maps and fails if Open MPI, PMIx, hwloc or their
 * transports were loaded from anywhere but PREFIX (argv[1]): the bundle's prefix alone.
 */
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <utc/utc.h>

typedef struct {
    utc_task_t base;
    atomic_int ran;
} probe_task_t;

static int probe_run(utc_task_t *self, utc_ctx_t *ctx, void *arg)
{
    (void)arg;
    atomic_fetch_add(&((probe_task_t *)self)->ran, 1);
    return utc_ctx_barrier(ctx);
}

static const utc_task_ops_t probe_ops = {
    .name = "bundle-probe", .size = sizeof(probe_task_t), .run = probe_run};

/* Mapped libraries of the MPI stack that are not under prefix: printed, counted. */
static int foreign_libraries(const char *prefix, int rank, int *seen)
{
    static const char *const stack[] = {"libmpi", "libopen-pal", "libopen-rte", "libpmix",
                                        "libhwloc", "libevent", "mca_", "libucx",
                                        "libfabric", "libucp", "libuct", "libucs", "pmix_mca"};
    static const char *const dirs[] = {"/openmpi/", "/pmix2/", "/ucx/", "/libfabric/",
                                       "/libibverbs/", "/hwloc/"};
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return 1;
    char line[4096], last[4096] = "";
    int bad = 0;
    while (fgets(line, sizeof line, f)) {
        const char *path = strchr(line, '/');
        if (!path || strcmp(path, last) == 0) /* a file's next segment */
            continue;
        snprintf(last, sizeof last, "%s", path);
        const char *base = strrchr(path, '/') + 1, *what = NULL;
        for (size_t i = 0; i < sizeof stack / sizeof stack[0] && !what; i++)
            if (strncmp(base, stack[i], strlen(stack[i])) == 0)
                what = stack[i];
        /* and anything from the stack's plugin folders */
        for (size_t i = 0; i < sizeof dirs / sizeof dirs[0] && !what; i++)
            if (strstr(path, dirs[i]))
                what = dirs[i];
        if (!what)
            continue;
        (*seen)++;
        if (strncmp(path, prefix, strlen(prefix)) != 0) {
            printf("rank %d: %s loaded from outside %s: %s", rank, what, prefix, path);
            bad++;
        }
    }
    fclose(f);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: utcrun -np 2 bundle_probe PREFIX\n");
        return 2;
    }
    if (utc_init(&argc, &argv) != UTC_OK) {
        fprintf(stderr, "utc_init: %s\n", utc_last_error());
        return 1;
    }
    int rank = utc_rank(), nranks = utc_nranks();
    int procs[64];
    for (int r = 0; r < nranks && r < 64; r++)
        procs[r] = r;
    utc_task_t *task;
    utc_status_t rc = utc_task_create(&probe_ops, procs, nranks < 64 ? nranks : 64, NULL, &task);
    if (rc == UTC_OK && (rc = utc_task_run(task, NULL)) == UTC_OK)
        rc = utc_task_wait(task);
    int ran = rc == UTC_OK ? atomic_load(&((probe_task_t *)task)->ran) : 0;
    if (rc == UTC_OK)
        rc = utc_task_destroy(task);
    if (rc != UTC_OK)
        fprintf(stderr, "rank %d: %s\n", rank, utc_last_error());

    int seen = 0, bad = foreign_libraries(argv[1], rank, &seen), total_ran = 0, total_bad = 0;
    MPI_Allreduce(&ran, &total_ran, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&bad, &total_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("bundle_probe: %d ranks, %d task threads ran, %d libraries of the MPI stack "
               "mapped on rank 0, %d from outside %s\n",
               nranks, total_ran, seen, total_bad, argv[1]);
    int ok = rc == UTC_OK && total_ran == nranks && total_bad == 0 && seen > 0;
    utc_finalize();
    return ok ? 0 : 1;
}
