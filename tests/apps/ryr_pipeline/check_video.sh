#!/usr/bin/env bash
# check_video.sh UTCRUN RYR DIR CASE: ryr --video end to end.
#   stream  the YUV4MPEG2 stream of 3 rotate tasks (one per plane, at 1 and 2 ranks, and
#           with the output stage on rank 1) read by ffprobe (frame count, size, pixel
#           format, frame rate); each frame decoded by ffmpeg equals the PGM planes byte for
#           byte; --video - gives the same bytes on stdout, and so does --preset seq
#   errors  bad --video/--fps arguments, a video that cannot be written, a full disk:
#           a clear message, non-zero, and no video file (partial or temporary) left
# "stream" needs ffmpeg: without it the case is skipped (77), or fails where the tools are
# required (UTC_REQUIRE_TEST_TOOLS=1, set by test.sh, which installs them).
set -u
utcrun=$1 ryr=$2 dir=$3 case=$4
rm -rf "$dir"
mkdir -p "$dir"
fails=0 passes=0
fail() { echo "FAILED: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; passes=$((passes + 1)); }
finish() {
    echo "$passes passed, $fails failed"
    [ "$fails" = 0 ]
    exit
}

small=(--size 64x48 --frames 4 --orbit 25 --angle 30)

case "$case" in
stream)
    if ! command -v ffprobe >/dev/null || ! command -v ffmpeg >/dev/null; then
        echo "ffmpeg/ffprobe not installed (scripts/install-deps.sh --test installs them)"
        if [ "${UTC_REQUIRE_TEST_TOOLS:-0}" = 1 ]; then
            echo "FAILED: UTC_REQUIRE_TEST_TOOLS=1 and ffmpeg is missing"; exit 1
        fi
        echo "SKIPPED"; exit 77
    fi
    # run NAME NP ARGS...: ryr into $dir/NAME/, the video as $dir/NAME/v.y4m
    run() {
        local name=$1 np=$2
        shift 2
        mkdir -p "$dir/$name"
        if timeout 120 "$utcrun" -np "$np" "$ryr" "${small[@]}" --out "$dir/$name" "$@" \
            >"$dir/$name.out" 2>"$dir/$name.err"; then
            ok "$name: exit 0"
        else
            fail "$name: exit $?: $(tail -c 600 "$dir/$name.err")"
        fi
    }
    run v3_np1 1 --preset v3 --video "$dir/v3_np1/v.y4m" --fps 30
    run v3_np2 2 --preset v3 --video "$dir/v3_np2/v.y4m" --fps 30
    run v3_out1 2 --preset v3 --place output=1 --video "$dir/v3_out1/v.y4m" --fps 30
    run seq 1 --preset seq --video "$dir/seq/v.y4m" --fps 30
    # standard output carries the video alone (the summary goes to stderr)
    mkdir -p "$dir/stdout"
    timeout 120 "$utcrun" -np 2 "$ryr" --preset v3 "${small[@]}" --out "$dir/stdout" \
        --video - --fps 30 >"$dir/stdout/v.y4m" 2>"$dir/stdout.err" ||
        fail "--video -: exit $?: $(tail -c 600 "$dir/stdout.err")"
    grep -q "frames/s" "$dir/stdout.err" && ok "--video -: the summary is on stderr" ||
        fail "--video -: no summary on stderr"

    python3 - "$dir" <<'PY' || fails=$((fails + 1))
import json, os, subprocess, sys
d = sys.argv[1]
bad = 0
def check(cond, what):
    global bad
    print(("ok: " if cond else "FAILED: ") + what)
    bad += not cond
def pgm(path):
    data = open(path, "rb").read()
    magic, w, h, maxval, rest = data.split(maxsplit=4)
    assert magic == b"P5" and maxval == b"255"
    return int(w), int(h), rest

w, h, _ = pgm(os.path.join(d, "v3_np1", "frame_00000_y.pgm"))
ref = open(os.path.join(d, "v3_np1", "v.y4m"), "rb").read()
for name in ["v3_np2", "v3_out1", "seq", "stdout"]:
    got = open(os.path.join(d, name, "v.y4m"), "rb").read()
    check(got == ref, "%s: the same bytes as v3_np1 (%d and %d bytes)" % (name, len(got), len(ref)))
check(ref.startswith(b"YUV4MPEG2 W%d H%d F30:1 Ip A1:1 C444\n" % (w, h)), "the header")

for name in ["v3_np1", "v3_np2", "stdout"]:
    video = os.path.join(d, name, "v.y4m")
    p = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
                        "-show_entries", "stream=width,height,pix_fmt,nb_read_frames,r_frame_rate",
                        "-of", "json", video], capture_output=True, text=True)
    check(p.returncode == 0, "%s: ffprobe reads it %s" % (name, p.stderr.strip()[-300:]))
    if p.returncode:
        continue
    s = json.loads(p.stdout)["streams"][0]
    check(int(s["nb_read_frames"]) == 4, "%s: 4 frames (ffprobe: %s)" % (name, s["nb_read_frames"]))
    check((s["width"], s["height"]) == (w, h), "%s: %dx%d (ffprobe: %sx%s)" % (name, w, h, s["width"], s["height"]))
    check(s["pix_fmt"] == "yuv444p", "%s: yuv444p (ffprobe: %s)" % (name, s["pix_fmt"]))
    check(s["r_frame_rate"] == "30/1", "%s: 30 fps (ffprobe: %s)" % (name, s["r_frame_rate"]))
    # every frame decoded by ffmpeg: Y, U, V planes equal to the PGM files
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", video, "-f", "rawvideo", "-pix_fmt",
                          "yuv444p", "-"], capture_output=True).stdout
    n = w * h
    check(len(raw) == 4 * 3 * n, "%s: ffmpeg decodes 4 frames of %d bytes" % (name, 3 * n))
    out = os.path.join(d, name if name != "stdout" else "stdout")
    same = True
    for f in range(4):
        for i, plane in enumerate("yuv"):
            pw, ph, px = pgm(os.path.join(out, "frame_%05d_%s.pgm" % (f, plane)))
            same &= px == raw[(3 * f + i) * n:(3 * f + i + 1) * n]
    check(same, "%s: each decoded frame equals its PGM planes byte for byte" % name)
