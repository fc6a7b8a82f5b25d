#!/usr/bin/env bash
# gpu-check.sh: prove UTC's GPU path on a GPU machine in one command (doc/guide/gpu.md,
# "Checking a GPU machine"). Needs a driver, a CUDA toolkit, python3 and, where the
# machine lacks Open MPI, hwloc, CUnit or uthash, the bundle that --prepare made.
#
#   scripts/gpu-check.sh [--out DIR] [--build DIR] [--jobs N] [--bundle|--no-bundle]
#                        [--no-bench] [--skip BENCH,...] [--test-timeout S]
#                        [--small] [--dry-run]
#   scripts/gpu-check.sh --prepare
#
# 1. Prints what it found: nvidia-smi, the driver's and the runtime's CUDA versions, each
#    device's compute capability and compute mode; stops (fails) here when CUDA sees no
#    usable device, with CUDA's reason.
# 2. Takes Open MPI, hwloc, CUnit, uthash, pkg-config and make (or ninja) from the
#    system, or, when one is missing (or with --bundle), unpacks gpu-bundle/ into a
#    private prefix beside the build folder and builds against it alone.
# 3. Builds with CUDA on (the targets the GPU tests need, -j N: default all cores) and runs
#    every test labelled gpu (GPU module suites, the apps' GPU versions, the cluster apps'
#    at 1-3 ranks, RYR v4/v5/auto, --gpu and --memtype runs, the GPU example, the
#    micro-benchmarks at a tiny size, RUNPATHs, device conduits) with UTC_REQUIRE_GPU=1: a
#    skip is a failure, and so is any test that did not pass. What it builds: the targets
#    below, and every target of this build whose program a gpu-labelled test runs (read
#    from ctest), so a new GPU test is never left unbuilt.
# 4. Benchmarks (unless --no-bench): RYR v4, v5 and auto at 1024x1024, 50 frames (frames/s
#    beside the dissertation's table 4.7, theirs), the farm of both kinds (ryr --farm 1
#    with CPU threads only, one GPU thread only, and --mixed, in one run: the mixed one's
#    frames/s against the better of the two and their sum), utc_bench_gpu (bandwidth per
#    memory kind with copy counts, concurrent kernels), and utc_bench_gpu_overlap (200
#    items through an overlapped pipeline at depth 1, 2, 3 beside each stage alone); and
#    RYR --preset gpu (GPU-resident: frames on device conduits) against v5 and auto, beside
#    each of its GPU stages' kernels alone (ryr --stage-alone), 1024x1024, 50 frames, taking
#    turns, best of 2 (issue 35's target: gpu faster than v5 and auto, and within 1.3x of
#    its slowest stage alone).
# Results: DIR (--out; default $OUT/gpu-check when $OUT is set, else gpu-check-results):
# gpu-check.log (everything printed), summary.json, ctest-gpu-*.xml, bench-gpu.json,
# bench-gpu-overlap.json, ryr.jsonl, farm-mixed.jsonl, ryr-gpu.jsonl. Exit 0 when every step passed, 1
# when one failed, 2 on a usage error.
#
# Device conduits (issue 35): step 4 also runs utc_bench_gpu_conduit at 2 ranks, --quick
# (the in-process hand-over beside cudaMemcpy D2D, IPC beside the same copy, staged beside
# pinned D2H and raw MPI; the targets' ratios in its JSON): bench-gpu-conduit.json.
#
# --prepare  on a machine with apt and the network: fetch the bundle into gpu-bundle/ (git
#            ignores it; carry it to the GPU machine with the tree) and stop.
# --skip     leave out these benchmarks of step 4 (comma-separated): ryr (v4, v5, auto),
#            farm, ryr-gpu, bandwidth (utc_bench_gpu), conduit, overlap; the tests all run.
# --test-timeout  each GPU test's time limit in seconds (default 300).
# --small    every benchmark of step 4 at a small size (RYR 128x96, a few frames; the
#            micro-benchmarks at their tiny sizes): a rehearsal of the whole script, for
#            example on cudahost (LD_LIBRARY_PATH=build/tests/cudahost/lib), whose figures
#            mean nothing. The targets' ratios are still printed: ignore them.
# --dry-run  no GPU needed: steps 1-3 without stopping for a missing GPU and without
#            running the tests (it lists them), to check the build where there is no GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
. scripts/gpu-bundle.sh

