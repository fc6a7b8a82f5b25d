#!/usr/bin/env bash
# check_bench_gpu.sh UTCRUN BENCH: utc_bench_gpu's measuring paths at a tiny size (two
# buffer sizes per memory kind, one and two concurrent n-body tasks of two steps). Checks
# its JSON: every memory kind measured, each buffer moved reps + 1 times each way, the
# concurrent runs timed. No figure is judged. Without a usable GPU: skipped (77), or
# failed under UTC_REQUIRE_GPU=1 (tests/common/gpu_skip.sh).
set -u
. "$(dirname "$0")/../common/gpu_skip.sh"
utcrun=$1 bench=$2
tmp=$(mktemp -d /tmp/utc-bench-gpu-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$utcrun" -np 1 "$bench" --json --quick --max-bytes 8192 --max-tasks 2 --steps 2 \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/err"
if [ "$rc" = 77 ]; then
    gpu_skip "$(head -n 1 "$tmp/out")"
fi
[ "$rc" = 0 ] || { cat "$tmp/out"; echo "FAILED: utc_bench_gpu exited $rc"; exit 1; }
python3 - "$tmp/out" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
bw = r["bandwidth"]
assert {p["kind"] for p in bw} == {"pageable", "pinned", "unified"}, bw
assert sorted({p["bytes"] for p in bw}) == [4096, 8192], bw
for p in bw:
    assert p["h2d_copies"] == p["reps"] + 1 and p["d2h_copies"] == p["reps"] + 1, p
    assert p["h2d_gbps"] > 0 and p["d2h_gbps"] > 0, p
conc = r["concurrent"]
assert sorted({c["tasks"] for c in conc}) == [1, 2], conc
assert all(c["utc_ms"] > 0 and c["one_stream_ms"] > 0 for c in conc), conc
print("utc_bench_gpu: %d bandwidth points, %d concurrent runs: passed" % (len(bw), len(conc)))
PY
