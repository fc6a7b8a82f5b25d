#include "scene.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A scene file larger than this is refused rather than read into memory. */
#define SCENE_MAX_BYTES ((size_t)256 << 20)

/* Fields after the kind field, per kind, with their names for messages. */
static const char *const sphere_fields[] = {"x", "y", "z", "radius", "r", "g", "b",
                                            "shininess", "reflectivity"};
static const char *const light_fields[] = {"x", "y", "z"};
static const char *const camera_fields[] = {"x", "y", "z", "fov", "tx", "ty", "tz"};

typedef struct parse_state {
    const char *name;
    ryr_scene_t scene;
    size_t cap;
    int camera_line; /* 0: no camera yet */
} parse_state_t;

static int is_blank(char c) { return c == ' ' || c == '\t'; }

/* Split a NUL-terminated line in place into at most max fields; returns the field
 * count (which may exceed max: the extra fields are counted, not stored). */
static int split_fields(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        while (is_blank(*p))
            p++;
        if (*p == '\0')
            return n;
        if (n < max)
            fields[n] = p;
        n++;
        while (*p != '\0' && !is_blank(*p))
            p++;
        if (*p != '\0')
            *p++ = '\0';
    }
}

/* Parse the numbers of one item: fields[1..count] into out[0..count-1]. */
static int parse_numbers(const parse_state_t *st, int lineno, const char *what,
                         const char *const *names, int count, char **fields, int nfields,
                         double *out, ryr_err_t *err)
{
    if (nfields - 1 != count) {
        char list[128] = "";
        for (int i = 0; i < count; i++) {
            strcat(list, i ? " " : "");
            strcat(list, names[i]);
        }
        return ryr_err_set(err, "%s:%d: %s for a %s: expected %d numbers (%s), got %d",
                           st->name, lineno, nfields - 1 < count ? "missing fields" :
                                                                   "extra fields",
                           what, count, list, nfields - 1);
    }
    for (int i = 0; i < count; i++) {
        const char *s = fields[i + 1];
        char *end = NULL;
        errno = 0;
        double v = strtod(s, &end);
        if (end == s || *end != '\0')
            return ryr_err_set(err, "%s:%d: %s field %d (%s): '%s' is not a number", st->name,
                               lineno, what, i + 1, names[i], s);
        if (!isfinite(v))
            return ryr_err_set(err, "%s:%d: %s field %d (%s): '%s' is not a finite number",
                               st->name, lineno, what, i + 1, names[i], s);
        out[i] = v;
    }
    return 0;
}

static int add_sphere(parse_state_t *st, int lineno, const double *v, ryr_err_t *err)
{
    if (!(v[3] > 0.0))
        return ryr_err_set(err, "%s:%d: sphere radius must be > 0 (got %g)", st->name, lineno,
                           v[3]);
    ryr_scene_t *s = &st->scene;
    if ((size_t)s->nspheres == st->cap) {
        if (st->cap >= (size_t)1 << 24)
            return ryr_err_set(err, "%s:%d: too many spheres (more than %zu)", st->name, lineno,
                               st->cap);
        size_t cap = st->cap ? st->cap * 2 : 16;
        ryr_sphere_t *p = realloc(s->spheres, cap * sizeof *p);
        if (!p)
            return ryr_err_set(err, "%s:%d: out of memory", st->name, lineno);
        s->spheres = p;
        st->cap = cap;
    }
    ryr_sphere_t *sp = &s->spheres[s->nspheres++];
    sp->pos = (ryr_vec3_t){v[0], v[1], v[2]};
    sp->rad = v[3];
    sp->col = (ryr_vec3_t){v[4], v[5], v[6]};
    sp->spow = v[7];
    sp->refl = v[8];
    return 0;
}

static int parse_line(parse_state_t *st, int lineno, char *line, ryr_err_t *err)
{
    char *fields[12];
    int nfields = split_fields(line, fields, 12);
    if (nfields == 0 || fields[0][0] == '#')
        return 0;
    double v[9];
    ryr_scene_t *s = &st->scene;
    switch (fields[0][0]) {
    case 's':
        if (parse_numbers(st, lineno, "sphere", sphere_fields, 9, fields, nfields, v, err))
            return -1;
        return add_sphere(st, lineno, v, err);
    case 'l':
        if (parse_numbers(st, lineno, "light", light_fields, 3, fields, nfields, v, err))
            return -1;
        if (s->nlights == RYR_MAX_LIGHTS)
            return ryr_err_set(err, "%s:%d: more than %d lights", st->name, lineno,
                               RYR_MAX_LIGHTS);
        s->lights[s->nlights++] = (ryr_vec3_t){v[0], v[1], v[2]};
        return 0;
    case 'c':
        if (parse_numbers(st, lineno, "camera", camera_fields, 7, fields, nfields, v, err))
            return -1;
        if (st->camera_line)
            return ryr_err_set(err, "%s:%d: more than one camera (the first is on line %d)",
                               st->name, lineno, st->camera_line);
        /* c-ray renders with a fixed field of view (RYR.md), but a scene's is still
         * an angle a camera can have: 0 or a straight angle is a mistake in the file */
        if (!(v[3] > 0.0 && v[3] < 180.0))
            return ryr_err_set(err, "%s:%d: camera field of view %g is outside (0, 180) "
                               "degrees (e.g. 45)", st->name, lineno, v[3]);
        st->camera_line = lineno;
        s->cam_pos = (ryr_vec3_t){v[0], v[1], v[2]};
        s->cam_fov = v[3];
        s->cam_target = (ryr_vec3_t){v[4], v[5], v[6]};
        return 0;
    default:
        return ryr_err_set(err, "%s:%d: unknown kind '%c' in '%s' (expected s, l or c)",
                           st->name, lineno, fields[0][0], fields[0]);
    }
}