out=${OUT:+$OUT/gpu-check}
out=${out:-$root/gpu-check-results}
build=$root/build-gpucheck
jobs=$(nproc)
use_bundle=auto bench=1 dry=0 prepare=0 skip=, test_timeout=300 small=0
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        --build) build=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        --bundle) use_bundle=yes; shift ;;
        --no-bundle) use_bundle=no; shift ;;
        --no-bench) bench=0; shift ;;
        --skip) skip=",$2,"; shift 2 ;;
        --test-timeout) test_timeout=$2; shift 2 ;;
        --dry-run) dry=1; shift ;;
        --small) small=1; shift ;;
        --prepare) prepare=1; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "gpu-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ "$out" = "${out#-}" ] && [ "$jobs" -gt 0 ] 2>/dev/null && [ "$test_timeout" -gt 0 ] 2>/dev/null ||
    { echo "gpu-check: bad --out, --jobs or --test-timeout" >&2; exit 2; }

if [ "$prepare" = 1 ]; then
    bundle_prepare "$root/gpu-bundle"
    exit
fi

mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
rm -f "$out"/bench-gpu-conduit.json
rm -f "$out"/ctest-gpu-*.xml "$out"/bench-gpu.json "$out"/bench-gpu-overlap.json "$out"/ryr.jsonl \
    "$out"/summary.json "$out"/farm-mixed.jsonl "$out"/ryr-gpu.jsonl
exec > >(tee "$out/gpu-check.log") 2>&1
tee_pid=$!
t_start=$(date +%s)
result=pass
failures=()
step() { echo; echo "==== gpu-check: $* ($(($(date +%s) - t_start)) s)"; }
failed() { echo "gpu-check: FAILED: $*"; failures+=("$*"); result=fail; }
want() { [[ "$skip" != *",$1,"* ]]; } # a benchmark of step 4 not left out with --skip

# summary: summary.json from what the steps left in $out and the variables below.
gpu_info='{}'
summary() {
    local seconds=$(($(date +%s) - t_start))
    python3 - "$out" "$result" "$seconds" "$gpu_info" "$dry" "${failures[@]}" <<'PY'
import glob, json, os, sys
import xml.etree.ElementTree as ET
out, result, seconds, gpu_info, dry = sys.argv[1:6]
s = {"result": result, "seconds": int(seconds), "dry_run": dry == "1",
     "failures": sys.argv[6:], "machine": json.loads(gpu_info)}
tests = {"passed": [], "failed": [], "skipped": []}
for f in sorted(glob.glob(os.path.join(out, "ctest-gpu-*.xml"))):
    for case in ET.parse(f).getroot().iter("testcase"):
        st = case.get("status", "run")
        key = {"run": "passed", "fail": "failed"}.get(st, "skipped")
        if case.find("failure") is not None:
            key = "failed"
        if case.find("skipped") is not None:
            key = "skipped"
        tests[key].append(case.get("name"))
s["tests"] = {k: {"count": len(v), "names": v if k != "passed" else None} for k, v in tests.items()}
def jsonl(name):
    """The objects of a JSON-lines file in out, one per readable line (absent: none)."""
    path = os.path.join(out, name)
    rows = []
    if os.path.exists(path):
        for line in open(path):
            try:
                rows.append(json.loads(line))
            except ValueError:
                pass
    return rows
ryr = jsonl("ryr.jsonl")
s["ryr"] = {"ours": [{k: r.get(k) for k in ("preset", "width", "height", "frames", "fps",
                                            "seconds", "gpu", "verified")} for r in ryr],
            "theirs_dissertation_table_4_7": {
                "note": "the dissertation's figures (table 4.7: 50 rounds at 1024x1024, their "
                        "machine and GPU), not measured here",
                "fps": {"seq": 0.292, "v1": 0.396, "v2": 2.028, "v3": 2.340, "v4": 4.048,
                        "v5": 5.475}}}
def bench_json(key, name):
    """A benchmark's JSON file in out, as s[key] (absent: nothing)."""
    path = os.path.join(out, name)
    if os.path.exists(path):
        try:
            s[key] = json.load(open(path))
        except ValueError:
            s[key] = "unreadable: see gpu-check.log"
bench_json("utc_bench_gpu_overlap", "bench-gpu-overlap.json")
bench_json("utc_bench_gpu_conduit", "bench-gpu-conduit.json")
farm = {}
for r in jsonl("farm-mixed.jsonl"):
    if "farm" in r:
        farm[r["farm"]] = {k: r.get(k) for k in ("fps", "verified", "rows_cpu", "rows_gpu")}
if {"cpu", "gpu", "mixed"} <= set(farm):
    m, c, g = (farm[k]["fps"] or 0 for k in ("mixed", "cpu", "gpu"))
    farm["mixed_over_best"] = m / max(c, g) if max(c, g) else None
    farm["mixed_over_sum"] = m / (c + g) if c + g else None
    farm["target"] = "mixed_over_best >= 1 and mixed_over_sum >= 0.9 (issue 36)"
s["ryr_farm_mixed"] = farm or None
bench_json("utc_bench_gpu", "bench-gpu.json")
# RYR --preset gpu against v5 and auto and its stages alone: the best of the repetitions
best = {}
for r in jsonl("ryr-gpu.jsonl"):
    key = "alone_" + r["stage_alone"] if "stage_alone" in r else r.get("preset")
    if key and (key not in best or r["fps"] > best[key]["fps"]):
        best[key] = r
if best:
    g = {k: {f: v.get(f) for f in ("fps", "seconds", "pace", "device_paths", "stages")
             if f in v} for k, v in best.items()}
    alone = [v["fps"] for k, v in best.items() if k.startswith("alone_")]
    if "gpu" in best and len(alone) == 3:
        fps = best["gpu"]["fps"]
        g["slowest_alone_over_gpu"] = min(alone) / fps if fps else None
        g["gpu_over_v5"] = fps / best["v5"]["fps"] if "v5" in best and best["v5"]["fps"] else None
        g["gpu_over_auto"] = (fps / best["auto"]["fps"]
                              if "auto" in best and best["auto"]["fps"] else None)
    g["target"] = ("slowest_alone_over_gpu <= 1.3, gpu_over_v5 > 1 and gpu_over_auto > 1 "
                   "(issue 35)")
    s["ryr_gpu_resident"] = g
json.dump(s, open(os.path.join(out, "summary.json"), "w"), indent=1)
t = s["tests"]
print("gpu-check: %s in %s s: tests %d passed, %d failed, %d skipped; summary %s"
      % (result, seconds, t["passed"]["count"], t["failed"]["count"], t["skipped"]["count"],
         os.path.join(out, "summary.json")))
PY
}
finish() {
    summary || echo "gpu-check: could not write summary.json (python3?)"
    [ ${#failures[@]} -eq 0 ] || printf 'gpu-check: failed: %s\n' "${failures[@]}"
    exec >&- 2>&- # let tee write the log's end before the exit
    wait "$tee_pid" 2>/dev/null
    [ "$result" = pass ] && exit 0
    exit 1
}

# ---- 1. what is there ----
step "1. the machine"
echo "$(uname -srm), $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
[ -r /etc/os-release ] && (. /etc/os-release && echo "$PRETTY_NAME")
for d in /usr/local/nvidia/bin /usr/bin; do # where drivers put it when PATH does not say
    command -v nvidia-smi >/dev/null || { [ -x "$d/nvidia-smi" ] && PATH="$PATH:$d"; }
done
if command -v nvidia-smi >/dev/null; then
    nvidia-smi || failed "nvidia-smi exited $?"
    nvidia-smi --query-gpu=index,name,driver_version,compute_mode,memory.total,pci.bus_id \
        --format=csv || true
else
    echo "nvidia-smi: not found (no NVIDIA driver's tools on PATH)"
fi
nvcc=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
if [ -z "$nvcc" ]; then
    failed "no CUDA toolkit: nvcc is neither on PATH nor in /usr/local/cuda/bin"
    finish
fi
export PATH="$(dirname "$nvcc"):$PATH"
"$nvcc" --version | tail -n 2
probe_dir=$(mktemp -d /tmp/utc-gpu-probe-XXXXXX)
trap 'rm -rf "$probe_dir"' EXIT
cat >"$probe_dir/probe.cu" <<'CU'
// What CUDA sees: versions, devices, and the reason when it sees none. One JSON line last.
#include <cstdio>
#include <cuda_runtime_api.h>
static const char *mode(int m)
{
    return m == cudaComputeModeDefault ? "default" : m == cudaComputeModeProhibited ? "prohibited"
         : m == cudaComputeModeExclusiveProcess ? "exclusive-process" : "other";
}
int main()
{
    int drv = 0, rt = 0, n = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    cudaError_t err = cudaGetDeviceCount(&n);
    printf("CUDA driver version %d.%d, runtime version %d.%d\n", drv / 1000, drv % 1000 / 10,
           rt / 1000, rt % 1000 / 10);
    if (err != cudaSuccess) {
        printf("cudaGetDeviceCount: %s (%s)\n", cudaGetErrorString(err), cudaGetErrorName(err));
        n = 0;
    }
    char devs[4096] = "";
    int len = 0;
    for (int d = 0; d < n && len < 3500; d++) {
        cudaDeviceProp p;
        if (cudaGetDeviceProperties(&p, d) != cudaSuccess)
            continue;
        int cm = 0, m = 0;
        cudaDeviceGetAttribute(&cm, cudaDevAttrConcurrentManagedAccess, d);
        cudaDeviceGetAttribute(&m, cudaDevAttrComputeMode, d);
        printf("device %d: %s, compute capability %d.%d, %d SMs, %.1f GiB, compute mode %s, "
               "concurrent managed access %d\n", d, p.name, p.major, p.minor,
               p.multiProcessorCount, p.totalGlobalMem / 1073741824.0, mode(m), cm);
        len += snprintf(devs + len, sizeof devs - len,
                        "%s{\"name\": \"%s\", \"cc\": \"%d.%d\", \"sms\": %d, \"gib\": %.1f, "
                        "\"compute_mode\": \"%s\", \"concurrent_managed\": %d}",
                        d ? ", " : "", p.name, p.major, p.minor, p.multiProcessorCount,
                        p.totalGlobalMem / 1073741824.0, mode(m), cm);
    }
    printf("{\"cuda_driver\": \"%d.%d\", \"cuda_runtime\": \"%d.%d\", \"devices\": [%s], "
           "\"error\": \"%s\"}\n", drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10, devs,
           err == cudaSuccess ? (n ? "" : "no device") : cudaGetErrorString(err));
    return n > 0 ? 0 : 3;
}
CU
ndev=0
# with the shared runtime, as UTC links it (so LD_LIBRARY_PATH can point it at cudahost
# in a rehearsal), found through the toolkit's folder; should that not load (a toolkit laid
# out otherwise), with the static one, as nvcc links by default
cudart_dir=
for d in lib64 lib targets/x86_64-linux/lib targets/sbsa-linux/lib; do
    d=$(dirname "$nvcc")/../$d
    if compgen -G "$d/libcudart.so*" >/dev/null; then cudart_dir=$(cd "$d" && pwd); break; fi
done
probe_built=0
if [ -n "$cudart_dir" ] && "$nvcc" -cudart shared -Xlinker -rpath -Xlinker "$cudart_dir" \
        -o "$probe_dir/probe" "$probe_dir/probe.cu" >"$probe_dir/nvcc.log" 2>&1; then
    probe_built=1
    "$probe_dir/probe" >"$probe_dir/probe.out" 2>"$probe_dir/probe.err"
    probe_rc=$?
    [ "$probe_rc" = 127 ] && probe_built=0 # the shared runtime did not load
fi
if [ "$probe_built" = 0 ] && "$nvcc" -o "$probe_dir/probe" "$probe_dir/probe.cu" \
        >"$probe_dir/nvcc.log" 2>&1; then
    probe_built=1
    "$probe_dir/probe" >"$probe_dir/probe.out"
    probe_rc=$?
fi
if [ "$probe_built" = 1 ]; then
    head -n -1 "$probe_dir/probe.out"
    gpu_info=$(tail -n 1 "$probe_dir/probe.out")
    [ "$probe_rc" = 0 ] && ndev=$(grep -c '^device ' "$probe_dir/probe.out")
else
    cat "$probe_dir/nvcc.log"
    failed "nvcc cannot build a CUDA program"
fi
if [ "$ndev" = 0 ]; then
    if [ "$dry" = 1 ]; then
        echo "gpu-check: no usable GPU (above); --dry-run goes on without one"
    else
        why=$(sed -n 's/^cudaGetDeviceCount: //p' "$probe_dir/probe.out" 2>/dev/null)
        failed "no usable GPU: ${why:-CUDA found no device} (a driver older than the toolkit, no device or the stub library: see above)"
        finish
    fi
fi

# ---- 2. Open MPI, hwloc, CUnit, uthash ----
step "2. what UTC builds on"
have_system=1
for f in mpicc mpirun pkg-config; do command -v $f >/dev/null || have_system=0; done
command -v ninja >/dev/null || command -v make >/dev/null || have_system=0
for f in /usr/include/hwloc.h /usr/include/uthash.h /usr/include/CUnit/CUnit.h; do
    [ -e "$f" ] || have_system=0
done
cmake_args=()
if [ "$use_bundle" = yes ] || { [ "$use_bundle" = auto ] && [ "$have_system" = 0 ]; }; then
    prefix=$build-prefix
    echo "gpu-check: Open MPI, hwloc, CUnit, uthash from gpu-bundle/, unpacked into $prefix"
    [ -f gpu-bundle/MANIFEST ] && sed -n 2p gpu-bundle/MANIFEST
    rm -rf "$prefix"
    if ! bundle_unpack gpu-bundle "$prefix"; then
        failed "no usable gpu-bundle/: run scripts/gpu-check.sh --prepare where apt works, and carry gpu-bundle with the tree"
        finish
    fi
    bundle_env "$prefix"
    cmake_args=("${UTC_BUNDLE_CMAKE_ARGS[@]}")
elif [ "$have_system" = 0 ]; then
    failed "Open MPI, hwloc, CUnit or uthash is missing, and --no-bundle was given"
    finish
else
    echo "gpu-check: the system's Open MPI, hwloc, CUnit and uthash"
fi
echo "mpirun: $(command -v mpirun) ($(mpirun --version 2>/dev/null | head -n 1))"
command -v python3 >/dev/null || failed "python3 is missing (the tests and the summary need it)"

# ---- 3. build and test ----
step "3. build (CUDA on) in $build"
targets="utc test_gpu_errors test_gpu_kernels test_gpu_data test_gpu_mixed test_gpu_pipeline
test_gpu_pipeline_errors test_gpu_pipeline_ring utc_bench_gpu utc_bench_gpu_overlap example_gpu_task
example_mixed_task ryr
rotate yuv raytrace md5 bfs mm heat kmeans nbody mc utc_bench_gpu_conduit"
# the build tool: the one the folder was made with, else ninja where there is one, else make
gen=()
if [ ! -f "$build/CMakeCache.txt" ]; then
    if command -v ninja >/dev/null; then
        gen=(-G Ninja)
    elif ! command -v make >/dev/null; then
        failed "neither ninja nor make is installed"
        finish
    fi
fi
if ! cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUTC_WITH_CUDA=ON \
        "${cmake_args[@]}" >"$out/configure.log" 2>&1; then
    tail -40 "$out/configure.log"
    failed "configure"
    finish
fi
grep -E "UTC: GPU support|CUDA compiler identification|Found MPI_C|Found hwloc" "$out/configure.log"
rm -f "$out/configure.log"
# every program a gpu-labelled test runs from this build that is a target of it
test_targets=$(cd "$build" && ctest -N -L '^gpu$' --show-only=json-v1 2>/dev/null | python3 -c '
import json, os, re, subprocess, sys
build = sys.argv[1]
helps = subprocess.run(["cmake", "--build", build, "--target", "help"], capture_output=True,
                       text=True).stdout
known = {m.group(1) for m in re.finditer(r"^(?:\.\.\. )?([A-Za-z0-9_.+-]+)(?:: \w+)?$", helps, re.M)}
found = set()
for t in json.load(sys.stdin)["tests"]:
    for a in t.get("command", []):
        if a.startswith(build + "/") and os.path.basename(a) in known:
            found.add(os.path.basename(a))
print(" ".join(sorted(found)))
' "$build") || { failed "listing the GPU tests' programs (ctest --show-only=json-v1)"; finish; }
extra=$(for t in $test_targets; do case " $(echo $targets) " in *" $t "*) ;; *) echo "$t" ;; esac; done)
[ -z "$extra" ] || echo "gpu-check: the gpu tests also need: $(echo $extra)"
targets="$targets $extra"
if ! cmake --build "$build" -j "$jobs" --target $targets >"$build/gpu-check-build.log" 2>&1; then
    tail -60 "$build/gpu-check-build.log"
    failed "build (log: $build/gpu-check-build.log)"
    finish
fi
echo "gpu-check: built $(echo $targets | wc -w) targets"

step "3. GPU tests (UTC_REQUIRE_GPU=1: a skip is a failure)"
export UTC_REQUIRE_GPU=1
(cd "$build" && ctest -N -L '^gpu$' | tail -n 1)
if [ "$dry" = 1 ]; then
    (cd "$build" && ctest -N -L '^gpu$' | grep 'Test *#')
    echo "gpu-check: --dry-run: the tests above are not run"
else
    # A test that hangs must not hold the check: ctest's time limit kills utcrun, but the
    # ranks mpirun started would keep ctest's pipe open (ctest then waits for them until
    # the whole check is killed); mpirun's own --timeout ends the job, ranks and all.
    mpirun_args=${UTC_MPIRUN_ARGS-}
    export UTC_MPIRUN_ARGS="${mpirun_args:+$mpirun_args }--timeout $(( test_timeout > 10 ? test_timeout - 5 : test_timeout ))"
    # The GPU module's suites first, alone (one of them checks that two threads' kernels
    # overlap on the device: other processes' kernels would time-slice it); then the rest.
    (cd "$build" && ctest -L '^gpu$' -R '^gpu_(kernels|data|pipeline)_np' -j 1 --timeout "$test_timeout" \
        --output-on-failure --output-junit "$out/ctest-gpu-module.xml")
    rc1=$?
    (cd "$build" && ctest -L '^gpu$' -E '^gpu_(kernels|data|pipeline)_np' -j "$(( jobs > 8 ? 8 : jobs ))" \
        --timeout "$test_timeout" --output-on-failure --output-junit "$out/ctest-gpu-apps.xml")
    rc2=$?
    UTC_MPIRUN_ARGS=$mpirun_args
    [ "$rc1" = 0 ] && [ "$rc2" = 0 ] || failed "GPU tests (ctest exited $rc1, $rc2)"
    skipped=$(cat "$out"/ctest-gpu-*.xml 2>/dev/null | grep -c '<skipped' || true)
    [ "$skipped" = 0 ] || failed "$skipped GPU test(s) skipped: none may be"
fi

# ---- 4. benchmarks ----
# sizes: RYR's frame and frame counts, the micro-benchmarks' arguments (--small: a rehearsal)
ryr_size=1024x1024 ryr_frames=50 farm_frames=50
gpu_args=() conduit_args=(--quick) overlap_args=()
if [ "$small" = 1 ]; then
    ryr_size=128x96 ryr_frames=6 farm_frames=12
    gpu_args=(--quick --max-bytes 65536 --max-tasks 2 --steps 2)
    conduit_args=(--quick --reps 2 --max-bytes 65536)
    overlap_args=(--items 20 --bytes 65536 --reps 1)
fi
if [ "$bench" = 1 ] && [ "$dry" = 0 ]; then
    if want ryr; then
        step "4. RYR at $ryr_size, $ryr_frames frames (frames/s; the dissertation's table 4.7 is theirs)"
        printf '%-6s %10s %10s   %s\n' preset "fps (ours)" "theirs" "(table 4.7: 50 rounds at 1024x1024)"
        for p in v4 v5 auto; do
            line=$(timeout 180 scripts/utcrun -np 1 "$build/apps/ryr/ryr" --preset "$p" \
                --size "$ryr_size" --frames "$ryr_frames" --orbit 10 --no-output --json </dev/null \
                2>"$probe_dir/ryr.err" | tail -n 1)
            if ! grep -q '"fps": ' <<<"$line"; then
                cat "$probe_dir/ryr.err"
                failed "ryr --preset $p at $ryr_size"
                continue
            fi
            echo "$line" >>"$out/ryr.jsonl"
            fps=$(sed -n 's/.*"fps": \([0-9.]*\).*/\1/p' <<<"$line")
            theirs=$(case $p in v4) echo 4.048 ;; v5) echo 5.475 ;; *) echo - ;; esac)
            printf '%-6s %10s %10s\n' "$p" "$fps" "$theirs"
        done
    fi
    if want farm; then
        step "4. the farm of both kinds: CPU threads, a GPU thread, and both (--mixed), $ryr_size"
        # one farm task beside the pipeline's other stages: all the cores' CPU threads, one GPU
        # thread, or --mixed (the GPU thread and a CPU thread on each core it leaves)
        ncores=$(nproc)
        for farm in cpu gpu mixed; do
            case $farm in
                cpu) args=(--ray-threads "$ncores") ;;
                gpu) args=(--gpu) ;;
                mixed) args=(--mixed --verify) ;;
            esac
            line=$(timeout 300 scripts/utcrun -np 1 "$build/apps/ryr/ryr" --preset v3 --farm 1 \
                "${args[@]}" --size "$ryr_size" --frames "$farm_frames" --orbit 10 --no-output --json </dev/null \
                2>"$probe_dir/ryr.err" | tail -n 1)
            if ! grep -q '"fps": ' <<<"$line"; then
                cat "$probe_dir/ryr.err"
                failed "ryr --farm 1 ($farm) at $ryr_size"
                continue
            fi
            echo "{\"farm\": \"$farm\", ${line#\{}" >>"$out/farm-mixed.jsonl"
            printf '%-6s %10s fps  %s\n' "$farm" "$(sed -n 's/.*"fps": \([0-9.]*\).*/\1/p' <<<"$line")" \
                "$(grep -o '"rows_cpu": [0-9]*, "rows_gpu": [0-9]*' <<<"$line" | head -n 1)"
        done
        if [ "$(grep -c . "$out/farm-mixed.jsonl" 2>/dev/null)" = 3 ]; then
            python3 - "$out/farm-mixed.jsonl" <<'PY' || failed "the mixed farm's --verify"
