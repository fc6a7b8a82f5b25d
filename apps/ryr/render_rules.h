/*
 * The per-ray rules of the c-ray 1.1 renderer (RYR.md), written once for the CPU renderer
 * (render.c, gcc) and the GPU renderer (render_gpu.cu, nvcc). Both compile them without
 * fused multiply-adds, so the two give the same bytes.
 *
 * Everything here follows c-ray 1.1 operation by operation: the order of additions and
 * multiplications is part of the output, so do not "simplify" the expressions.
 */
#ifndef RYR_RENDER_RULES_H
#define RYR_RENDER_RULES_H

#include <math.h>
#include <stdint.h>

#include "host_device.h"
#include "render.h"
#include "scene.h"

static inline RYR_HD double ryr__dot(ryr_vec3_t a, ryr_vec3_t b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

static inline RYR_HD ryr_vec3_t ryr__normalize(ryr_vec3_t a)
{
    double len = sqrt(ryr__dot(a, a));
    a.x /= len;
    a.y /= len;
    a.z /= len;
    return a;
}

/* The primary ray of pixel (x, y) of a w x h frame. */
static inline RYR_HD ryr_ray_t ryr__primary_ray(const ryr_view_t *view, int w, int h, int x, int y)
{
    const float(*m)[3] = view->m;
    double aspect = (double)w / (double)h;
    ryr_vec3_t d;
    d.x = ((double)x / (double)w) - 0.5;
    d.y = -(((double)y / (double)h) - 0.65) / aspect;
    d.z = 1.0 / RYR_HALF_FOV;
    d.x *= RYR_RAY_MAG;
    d.y *= RYR_RAY_MAG;
    d.z *= RYR_RAY_MAG;
    /* c-ray transforms a camera-space ray with origin 0 and direction d: the zero
     * origin is added and multiplied as written (it only matters for signed zeros). */
    const double z = 0.0;
    d.x = d.x + z;
    d.y = d.y + z;
    d.z = d.z + z;
    ryr_ray_t ray;
    ray.orig.x = z * m[0][0] + z * m[0][1] + z * m[0][2] + view->pos.x;
    ray.orig.y = z * m[1][0] + z * m[1][1] + z * m[1][2] + view->pos.y;
    ray.orig.z = z * m[2][0] + z * m[2][1] + z * m[2][2] + view->pos.z;
    /* ...and then adds the world origin to the rotated direction: a quirk kept on
     * purpose, it changes pixels. */
    ray.dir.x = (d.x * m[0][0] + d.y * m[0][1] + d.z * m[0][2]) + ray.orig.x;
    ray.dir.y = (d.x * m[1][0] + d.y * m[1][1] + d.z * m[1][2]) + ray.orig.y;
    ray.dir.z = (d.x * m[2][0] + d.y * m[2][1] + d.z * m[2][2]) + ray.orig.z;
    return ray;
}

/* A ray-sphere hit: distance along the ray, point, normal and view reflection. */
typedef struct ryr_spoint {
    ryr_vec3_t pos, normal, vref;
    double dist;
} ryr_spoint_t;

/* c-ray's ray_sphere(): 1 on a hit (filling *sp when sp is not NULL), else 0. */
static inline RYR_HD int ryr__ray_sphere(const ryr_sphere_t *sph, const ryr_ray_t *ray,
                                         ryr_spoint_t *sp)
{
    const ryr_vec3_t d = ray->dir, o = ray->orig, c = sph->pos;
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
        /* reflect(): -(2 (D.N) N - D), then normalized */
        double dn = ryr__dot(d, sp->normal);
        sp->vref.x = -(2.0 * dn * sp->normal.x - d.x);
        sp->vref.y = -(2.0 * dn * sp->normal.y - d.y);
        sp->vref.z = -(2.0 * dn * sp->normal.z - d.z);
        sp->vref = ryr__normalize(sp->vref);
    }
    return 1;
}

/* The nearest hit of a ray: spheres in reverse file order (c-ray builds its object list by
 * prepending), a hit replacing the nearest only when strictly nearer, so the later sphere
 * wins a tie. Returns the sphere's index, or -1. */
static inline RYR_HD int ryr__nearest(const ryr_sphere_t *spheres, int nspheres,
                                      const ryr_ray_t *ray, ryr_spoint_t *nearest_sp)
{
    int nearest = -1;
    ryr_spoint_t sp;
    for (int s = nspheres - 1; s >= 0; s--) {
        if (ryr__ray_sphere(&spheres[s], ray, &sp)) {
            if (nearest < 0 || sp.dist < nearest_sp->dist) {
                nearest = s;
                *nearest_sp = sp;
            }
        }
    }
    return nearest;
}

