/* kmeans: data, the steps every CPU implementation shares, seq and verification. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_rng.h"
#include "kmeans.h"

void km_generate(uint64_t seed, km_dims_t d, float *pts)
{
    uint64_t kc = capp_stream(seed, 20), kp = capp_stream(seed, 21), kn = capp_stream(seed, 22);
    for (int64_t i = 0; i < d.n; i++) {
        uint64_t blob = capp_rand(kp, (uint64_t)i) % (uint64_t)d.k;
        for (int f = 0; f < d.f; f++) {
            double center = 32.0 + 192.0 * capp_unit(kc, blob * (uint64_t)d.f + (uint64_t)f);
            uint64_t j = ((uint64_t)i * (uint64_t)d.f + (uint64_t)f) * 4;
            double noise = (capp_unit(kn, j) + capp_unit(kn, j + 1) + capp_unit(kn, j + 2) +
                            capp_unit(kn, j + 3) - 2.0) * 8.0;
            double v = center + noise;
            v = v < 0 ? 0 : v > 255.0 ? 255.0 : v;
            pts[i * d.f + f] = (float)(floor(v * KM_SCALE) / KM_SCALE); /* exact in float */
        }
    }
}

void km_initial(km_dims_t d, const float *pts, float *ct)
{
    for (int c = 0; c < d.k; c++) {
        int64_t i = (int64_t)c * d.n / d.k;
        for (int f = 0; f < d.f; f++)
            ct[f * d.k + c] = pts[i * d.f + f];
    }
}

#define KM_MAX_K 1024

void km_assign(km_dims_t d, const float *pts, int64_t count, int64_t index0, const float *ct,
               int32_t *assign, int64_t *acc)
{
    const int K = d.k, F = d.f;
    int64_t *sums = acc, *counts = acc + K * F;
    int64_t changed = 0, checksum = 0;
    float dist[KM_MAX_K];
    for (int64_t p = 0; p < count; p++) {
        const float *x = pts + p * F;
        for (int c = 0; c < K; c++)
            dist[c] = 0.0f;
        /* Over the clusters in the inner loop (vectorized); each distance still adds its
         * features in order. */
        for (int f = 0; f < F; f++) {
            float xf = x[f];
            const float *restrict cf = ct + f * K;
            for (int c = 0; c < K; c++) {
                float t = xf - cf[c];
                dist[c] += t * t;
            }
        }
        int best = 0;
        for (int c = 1; c < K; c++)
            if (dist[c] < dist[best])
                best = c;
        if (assign[p] != best)
            changed++, assign[p] = best;
        counts[best]++;
        int64_t *s = sums + (int64_t)best * F;
        for (int f = 0; f < F; f++)
            s[f] += (int64_t)(x[f] * KM_SCALE); /* exact: x is a multiple of 2^-16 */
        checksum += km_check_term(best, index0 + p);
    }
    acc[K * F + K] += changed;
    acc[K * F + K + 1] += checksum;
}

void km_update(km_dims_t d, const int64_t *acc, float *ct)
{
    const int64_t *counts = acc + d.k * d.f;
    for (int c = 0; c < d.k; c++)
        if (counts[c] > 0)
            for (int f = 0; f < d.f; f++)
                ct[f * d.k + c] =
                    (float)((double)acc[c * d.f + f] / ((double)KM_SCALE * (double)counts[c]));
}

km_out_t *km_result(km_dims_t d, int64_t steps, const int64_t *acc, const float *ct)
{
    km_out_t *out = malloc(sizeof *out + sizeof(float) * (size_t)(d.k * d.f));
    if (!out)
        return NULL;
    out->steps = steps;
    out->changed = acc[d.k * d.f + d.k];
    out->checksum = acc[d.k * d.f + d.k + 1];
    for (int c = 0; c < d.k; c++)
        for (int f = 0; f < d.f; f++)
            out->cent[c * d.f + f] = ct[f * d.k + c];
    return out;
}

/* The whole algorithm on one thread; assign is left holding the final clusters. */
static km_out_t *km_run_seq(km_dims_t d, const float *pts, int32_t *assign, int64_t *acc,
                            float *ct)
{
    size_t nacc = (size_t)KM_ACC(d.k, d.f);
    km_initial(d, pts, ct);
    for (int64_t i = 0; i < d.n; i++)
        assign[i] = -1;
    int64_t steps = 0;
    do {
        memset(acc, 0, sizeof(int64_t) * nacc);
        km_assign(d, pts, d.n, 0, ct, assign, acc);
        km_update(d, acc, ct);
        steps++;
    } while (acc[d.k * d.f + d.k] > 0 && steps < d.iters);
    return km_result(d, steps, acc, ct);
}

