/*
 * nbody, UTC GPU task: one thread per GPU on every rank, running the CPU task's code
 * (nbody_utc.c) with this backend. Each step a thread uploads all positions from its
 * rank's buffer, moves its bodies on the device and downloads their new positions into
 * the rank's next buffer, from where the task's one-sided puts share them. Velocities stay
 * on the device until the end. Host/device transfers count as communication.
 */
#include <stdlib.h>

#include "cluster_gpu.h"
#include "nbody.h"

typedef struct nb_gpu {
    utc_gpu_data_t *pos, *next, *vel;
} nb_gpu_t;

static void nb_gpu_free(nb_gpu_t *st)
{
    if (st) {
        utc_gpu_data_destroy(st->pos);
        utc_gpu_data_destroy(st->next);
        utc_gpu_data_destroy(st->vel);
        free(st);
    }
}

static int nb_gpu_begin(void **state, int64_t n, const double *vel, int64_t count, double *xfer)
{
    double t0 = capp_now();
    nb_gpu_t *st = calloc(1, sizeof *st);
    if (!st)
        return UTC_ERR_NO_MEMORY;
    int rc = utc_gpu_data_create_default(sizeof(double), 4, (size_t)n, 1, &st->pos);
    if (rc == UTC_OK)
        rc = utc_gpu_data_create_default(sizeof(double), 4, (size_t)count, 1, &st->next);
    if (rc == UTC_OK)
        rc = utc_gpu_data_create_default(sizeof(double), 3, (size_t)count, 1, &st->vel);
    if (rc == UTC_OK && (rc = utc_gpu_data_put_host(st->vel, vel)) == UTC_OK)
        rc = utc_gpu_data_sync_device(st->vel);
    if (rc == UTC_OK)
        rc = utc_gpu_synchronize();
    if (rc != UTC_OK) {
        nb_gpu_free(st);
        return rc;
    }
    *state = st;
    *xfer += capp_now() - t0;
    return UTC_OK;
}

static int nb_gpu_step(void *state, const double *cur, double *next, double *vel, int64_t n,
                       int64_t i0, int64_t count, double *xfer)
{
    (void)vel; /* on the device until the end */
    nb_gpu_t *st = state;
    void *stream = utc_gpu_stream();
    double t0 = capp_now();
    int rc = utc_gpu_data_put_host(st->pos, cur); /* through the host copy: --memtype */
    if (rc == UTC_OK)
        rc = utc_gpu_data_sync_device(st->pos);
    if (rc == UTC_OK)
        rc = utc_gpu_synchronize();
    if (rc != UTC_OK)
        return rc;
    *xfer += capp_now() - t0;
    rc = capp_gpu_status(nb_gpu_launch(utc_gpu_data_device(st->pos),
                                       utc_gpu_data_device(st->next),
                                       utc_gpu_data_device(st->vel), n, i0, count, stream),
                         "nbody kernel launch");
    if (rc == UTC_OK)
        rc = utc_gpu_synchronize();
    if (rc != UTC_OK)
        return rc;
    double t1 = capp_now();
    if ((rc = utc_gpu_data_mark_device(st->next)) == UTC_OK)
        rc = utc_gpu_data_fetch_device(st->next, next + 4 * i0);
    *xfer += capp_now() - t1;
    return rc;
}

static int nb_gpu_end(void *state, double *vel, int64_t count, double *xfer)
{
    (void)count;
    nb_gpu_t *st = state;
    double t0 = capp_now();
    int rc = utc_gpu_data_mark_device(st->vel);
    if (rc == UTC_OK)
        rc = utc_gpu_data_fetch_host(st->vel, vel);
    *xfer += capp_now() - t0;
    nb_gpu_free(st);
    return rc;
}

static const nb_backend_t nb_gpu_backend = {
    .begin = nb_gpu_begin, .step = nb_gpu_step, .end = nb_gpu_end};

int nb_gpu(const capp_cfg_t *cfg, capp_result_t *res)
{
    return nb_task(cfg, res, UTC_TASK_GPU, &nb_gpu_backend);
}
