/* cudahost: host versions of the kernels of the example (apps/examples/gpu_kernel.cu) and
 * of utc_bench_gpu_overlap (apps/microbench/utc_bench_gpu_overlap_kernels.cu). */
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

#define PTR sizeof(void *)
const ch_kernel_t ch_kernels_apps[] = {
    {"saxpy_kernel", "fPKfPfm", 4, {sizeof(float), PTR, PTR, sizeof(size_t)}, saxpy_run},
    {"item_kernel", "PKhPhmy", 4, {PTR, PTR, sizeof(size_t), 8}, item_run},
    {0},
};
