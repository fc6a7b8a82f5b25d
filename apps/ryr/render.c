#include "render.h"

#include <math.h>

#include "render_rules.h"

/* Everything below follows c-ray 1.1 operation by operation: the order of additions and
 * multiplications is part of the output, so do not "simplify" the expressions. The
 * per-ray rules are in render_rules.h, shared with the GPU renderer. */

static ryr_vec3_t cross(ryr_vec3_t a, ryr_vec3_t b)
{
    ryr_vec3_t r;
    r.x = a.y * b.z - a.z * b.y;
    r.y = a.z * b.x - a.x * b.z;
    r.z = a.x * b.y - a.y * b.x;
    return r;
}


void ryr_view_init(ryr_view_t *view, ryr_vec3_t pos, ryr_vec3_t target)
{
    ryr_vec3_t k = {target.x - pos.x, target.y - pos.y, target.z - pos.z};
    k = ryr__normalize(k);
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
    return ryr__primary_ray(view, w, h, x, y);
}

static ryr_vec3_t shade(const ryr_scene_t *scene, const ryr_sphere_t *obj,
                        const ryr_spoint_t *sp, int depth)
{
    ryr_vec3_t col = ryr__shade_local(scene->spheres, scene->nspheres, scene->lights,
                                      scene->nlights, obj, sp);
    if (obj->refl > 0.0)
        ryr__add_reflection(&col, ryr_trace(scene, ryr__reflection_ray(sp), depth + 1), obj->refl);
    return col;
}

ryr_vec3_t ryr_trace(const ryr_scene_t *scene, ryr_ray_t ray, int depth)
{
    ryr_vec3_t black = {0.0, 0.0, 0.0};
    if (depth >= RYR_MAX_RAY_DEPTH)
        return black;
    ryr_spoint_t sp = {0};
    int nearest = ryr__nearest(scene->spheres, scene->nspheres, &ray, &sp);
    return nearest >= 0 ? shade(scene, &scene->spheres[nearest], &sp, depth) : black;
}

uint8_t ryr_channel_byte(double c) { return ryr__channel_byte(c); }

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