int km_seq(const capp_cfg_t *cfg, capp_result_t *res)
{
    km_dims_t d = km_dims(cfg);
    float *pts = capp_alloc(cfg, sizeof(float) * (size_t)(d.n * d.f), "points");
    int32_t *assign = capp_alloc(cfg, sizeof(int32_t) * (size_t)d.n, "assignment");
    int64_t *acc = capp_alloc(cfg, sizeof(int64_t) * (size_t)KM_ACC(d.k, d.f), "sums");
    float *ct = capp_alloc(cfg, sizeof(float) * (size_t)(d.k * d.f), "centroids");
    int rc = CAPP_EXIT_RUNTIME;
    if (!pts || !assign || !acc || !ct)
        goto out;
    km_generate(cfg->seed, d, pts);
    double t0 = capp_now();
    km_out_t *o = km_run_seq(d, pts, assign, acc, ct);
    res->seconds = capp_now() - t0;
    if (!o) {
        capp_error(cfg, "out of memory for the result");
        goto out;
    }
    res->out = o;
    res->check = (double)o->checksum;
    rc = 0;
out:
    free(pts);
    free(assign);
    free(acc);
    free(ct);
    return rc;
}

int km_verify(const capp_cfg_t *cfg, const capp_result_t *res, char *msg, size_t len)
{
    km_dims_t d = km_dims(cfg);
    const km_out_t *o = res->out;
    float *pts = malloc(sizeof(float) * (size_t)(d.n * d.f));
    int32_t *assign = malloc(sizeof(int32_t) * (size_t)d.n);
    int64_t *acc = malloc(sizeof(int64_t) * (size_t)KM_ACC(d.k, d.f));
    float *ct = malloc(sizeof(float) * (size_t)(d.k * d.f));
    double *mean = calloc((size_t)(d.k * d.f) + (size_t)d.k, sizeof(double));
    km_out_t *ref = NULL;
    int ok = 0;
    if (!o || !pts || !assign || !acc || !ct || !mean) {
        snprintf(msg, len, "%s", o ? "out of memory for the reference" : "no result");
        goto out;
    }
    km_generate(cfg->seed, d, pts);
    ref = km_run_seq(d, pts, assign, acc, ct);
    if (!ref) {
        snprintf(msg, len, "out of memory for the reference");
        goto out;
    }
    if (o->steps != ref->steps || o->changed != ref->changed || o->checksum != ref->checksum) {
        snprintf(msg, len, "steps %lld, changed %lld, checksum %lld; seq: %lld, %lld, %lld",
                 (long long)o->steps, (long long)o->changed, (long long)o->checksum,
                 (long long)ref->steps, (long long)ref->changed, (long long)ref->checksum);
        goto out;
    }
    for (int i = 0; i < d.k * d.f; i++)
        if (memcmp(&o->cent[i], &ref->cent[i], sizeof(float)) != 0) {
            snprintf(msg, len, "centroid %d feature %d = %.9g, seq %.9g", i / d.f, i % d.f,
                     o->cent[i], ref->cent[i]);
            goto out;
        }
    /* Invariants, when converged: each centroid is the mean of its points (in double), and
     * each point is at least as near its centroid as any other. */
    if (ref->changed == 0) {
        double *cnt = mean + d.k * d.f;
        for (int64_t i = 0; i < d.n; i++) {
            cnt[assign[i]] += 1;
            for (int f = 0; f < d.f; f++)
                mean[assign[i] * d.f + f] += pts[i * d.f + f];
        }
        for (int c = 0; c < d.k; c++)
            for (int f = 0; f < d.f && cnt[c] > 0; f++)
                if (fabs(mean[c * d.f + f] / cnt[c] - o->cent[c * d.f + f]) > 1e-4) {
                    snprintf(msg, len, "centroid %d feature %d = %.9g, the mean of its points is "
                             "%.9g", c, f, o->cent[c * d.f + f], mean[c * d.f + f] / cnt[c]);
                    goto out;
                }
        for (int64_t i = 0; i < d.n; i++) {
            double best = 0, other = INFINITY;
            for (int c = 0; c < d.k; c++) {
                double s = 0;
                for (int f = 0; f < d.f; f++) {
                    double t = (double)pts[i * d.f + f] - o->cent[c * d.f + f];
                    s += t * t;
                }
                if (c == assign[i])
                    best = s;
                else if (s < other)
                    other = s;
            }
            if (best > other * (1 + 1e-5) + 1e-6) {
                snprintf(msg, len, "point %lld is nearer another centroid than its own (%d)",
                         (long long)i, assign[i]);
                goto out;
            }
        }
    }
    snprintf(msg, len, "%lld steps (%s), assignment checksum and all %d centroid values equal "
             "seq exactly%s", (long long)o->steps, o->changed ? "step limit reached" : "converged",
             d.k * d.f, ref->changed ? "" : "; centroids are their points' means; points are "
             "nearest their centroids");
    ok = 1;
out:
    free(pts);
    free(assign);
    free(acc);
    free(ct);
    free(mean);
    free(ref);
    return ok;
}
