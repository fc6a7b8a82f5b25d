#!/usr/bin/env bash
# check_bench_gpu_overlap.sh UTCRUN BENCH: utc_bench_gpu_overlap at a tiny size (8 items of
# 64 KiB, one repetition): it runs and its JSON names the 8 items; no figure is judged.
# Without a usable GPU it exits 77 (skipped), or fails under UTC_REQUIRE_GPU=1.
set -u
. "$(dirname "$0")/../common/gpu_skip.sh"
utcrun=$1 bench=$2
tmp=$(mktemp -d /tmp/utc-bench-overlap-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$utcrun" -np 1 "$bench" --items 8 --bytes 65536 --reps 1 --json >"$tmp/out"
rc=$?
[ "$rc" = 77 ] && gpu_skip "$(head -n 1 "$tmp/out")"
[ "$rc" = 0 ] || { cat "$tmp/out"; echo "FAILED: utc_bench_gpu_overlap exited $rc"; exit 1; }
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["items"] == 8, d' \
    "$tmp/out" || { cat "$tmp/out"; exit 1; }
echo "utc_bench_gpu_overlap: 8 items: passed"
