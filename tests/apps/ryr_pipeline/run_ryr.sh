#!/usr/bin/env bash
# run_ryr.sh UTCRUN NP RYR ARGS...: run ryr and check its JSON summary says verified, with
# the frames, size (default 3 frames of 96x64) and raytrace tasks (--farm) asked for.
# Exits 77 (skipped) when the preset needs a GPU and there is none (1, failed, under
# UTC_REQUIRE_GPU=1; then `--preset auto` must also have put raytrace on the GPU).
set -u
. "$(dirname "$0")/../../common/gpu_skip.sh"
utcrun=$1 np=$2 ryr=$3
shift 3
out=$("$utcrun" -np "$np" "$ryr" "$@" 2>err.$$)
rc=$?
err=$(cat err.$$); rm -f err.$$
echo "$out"
echo "$err" >&2
if [ $rc -ne 0 ] && grep -qiE "needs a GPU|no GPU" <<<"$err"; then
    gpu_skip "this preset needs a GPU"
fi
[ $rc -eq 0 ] || { echo "FAILED: ryr exited $rc"; exit 1; }
last=$(tail -n 1 <<<"$out")
python3 - "$last" "$*" <<'PY' || exit 1
import json, os, sys
r = json.loads(sys.argv[1])
args = sys.argv[2].split()
assert r["verified"] is True, "not verified"
gpu_preset = "--gpu" in args or "--mixed" in args or any(args[i:i + 2] in (["--preset", "v4"], ["--preset", "v5"], ["--preset", "gpu"])
                                    for i in range(len(args)))
if gpu_preset or (os.environ.get("UTC_REQUIRE_GPU") == "1" and "auto" in args):
    assert r["gpu"] is True, "raytrace did not run on the GPU: %s" % r
def arg(name, default):
    return args[args.index(name) + 1] if name in args else default
w, h = (int(v) for v in arg("--size", "96x64").split("x"))
assert r["frames"] == int(arg("--frames", "3")) and r["width"] == w and r["height"] == h, r
assert set(r["stages"]) == {"raytrace", "yuv", "rotate", "output"}, r["stages"]
# --farm N: N raytrace tasks; every frame rendered by one member and every row of it once,
# counted by kind; every member took part (member i renders frame i before it asks the
# dispatcher for more), whatever the timing
if "--farm" in args:
    n = int(arg("--farm", "0"))
    m = r["members"]
    assert r["stages"]["raytrace"]["tasks"] == n and len(m) == n, r
    assert sum(x["frames"] for x in m) == r["frames"], r
    assert all(x["frames"] >= 1 for x in m[:r["frames"]]), "a member rendered no frame: %s" % m
    assert all(x["rows_cpu"] + x["rows_gpu"] == x["frames"] * h for x in m), m
    assert r["rows_cpu"] == sum(x["rows_cpu"] for x in m), r
    assert r["rows_gpu"] == sum(x["rows_gpu"] for x in m), r
    assert r["rows_cpu"] + r["rows_gpu"] == r["frames"] * h, r
# --mixed: task 0's threads of both kinds rendered rows (until a kind's speed is measured,
# the first rows of each frame are kept for it, so its first frame has rows of both kinds)
if "--mixed" in args:
    assert r["members"][0]["rows_gpu"] > 0 and r["members"][0]["rows_cpu"] > 0, r["members"]
# --preset gpu: every stage a GPU task, a busy time for each and the pace named; the device
# conduits took the paths RYR_PATHS lists (comma-separated; "-" before a path: not that one)
if arg("--preset", "auto") == "gpu":
    assert r["preset"] == "gpu" and r["gpu"] is True, r
    for s, st in r["stages"].items():
        assert st["gpu"] is True and st["busy_s"] > 0, (s, st)
    assert r["pace"] == max(r["stages"], key=lambda s: r["stages"][s]["busy_s"]), r
    paths = set(r["device_paths"])
    for p in filter(None, os.environ.get("RYR_PATHS", "").split(",")):
        if p.startswith("-"):
            assert p[1:] not in paths, "device path %s taken: %s" % (p[1:], r["device_paths"])
        else:
            assert p in paths, "device path %s not taken: %s" % (p, r["device_paths"])
print("1 passed, 0 failed")
PY
