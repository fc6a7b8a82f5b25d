#!/usr/bin/env python3
"""Compare the C renderer (through ryr_render_tool) with ryr_ref.py, byte for byte.

  check_render.py TOOL WORKDIR CASE...
  CASE = SCENE:WxH[:FRAME:ORBIT[:X.Y/X.Y/...]]   SCENE '-': the built-in scene

With a pixel list only those pixels are compared: the pixels where rounding the camera
matrix to float (or not) changes a byte, found once, so a large frame stays fast here.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ryr_ref  # noqa: E402


def read_ppm(path):
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
    assert fields[0] == b'P6', fields[0]
    w, h, maxval = int(fields[1]), int(fields[2]), int(fields[3])
    assert maxval == 255
    pixels = data[pos + 1:]
    assert len(pixels) == w * h * 3, (len(pixels), w, h)
    return w, h, pixels


def main():
    tool, workdir, cases = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(workdir, exist_ok=True)
    failed = 0
    for k, case in enumerate(cases):
        parts = case.split(':')
        scene, size = parts[0], parts[1]
        frame = int(parts[2]) if len(parts) > 2 else 0
        orbit = float(parts[3]) if len(parts) > 3 else 0.0
        w, h = (int(v) for v in size.split('x'))
        out = os.path.join(workdir, 'render_%d.ppm' % k)
        subprocess.run([tool, scene, size, out, str(frame), repr(orbit)], check=True)
        if scene == '-':
            text = subprocess.run([tool, '--default-scene'], check=True,
                                  stdout=subprocess.PIPE).stdout.decode()
        else:
            text = open(scene).read()
        cw, ch, got = read_ppm(out)
        assert (cw, ch) == (w, h), (cw, ch)
        pixels = None
        if len(parts) > 4:
            pixels = [tuple(int(v) for v in p.split('.')) for p in parts[4].split('/')]
            got = b''.join(got[3 * (y * w + x):3 * (y * w + x) + 3] for x, y in pixels)
        want = ryr_ref.render(text, w, h, frame, orbit, pixels)
        diffs = [i for i in range(len(want)) if want[i] != got[i]]
        label = case if pixels is None else '%s:%d selected pixels' % (':'.join(parts[:4]),
                                                                       len(pixels))
        if diffs:
            i = diffs[0]
            x, y = pixels[i // 3] if pixels else (i // 3 % w, i // 3 // w)
            print('FAIL %s: %d bytes differ; first at pixel (%d, %d) channel %d: '
                  'reference %d, C %d' % (label, len(diffs), x, y, i % 3, want[i], got[i]))
            failed += 1
        else:
            nonblack = sum(1 for b in got if b)
            print('ok   %s: %d bytes identical (%d non-zero)' % (label, len(got), nonblack))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
