/* Example 5 in a build without CUDA: no kernel. Never called (the example skips first). */
#include "gpu_kernel.h"

int example_saxpy(float a, const float *x, float *y, size_t n, void *stream)
{
    (void)a;
    (void)x;
    (void)y;
    (void)n;
    (void)stream;
    return -1;
}
