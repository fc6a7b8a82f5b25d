#!/usr/bin/env bash
# check_bench_gpu_conduit.sh UTCRUN BENCH NP: utc_bench_gpu_conduit's measuring paths at a
# tiny size (4, 16 and 64 KiB, two repetitions) at NP ranks (1 or 2). First its argument
# errors (exit 2 with a message naming the option, no GPU needed). Then its JSON: every
# size has the hand-over (owned, copy) and cudaMemcpy device-to-device times, and with 2
# ranks the IPC, staged, pinned device-to-host and raw MPI ones, the conduits on the paths
# they were made for, and every message's bytes checked by its reader. No figure is
# judged. Without a usable GPU: skipped (77), or failed under UTC_REQUIRE_GPU=1
# (tests/common/gpu_skip.sh).
set -u
. "$(dirname "$0")/../common/gpu_skip.sh"
utcrun=$1 bench=$2 np=$3
tmp=$(mktemp -d /tmp/utc-bench-gpu-conduit-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# bad arguments: refused before any GPU or MPI call
bad() {
    local want=$1
    shift
    "$bench" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" != 2 ] || ! grep -q -- "$want" "$tmp/err"; then
        cat "$tmp/out" "$tmp/err"
        echo "FAILED: utc_bench_gpu_conduit $* exited $rc, wanted 2 and a message with '$want'"
        exit 1
    fi
}
bad "unknown argument '--frobnicate'" --frobnicate
bad "--reps needs a value" --reps
bad "--reps needs a whole number from 1" --reps 0
bad "--max-bytes needs a whole number from 4096" --max-bytes 100
bad "--max-bytes needs a whole number from 4096" --max-bytes 12x
"$bench" --help | grep -q '^usage: utc_bench_gpu_conduit' || { echo "FAILED: --help"; exit 1; }

"$utcrun" -np "$np" "$bench" --json --reps 2 --max-bytes 65536 >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/err"
if [ "$rc" = 77 ]; then
    gpu_skip "$(head -n 1 "$tmp/out")"
fi
[ "$rc" = 0 ] || { cat "$tmp/out"; echo "FAILED: utc_bench_gpu_conduit exited $rc"; exit 1; }
python3 - "$tmp/out" "$np" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
np = int(sys.argv[2])
assert r["ranks"] == np and r["reps"] == 2, r
pts = r["points"]
assert [p["bytes"] for p in pts] == [4096, 16384, 65536], pts
assert r["paths"]["handover"] == "handover", r["paths"]
# every conduit message (warm-up included) arrived whole: its bytes checked by the reader
assert r["messages"] == len(pts) * (r["reps"] + 1) * (2 if np == 1 else 4), r["messages"]
assert r["messages_checked"] == r["messages"], (r["messages_checked"], r["messages"])
timed = ["owned", "copy", "cuda_d2d"]
if np == 2:
    timed += ["ipc", "staged", "pinned_d2h", "raw_mpi"]
    # IPC may be refused on some machines (then the path is staged, and says so)
    assert r["paths"]["ipc"] in ("ipc", "staged"), r["paths"]
    assert r["paths"]["staged"] == "staged", r["paths"]
    if r["paths"]["ipc"] != "ipc":
        print("note: CUDA IPC refused here: the IPC conduit took the %s path" % r["paths"]["ipc"])
else:
    assert r["paths"]["ipc"] is None and r["paths"]["staged"] is None, r["paths"]
    assert all(p["ipc_us"] is None and p["staged_us"] is None for p in pts), pts
for p in pts:
    for m in timed:
        assert p[m + "_us"] is not None and p[m + "_us"] > 0, (m, p)
t = r["targets"]
assert t["handover_owned_max_us"]["value"] > 0, t
# below 64 MiB the between-rank targets are not measured
assert t["ipc_64MiB_over_cuda_d2d"]["met"] is None, t
print("utc_bench_gpu_conduit at %d rank(s): %d sizes, paths %s: passed" % (np, len(pts), r["paths"]))
PY
