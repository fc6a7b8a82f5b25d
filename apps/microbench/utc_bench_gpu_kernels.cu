// Kernel of utc_bench_gpu: one step of a direct O(n^2) n-body simulation, as in the
// dissertation's concurrent-kernel test (fig. 3.17). Small n leaves most of the GPU idle,
// so kernels of several tasks can run at once.
#include <cuda_runtime.h>

namespace {

__global__ void nbody_step(const float4 *pos, float4 *next, float4 *vel, int n, float dt)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float soft2 = 1e-3f;
    float4 p = pos[i];
    float ax = 0, ay = 0, az = 0;
    for (int j = 0; j < n; j++) {
        float4 q = pos[j];
        float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
        float inv = rsqrtf(dx * dx + dy * dy + dz * dz + soft2);
        float s = q.w * inv * inv * inv;
        ax += dx * s;
        ay += dy * s;
        az += dz * s;
    }
    float4 v = vel[i];
    v.x += ax * dt;
    v.y += ay * dt;
    v.z += az * dt;
    vel[i] = v;
    next[i] = make_float4(p.x + v.x * dt, p.y + v.y * dt, p.z + v.z * dt, p.w);
}

} // namespace

// `steps` steps of n bodies (float4 x, y, z, mass) ping-ponging between pos0 and pos1,
// launched on `stream`. Returns 0 or the cudaError_t of the launches; does not wait.
extern "C" int utc_bench_nbody(void *pos0, void *pos1, void *vel, int n, int steps, void *stream)
{
    const int block = 256;
    for (int s = 0; s < steps; s++) {
        float4 *from = (float4 *)(s % 2 ? pos1 : pos0), *to = (float4 *)(s % 2 ? pos0 : pos1);
        nbody_step<<<(n + block - 1) / block, block, 0, (cudaStream_t)stream>>>(
            from, to, (float4 *)vel, n, 1e-3f);
    }
    // peek, not get: the error stays for utc_gpu_check to report
    return (int)cudaPeekAtLastError();
}
