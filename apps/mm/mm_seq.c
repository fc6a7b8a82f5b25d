/* mm: data, the kernel every CPU implementation shares, seq and verification. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_rng.h"
#include "mm.h"

/* Column block: a 2 KiB strip of a row of C stays in L1 while a k block streams through. */
#define MM_JB 512
/* k block: MM_KB x MM_JB floats of B (256 KiB) stay in L2 across the rows. */
#define MM_KB 128

void mm_generate(uint64_t seed, mm_dims_t d, float *a, float *b)
{
    uint64_t ka = capp_stream(seed, 1), kb = capp_stream(seed, 2);
    for (int64_t i = 0; i < d.m * d.k; i++)
        a[i] = 2.0f * capp_unitf(ka, (uint64_t)i) - 1.0f;
    for (int64_t i = 0; i < d.k * d.n; i++)
        b[i] = 2.0f * capp_unitf(kb, (uint64_t)i) - 1.0f;
}

void mm_rows(const float *a, const float *b, float *c, int64_t rows, int64_t k, int64_t n)
{
    for (int64_t i = 0; i < rows; i++)
        memset(c + i * n, 0, sizeof(float) * (size_t)n);
    for (int64_t j0 = 0; j0 < n; j0 += MM_JB) {
        int64_t jn = n - j0 < MM_JB ? n - j0 : MM_JB;
        for (int64_t k0 = 0; k0 < k; k0 += MM_KB) {
            int64_t k1 = k - k0 < MM_KB ? k : k0 + MM_KB;
            for (int64_t i = 0; i < rows; i++) {
                float *restrict ci = c + i * n + j0;
                const float *ai = a + i * k;
                int64_t p = k0;
                /* Four products per pass, still added to C(i,j) one at a time in p order:
                 * the rounding is that of the plain dot product. */
                for (; p + 4 <= k1; p += 4) {
                    float a0 = ai[p], a1 = ai[p + 1], a2 = ai[p + 2], a3 = ai[p + 3];
                    const float *restrict b0 = b + p * n + j0;
                    const float *restrict b1 = b0 + n;
                    const float *restrict b2 = b1 + n;
                    const float *restrict b3 = b2 + n;
                    for (int64_t j = 0; j < jn; j++)
                        ci[j] = (((ci[j] + a0 * b0[j]) + a1 * b1[j]) + a2 * b2[j]) + a3 * b3[j];
                }
                for (; p < k1; p++) {
                    float ap = ai[p];
                    const float *restrict bp = b + p * n + j0;
                    for (int64_t j = 0; j < jn; j++)
                        ci[j] += ap * bp[j];
                }
            }
        }
    }
}

double mm_checksum(const float *c, int64_t count)
{
    double s = 0;
    for (int64_t i = 0; i < count; i++)
        s += c[i];
    return s;
}

int mm_seq(const capp_cfg_t *cfg, capp_result_t *res)
{
    mm_dims_t d = mm_dims(cfg);
    float *a = capp_alloc(cfg, sizeof(float) * (size_t)(d.m * d.k), "A");
    float *b = capp_alloc(cfg, sizeof(float) * (size_t)(d.k * d.n), "B");
    float *c = capp_alloc(cfg, sizeof(float) * (size_t)(d.m * d.n), "C");
    if (!a || !b || !c) {
        free(a), free(b), free(c);
        return CAPP_EXIT_RUNTIME;
    }
    mm_generate(cfg->seed, d, a, b);
    double t0 = capp_now();
    mm_rows(a, b, c, d.m, d.k, d.n);
    res->seconds = capp_now() - t0;
    res->check = mm_checksum(c, d.m * d.n);
    res->out = c;
    free(a);
    free(b);
    return 0;
}

int mm_verify(const capp_cfg_t *cfg, const capp_result_t *res, char *msg, size_t len)
{
    mm_dims_t d = mm_dims(cfg);
    const float *c = res->out;
    float *a = malloc(sizeof(float) * (size_t)(d.m * d.k));
    float *b = malloc(sizeof(float) * (size_t)(d.k * d.n));
    float *ref = malloc(sizeof(float) * (size_t)(d.m * d.n));
    int ok = 0;
    if (!c || !a || !b || !ref) {
        snprintf(msg, len, "%s", c ? "out of memory for the reference" : "no result");
        goto out;
    }
    mm_generate(cfg->seed, d, a, b);

    /* Spot checks against plain dot products, independent of the blocked kernel. */
    uint64_t key = capp_stream(cfg->seed, 99);
    for (int s = 0; s < 64; s++) {
        int64_t i = (int64_t)(capp_rand(key, 2 * (uint64_t)s) % (uint64_t)d.m);
        int64_t j = (int64_t)(capp_rand(key, 2 * (uint64_t)s + 1) % (uint64_t)d.n);
        float dot = 0.0f;
        for (int64_t p = 0; p < d.k; p++)
            dot += a[i * d.k + p] * b[p * d.n + j];
        if (dot != c[i * d.n + j]) {
            snprintf(msg, len, "C(%lld,%lld) = %.9g, its dot product is %.9g", (long long)i,
                     (long long)j, c[i * d.n + j], dot);
            goto out;
        }
    }
    /* Every element against seq. */
    mm_rows(a, b, ref, d.m, d.k, d.n);
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < d.m * d.n; i++)
        if (memcmp(&c[i], &ref[i], sizeof(float)) != 0 && bad++ == 0)
            first = i;
    if (bad) {
        snprintf(msg, len, "%lld of %lld elements differ from seq; first C(%lld,%lld) = %.9g, "
                 "seq %.9g", (long long)bad, (long long)(d.m * d.n), (long long)(first / d.n),
                 (long long)(first % d.n), c[first], ref[first]);
        goto out;
    }
    snprintf(msg, len, "all %lld elements equal seq bit for bit; 64 spot dot products agree",
             (long long)(d.m * d.n));
    ok = 1;
out:
    free(a);
    free(b);
    free(ref);
    return ok;
}