import json, sys
r = {j["farm"]: j for j in map(json.loads, open(sys.argv[1]))}
c, g, m = r["cpu"]["fps"], r["gpu"]["fps"], r["mixed"]["fps"]
print("mixed / better of the two: %.2f (target >= 1); mixed / sum: %.2f (target >= 0.9)"
      % (m / max(c, g), m / (c + g)))
sys.exit(0 if r["mixed"]["verified"] else 1)
PY
        fi
    fi
    # ---- 4. RYR --preset gpu (issue 35): a block of its own ----
    if want ryr-gpu; then
        step "4. RYR --preset gpu against v5 and auto, and each GPU stage's kernels alone, $ryr_size"
        # taking turns (every run once, then again), best of 2; the stages alone: ryr
        # --stage-alone, the gpu preset's kernels on device buffers with no conduits
        ryr_bin=$build/apps/ryr/ryr
        for rep in 1 2; do
            for run in gpu v5 auto alone:raytrace alone:yuv alone:rotate; do
                case $run in
                    alone:*) args=(--preset gpu --stage-alone "${run#alone:}") ;;
                    *) args=(--preset "$run") ;;
                esac
                line=$(timeout 180 scripts/utcrun -np 1 "$ryr_bin" "${args[@]}" --size "$ryr_size" \
                    --frames "$ryr_frames" --orbit 10 --no-output --json </dev/null \
                    2>"$probe_dir/ryr.err" | tail -n 1)
                if ! grep -q '"fps": ' <<<"$line"; then
                    cat "$probe_dir/ryr.err"
                    failed "ryr ${args[*]} at $ryr_size"
                    continue
                fi
                echo "$line" >>"$out/ryr-gpu.jsonl"
                printf '%-15s %10s fps  %s\n' "$run" "$(sed -n 's/.*"fps": \([0-9.]*\).*/\1/p' <<<"$line")" \
                    "$(grep -o '"pace": "[a-z]*"' <<<"$line")"
            done
        done
        if [ -s "$out/ryr-gpu.jsonl" ]; then
            python3 - "$out/ryr-gpu.jsonl" <<'PY' || failed "RYR --preset gpu's figures"
