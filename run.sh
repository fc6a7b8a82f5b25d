#!/usr/bin/env bash
# Install what is missing, build, and run the raytrace-YUV-rotate sample: the built-in
# scene at 512x512, a short orbiting animation, on as many ranks as given (default 1).
#   ./run.sh [-np N] [ryr options...]
set -euo pipefail
cd "$(dirname "$0")"
np=1
if [ "${1:-}" = "-np" ] && [ $# -ge 2 ]; then
    np=$2
    shift 2
fi
scripts/install-deps.sh
scripts/build.sh
args=(--size 512x512 --frames 12 --orbit 30 --out ryr-out)
exec scripts/utcrun -np "$np" build/apps/ryr/ryr "${args[@]}" "$@"
