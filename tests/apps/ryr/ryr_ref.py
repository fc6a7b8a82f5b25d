#!/usr/bin/env python3
"""Independent reference of the RYR renderer, written from shared/RYR.md's rules.

It shares no code with apps/ryr: it re-reads the scene text itself and follows the
c-ray 1.1 rules step by step in Python (whose floats are IEEE doubles; the camera matrix
is rounded to single precision through struct). Used by check_render.py to compare its
bytes with the C renderer's PPM output.
"""
import math
import struct

M = 1000.0          # ray magnitude
MAX_DEPTH = 5
HALF_FOV = 0.39269908
EPS = 1e-6


def f32(v):
    """Round a double to the nearest float, as a C store into a float does."""
    return struct.unpack('f', struct.pack('f', v))[0]


def read_scene(text):
    spheres, lights, cam = [], [], None
    for line in text.splitlines():
        f = line.split()
        if not f or f[0].startswith('#'):
            continue
        v = [float(x) for x in f[1:]]
        if f[0][0] == 's':
            spheres.append(v)           # x y z r  cr cg cb  spow refl
        elif f[0][0] == 'l':
            lights.append(v)
        elif f[0][0] == 'c':
            cam = v                     # x y z fov tx ty tz
    return spheres, lights, cam


def orbit_camera(cam, frame, orbit):
    """Frame f's camera turned by f*D degrees about the vertical axis through the target,
    counter-clockwise seen from +y (the convention of apps/ryr/render.h)."""
    px, py, pz, _, tx, ty, tz = cam
    deg = math.fmod(frame * orbit, 360.0)
    if deg < 0:
        deg += 360.0
    if deg in (0.0, 360.0):
        return (px, py, pz), (tx, ty, tz)
    exact = {90.0: (0.0, 1.0), 180.0: (-1.0, 0.0), 270.0: (0.0, -1.0)}
    if deg in exact:
        c, s = exact[deg]
    else:
        a = deg * (3.14159265358979323846 / 180.0)
        c, s = math.cos(a), math.sin(a)
    rx, rz = px - tx, pz - tz
    return (tx + (rx * c + rz * s), py, tz + (-rx * s + rz * c)), (tx, ty, tz)


def norm(v):
    n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    return (v[0] / n, v[1] / n, v[2] / n)


def camera_matrix(pos, targ):
    k = norm((targ[0] - pos[0], targ[1] - pos[1], targ[2] - pos[2]))
    up = (0.0, 1.0, 0.0)
    i = (up[1] * k[2] - up[2] * k[1], up[2] * k[0] - up[0] * k[2], up[0] * k[1] - up[1] * k[0])
    j = (k[1] * i[2] - k[2] * i[1], k[2] * i[0] - k[0] * i[2], k[0] * i[1] - k[1] * i[0])
    # rows r, columns i j k, each element rounded to float
    return [[f32(i[r]), f32(j[r]), f32(k[r])] for r in range(3)]


def hit(s, o, d):
    """(t) of the nearest accepted root per the rules, or None."""
    cx, cy, cz, r = s[0], s[1], s[2], s[3]
    a = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
    b = 2.0 * d[0] * (o[0] - cx) + 2.0 * d[1] * (o[1] - cy) + 2.0 * d[2] * (o[2] - cz)
    c = (cx * cx + cy * cy + cz * cz + o[0] * o[0] + o[1] * o[1] + o[2] * o[2]
         + 2.0 * (-cx * o[0] - cy * o[1] - cz * o[2]) - r * r)
    disc = b * b - 4.0 * a * c
    if disc < 0.0:
        return None
    sq = math.sqrt(disc)
    t1 = (-b + sq) / (2.0 * a)
    t2 = (-b - sq) / (2.0 * a)
    if (t1 < EPS and t2 < EPS) or (t1 > 1.0 and t2 > 1.0):
        return None
    if t1 < EPS:
        t1 = t2
    if t2 < EPS:
        t2 = t1
    return t1 if t1 < t2 else t2


def trace(scene, o, d, depth):
    spheres, lights, _ = scene
    if depth >= MAX_DEPTH:
        return [0.0, 0.0, 0.0]
    best, best_t = None, None
    for s in reversed(spheres):
        t = hit(s, o, d)
        if t is not None and (best is None or t < best_t):
            best, best_t = s, t
    if best is None:
        return [0.0, 0.0, 0.0]
    s = best
    p = (o[0] + d[0] * best_t, o[1] + d[1] * best_t, o[2] + d[2] * best_t)
    n = ((p[0] - s[0]) / s[3], (p[1] - s[1]) / s[3], (p[2] - s[2]) / s[3])
    dn = d[0] * n[0] + d[1] * n[1] + d[2] * n[2]
    rv = norm((-(2.0 * dn * n[0] - d[0]), -(2.0 * dn * n[1] - d[1]), -(2.0 * dn * n[2] - d[2])))
    col = [0.0, 0.0, 0.0]
    for L in lights:
        ld = (L[0] - p[0], L[1] - p[1], L[2] - p[2])
        if any(hit(q, p, ld) is not None for q in spheres):
            continue
        l = norm(ld)
        nl = n[0] * l[0] + n[1] * l[1] + n[2] * l[2]
        diff = nl if nl > 0.0 else 0.0
        spec = 0.0
        if s[7] > 0.0:
            rl = rv[0] * l[0] + rv[1] * l[1] + rv[2] * l[2]
            spec = math.pow(rl if rl > 0.0 else 0.0, s[7])
        for ch in range(3):
            col[ch] = col[ch] + (diff * s[4 + ch] + spec)
    if s[8] > 0.0:
        rc = trace(scene, p, (rv[0] * M, rv[1] * M, rv[2] * M), depth + 1)
        for ch in range(3):
            col[ch] = col[ch] + rc[ch] * s[8]
    return col


def to_byte(c):
    v = (c if c < 1.0 else 1.0) * 255.0
    return int(v) & 0xff          # int() truncates toward zero, as C's (int)


def render(text, w, h, frame=0, orbit=0.0, pixels=None):
    """The frame's RGB bytes, or with pixels = [(x, y), ...] those pixels' bytes only."""
    scene = read_scene(text)
    pos, targ = orbit_camera(scene[2], frame, orbit)
    m = camera_matrix(pos, targ)
    aspect = w / h
    out = bytearray()
    if pixels is None:
        pixels = [(x, y) for y in range(h) for x in range(w)]
    for x, y in pixels:
        dx = (x / w - 0.5) * M
        dy = (-(y / h - 0.65) / aspect) * M
        dz = (1.0 / HALF_FOV) * M
        d = tuple(dx * m[r][0] + dy * m[r][1] + dz * m[r][2] + pos[r] for r in range(3))
        for c in trace(scene, pos, d, 0):
            out.append(to_byte(c))
    return bytes(out)
