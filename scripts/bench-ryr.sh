#!/usr/bin/env bash
# bench-ryr.sh [--frames N] [--sizes "512x512 1024x1024"] [--np R] [--write]
#
# Runs the RYR sample's `seq` path and the CPU presets (and v4/v5 when a GPU is present)
# at each size, in the same run, and prints a table like the dissertation's table 4.7:
# frames/s, total time, per-stage busy time, speed-up over seq, and total time over the
# slowest stage's busy time. With --write the table replaces the "RYR pipeline" figures
# in doc/PERFORMANCE.md.
set -euo pipefail
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$0")/.."
frames=16
sizes="512x512 1024x1024"
np=1
write=0
while [ $# -gt 0 ]; do
    case "$1" in
        --frames) frames=$2; shift 2 ;;
        --sizes) sizes=$2; shift 2 ;;
        --np) np=$2; shift 2 ;;
        --write) write=1; shift ;;
        -h|--help) sed -n '2,9p' "$self" | sed 's/^# \{0,1\}//'; exit 0 ;;
        --version) echo "bench-ryr.sh (UTC) 0.1.0"; exit 0 ;;
        *) echo "bench-ryr: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
ryr=build/apps/ryr/ryr
[ -x "$ryr" ] || { echo "bench-ryr: build first (scripts/build.sh): $ryr is missing" >&2; exit 1; }

presets="seq v1 v2 v3 auto"
if scripts/utcrun -np 1 "$ryr" --preset v4 --size 8x8 --frames 1 --no-output >/dev/null 2>&1; then
    presets="$presets v4 v5"
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for size in $sizes; do
    for p in $presets; do
        echo "bench-ryr: $p at $size ($frames frames, $np rank(s))" >&2
        scripts/utcrun -np "$np" "$ryr" --preset "$p" --size "$size" --frames "$frames" \
            --orbit 10 --no-output --json 2>/dev/null | tail -n 1 >>"$out"
    done
done
table=$(python3 - "$out" "$np" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
np = sys.argv[2]
seq = {(r["width"], r["height"]): r["fps"] for r in rows if r["preset"] == "seq"}
print(f"| size | version | ranks | frames/s | x seq | total (s) | raytrace (s) | yuv (s) | rotate (s) | output (s) | total / slowest stage |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    st = r["stages"]
    busy = [st[s]["busy_s"] for s in ("raytrace", "yuv", "rotate", "output")]
    size = f'{r["width"]}x{r["height"]}'
    ratio = r["fps"] / seq[(r["width"], r["height"])]
    slow = r["seconds"] / max(busy) if r["preset"] != "seq" else float("nan")
    slow_s = "-" if r["preset"] == "seq" else f"{slow:.2f}"
    print(f'| {size} | {r["preset"]} | {np} | {r["fps"]:.3f} | {ratio:.2f} | {r["seconds"]:.2f} | '
          + " | ".join(f"{b:.2f}" for b in busy) + f" | {slow_s} |")
PY
)
echo "$table"
if [ "$write" = 1 ]; then
    python3 - "$table" "$frames" "$np" "$sizes" <<'PY'
import re, sys, datetime
table, frames, np, sizes = sys.argv[1:5]
path = "doc/PERFORMANCE.md"
text = open(path).read()
begin, end = "<!-- bench-ryr:begin -->", "<!-- bench-ryr:end -->"
block = (f"{begin}\nCommand: `scripts/bench-ryr.sh --frames {frames} --np {np} --sizes \"{sizes}\" --write` "
         f"({datetime.date.today()}, 2-core development VM; every row from the same run).\n\n{table}\n{end}")
if begin in text:
    text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda m: block, text, flags=re.S)
else:
    text = text.replace("## RYR pipeline (issue: the sample)\n", "## RYR pipeline (issue: the sample)\n\n" + block + "\n", 1)
open(path, "w").write(text)
PY
    echo "bench-ryr: wrote doc/PERFORMANCE.md" >&2
fi
