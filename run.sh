#!/usr/bin/env bash
# Install what is missing, build, and run the raytrace-YUV-rotate sample: the built-in
# scene at 512x512, a short orbiting animation, on as many ranks as given (default 1).
#   ./run.sh [-np N] [ryr options...]
# Writes OUT/frame_NNNNN_{y,u,v}.pgm and the video OUT/ryr.y4m (OUT: ryr-out, or --out);
# where ffmpeg is installed, also OUT/ryr.mp4 and the first frame in colour,
# OUT/frame_00000.png.
set -euo pipefail
cd "$(dirname "$0")"
np=1
if [ "${1:-}" = "-np" ] && [ $# -ge 2 ]; then
    np=$2
    shift 2
fi
# the output folder and whether there is output at all, from the user's options
out=ryr-out
video=1
prev=""
for a in "$@"; do
    case "$prev:$a" in --out:*) out=$a ;; esac
    case "$a" in --out=*) out=${a#--out=} ;; --no-output|--video|--video=*) video=0 ;; esac
    prev=$a
done

scripts/install-deps.sh
scripts/build.sh
args=(--size 512x512 --frames 12 --orbit 30 --out "$out")
[ "$video" = 0 ] || args+=(--video "$out/ryr.y4m")
scripts/utcrun -np "$np" build/apps/ryr/ryr "${args[@]}" "$@"

[ "$video" = 1 ] || exit 0
made=("$out/ryr.y4m")
if command -v ffmpeg >/dev/null; then
    # H.264 in 4:2:0 (what browsers and phones play) needs even sides
    if ffmpeg -y -v error -i "$out/ryr.y4m" -vf "pad=ceil(iw/2)*2:ceil(ih/2)*2" \
            -c:v libx264 -pix_fmt yuv420p "$out/ryr.mp4" &&
        ffmpeg -y -v error -i "$out/ryr.y4m" -frames:v 1 "$out/frame_00000.png"; then
        made+=("$out/ryr.mp4" "$out/frame_00000.png")
    else
        echo "run.sh: ffmpeg could not convert $out/ryr.y4m (the video itself is fine)" >&2
    fi
else
    echo "(install ffmpeg for $out/ryr.mp4 and a colour PNG of the first frame)"
fi
echo "run.sh: wrote ${made[*]} (play it: ffplay $out/ryr.y4m, or mpv)"
