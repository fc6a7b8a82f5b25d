#!/usr/bin/env bash
# check_launch_failures.sh UTCRUN BUILD: on cudahost (LD_LIBRARY_PATH set by the test), each
# GPU program whose kernel launch CUDA refuses (UTC_CUDAHOST_FAIL_LAUNCH=KERNEL: the
# launch fails with cudaErrorLaunchOutOfResources) stops with an error that names CUDA's:
# an exit status from 1 to 125 other than 77 (no signal's death), "cudaErrorLaunchOutOfResources"
# in what it printed, and no result printed (no JSON line with "seconds" or "fps"). Until 2026-11-27 the cluster apps, the GPU
# benchmark and RYR's GPU-resident raytrace took such a launch for success and went on
# with results never computed.
set -u
utcrun=$1 build=$2
tmp=$(mktemp -d /tmp/utc-launch-fail-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failures=0 runs=0
# expect KERNEL NP PROGRAM ARGS...
expect() {
    local kernel=$1 np=$2
    shift 2
    runs=$((runs + 1))
    UTC_CUDAHOST_FAIL_LAUNCH=$kernel timeout 120 "$utcrun" -np "$np" "$@" >"$tmp/out" 2>&1 </dev/null
    local rc=$? why=""
    if [ "$rc" -lt 1 ] || [ "$rc" -gt 125 ] || [ "$rc" = 77 ] || [ "$rc" = 124 ]; then
        why="exit status $rc"
    elif ! grep -q cudaErrorLaunchOutOfResources "$tmp/out"; then
        why="CUDA's error is not named"
    elif grep -qE '^\{.*"(seconds|fps)": ?[0-9]' "$tmp/out"; then
        why="a result was printed"
    fi
    if [ -n "$why" ]; then
        failures=$((failures + 1))
        echo "FAILED: $kernel refused, $(basename "$1") ${*:2}: $why"
        tail -n 20 "$tmp/out"
    else
        echo "ok: $kernel refused: $(basename "$1") stopped ($rc) and named CUDA's error"
    fi
}
apps=$build/apps
for app in mm:mm_kernel heat:heat_kernel kmeans:km_kernel nbody:nb_kernel mc:mc_kernel; do
    expect "${app#*:}" 2 "$apps/${app%%:*}/${app%%:*}" --impl gpu --size S --json
done
expect md5_kernel 1 "$apps/md5/md5" --impl gpu --size S --threads 1 --json
expect start_kernel 1 "$apps/bfs/bfs" --impl gpu --size S --threads 1 --json
expect level_kernel 1 "$apps/bfs/bfs" --impl gpu --size S --threads 1 --json
expect render_kernel 1 "$apps/raytrace/raytrace" --impl gpu --size S --threads 1 --json
expect yuv_kernel 1 "$apps/yuv/yuv" --impl gpu --size S --threads 1 --json
expect rotate_kernel 1 "$apps/rotate/rotate" --impl gpu --size S --threads 1 --json
ryr=$apps/ryr/ryr
small=(--size 48x32 --frames 2 --no-output --json)
for k in render_kernel yuv_kernel rotate_kernel; do
    expect "$k" 2 "$ryr" --preset gpu "${small[@]}"
done
expect render_kernel 1 "$ryr" --preset v5 "${small[@]}"
expect render_kernel 1 "$ryr" --preset v3 --farm 2 --mixed "${small[@]}"
for stage in raytrace:render_kernel yuv:yuv_kernel rotate:rotate_kernel; do
    expect "${stage#*:}" 1 "$ryr" --preset gpu --stage-alone "${stage%%:*}" "${small[@]}"
done
expect nbody_step 1 "$apps/microbench/utc_bench_gpu" --quick --max-bytes 4096 --max-tasks 1 --steps 1
expect item_kernel 1 "$apps/microbench/utc_bench_gpu_overlap" --items 4 --bytes 4096 --reps 1
expect saxpy_kernel 1 "$apps/examples/example_gpu_task" --n 1000
[ "$failures" = 0 ] || { echo "FAILED: $failures of $runs runs"; exit 1; }
echo "check_launch_failures: $runs runs: passed"
