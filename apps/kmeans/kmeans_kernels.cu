// kmeans: one thread per point finds the nearest centroid (km_nearest, km_assign's
// arithmetic; the build passes --fmad=false), and adds the point into the step's integer
// sums: in shared memory per block when the vector fits, then once per block into global
// memory. Integer additions commute, so the sums equal the CPU's exactly.
#include <cuda_runtime.h>

#include "kmeans_kernels.h"

typedef unsigned long long ull;

__global__ void km_kernel(const float *__restrict__ pts, int64_t count, int64_t index0, int f,
                          int k, const float *__restrict__ ct, int32_t *__restrict__ assign,
                          ull *__restrict__ acc, int use_shared)
{
    extern __shared__ ull sh[];
    const int nacc = KM_ACC(k, f);
    ull *dst = use_shared ? sh : acc;
    if (use_shared)
        for (int i = threadIdx.x; i < nacc; i += blockDim.x)
            sh[i] = 0;
    __syncthreads();
    for (int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; p < count;
         p += (int64_t)gridDim.x * blockDim.x) {
        const float *x = pts + p * f;
        const int best = km_nearest(x, ct, f, k);
        if (assign[p] != best) {
            atomicAdd(&dst[k * f + k], 1ULL);
            assign[p] = best;
        }
        atomicAdd(&dst[k * f + best], 1ULL);
        for (int q = 0; q < f; q++)
            atomicAdd(&dst[best * f + q], (ull)(long long)(x[q] * KM_SCALE));
        atomicAdd(&dst[k * f + k + 1], (ull)km_check_term(best, index0 + p));
    }
    if (use_shared) {
        __syncthreads();
        for (int i = threadIdx.x; i < nacc; i += blockDim.x)
            if (sh[i])
                atomicAdd(&acc[i], sh[i]);
    }
}

extern "C" int km_gpu_launch(const float *pts, int64_t count, int64_t index0, int f, int k,
                             const float *ct, int32_t *assign, int64_t *acc, void *stream)
{
    if (count <= 0)
        return 0; // no point to assign (a zero grid is a launch error)
    const int threads = 256;
    int64_t blocks = (count + threads - 1) / threads;
    if (blocks > 4096)
        blocks = 4096;
    size_t shared = sizeof(ull) * (size_t)KM_ACC(k, f);
    int use_shared = shared <= 48 * 1024;
    km_kernel<<<(unsigned)blocks, threads, use_shared ? shared : 0,
                static_cast<cudaStream_t>(stream)>>>(pts, count, index0, f, k, ct, assign,
                                                     reinterpret_cast<ull *>(acc), use_shared);
    // peek, not get: the error stays for utc_gpu_check (capp_gpu_status) to report
    return static_cast<int>(cudaPeekAtLastError());
}