import json, sys
best = {}
for r in map(json.loads, open(sys.argv[1])):
    k = "alone:" + r["stage_alone"] if "stage_alone" in r else r["preset"]
    best[k] = max(best.get(k, 0), r["fps"])
alone = {k: v for k, v in best.items() if k.startswith("alone:")}
g = best["gpu"]
slowest = min(alone, key=alone.get)
print("best of 2: gpu %.1f fps, v5 %.1f, auto %.1f; slowest stage alone: %s %.1f fps"
      % (g, best["v5"], best["auto"], slowest[6:], alone[slowest]))
print("gpu / v5 %.2f, gpu / auto %.2f (target > 1); slowest alone / gpu %.2f (target <= 1.3)"
      % (g / best["v5"], g / best["auto"], alone[slowest] / g))
PY
        fi
    fi
    if want bandwidth; then
        step "4. utc_bench_gpu (bandwidth per memory kind, copy counts, concurrent kernels)"
        if timeout 300 scripts/utcrun -np 1 "$build/apps/microbench/utc_bench_gpu" --json \
                ${gpu_args[@]+"${gpu_args[@]}"} </dev/null \
                >"$out/bench-gpu.json"; then
            python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$out/bench-gpu.json" ||
                failed "utc_bench_gpu's JSON is not readable"
        else
            failed "utc_bench_gpu exited $?"
        fi
    fi
    if want conduit; then
        step "4. utc_bench_gpu_conduit, 2 ranks (device conduits beside cudaMemcpy D2D, pinned D2H, raw MPI)"
        if timeout 90 scripts/utcrun -np 2 "$build/apps/microbench/utc_bench_gpu_conduit" \
                "${conduit_args[@]}" --json \
                </dev/null >"$out/bench-gpu-conduit.json"; then
            python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$out/bench-gpu-conduit.json" ||
                failed "utc_bench_gpu_conduit's JSON is not readable"
        else
            failed "utc_bench_gpu_conduit exited $? (77: no GPU, a failure here)"
        fi
    fi
    if want overlap; then
        step "4. utc_bench_gpu_overlap ($([ "$small" = 1 ] && echo 20 || echo 200) items; depth 1, 2, 3 against each stage alone)"
        if timeout 300 scripts/utcrun -np 1 "$build/apps/microbench/utc_bench_gpu_overlap" --json \
                ${overlap_args[@]+"${overlap_args[@]}"} \
                </dev/null >"$out/bench-gpu-overlap.json"; then
            python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$out/bench-gpu-overlap.json" ||
                failed "utc_bench_gpu_overlap's JSON is not readable"
        else
            failed "utc_bench_gpu_overlap exited $? (77: no GPU, a failure here)"
        fi
    fi
fi
step "done"
finish
