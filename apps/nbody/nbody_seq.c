/* nbody: data, the kernel every CPU implementation shares, seq and verification. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_rng.h"
#include "nbody.h"

void nb_generate(uint64_t seed, int64_t n, double *pos, double *vel)
{
    uint64_t kp = capp_stream(seed, 30), kv = capp_stream(seed, 31), km = capp_stream(seed, 32);
    for (int64_t i = 0; i < n; i++) {
        for (int c = 0; c < 3; c++) {
            pos[4 * i + c] = 2.0 * capp_unit(kp, (uint64_t)(3 * i + c)) - 1.0;
            vel[3 * i + c] = 0.1 * capp_unit(kv, (uint64_t)(3 * i + c)) - 0.05;
        }
        pos[4 * i + 3] = (0.5 + capp_unit(km, (uint64_t)i)) / (double)n;
    }
}

#define NB_LANES 4

void nb_bodies(const double *restrict cur, double *restrict next, double *restrict vel,
               int64_t n, int64_t i0, int64_t count)
{
    int64_t i = i0, end = i0 + count;
    /* Four bodies per pass over j (vectorized over the four); each body still adds its
     * terms in increasing j. */
    for (; i + NB_LANES <= end; i += NB_LANES) {
        double xi[NB_LANES], yi[NB_LANES], zi[NB_LANES];
        double a[NB_LANES][3] = {{0}};
        for (int q = 0; q < NB_LANES; q++)
            xi[q] = cur[4 * (i + q)], yi[q] = cur[4 * (i + q) + 1], zi[q] = cur[4 * (i + q) + 2];
        for (int64_t j = 0; j < n; j++)
            for (int q = 0; q < NB_LANES; q++)
                nb_pull(xi[q], yi[q], zi[q], cur + 4 * j, a[q]);
        for (int q = 0; q < NB_LANES; q++)
            nb_move(cur + 4 * (i + q), next + 4 * (i + q), vel + 3 * (i + q - i0), a[q]);
    }
    for (; i < end; i++) {
        double a[3] = {0, 0, 0};
        for (int64_t j = 0; j < n; j++)
            nb_pull(cur[4 * i], cur[4 * i + 1], cur[4 * i + 2], cur + 4 * j, a);
        nb_move(cur + 4 * i, next + 4 * i, vel + 3 * (i - i0), a);
    }
}

void nb_momentum(const double *pos, const double *vel, int64_t n, double p[3])
{
    p[0] = p[1] = p[2] = 0;
    for (int64_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++)
            p[c] += pos[4 * i + 3] * vel[3 * i + c];
}

/* T steps on all bodies; out holds 4n positions then 3n velocities. */
static void nb_run_seq(nb_dims_t d, double *out, double *tmp)
{
    double *pos = out, *vel = out + 4 * d.n;
    double *cur = pos, *next = tmp;
    for (int64_t s = 0; s < d.steps; s++) {
        nb_bodies(cur, next, vel, d.n, 0, d.n);
        double *t = cur;
        cur = next, next = t;
    }
    if (cur != pos)
        memcpy(pos, cur, sizeof(double) * 4 * (size_t)d.n);
}

int nb_seq(const capp_cfg_t *cfg, capp_result_t *res)
{
    nb_dims_t d = nb_dims(cfg);
    double *out = capp_alloc(cfg, sizeof(double) * 7 * (size_t)d.n, "bodies");
    double *tmp = capp_alloc(cfg, sizeof(double) * 4 * (size_t)d.n, "positions");
    if (!out || !tmp) {
        free(out), free(tmp);
        return CAPP_EXIT_RUNTIME;
    }
    nb_generate(cfg->seed, d.n, out, out + 4 * d.n);
    double t0 = capp_now();
    nb_run_seq(d, out, tmp);
    res->seconds = capp_now() - t0;
    free(tmp);
    res->out = out;
    res->check = nb_check(out, d.n);
    return 0;
}

int nb_verify(const capp_cfg_t *cfg, const capp_result_t *res, char *msg, size_t len)
{
    nb_dims_t d = nb_dims(cfg);
    const double *o = res->out;
    double *ref = malloc(sizeof(double) * 7 * (size_t)d.n);
    double *tmp = malloc(sizeof(double) * 4 * (size_t)d.n);
    int ok = 0;
    if (!o || !ref || !tmp) {
        snprintf(msg, len, "%s", o ? "out of memory for the reference" : "no result");
        goto out;
    }
    /* Momentum: the pair forces are opposite, so total momentum stays what it was (up to
     * rounding: a tolerance relative to the sum of |m v|). */
    double p0[3], p1[3], scale = 0;
    nb_generate(cfg->seed, d.n, ref, ref + 4 * d.n);
    nb_momentum(ref, ref + 4 * d.n, d.n, p0);
    nb_momentum(o, o + 4 * d.n, d.n, p1);
    for (int64_t i = 0; i < d.n; i++)
        for (int c = 0; c < 3; c++)
            scale += fabs(o[4 * i + 3] * o[4 * d.n + 3 * i + c]);
    for (int c = 0; c < 3; c++)
        if (fabs(p1[c] - p0[c]) > 1e-9 * scale + 1e-15) {
            snprintf(msg, len, "momentum %c went from %.17g to %.17g", "xyz"[c], p0[c], p1[c]);
            goto out;
        }
    nb_run_seq(d, ref, tmp); /* ref holds the generated bodies */
    for (int64_t i = 0; i < 7 * d.n; i++)
        if (memcmp(&o[i], &ref[i], sizeof(double)) != 0) {
            bool is_pos = i < 4 * d.n;
            int64_t b = is_pos ? i / 4 : (i - 4 * d.n) / 3;
            snprintf(msg, len, "body %lld: %s %.17g, seq %.17g", (long long)b,
                     is_pos ? "position/mass" : "velocity", o[i], ref[i]);
            goto out;
        }
    snprintf(msg, len, "positions and velocities of all %lld bodies equal seq bit for bit "
             "after %lld steps; momentum conserved", (long long)d.n, (long long)d.steps);
    ok = 1;
out:
    free(ref);
    free(tmp);
    return ok;
}
