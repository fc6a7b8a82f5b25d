/* cudahost: host versions of the GPU tests' kernels (tests/gpu/kernels.cu), element for
 * element what the CUDA threads of a grid-stride loop do between them. */
#include "cudahost.h"

static void vadd_run(dim3 grid, dim3 block, void **a)
{
    (void)grid, (void)block;
    size_t n = *(size_t *)a[3];
    const float *x = ch_kernel_mem(*(const float **)a[0], n * sizeof(float));
    const float *y = ch_kernel_mem(*(const float **)a[1], n * sizeof(float));
    float *out = ch_kernel_mem(*(float **)a[2], n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        out[i] = x[i] + y[i];
}

static void scale_run(dim3 grid, dim3 block, void **a)
{
    (void)grid, (void)block;
    float s = *(float *)a[1], add = *(float *)a[2];
    size_t n = *(size_t *)a[3];
    float *x = ch_kernel_mem(*(float **)a[0], n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        x[i] = x[i] * s + add;
}

static void xor_run(dim3 grid, dim3 block, void **a)
{
    (void)grid, (void)block;
    unsigned char mask = *(unsigned char *)a[1];
    size_t n = *(size_t *)a[2];
    unsigned char *x = ch_kernel_mem(*(unsigned char **)a[0], n);
    for (size_t i = 0; i < n; i++)
        x[i] ^= mask;
}

static void spin_run(dim3 grid, dim3 block, void **a)
{
    (void)grid, (void)block;
    unsigned long long ns = *(unsigned long long *)a[0];
    unsigned long long *stamps = ch_kernel_mem(*(unsigned long long **)a[1], 2 * sizeof *stamps);
    unsigned long long start = ch_kernel_clock_ns();
    ch_kernel_sleep_ns(ns);
    stamps[0] = start;
    stamps[1] = ch_kernel_clock_ns();
}

static void mix_run(dim3 grid, dim3 block, void **a)
{
    (void)grid, (void)block;
    size_t n = *(size_t *)a[2];
    unsigned long long seed = *(unsigned long long *)a[3], spin_ns = *(unsigned long long *)a[4];
    const unsigned char *in = ch_kernel_mem(*(const unsigned char **)a[0], n);
    unsigned char *out = ch_kernel_mem(*(unsigned char **)a[1], n);
    ch_kernel_sleep_ns(spin_ns);
    for (size_t i = 0; i < n; i++)
        out[i] = (unsigned char)(in[i] * 7u + i * 13u + seed);
}

#define PTR sizeof(void *)
const ch_kernel_t ch_kernels_tests[] = {
    {"vadd_kernel", "PKfS1_Pfm", 4, {PTR, PTR, PTR, sizeof(size_t)}, vadd_run},
    {"scale_kernel", "Pfffm", 4, {PTR, sizeof(float), sizeof(float), sizeof(size_t)}, scale_run},
    {"xor_kernel", "Phhm", 3, {PTR, 1, sizeof(size_t)}, xor_run},
    {"spin_kernel", "yPy", 2, {8, PTR}, spin_run},
    {"mix_kernel", "PKhPhmyy", 5, {PTR, PTR, sizeof(size_t), 8, 8}, mix_run},
    {0},
};
