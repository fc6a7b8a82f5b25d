#!/usr/bin/env bash
# bench-ryr-farm.sh [--build DIR] [--np R] [--size WxH] [--frames N] [--slow R=F]
#                   [--farm N] [--ray-threads N] [--reps N]
#
# RYR with one slowed rank (--slow-rank, a benchmark-only knob: raytrace work on that
# rank takes F times as long), two ways, in one run, taking turns run after run so load
# changes touch both alike; the best frames/s of --reps runs of each:
#   split: the one raytrace task with threads on every rank, rows handed out in chunks
#          of 4 with a remote fetch-add, gathered on the entry rank, a barrier per frame;
#   farm:  --farm N raytrace tasks (default: one per rank) taking whole frames from a
#          share-mode shared conduit, their frames put back in order at yuv.
# Defaults: 3 ranks, 160x120, 24 frames, rank 1 slowed 4x, 1 raytrace thread per rank
# (split) or per task (farm), 3 reps. Every run is --verify'd.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build np=3 size=160x120 frames=24 slow=1=4 farm= threads=1 reps=3
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=${2:?--build needs a folder}; shift 2 ;;
    --np) np=${2:?--np needs a number}; shift 2 ;;
    --size) size=${2:?--size needs WxH}; shift 2 ;;
    --frames) frames=${2:?--frames needs a number}; shift 2 ;;
    --slow) slow=${2:?--slow needs R=F}; shift 2 ;;
    --farm) farm=${2:?--farm needs a number}; shift 2 ;;
    --ray-threads) threads=${2:?--ray-threads needs a number}; shift 2 ;;
    --reps) reps=${2:?--reps needs a number}; shift 2 ;;
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-ryr-farm.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
case $reps in '' | *[!0-9]* | 0) echo "bench-ryr-farm.sh: --reps needs a positive number" >&2; exit 2 ;; esac
farm=${farm:-$np}
ryr=$build/apps/ryr/ryr
[ -x "$ryr" ] || { echo "bench-ryr-farm.sh: $ryr is missing (build first, or give --build)" >&2; exit 1; }

common=(--preset v1 --ray-threads "$threads" --size "$size" --frames "$frames" --orbit 10
        --no-output --verify --json --slow-rank "$slow")
fps() { # the frames/s of one run, which must have verified
    "$root/scripts/utcrun" -np "$np" "$ryr" "${common[@]}" "$@" 2>/dev/null | tail -n 1 |
        python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["verified"]; print(r["fps"])'
}
best() { printf '%s\n' "$@" | sort -g | tail -1; }

echo "load: $(cut -d' ' -f1-3 /proc/loadavg); $np ranks, $frames frames of $size, --slow-rank $slow, best of $reps"
split=() farmed=()
for _ in $(seq "$reps"); do
    split+=("$(fps)")
    farmed+=("$(fps --farm "$farm")")
done
s=$(best "${split[@]}") f=$(best "${farmed[@]}")
printf '%-44s %8s\n' "way" "frames/s"
printf '%-44s %8.2f   (runs: %s)\n' "split (1 task, rows over $np ranks)" "$s" "${split[*]}"
printf '%-44s %8.2f   (runs: %s)\n' "farm (--farm $farm)" "$f" "${farmed[*]}"
python3 -c "print('farm / split: %.2f' % ($f / $s))"
