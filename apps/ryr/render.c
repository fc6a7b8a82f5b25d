#include "render.h"

#include <math.h>

/* Everything below follows c-ray 1.1 operation by operation: the order of additions and
 * multiplications is part of the output, so do not "simplify" the expressions. */

static ryr_vec3_t cross(ryr_vec3_t a, ryr_vec3_t b)
{
    ryr_vec3_t r;
    r.x = a.y * b.z - a.z * b.y;
    r.y = a.z * b.x - a.x * b.z;
    r.z = a.x * b.y - a.y * b.x;
    return r;
}

static double dot(ryr_vec3_t a, ryr_vec3_t b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

static ryr_vec3_t normalize(ryr_vec3_t a)
{
    double len = sqrt(dot(a, a));
    a.x /= len;
    a.y /= len;
    a.z /= len;
    return a;
}

void ryr_view_init(ryr_view_t *view, ryr_vec3_t pos, ryr_vec3_t target)
{
    ryr_vec3_t k = {target.x - pos.x, target.y - pos.y, target.z - pos.z};
    k = normalize(k);
    ryr_vec3_t up = {0.0, 1.0, 0.0};
    ryr_vec3_t i = cross(up, k);
    ryr_vec3_t j = cross(k, i);
    /* Stored as float: the reference rounds the matrix to single precision, and the
     * store into a float object is where C guarantees that rounding happens. */
    view->m[0][0] = (float)i.x;
    view->m[0][1] = (float)j.x;
    view->m[0][2] = (float)k.x;
    view->m[1][0] = (float)i.y;
    view->m[1][1] = (float)j.y;
    view->m[1][2] = (float)k.y;
    view->m[2][0] = (float)i.z;
    view->m[2][1] = (float)j.z;
    view->m[2][2] = (float)k.z;
    view->pos = pos;
}

void ryr_view_for_frame(ryr_view_t *view, const ryr_scene_t *scene, int frame,
                        double orbit_deg)
{
    ryr_vec3_t pos = scene->cam_pos, t = scene->cam_target;
    double deg = fmod((double)frame * orbit_deg, 360.0);
    if (deg < 0.0)
        deg += 360.0;
    if (deg != 0.0 && deg != 360.0) {
        double c, s;
        /* Exact values at the quarter turns, so e.g. --orbit 90 gives exact cameras. */
        if (deg == 90.0) {
            c = 0.0, s = 1.0;
        } else if (deg == 180.0) {
            c = -1.0, s = 0.0;
        } else if (deg == 270.0) {
            c = 0.0, s = -1.0;
        } else {
            double a = deg * (3.14159265358979323846 / 180.0);
            c = cos(a), s = sin(a);
        }
        double rx = pos.x - t.x, rz = pos.z - t.z;
        pos.x = t.x + (rx * c + rz * s);
        pos.z = t.z + (-rx * s + rz * c);
    }
    ryr_view_init(view, pos, t);
}

ryr_ray_t ryr_primary_ray(const ryr_view_t *view, int w, int h, int x, int y)
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
typedef struct spoint {
    ryr_vec3_t pos, normal, vref;
    double dist;
} spoint_t;

/* c-ray's ray_sphere(): 1 on a hit (filling *sp when sp is not NULL), else 0. */
static int ray_sphere(const ryr_sphere_t *sph, const ryr_ray_t *ray, spoint_t *sp)
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
        double dn = dot(d, sp->normal);
        sp->vref.x = -(2.0 * dn * sp->normal.x - d.x);
        sp->vref.y = -(2.0 * dn * sp->normal.y - d.y);
        sp->vref.z = -(2.0 * dn * sp->normal.z - d.z);
        sp->vref = normalize(sp->vref);
    }
    return 1;
}

static ryr_vec3_t shade(const ryr_scene_t *scene, const ryr_sphere_t *obj, const spoint_t *sp,
                        int depth)
{
    ryr_vec3_t col = {0.0, 0.0, 0.0};
    for (int i = 0; i < scene->nlights; i++) {
        const ryr_vec3_t *l = &scene->lights[i];
        ryr_vec3_t ldir = {l->x - sp->pos.x, l->y - sp->pos.y, l->z - sp->pos.z};
        ryr_ray_t shadow_ray = {sp->pos, ldir};
        int in_shadow = 0;
        for (int s = scene->nspheres - 1; s >= 0; s--) {
            if (ray_sphere(&scene->spheres[s], &shadow_ray, NULL)) {
                in_shadow = 1;
                break;
            }
        }
        if (!in_shadow) {
            ldir = normalize(ldir);
            double nl = dot(sp->normal, ldir);
            double idiff = nl > 0.0 ? nl : 0.0;
            double ispec = 0.0;
            if (obj->spow > 0.0) {
                double rl = dot(sp->vref, ldir);
                ispec = pow(rl > 0.0 ? rl : 0.0, obj->spow);
            }
            col.x += idiff * obj->col.x + ispec;
            col.y += idiff * obj->col.y + ispec;
            col.z += idiff * obj->col.z + ispec;
        }
    }
    if (obj->refl > 0.0) {
        ryr_ray_t ray;
        ray.orig = sp->pos;
        ray.dir = sp->vref;
        ray.dir.x *= RYR_RAY_MAG;
        ray.dir.y *= RYR_RAY_MAG;
        ray.dir.z *= RYR_RAY_MAG;
        ryr_vec3_t rcol = ryr_trace(scene, ray, depth + 1);
        col.x += rcol.x * obj->refl;
        col.y += rcol.y * obj->refl;
        col.z += rcol.z * obj->refl;
    }
    return col;
}

ryr_vec3_t ryr_trace(const ryr_scene_t *scene, ryr_ray_t ray, int depth)
{
    ryr_vec3_t black = {0.0, 0.0, 0.0};
    if (depth >= RYR_MAX_RAY_DEPTH)
        return black;
    const ryr_sphere_t *nearest = NULL;
    spoint_t sp, nearest_sp = {0};
    /* c-ray keeps its objects in a list built by prepending, so it tests them in
     * reverse file order; with the strict "<", the later sphere wins a tie. */
    for (int s = scene->nspheres - 1; s >= 0; s--) {
        if (ray_sphere(&scene->spheres[s], &ray, &sp)) {
            if (!nearest || sp.dist < nearest_sp.dist) {
                nearest = &scene->spheres[s];
                nearest_sp = sp;
            }
        }
    }
    return nearest ? shade(scene, nearest, &nearest_sp, depth) : black;
}

uint8_t ryr_channel_byte(double c)
{
    double v = (c < 1.0 ? c : 1.0) * 255.0;
    /* NaN and huge negative values would make the int conversion undefined. */
    if (!(v > -2147483648.0))
        return 0;
    return (uint8_t)((int)v & 0xff);
}

void ryr_render_rows(const ryr_scene_t *scene, const ryr_view_t *view, int w, int h, int y0,
                     int y1, uint8_t *out)
{
    for (int y = y0; y < y1; y++) {
        for (int x = 0; x < w; x++) {
            ryr_vec3_t col = ryr_trace(scene, ryr_primary_ray(view, w, h, x, y), 0);
            *out++ = ryr_channel_byte(col.x);
            *out++ = ryr_channel_byte(col.y);
            *out++ = ryr_channel_byte(col.z);
        }
    }
}
