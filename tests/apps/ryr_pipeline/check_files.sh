#!/usr/bin/env bash
# check_files.sh UTCRUN RYR DIR: a 2-rank pipeline writes PGM/PPM files that an
# independent reader (Python, reading the netpbm header by hand) opens with the right size.
set -eu
utcrun=$1 ryr=$2 dir=$3
rm -rf "$dir"
"$utcrun" -np 2 "$ryr" --preset v3 --size 64x48 --frames 2 --angle 90 --rgb --out "$dir" >/dev/null
python3 - "$dir" <<'PY'
import os, sys
d = sys.argv[1]
def read(path):
    data = open(path, "rb").read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos+1].isspace(): pos += 1
        if data[pos:pos+1] == b"#":
            while data[pos:pos+1] != b"\n": pos += 1
            continue
        start = pos
        while not data[pos:pos+1].isspace(): pos += 1
        fields.append(data[start:pos])
    pos += 1
    magic, w, h, maxval = fields[0], int(fields[1]), int(fields[2]), int(fields[3])
    ch = {b"P5": 1, b"P6": 3}[magic]
    assert maxval == 255 and len(data) - pos == w * h * ch, path
    return w, h, ch
ok = 0
for f in range(2):
    for p in "yuv":
        # 90 degrees: a 64x48 plane becomes 48x64
        assert read(os.path.join(d, f"frame_{f:05d}_{p}.pgm")) == (48, 64, 1); ok += 1
    assert read(os.path.join(d, f"frame_{f:05d}.ppm")) == (64, 48, 3); ok += 1
print(f"{ok} passed, 0 failed")
PY
