#!/usr/bin/env bash
# check_bench_shared.sh UTCRUN BENCH: utc_bench_shared at 3 ranks and tiny sizes. Checks its
# JSON: both placements measured, every method timed, and in the sharing runs every item
# taken exactly once (round robin: a third each; share mode: the 4x slower reader took
# fewer than the fastest one).
set -u
utcrun=$1 bench=$2
tmp=$(mktemp -d /tmp/utc-bench-shared-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$utcrun" -np 3 "$bench" --json --reps 1 --iters 20 --bw-size 65536 --bw-iters 4 \
    --items 30 --work-us 2000 >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out" "$tmp/err"
[ "$rc" = 0 ] || { echo "FAILED: utc_bench_shared exited $rc"; exit 1; }
python3 - "$tmp/out" <<'PY' || exit 1
import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
assert r["ranks"] == 3 and r["items"] == 30, r
for place in ("inproc", "across_ranks"):
    p = r[place]
    for key in ("publish_lat_us", "p2p_lat_us", "publish_bw_MBps", "p2p_bw_MBps",
                "share_items_per_s", "round_robin_items_per_s"):
        assert p[key] is not None and p[key] > 0, (place, key, p)
    assert p["round_robin_taken"] == [10, 10, 10], (place, p)
    share = p["share_taken"]
    assert sum(share) == 30, (place, share)
    assert share[2] < max(share[:2]), ("the slow reader took as many as the fast", place, share)
print("1 passed, 0 failed")
PY
