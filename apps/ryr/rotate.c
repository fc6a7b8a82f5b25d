#include "rotate.h"

#include <math.h>

#include "rotate_rules.h"

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

void ryr_rotate_rows(const ryr_rotation_t *rot, const uint8_t *src, int y0, int y1,
                     uint8_t *out)
{
    const ryr_rotation_t r = *rot; /* by value, as rotate_rules.h takes it */
    for (int y = y0; y < y1; y++) {
        uint8_t *row = out + (size_t)(y - y0) * r.ow;
        if (r.quarter >= 0) {
            ptrdiff_t first, step;
            ryr__quarter_row(r, y, &first, &step);
            for (int x = 0; x < r.ow; x++)
                row[x] = src[first + x * step];
        } else {
            for (int x = 0; x < r.ow; x++)
                row[x] = ryr__rotate_general(r, src, x, y);
        }
    }
}

void ryr_rotate_plane(const ryr_rotation_t *rot, const uint8_t *src, uint8_t *out)
{
    ryr_rotate_rows(rot, src, 0, rot->oh, out);
}