/* The local part of c-ray's shade(): for each light, the shadow test, then diffuse plus
 * specular. The reflection is added by the caller (recursively on the CPU, by a loop on
 * the GPU, in the same order). */
static inline RYR_HD ryr_vec3_t ryr__shade_local(const ryr_sphere_t *spheres, int nspheres,
                                                 const ryr_vec3_t *lights, int nlights,
                                                 const ryr_sphere_t *obj, const ryr_spoint_t *sp)
{
    ryr_vec3_t col = {0.0, 0.0, 0.0};
    for (int i = 0; i < nlights; i++) {
        const ryr_vec3_t *l = &lights[i];
        ryr_vec3_t ldir = {l->x - sp->pos.x, l->y - sp->pos.y, l->z - sp->pos.z};
        ryr_ray_t shadow_ray = {sp->pos, ldir};
        int in_shadow = 0;
        for (int s = nspheres - 1; s >= 0; s--) {
            if (ryr__ray_sphere(&spheres[s], &shadow_ray, 0)) {
                in_shadow = 1;
                break;
            }
        }
        if (!in_shadow) {
            ldir = ryr__normalize(ldir);
            double nl = ryr__dot(sp->normal, ldir);
            double idiff = nl > 0.0 ? nl : 0.0;
            double ispec = 0.0;
            if (obj->spow > 0.0) {
                double rl = ryr__dot(sp->vref, ldir);
                ispec = pow(rl > 0.0 ? rl : 0.0, obj->spow);
            }
            col.x += idiff * obj->col.x + ispec;
            col.y += idiff * obj->col.y + ispec;
            col.z += idiff * obj->col.z + ispec;
        }
    }
    return col;
}

/* The reflection ray leaving a hit. */
static inline RYR_HD ryr_ray_t ryr__reflection_ray(const ryr_spoint_t *sp)
{
    ryr_ray_t ray;
    ray.orig = sp->pos;
    ray.dir = sp->vref;
    ray.dir.x *= RYR_RAY_MAG;
    ray.dir.y *= RYR_RAY_MAG;
    ray.dir.z *= RYR_RAY_MAG;
    return ray;
}

/* col += rcol * refl, as shade() adds the reflected colour. */
static inline RYR_HD void ryr__add_reflection(ryr_vec3_t *col, ryr_vec3_t rcol, double refl)
{
    col->x += rcol.x * refl;
    col->y += rcol.y * refl;
    col->z += rcol.z * refl;
}

/* Pixel channel = (int)(min(c, 1.0) * 255.0) & 0xff. */
static inline RYR_HD uint8_t ryr__channel_byte(double c)
{
    double v = (c < 1.0 ? c : 1.0) * 255.0;
    /* NaN and huge negative values would make the int conversion undefined. */
    if (!(v > -2147483648.0))
        return 0;
    return (uint8_t)((int)v & 0xff);
}

/* What the GPU renderer's kernel takes of a scene, by value: the spheres (device memory on
 * a GPU), the lights. */
typedef struct {
    const ryr_sphere_t *spheres;
    int nspheres;
    ryr_vec3_t lights[RYR_MAX_LIGHTS];
    int nlights;
} ryr_trace_scene_t;

/* ryr_trace without recursion, as the GPU renderer runs it: each level's local colour and
 * reflection weight are kept, then combined from the deepest level up
 * (col_k = local_k + col_{k+1} * refl_k), the same additions in the same order as the
 * recursive CPU version. A level past the limit or with no hit contributes black. */
static inline RYR_HD ryr_vec3_t ryr__trace_levels(const ryr_trace_scene_t *s, ryr_ray_t ray)
{
    ryr_vec3_t local[RYR_MAX_RAY_DEPTH];
    double refl[RYR_MAX_RAY_DEPTH];
    int levels = 0;
    for (int depth = 0; depth < RYR_MAX_RAY_DEPTH; depth++) {
        ryr_spoint_t sp;
        int nearest = ryr__nearest(s->spheres, s->nspheres, &ray, &sp);
        if (nearest < 0)
            break;
        const ryr_sphere_t *obj = &s->spheres[nearest];
        local[levels] = ryr__shade_local(s->spheres, s->nspheres, s->lights, s->nlights, obj, &sp);
        refl[levels] = obj->refl;
        levels++;
        if (!(obj->refl > 0.0))
            break;
        ray = ryr__reflection_ray(&sp);
    }
    ryr_vec3_t col = {0.0, 0.0, 0.0};
    for (int k = levels - 1; k >= 0; k--) {
        ryr_vec3_t c = local[k];
        if (refl[k] > 0.0)
            ryr__add_reflection(&c, col, refl[k]);
        col = c;
    }
    return col;
}

#endif /* RYR_RENDER_RULES_H */
