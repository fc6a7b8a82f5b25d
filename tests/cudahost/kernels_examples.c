/* cudahost: host versions of the kernels of the example (apps/examples/gpu_kernel.cu), of
 * utc_bench_gpu_overlap (apps/microbench/utc_bench_gpu_overlap_kernels.cu) and of
 * utc_bench_gpu (apps/microbench/utc_bench_gpu_kernels.cu). */
#include <math.h>

#include "cudahost.h"

static void saxpy_run(dim3 grid, dim3 block, void **a)
{
    (void)grid, (void)block;
    float s = *(float *)a[0];
    size_t n = *(size_t *)a[3];
    const float *x = ch_kernel_mem(*(const float **)a[1], n * sizeof(float));
    float *y = ch_kernel_mem(*(float **)a[2], n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        y[i] = s * x[i] + y[i];
}

static void item_run(dim3 grid, dim3 block, void **a)
{
    (void)grid, (void)block;
    size_t n = *(size_t *)a[2];
    unsigned long long spin_ns = *(unsigned long long *)a[3];
    const unsigned char *in = ch_kernel_mem(*(const unsigned char **)a[0], n);
    unsigned char *out = ch_kernel_mem(*(unsigned char **)a[1], n);
    ch_kernel_sleep_ns(spin_ns);
    for (size_t i = 0; i < n; i++)
        out[i] = (unsigned char)(in[i] ^ 0x5a);
}

/* One step of the benchmark's n-body (float4 x, y, z, mass); rsqrtf as 1 / sqrtf. */
static void nbody_step_run(dim3 grid, dim3 block, void **a)
{
    int n = *(int *)a[3];
    float dt = *(float *)a[4];
    if (n <= 0)
        return;
    const float *pos = ch_kernel_mem(*(const float **)a[0], 4 * sizeof(float) * (size_t)n);
    float *next = ch_kernel_mem(*(float **)a[1], 4 * sizeof(float) * (size_t)n);
    float *vel = ch_kernel_mem(*(float **)a[2], 4 * sizeof(float) * (size_t)n);
    for (long long i = 0; i < n && i < (long long)grid.x * block.x; i++) {
        const float *p = pos + 4 * i;
        float ax = 0, ay = 0, az = 0;
        for (int j = 0; j < n; j++) {
            const float *q = pos + 4 * j;
            float dx = q[0] - p[0], dy = q[1] - p[1], dz = q[2] - p[2];
            float inv = 1.0f / sqrtf(dx * dx + dy * dy + dz * dz + 1e-3f);
            float s = q[3] * inv * inv * inv;
            ax += dx * s;
            ay += dy * s;
            az += dz * s;
        }
        float *v = vel + 4 * i;
        v[0] += ax * dt;
        v[1] += ay * dt;
        v[2] += az * dt;
        float *o = next + 4 * i;
        o[0] = p[0] + v[0] * dt;
        o[1] = p[1] + v[1] * dt;
        o[2] = p[2] + v[2] * dt;
        o[3] = p[3];
    }
}

#define PTR sizeof(void *)
const ch_kernel_t ch_kernels_examples[] = {
    {"saxpy_kernel", "fPKfPfm", 4, {sizeof(float), PTR, PTR, sizeof(size_t)}, saxpy_run},
    {"item_kernel", "PKhPhmy", 4, {PTR, PTR, sizeof(size_t), 8}, item_run},
    {"nbody_step",
     "PK6float4PS0_S3_if",
     5,
     {PTR, PTR, PTR, sizeof(int), sizeof(float)},
     nbody_step_run},
    {0},
};
