/*
 * The raytracer on a GPU: one CUDA thread per pixel, following render.c operation by
 * operation (RYR.md), compiled with -fmad=false so no multiply-add is fused. Recursion
 * (reflections) becomes a loop that keeps each level's local colour and weight and then
 * combines them from the deepest level up, exactly as the recursive version adds them.
 */
#include <cuda_runtime.h>
#include <stdlib.h>

#include <utc/status.h>

#include "render_gpu.h"

struct ryr_gpu_scene {
    ryr_sphere_t *spheres; /* device copy, file order */
    int nspheres;
    ryr_vec3_t lights[RYR_MAX_LIGHTS];
    int nlights;
};

/* What a kernel needs, passed by value. */
typedef struct {
    const ryr_sphere_t *spheres;
    int nspheres;
    ryr_vec3_t lights[RYR_MAX_LIGHTS];
    int nlights;
} kscene_t;

typedef struct {
    ryr_vec3_t pos, normal, vref;
    double dist;
} kspoint_t;

__device__ static double kdot(ryr_vec3_t a, ryr_vec3_t b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

__device__ static ryr_vec3_t knormalize(ryr_vec3_t a)
{
    double len = sqrt(kdot(a, a));
    a.x /= len;
    a.y /= len;
    a.z /= len;
    return a;
}

__device__ static int kray_sphere(const ryr_sphere_t *sph, ryr_vec3_t o, ryr_vec3_t d, kspoint_t *sp)
{
    const ryr_vec3_t c = sph->pos;
    double a = d.x * d.x + d.y * d.y + d.z * d.z;
    double b = 2.0 * d.x * (o.x - c.x) + 2.0 * d.y * (o.y - c.y) + 2.0 * d.z * (o.z - c.z);
    double cc = c.x * c.x + c.y * c.y + c.z * c.z + o.x * o.x + o.y * o.y + o.z * o.z +
                2.0 * (-c.x * o.x - c.y * o.y - c.z * o.z) - sph->rad * sph->rad;
    double disc = b * b - 4.0 * a * cc;
    if (disc < 0.0)
        return 0;
    double sqrt_d = sqrt(disc);
    double t1 = (-b + sqrt_d) / (2.0 * a);
    double t2 = (-b - sqrt_d) / (2.0 * a);
    if ((t1 < RYR_ERR_MARGIN && t2 < RYR_ERR_MARGIN) || (t1 > 1.0 && t2 > 1.0))
        return 0;
    if (sp) {
        if (t1 < RYR_ERR_MARGIN)
            t1 = t2;
        if (t2 < RYR_ERR_MARGIN)
            t2 = t1;
        sp->dist = t1 < t2 ? t1 : t2;
        sp->pos.x = o.x + d.x * sp->dist;
        sp->pos.y = o.y + d.y * sp->dist;
        sp->pos.z = o.z + d.z * sp->dist;
        sp->normal.x = (sp->pos.x - c.x) / sph->rad;
        sp->normal.y = (sp->pos.y - c.y) / sph->rad;
        sp->normal.z = (sp->pos.z - c.z) / sph->rad;
        double dn = kdot(d, sp->normal);
        sp->vref.x = -(2.0 * dn * sp->normal.x - d.x);
        sp->vref.y = -(2.0 * dn * sp->normal.y - d.y);
        sp->vref.z = -(2.0 * dn * sp->normal.z - d.z);
        sp->vref = knormalize(sp->vref);
    }
    return 1;
}

/* The local part of shade(): lights, shadows, diffuse and specular. */
__device__ static ryr_vec3_t klocal(const kscene_t *s, const ryr_sphere_t *obj, const kspoint_t *sp)
{
    ryr_vec3_t col = {0.0, 0.0, 0.0};
    for (int i = 0; i < s->nlights; i++) {
        const ryr_vec3_t l = s->lights[i];
        ryr_vec3_t ldir = {l.x - sp->pos.x, l.y - sp->pos.y, l.z - sp->pos.z};
        int in_shadow = 0;
        for (int k = s->nspheres - 1; k >= 0 && !in_shadow; k--)
            in_shadow = kray_sphere(&s->spheres[k], sp->pos, ldir, NULL);
        if (!in_shadow) {
            ldir = knormalize(ldir);
            double nl = kdot(sp->normal, ldir);
            double idiff = nl > 0.0 ? nl : 0.0;
            double ispec = 0.0;
            if (obj->spow > 0.0) {
                double rl = kdot(sp->vref, ldir);
                ispec = pow(rl > 0.0 ? rl : 0.0, obj->spow);
            }
            col.x += idiff * obj->col.x + ispec;
            col.y += idiff * obj->col.y + ispec;
            col.z += idiff * obj->col.z + ispec;
        }
    }
    return col;
}

__device__ static ryr_vec3_t ktrace(const kscene_t *s, ryr_vec3_t o, ryr_vec3_t d)
{
    ryr_vec3_t local[RYR_MAX_RAY_DEPTH];
    double refl[RYR_MAX_RAY_DEPTH];
    int levels = 0;
    for (int depth = 0; depth < RYR_MAX_RAY_DEPTH; depth++) {
        const ryr_sphere_t *nearest = NULL;
        kspoint_t sp, nsp;
        for (int k = s->nspheres - 1; k >= 0; k--) {
            if (kray_sphere(&s->spheres[k], o, d, &sp) && (!nearest || sp.dist < nsp.dist)) {
                nearest = &s->spheres[k];
                nsp = sp;
            }
        }
        if (!nearest)
            break;
        local[levels] = klocal(s, nearest, &nsp);
        refl[levels] = nearest->refl;
        levels++;
        if (!(nearest->refl > 0.0))
            break;
        o = nsp.pos;
        d.x = nsp.vref.x * RYR_RAY_MAG;
        d.y = nsp.vref.y * RYR_RAY_MAG;
        d.z = nsp.vref.z * RYR_RAY_MAG;
    }
    /* col_k = local_k + col_{k+1} * refl_k, deepest first; a level past the limit or with
     * no hit contributes black (0), added as the recursive version adds it */
    ryr_vec3_t col = {0.0, 0.0, 0.0};
    for (int k = levels - 1; k >= 0; k--) {
        ryr_vec3_t c = local[k];
        if (refl[k] > 0.0) {
            c.x += col.x * refl[k];
            c.y += col.y * refl[k];
            c.z += col.z * refl[k];
        }
        col = c;
    }
    return col;
}

__device__ static unsigned char kbyte(double c)
{
    double v = (c < 1.0 ? c : 1.0) * 255.0;
    if (!(v > -2147483648.0))
        return 0;
    return (unsigned char)((int)v & 0xff);
}

__global__ static void render_kernel(kscene_t s, ryr_view_t view, int w, int h, int y0, int y1,
                                     unsigned char *out)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = y0 + blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= y1)
        return;
    const float(*m)[3] = view.m;
    double aspect = (double)w / (double)h;
    ryr_vec3_t d;
    d.x = ((double)x / (double)w) - 0.5;
    d.y = -(((double)y / (double)h) - 0.65) / aspect;
    d.z = 1.0 / RYR_HALF_FOV;
    d.x *= RYR_RAY_MAG;
    d.y *= RYR_RAY_MAG;
    d.z *= RYR_RAY_MAG;
    const double z = 0.0;
    d.x = d.x + z;
    d.y = d.y + z;
    d.z = d.z + z;
    ryr_vec3_t o;
    o.x = z * m[0][0] + z * m[0][1] + z * m[0][2] + view.pos.x;
    o.y = z * m[1][0] + z * m[1][1] + z * m[1][2] + view.pos.y;
    o.z = z * m[2][0] + z * m[2][1] + z * m[2][2] + view.pos.z;
    ryr_vec3_t dir;
    dir.x = (d.x * m[0][0] + d.y * m[0][1] + d.z * m[0][2]) + o.x;
    dir.y = (d.x * m[1][0] + d.y * m[1][1] + d.z * m[1][2]) + o.y;
    dir.z = (d.x * m[2][0] + d.y * m[2][1] + d.z * m[2][2]) + o.z;
    ryr_vec3_t col = ktrace(&s, o, dir);
    unsigned char *px = out + ((size_t)(y - y0) * w + x) * 3;
    px[0] = kbyte(col.x);
    px[1] = kbyte(col.y);
    px[2] = kbyte(col.z);
}

