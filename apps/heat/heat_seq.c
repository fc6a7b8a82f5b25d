/* heat: data, the kernel every CPU implementation shares, seq and verification. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_rng.h"
#include "heat.h"

void heat_generate(uint64_t seed, heat_dims_t d, float *grid)
{
    uint64_t key = capp_stream(seed, 10);
    for (int64_t i = 0; i < d.rows; i++)
        for (int64_t j = 0; j < d.cols; j++) {
            bool edge = i == 0 || j == 0 || i == d.rows - 1 || j == d.cols - 1;
            grid[i * d.cols + j] = !edge ? capp_unitf(key, (uint64_t)(i * d.cols + j))
                                   : i == 0 ? 1.0f : 0.0f;
        }
}

void heat_row(const float *restrict up, const float *restrict mid, const float *restrict down,
              float *restrict out, int64_t cols)
{
    out[0] = mid[0];
    for (int64_t j = 1; j < cols - 1; j++)
        out[j] = heat_point(up[j], mid[j], mid[j - 1], mid[j + 1], down[j]);
    out[cols - 1] = mid[cols - 1];
}

void heat_rows(const float *cur, float *next, int64_t first, int64_t count, int64_t cols)
{
    for (int64_t i = first; i < first + count; i++)
        heat_row(cur + (i - 1) * cols, cur + i * cols, cur + (i + 1) * cols, next + i * cols,
                 cols);
}

double heat_checksum(const float *grid, int64_t count)
{
    double s = 0;
    for (int64_t i = 0; i < count; i++)
        s += grid[i];
    return s;
}

/* T steps on a whole grid; returns the grid holding the result (g or tmp). */
static float *heat_run_seq(heat_dims_t d, float *g, float *tmp)
{
    memcpy(tmp, g, sizeof(float) * (size_t)d.cols);     /* fixed top and bottom rows */
    memcpy(tmp + (d.rows - 1) * d.cols, g + (d.rows - 1) * d.cols, sizeof(float) * (size_t)d.cols);
    float *cur = g, *next = tmp;
    for (int64_t s = 0; s < d.steps; s++) {
        heat_rows(cur, next, 1, d.rows - 2, d.cols);
        float *t = cur;
        cur = next, next = t;
    }
    return cur;
}

int heat_seq(const capp_cfg_t *cfg, capp_result_t *res)
{
    heat_dims_t d = heat_dims(cfg);
    size_t bytes = sizeof(float) * (size_t)(d.rows * d.cols);
    float *g = capp_alloc(cfg, bytes, "grid"), *tmp = capp_alloc(cfg, bytes, "grid");
    if (!g || !tmp) {
        free(g), free(tmp);
        return CAPP_EXIT_RUNTIME;
    }
    heat_generate(cfg->seed, d, g);
    double t0 = capp_now();
    float *out = heat_run_seq(d, g, tmp);
    res->seconds = capp_now() - t0;
    free(out == g ? tmp : g);
    res->out = out;
    res->check = heat_checksum(out, d.rows * d.cols);
    return 0;
}

int heat_verify(const capp_cfg_t *cfg, const capp_result_t *res, char *msg, size_t len)
{
    heat_dims_t d = heat_dims(cfg);
    int64_t cells = d.rows * d.cols;
    const float *u = res->out;
    float *g = malloc(sizeof(float) * (size_t)cells), *tmp = malloc(sizeof(float) * (size_t)cells);
    int ok = 0;
    if (!u || !g || !tmp) {
        snprintf(msg, len, "%s", u ? "out of memory for the reference" : "no result");
        goto out;
    }
    /* Maximum principle: every value stays within the initial range [0, 1]. */
    for (int64_t i = 0; i < cells; i++)
        if (!(u[i] >= 0.0f && u[i] <= 1.0f)) {
            snprintf(msg, len, "u(%lld,%lld) = %.9g is outside [0, 1]",
                     (long long)(i / d.cols), (long long)(i % d.cols), u[i]);
            goto out;
        }
    heat_generate(cfg->seed, d, g);
    const float *ref = heat_run_seq(d, g, tmp);
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < cells; i++)
        if (memcmp(&u[i], &ref[i], sizeof(float)) != 0 && bad++ == 0)
            first = i;
    if (bad) {
        snprintf(msg, len, "%lld of %lld cells differ from seq; first u(%lld,%lld) = %.9g, "
                 "seq %.9g", (long long)bad, (long long)cells, (long long)(first / d.cols),
                 (long long)(first % d.cols), u[first], ref[first]);
        goto out;
    }
    snprintf(msg, len, "all %lld cells equal seq bit for bit after %lld steps; all in [0, 1]",
             (long long)cells, (long long)d.steps);
    ok = 1;
out:
    free(g);
    free(tmp);
    return ok;
}