sys.exit(1 if bad else 0)
PY
    [ $? = 0 ] && ok "ffprobe and ffmpeg checks" || true
    finish
    ;;
errors)
    # expect WHAT NEEDLE ARGS...: ryr fails with NEEDLE on stderr; nothing in $dir/out
    # but what was there before, no file named *.y4m* anywhere under $dir
    expect() {
        local what=$1 needle=$2
        shift 2
        timeout 120 "$utcrun" -np 1 "$ryr" --size 32x24 --frames 2 "$@" >"$dir/out.txt" 2>&1
        local rc=$?
        if [ $rc = 0 ] || [ $rc = 124 ]; then
            fail "$what: exit $rc"
        elif ! grep -qF -- "$needle" "$dir/out.txt"; then
            fail "$what: no '$needle' in: $(head -c 600 "$dir/out.txt")"
        elif [ -n "$(find "$dir" -name '*.y4m*')" ]; then
            fail "$what: left $(find "$dir" -name '*.y4m*')"
        else
            ok "$what: exit $rc, $(grep -F -- "$needle" "$dir/out.txt" | head -1)"
        fi
    }
    expect "a folder that does not exist" "ryr: --video '$dir/none/v.y4m': cannot write: No such file" \
        --out "$dir/o" --video "$dir/none/v.y4m"
    mkdir -p "$dir/o/folder"
    expect "a folder" "is a folder" --out "$dir/o" --video "$dir/o/folder"
    if [ "$(id -u)" != 0 ]; then
        mkdir -p "$dir/ro" && chmod a-w "$dir/ro"
        expect "a read-only folder" "Permission denied" --out "$dir/o" --video "$dir/ro/v.y4m"
    fi
    expect "--video with --no-output" "ryr: --video and --no-output" --no-output --video "$dir/v.y4m"
    expect "--fps 0" "ryr: --fps: '0': expected a positive frame rate" --video "$dir/v.y4m" --fps 0
    expect "--fps abc" "expected a positive frame rate" --video "$dir/v.y4m" --fps abc
    expect "--fps 30/0" "expected a positive frame rate" --video "$dir/v.y4m" --fps 30/0
    expect "--fps without --video" "ryr: --fps is the frame rate of --video" --fps 30
    expect "--video - with --json" "both write to standard output" --video - --json
    expect "--video without a value" "ryr: --video needs a value" --video
    expect "--video ''" "ryr: --video: the value is empty" --video ""
    timeout 120 "$utcrun" -np 2 "$ryr" --preset v3 --size 32x24 --frames 2 --place output=0,1 \
        --video "$dir/v.y4m" >"$dir/out.txt" 2>&1
    rc=$?
    grep -qF "the output tasks must share a rank" "$dir/out.txt" && [ $rc = 2 ] &&
        [ ! -e "$dir/v.y4m" ] && ok "output tasks on two ranks: exit 2" ||
        fail "output tasks on two ranks: exit $rc: $(head -c 600 "$dir/out.txt")"

    # a full disk: the write error is reported, the run ends non-zero, /dev/full stays
    ln -s /dev/full "$dir/full.y4m"
    timeout 120 "$utcrun" -np 1 "$ryr" --preset v3 --size 160x120 --frames 4 --out "$dir/o" \
        --video "$dir/full.y4m" >"$dir/out.txt" 2>&1
    rc=$?
    grep -qF "No space left on device" "$dir/out.txt" && [ $rc != 0 ] && [ $rc != 124 ] &&
        [ -c "$dir/full.y4m" ] && ok "a full disk: exit $rc, reported" ||
        fail "a full disk: exit $rc: $(head -c 600 "$dir/out.txt")"
    rm -f "$dir/full.y4m"

    # a file that stops growing part way (a size limit on ryr alone: EFBIG): no partial
    # video is left, the PGM files (smaller than the limit) are written
    mkdir -p "$dir/lim"
    timeout 120 "$utcrun" -np 1 bash -c 'trap "" XFSZ; ulimit -f 40; exec "$0" "$@"' "$ryr" \
        --preset v3 --size 64x48 --frames 6 --out "$dir/lim" --video "$dir/lim/v.y4m" \
        >"$dir/out.txt" 2>&1
    rc=$?
    left=$(find "$dir/lim" -name '*y4m*')
    grep -qF "File too large" "$dir/out.txt" && [ $rc != 0 ] && [ -z "$left" ] &&
        [ -s "$dir/lim/frame_00000_y.pgm" ] && ok "a video cut short: exit $rc, no file left" ||
        fail "a video cut short: exit $rc, left '$left': $(head -c 600 "$dir/out.txt")"
    finish
    ;;
esac
echo "check_video.sh: unknown case '$case'" >&2
exit 2
