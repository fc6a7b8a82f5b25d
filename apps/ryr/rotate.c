#include "rotate.h"

#include <math.h>

/* A size within this of an integer counts as that integer, so that rounding noise in
 * cos and sin does not add a pixel to the bounding box. */
#define SIZE_SLACK 1e-6

int ryr_rotation_init(ryr_rotation_t *rot, int w, int h, double angle_deg, ryr_err_t *err)
{
    if (w <= 0 || h <= 0)
        return ryr_err_set(err, "rotate: plane size %dx%d is not positive", w, h);
    if (!isfinite(angle_deg))
        return ryr_err_set(err, "rotate: the angle is not a finite number");
    double a = fmod(angle_deg, 360.0);
    if (a < 0.0)
        a += 360.0;
    rot->w = w;
    rot->h = h;
    rot->quarter = -1;
    for (int q = 0; q < 4; q++)
        if (a == 90.0 * q)
            rot->quarter = q;
    if (a == 360.0) /* fmod of a tiny negative angle, then + 360 */
        rot->quarter = 0;
    if (rot->quarter >= 0) {
        rot->c = rot->quarter == 0 ? 1.0 : rot->quarter == 2 ? -1.0 : 0.0;
        rot->s = rot->quarter == 1 ? 1.0 : rot->quarter == 3 ? -1.0 : 0.0;
        rot->ow = rot->quarter % 2 ? h : w;
        rot->oh = rot->quarter % 2 ? w : h;
        return 0;
    }
    double rad = a * (3.14159265358979323846 / 180.0);
    rot->c = cos(rad);
    rot->s = sin(rad);
    double ac = fabs(rot->c), as = fabs(rot->s);
    rot->ow = (int)ceil(w * ac + h * as - SIZE_SLACK);
    rot->oh = (int)ceil(w * as + h * ac - SIZE_SLACK);
    if (rot->ow < 1)
        rot->ow = 1;
    if (rot->oh < 1)
        rot->oh = 1;
    return 0;
}

/* Exact quarter turns: out(x, y) = src(sx, sy). Counter-clockwise with y down: the
 * source's top-right corner becomes the output's top-left for a quarter turn. */
static void rotate_quarter(const ryr_rotation_t *rot, const uint8_t *src, int y0, int y1,
                           uint8_t *out)
{
    const int w = rot->w, h = rot->h, ow = rot->ow;
    for (int y = y0; y < y1; y++) {
        uint8_t *row = out + (size_t)(y - y0) * ow;
        switch (rot->quarter) {
        case 0:
            for (int x = 0; x < ow; x++)
                row[x] = src[(size_t)y * w + x];
            break;
        case 1: /* out(x, y) = src(w-1-y, x) */
            for (int x = 0; x < ow; x++)
                row[x] = src[(size_t)x * w + (w - 1 - y)];
            break;
        case 2: /* out(x, y) = src(w-1-x, h-1-y) */
            for (int x = 0; x < ow; x++)
                row[x] = src[(size_t)(h - 1 - y) * w + (w - 1 - x)];
            break;
        default: /* 3: out(x, y) = src(y, h-1-x) */
            for (int x = 0; x < ow; x++)
                row[x] = src[(size_t)(h - 1 - x) * w + y];
            break;
        }
    }
}

static void rotate_general(const ryr_rotation_t *rot, const uint8_t *src, int y0, int y1,
                           uint8_t *out)
{
    const int w = rot->w, h = rot->h, ow = rot->ow, oh = rot->oh;
    const double c = rot->c, s = rot->s;
    for (int y = y0; y < y1; y++) {
        uint8_t *row = out + (size_t)(y - y0) * ow;
        double v = y + 0.5 - oh * 0.5;
        for (int x = 0; x < ow; x++) {
            double u = x + 0.5 - ow * 0.5;
            /* Inverse rotation (clockwise with y down), back to source pixel coordinates
             * where pixel centres are at integers. */
            double sx = u * c - v * s + w * 0.5 - 0.5;
            double sy = u * s + v * c + h * 0.5 - 0.5;
            if (!(sx >= -0.5 && sx < w - 0.5 && sy >= -0.5 && sy < h - 0.5)) {
                row[x] = 0;
                continue;
            }
            /* Inside the source area: within half a pixel of the border the edge pixels
             * stand in for their missing neighbours. */
            if (sx < 0.0)
                sx = 0.0;
            if (sy < 0.0)
                sy = 0.0;
            if (sx > w - 1)
                sx = w - 1;
            if (sy > h - 1)
                sy = h - 1;
            int x0 = (int)sx, yy0 = (int)sy;
            int x1 = x0 + 1 < w ? x0 + 1 : x0;
            int yy1 = yy0 + 1 < h ? yy0 + 1 : yy0;
            double fx = sx - x0, fy = sy - yy0;
            const uint8_t *r0 = src + (size_t)yy0 * w, *r1 = src + (size_t)yy1 * w;
            double top = r0[x0] + fx * (r0[x1] - r0[x0]);
            double bot = r1[x0] + fx * (r1[x1] - r1[x0]);
            double val = top + fy * (bot - top);
            int iv = (int)(val + 0.5);
            row[x] = (uint8_t)(iv < 0 ? 0 : iv > 255 ? 255 : iv);
        }
    }
}

void ryr_rotate_rows(const ryr_rotation_t *rot, const uint8_t *src, int y0, int y1,
                     uint8_t *out)
{
    if (rot->quarter >= 0)
        rotate_quarter(rot, src, y0, y1, out);
    else
        rotate_general(rot, src, y0, y1, out);
}

void ryr_rotate_plane(const ryr_rotation_t *rot, const uint8_t *src, uint8_t *out)
{
    ryr_rotate_rows(rot, src, 0, rot->oh, out);
}