extern "C" int ryr_gpu_scene_upload(const ryr_scene_t *scene, ryr_gpu_scene_t **out)
{
    ryr_gpu_scene_t *gs = (ryr_gpu_scene_t *)calloc(1, sizeof *gs);
    if (!gs)
        return UTC_ERR_NO_MEMORY;
    gs->nspheres = scene->nspheres;
    gs->nlights = scene->nlights;
    for (int i = 0; i < scene->nlights; i++)
        gs->lights[i] = scene->lights[i];
    if (scene->nspheres > 0) {
        size_t bytes = sizeof(ryr_sphere_t) * (size_t)scene->nspheres;
        if (cudaMalloc((void **)&gs->spheres, bytes) != cudaSuccess ||
            cudaMemcpy(gs->spheres, scene->spheres, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
            cudaFree(gs->spheres);
            free(gs);
            return UTC_ERR_GPU;
        }
    }
    *out = gs;
    return UTC_OK;
}

extern "C" void ryr_gpu_scene_free(ryr_gpu_scene_t *gs)
{
    if (!gs)
        return;
    cudaFree(gs->spheres);
    free(gs);
}

extern "C" int ryr_gpu_render_rows(const ryr_gpu_scene_t *gs, const ryr_view_t *view, int w, int h,
                                   int y0, int y1, uint8_t *out_dev, void *stream)
{
    if (!gs || !view || !out_dev || w <= 0 || h <= 0 || y0 < 0 || y1 > h || y0 > y1)
        return UTC_ERR_INVALID_ARG;
    if (y1 == y0)
        return UTC_OK;
    kscene_t s;
    s.spheres = gs->spheres;
    s.nspheres = gs->nspheres;
    s.nlights = gs->nlights;
    for (int i = 0; i < gs->nlights; i++)
        s.lights[i] = gs->lights[i];
    dim3 block(16, 8);
    dim3 grid((unsigned)((w + 15) / 16), (unsigned)((y1 - y0 + 7) / 8));
    render_kernel<<<grid, block, 0, (cudaStream_t)stream>>>(s, *view, w, h, y0, y1, out_dev);
    return cudaGetLastError() == cudaSuccess ? UTC_OK : UTC_ERR_GPU;
}
