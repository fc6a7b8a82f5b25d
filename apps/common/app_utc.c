#include "app_utc.h"

#include <stdio.h>

#include "app_timer.h"

void app_utc_error(const char *app, const char *what, int status)
{
    const char *detail = utc_last_error();
    fprintf(stderr, "%s: %s: %s%s%s%s\n", app, what, utc_status_string(status),
            detail[0] ? " (" : "", detail, detail[0] ? ")" : "");
}

int app_utc_start(const char *app, int *argc, char ***argv)
{
    utc_status_t rc = utc_init(argc, argv);
    if (rc != UTC_OK) {
        app_utc_error(app, "cannot start UTC", rc);
        return APP_EXIT_FAIL;
    }
    if (utc_nranks() != 1) {
        if (utc_rank() == 0)
            fprintf(stderr, "%s: a single-node app: run it on one rank (scripts/utcrun -np 1), "
                            "not %d\n",
                    app, utc_nranks());
        utc_finalize();
        return APP_EXIT_USAGE;
    }
    return APP_EXIT_OK;
}

int app_utc_stop(const char *app, int rc)
{
    if (!utc_is_initialized())
        return rc;
    utc_status_t frc = utc_finalize(); /* fails when, say, the UTC_TRACE file was lost */
    if (frc != UTC_OK) {
        app_utc_error(app, "utc_finalize", frc);
        if (rc == APP_EXIT_OK)
            rc = APP_EXIT_FAIL;
    }
    return rc;
}

int app_gpu_check(const char *app)
{
    if (!utc_gpu_supported()) {
        fprintf(stderr, "%s: --impl gpu: UTC was built without GPU support (configure with a "
                        "CUDA toolkit and -DUTC_WITH_CUDA=ON)\n",
                app);
        return APP_EXIT_NO_GPU;
    }
    int n = utc_gpu_device_count();
    if (n < 0) {
        app_utc_error(app, "--impl gpu: cannot count GPU devices", n);
        return APP_EXIT_NO_GPU;
    }
    if (n == 0) {
        fprintf(stderr, "%s: --impl gpu: no GPU device is visible on this machine: %s\n", app,
                utc_gpu_unavailable_reason());
        return APP_EXIT_NO_GPU;
    }
    return APP_EXIT_OK;
}

utc_mem_kind_t app_mem_kind(app_memtype_t mem)
{
    switch (mem) {
    case APP_MEM_PINNED: return UTC_MEM_PINNED;
    case APP_MEM_UNIFIED: return UTC_MEM_UNIFIED;
    default: return UTC_MEM_PAGEABLE;
    }
}

utc_status_t app_task_create(const utc_task_ops_t *ops, int nthreads, utc_task_kind_t kind,
                             app_memtype_t mem, utc_task_t **out)
{
    if (nthreads < 1 || nthreads > UTC_TASK_MAX_THREADS)
        return UTC_ERR_INVALID_ARG;
    static int procs[UTC_TASK_MAX_THREADS]; /* all zero: every thread on rank 0 */
    utc_task_options_t opts = UTC_TASK_OPTIONS_INIT;
    opts.kind = kind;
    opts.mem_kind = app_mem_kind(mem);
    opts.window_size = 0; /* no global shared data in the single-node apps */
    return utc_task_create(ops, procs, nthreads, &opts, out);
}

utc_status_t app_task_time(utc_task_t *task, void *arg, int reps, double *best)
{
    double fastest = 0.0;
    for (int r = 0; r < reps; r++) {
        double t0 = app_now();
        utc_status_t rc = utc_task_run(task, arg);
        if (rc == UTC_OK)
            rc = utc_task_wait(task);
        double dt = app_now() - t0;
        if (rc != UTC_OK)
            return rc;
        if (r == 0 || dt < fastest)
            fastest = dt;
    }
    *best = fastest;
    return UTC_OK;
}