static int check_camera(const parse_state_t *st, ryr_err_t *err)
{
    const ryr_scene_t *s = &st->scene;
    if (!st->camera_line)
        return ryr_err_set(err, "%s: no camera (a line 'c x y z fov tx ty tz')", st->name);
    double kx = s->cam_target.x - s->cam_pos.x;
    double ky = s->cam_target.y - s->cam_pos.y;
    double kz = s->cam_target.z - s->cam_pos.z;
    if (kx == 0.0 && ky == 0.0 && kz == 0.0)
        return ryr_err_set(err, "%s:%d: camera target equals its position", st->name,
                           st->camera_line);
    /* The camera basis takes cross((0,1,0), view): a vertical view has no horizontal
     * component, and the image would be degenerate. */
    double len = sqrt(kx * kx + ky * ky + kz * kz);
    if (!isfinite(len))
        return ryr_err_set(err, "%s:%d: camera position and target are too far apart",
                           st->name, st->camera_line);
    if (sqrt(kx * kx + kz * kz) <= 1e-9 * len)
        return ryr_err_set(err, "%s:%d: camera view direction is vertical (target straight "
                           "above or below the position)", st->name, st->camera_line);
    return 0;
}

int ryr_scene_parse(const char *text, size_t len, const char *name, ryr_scene_t *scene,
                    ryr_err_t *err)
{
    parse_state_t st;
    memset(&st, 0, sizeof st);
    st.name = name ? name : "<scene>";
    char *line = NULL;
    size_t line_cap = 0;
    int lineno = 0;
    size_t pos = 0;
    while (pos < len) {
        lineno++;
        const char *start = text + pos;
        const char *nl = memchr(start, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - start) : len - pos;
        pos += n + (nl ? 1 : 0);
        if (n > 0 && start[n - 1] == '\r')
            n--;
        if (memchr(start, '\0', n)) {
            ryr_err_set(err, "%s:%d: the line contains a NUL byte (not a text file?)", st.name,
                        lineno);
            goto fail;
        }
        if (n + 1 > line_cap) {
            char *p = realloc(line, n + 1);
            if (!p) {
                ryr_err_set(err, "%s:%d: out of memory", st.name, lineno);
                goto fail;
            }
            line = p;
            line_cap = n + 1;
        }
        memcpy(line, start, n);
        line[n] = '\0';
        if (parse_line(&st, lineno, line, err))
            goto fail;
    }
    if (check_camera(&st, err))
        goto fail;
    if (st.scene.nspheres == 0)
        snprintf(st.scene.warning, sizeof st.scene.warning,
                 "%s: no spheres: every frame will be black", st.name);
    else if (st.scene.nlights == 0)
        snprintf(st.scene.warning, sizeof st.scene.warning,
                 "%s: no lights: every frame will be black", st.name);
    free(line);
    *scene = st.scene;
    return 0;
fail:
    free(line);
    free(st.scene.spheres);
    return -1;
}

int ryr_scene_load(const char *path, ryr_scene_t *scene, ryr_err_t *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return ryr_err_set(err, "%s: cannot open scene file: %s", path, strerror(errno));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = -1;
    for (;;) {
        if (len == cap) {
            if (cap >= SCENE_MAX_BYTES) {
                ryr_err_set(err, "%s: scene file larger than %zu MiB", path,
                            SCENE_MAX_BYTES >> 20);
                goto done;
            }
            cap = cap ? cap * 2 : 65536;
            char *p = realloc(buf, cap);
            if (!p) {
                ryr_err_set(err, "%s: out of memory", path);
                goto done;
            }
            buf = p;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) {
                ryr_err_set(err, "%s: cannot read scene file: %s", path, strerror(errno));
                goto done;
            }
            break;
        }
    }
    rc = ryr_scene_parse(buf, len, path, scene, err);
done:
    free(buf);
    fclose(f);
    return rc;
}

int ryr_scene_load_default(ryr_scene_t *scene, ryr_err_t *err)
{
    return ryr_scene_parse(ryr_default_scene_text, strlen(ryr_default_scene_text),
                           "<built-in scene>", scene, err);
}

void ryr_scene_fini(ryr_scene_t *scene)
{
    if (!scene)
        return;
    free(scene->spheres);
    scene->spheres = NULL;
    scene->nspheres = 0;
}
