#!/usr/bin/env python3
"""The ryr program from the outside.

  check_cli.py RYR WORKDIR [LAUNCHER...]

- every bad argument of RYR.md and every malformed scene: non-zero exit, a clear
  "ryr: ..." message, and no work started (the output folder is not created);
- a sequential run: every file read back by an independent reader with the right size,
  the Y, U, V planes recomputed here from the PPM, a quarter turn checked against the
  plain pixel permutation of ImageMagick's `-rotate -90`, the JSON summary.
"""
import json
import math
import os
import shutil
import subprocess
import sys

RYR, WORK = sys.argv[1], sys.argv[2]
LAUNCH = sys.argv[3:]
failures = []


def run(*args):
    p = subprocess.run(LAUNCH + [RYR] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stdout.decode(errors='replace'), p.stderr.decode(errors='replace')


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL ' + what)


def expect_failure(args, message, label=None):
    out = os.path.join(WORK, 'never')
    shutil.rmtree(out, ignore_errors=True)
    if '--out' not in args:
        args = list(args) + ['--out', out]
    rc, so, se = run(*args)
    label = label or ' '.join(args)
    check(rc != 0, '%s: exit status %d, expected non-zero' % (label, rc))
    check(('ryr: ' in se) and (message in se),
          '%s: stderr %r lacks %r' % (label, se.strip()[-300:], message))
    check(not os.path.exists(out), '%s: the output folder was created' % label)
    check('frames/s' not in so and '"fps"' not in so, '%s: work was done' % label)
    if rc != 0 and message in se:
        print('ok   %-60s -> %s' % (label[:60], [l for l in se.splitlines() if 'ryr:' in l][0]))


def read_pnm(path):
    data = open(path, 'rb').read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b'#':
            while data[pos:pos + 1] not in (b'\n', b''):
                pos += 1
            continue
        start = pos
        while not data[pos:pos + 1].isspace():
            pos += 1
        fields.append(data[start:pos])
    magic, w, h, maxval = fields[0], int(fields[1]), int(fields[2]), int(fields[3])
    ch = {b'P5': 1, b'P6': 3}[magic]
    assert maxval == 255
    pixels = data[pos + 1:]
    assert len(pixels) == w * h * ch, '%s: %d bytes for %dx%dx%d' % (path, len(pixels), w, h, ch)
    return w, h, ch, pixels


def c_round(x):
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def clamp(v):
    return 0 if v < 0 else 255 if v > 255 else v


def yuv_planes(rgb):
    ys, us, vs = bytearray(), bytearray(), bytearray()
    for i in range(0, len(rgb), 3):
        r, g, b = rgb[i], rgb[i + 1], rgb[i + 2]
        ys.append(clamp(c_round(0.256788 * r + 0.504129 * g + 0.097906 * b) + 16))
        us.append(clamp(c_round(-0.148223 * r - 0.290993 * g + 0.439216 * b) + 128))
        vs.append(clamp(c_round(0.439216 * r - 0.367788 * g - 0.071427 * b) + 128))
    return bytes(ys), bytes(us), bytes(vs)


def rotate_ccw90(w, h, px):
    """ImageMagick `-rotate -90`: a quarter turn counter-clockwise; the top-right pixel
    becomes the top-left one. Output is h x w."""
    out = bytearray()
    for y in range(w):
        for x in range(h):
            out.append(px[x * w + (w - 1 - y)])
    return bytes(out)


def bad_arguments():
    for args, msg in [
        (['--size', '0x64'], 'must be positive'),
        (['--size', '96x0'], 'must be positive'),
        (['--size', '-96x64'], 'must be positive'),
        (['--size', '100000x64'], 'too large'),
        (['--size', '16385x16385'], 'too large'),
        (['--size', 'big'], 'expected WxH'),
        (['--size', '96xabc'], 'not an integer'),
        (['--preset', 'v7'], "unknown value 'v7'"),
        (['--preset', 'fastest'], 'expected seq, v1, v2, v3, v4, v5, auto or gpu'),
        (['--frobnicate'], "unknown option '--frobnicate'"),
        (['-x'], "unknown option '-x'"),
        (['stray'], "unexpected argument 'stray'"),
        (['--frames'], '--frames needs a value'),
        (['--frames', 'many'], "'many' is not an integer"),
        (['--frames', '0'], 'out of range'),
        (['--angle', 'steep'], 'not a number'),
        (['--orbit', 'inf'], 'not a finite number'),
        (['--yuv-repeat', '0'], 'out of range'),
        (['--rotate-tasks', '2'], 'expected 1 or 3'),
        (['--memtype', 'fast'], 'expected pageable, pinned or unified'),
        (['--place', 'shader=0'], "unknown stage 'shader'"),
        (['--place', 'yuv=a'], "'a' is not a rank"),
        (['--preset', 'v2', '--place', 'yuv=7'], 'rank 7 of yuv does not exist'),
        (['--preset', 'seq', '--ray-threads', '4'], 'does not apply to --preset seq'),
        (['--farm', '0'], '--farm: 0 is out of range (1..64)'),
        (['--farm', 'all'], "--farm: 'all' is not an integer"),
        (['--preset', 'seq', '--farm', '2'], '--farm does not apply to --preset seq'),
        (['--slow-rank', '2'], '--slow-rank: \'2\': expected R=F'),
        (['--slow-rank', '1=0.5'], 'the factor 0.5 is out of range (1..100)'),
        (['--slow-rank', 'a=2'], "the rank 'a' is not a rank"),
        (['--preset', 'v2', '--farm', '2', '--slow-rank', '7=2'],
         '--slow-rank: rank 7 does not exist'),
        (['--scene', os.path.join(WORK, 'missing.scene'), '--preset', 'seq'],
         'cannot open scene file'),
    ]:
        expect_failure(args, msg)
    # --out that cannot be written: a file, and a place where folders cannot be made
    afile = os.path.join(WORK, 'a_file')
    open(afile, 'w').close()
    expect_failure(['--preset', 'seq', '--size', '8x8', '--frames', '1', '--out', afile],
                   'not a folder')
    expect_failure(['--preset', 'seq', '--size', '8x8', '--frames', '1', '--out',
                    '/proc/ryr-no/such'], "--out '/proc/ryr-no/such'")
    # --gpu: fine with a GPU, a clear refusal without one
    rc, so, se = run('--preset', 'v2', '--gpu', '--size', '8x8', '--frames', '1',
                     '--no-output')
    if rc != 0:
        check('needs a GPU' in se, '--gpu without a GPU: %r' % se.strip()[-200:])
        print('ok   --gpu with no GPU -> refused')
    else:
        print('ok   --gpu: a GPU is present, the run works')


def bad_scenes():
    cases = [
        ('kind', 'c 0 0 -5 45 0 0 0\nq 1 2 3\n', ':2: unknown kind'),
        ('missing', 'c 0 0 -5 45 0 0 0\n# x\ns 0 0 0 1 1 1 1 10\n', ':3: missing fields'),
        ('extra', 'l 1 2 3 4\nc 0 0 -5 45 0 0 0\n', ':1: extra fields'),
        ('number', 'c 0 0 -5 45 0 0 0\ns 0 0 0 one 1 1 1 10 0\n', ':2: sphere field 4'),
        ('finite', 'c 0 0 -5 45 0 0 0\nl nan 0 0\n', ':2: light field 1 (x): \'nan\' is not a finite number'),
        ('radius', 'c 0 0 -5 45 0 0 0\ns 0 0 0 -1 1 1 1 10 0\n', ':2: sphere radius must be > 0'),
        ('lights', 'c 0 0 -5 45 0 0 0\n' + 'l 0 9 0\n' * 17, ':18: more than 16 lights'),
        ('cameras', 'c 0 0 -5 45 0 0 0\nc 0 0 -6 45 0 0 0\n', ':2: more than one camera'),
        ('nocamera', 's 0 0 0 1 1 1 1 10 0\n', ': no camera'),
        ('target', 'c 1 1 1 45 1 1 1\n', ':1: camera target equals its position'),
        ('vertical', '\nc 0 10 0 45 0 0 0\n', ':2: camera view direction is vertical'),
        ('fov0', 'c 0 0 -5 0 0 0 0\n', ':1: camera field of view 0 is outside (0, 180) degrees'),
        ('fov180', 'l 0 9 0\nc 0 0 -5 180 0 0 0\n', ':2: camera field of view 180 is outside'),
    ]
    for name, text, msg in cases:
        path = os.path.join(WORK, 'bad_%s.scene' % name)
        open(path, 'w').write(text)
        expect_failure(['--preset', 'seq', '--scene', path, '--size', '16x16', '--frames', '1'],
                       path + msg, 'scene ' + name)


def good_runs():
    out = os.path.join(WORK, 'out')
    shutil.rmtree(out, ignore_errors=True)
    rc, so, se = run('--preset', 'seq', '--size', '96x64', '--frames', '2', '--angle', '0',
                     '--orbit', '15', '--rgb', '--out', out, '--json')
    check(rc == 0, 'seq run: exit %d: %s' % (rc, se[-300:]))
    if rc != 0:
        return
    js = json.loads(so.strip().splitlines()[-1])
    for key in ('preset', 'frames', 'width', 'height', 'seconds', 'fps', 'verified', 'stages'):
        check(key in js, 'json lacks %s' % key)
    check(js['preset'] == 'seq' and js['frames'] == 2 and js['width'] == 96 and
          js['height'] == 64, 'json values %r' % js)
    check(set(js['stages']) == {'raytrace', 'yuv', 'rotate', 'output'}, 'json stages')
    for f in range(2):
        w, h, ch, rgb = read_pnm(os.path.join(out, 'frame_%05d.ppm' % f))
        check((w, h, ch) == (96, 64, 3), 'frame %d ppm is %dx%dx%d' % (f, w, h, ch))
        planes = yuv_planes(rgb)
        for p, name in enumerate('yuv'):
            pw, ph, pch, px = read_pnm(os.path.join(out, 'frame_%05d_%s.pgm' % (f, name)))
            check((pw, ph, pch) == (96, 64, 1), 'plane %s size' % name)
            check(px == planes[p], 'frame %d plane %s differs from the YUV of the ppm' % (f, name))
    _, _, _, rgb0 = read_pnm(os.path.join(out, 'frame_00000.ppm'))
    _, _, _, rgb1 = read_pnm(os.path.join(out, 'frame_00001.ppm'))
    check(rgb0 != rgb1, '--orbit 15: frames 0 and 1 are identical')
    print('ok   seq --angle 0: ppm and planes read back, planes = YUV of the ppm, json')

    # a quarter turn is ImageMagick's -rotate -90 permutation of the unrotated plane
    out90 = os.path.join(WORK, 'out90')
    shutil.rmtree(out90, ignore_errors=True)
    rc, so, se = run('--preset', 'seq', '--size', '96x64', '--frames', '1', '--angle', '90',
                     '--orbit', '15', '--out', out90)
    check(rc == 0, 'seq --angle 90: exit %d' % rc)
    for name in 'yuv':
        _, _, _, flat = read_pnm(os.path.join(out, 'frame_00000_%s.pgm' % name))
        w, h, _, px = read_pnm(os.path.join(out90, 'frame_00000_%s.pgm' % name))
        check((w, h) == (64, 96), 'angle 90 size %dx%d' % (w, h))
        check(px == rotate_ccw90(96, 64, flat), 'angle 90 plane %s is not the permutation' % name)
    convert = shutil.which('convert')
    is_magick = False
    if convert:
        v = subprocess.run([convert, '-version'], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        is_magick = b'ImageMagick' in v.stdout and b'stand-in' not in v.stdout + v.stderr
    if is_magick:
        im = os.path.join(WORK, 'im.pgm')
        subprocess.run([convert, os.path.join(out, 'frame_00000_y.pgm'), '-rotate', '-90', im],
                       check=True)
        _, _, _, want = read_pnm(im)
        _, _, _, got = read_pnm(os.path.join(out90, 'frame_00000_y.pgm'))
        check(want == got, 'angle 90 differs from ImageMagick -rotate -90')
        print('ok   --angle 90 equals ImageMagick convert -rotate -90')
    else:
        print('ok   --angle 90 is the -rotate -90 permutation (ImageMagick not installed)')

    # the default angle (30): sizes of the bounding box, files standard tools open
    out30 = os.path.join(WORK, 'out30')
    shutil.rmtree(out30, ignore_errors=True)
    rc, so, se = run('--preset', 'seq', '--size', '96x64', '--frames', '3', '--out', out30)
    check(rc == 0, 'seq default angle: exit %d' % rc)
    a = math.radians(30)
    ow = math.ceil(96 * math.cos(a) + 64 * math.sin(a) - 1e-6)
    oh = math.ceil(96 * math.sin(a) + 64 * math.cos(a) - 1e-6)
    names = sorted(os.listdir(out30))
    check(names == ['frame_%05d_%s.pgm' % (f, p) for f in range(3) for p in 'uvy'],
          'files %r' % names)
    for n in names:
        w, h, ch, px = read_pnm(os.path.join(out30, n))
        check((w, h, ch) == (ow, oh, 1), '%s is %dx%d, expected %dx%d' % (n, w, h, ow, oh))
        check(px[0] == 0 and px[-1] == 0, '%s: corners outside the source are not 0' % n)
    pamfile = shutil.which('pamfile')
    if pamfile:
        p = subprocess.run([pamfile] + [os.path.join(out30, n) for n in names],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check(p.returncode == 0 and p.stdout.count(b'PGM raw') == len(names),
              'pamfile: %r' % (p.stdout + p.stderr)[:300])
    print('ok   seq --angle 30: %d files of %dx%d%s' % (len(names), ow, oh,
                                                     ', netpbm reads them' if pamfile else ''))

    # --no-output writes nothing; a scene with no spheres is black, with a warning
    none = os.path.join(WORK, 'none')
    shutil.rmtree(none, ignore_errors=True)
    rc, so, se = run('--preset', 'seq', '--size', '32x24', '--frames', '1', '--no-output',
                     '--out', none)
    check(rc == 0 and not os.path.exists(none), '--no-output wrote %s' % none)
    empty = os.path.join(WORK, 'empty.scene')
    open(empty, 'w').write('l 0 5 0\nc 0 0 -5 45 0 0 0\n')
    eout = os.path.join(WORK, 'empty_out')
    shutil.rmtree(eout, ignore_errors=True)
    rc, so, se = run('--preset', 'seq', '--scene', empty, '--size', '32x24', '--frames', '1',
                     '--angle', '0', '--rgb', '--out', eout)
    check(rc == 0 and 'warning' in se and 'no spheres' in se, 'empty scene: %d %r' % (rc, se))
    _, _, _, rgb = read_pnm(os.path.join(eout, 'frame_00000.ppm'))
    _, _, _, y = read_pnm(os.path.join(eout, 'frame_00000_y.pgm'))
    check(set(rgb) == {0} and set(y) == {16}, 'empty scene is not black')
    print('ok   --no-output writes nothing; an empty scene renders black with a warning')


def main():
    os.makedirs(WORK, exist_ok=True)
    bad_arguments()
    bad_scenes()
    good_runs()
    print('%d failure(s)' % len(failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
