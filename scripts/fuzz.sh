#!/usr/bin/env bash
# Fuzz the input parsers with libFuzzer (doc/ROBUSTNESS.md, "Fuzzing").
#
#   scripts/fuzz.sh SECONDS [HARNESS...]
#
# Configures a clang build in build-fuzz (-DUTC_FUZZ=ON -DUTC_WITH_CUDA=OFF), builds the
# harnesses of tests/fuzz (default: all: scene pnm ryr_options edges app_cli cluster_cli) and
# runs each for SECONDS, starting from its seed corpus tests/fuzz/corpus/NAME and its
# saved crash inputs tests/fuzz/regressions/NAME. New inputs that reach new code go to
# build-fuzz/fuzz-corpus/NAME (merge the useful ones into the seed corpus by hand);
# crashing inputs to build-fuzz/fuzz-artifacts/NAME/; the log to build-fuzz/fuzz-logs/.
#
# Environment: FUZZ_JOBS harnesses at a time (default 1), CC (default clang).
# Exits 1 when a harness found a crash, a leak, a timeout or an out-of-memory.
set -euo pipefail
cd "$(dirname "$0")/.."

all=(scene pnm ryr_options edges app_cli cluster_cli)
if [ $# -lt 1 ] || ! [[ "$1" =~ ^[0-9]+$ ]] || [ "$1" -lt 1 ]; then
    echo "usage: scripts/fuzz.sh SECONDS [HARNESS...] (harnesses: ${all[*]})" >&2
    exit 2
fi
seconds=$1
shift
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=("${all[@]}")
for h in "${harnesses[@]}"; do
    [ -f "tests/fuzz/fuzz_$h.c" ] || { echo "fuzz: no harness '$h' (${all[*]})" >&2; exit 2; }
done
jobs=${FUZZ_JOBS:-1}
cc=${CC:-clang}
build=build-fuzz

echo "fuzz: configuring $build with $cc"
mkdir -p "$build"
blog=$build/fuzz-build.log
cmake -S . -B "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DUTC_FUZZ=ON -DUTC_WITH_CUDA=OFF >"$blog" 2>&1 || {
    cat "$blog"; echo "fuzz: configure failed" >&2; exit 1; }
targets=()
for h in "${harnesses[@]}"; do targets+=("fuzz_$h"); done
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" >>"$blog" 2>&1 || {
    tail -40 "$blog"; echo "fuzz: build failed (log in $blog)" >&2; exit 1; }

# Options per harness: the longest input worth trying, and whether the parser prints.
fuzz_args() {
    case "$1" in
        scene) echo "-max_len=8192 -dict=tests/fuzz/scene.dict" ;;
        pnm) echo "-max_len=4096" ;;
        edges) echo "-max_len=4096" ;;
        ryr_options) echo "-max_len=1024 -dict=tests/fuzz/ryr_options.dict" ;;
        app_cli) echo "-max_len=1024 -close_fd_mask=3 -dict=tests/fuzz/app_cli.dict" ;;
        cluster_cli) echo "-max_len=1024 -dict=tests/fuzz/cluster_cli.dict" ;;
    esac
}

mkdir -p "$build/fuzz-logs"
run_one() {
    local h=$1
    local corpus=$build/fuzz-corpus/$h artifacts=$build/fuzz-artifacts/$h/
    local log=$build/fuzz-logs/$h.log
    mkdir -p "$corpus" "$artifacts"
    local seeds=(tests/fuzz/corpus/"$h")
    [ -d "tests/fuzz/regressions/$h" ] && seeds+=(tests/fuzz/regressions/"$h")
    local rc=0
    # shellcheck disable=SC2046
    "$build/tests/fuzz/fuzz_$h" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$artifacts" $(fuzz_args "$h") \
        "$corpus" "${seeds[@]}" >"$log" 2>&1 || rc=$?
    local runs cov
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
    cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 || true)
    local found
    found=$(find "$artifacts" -type f | wc -l)
    if [ "$rc" = 0 ] && [ "$found" = 0 ]; then
        echo "fuzz: $h: ok, ${runs:-?} runs in ${seconds}s, ${cov:-cov: ?} (log $log)"
    else
        echo "fuzz: $h: FOUND $found input(s) in $artifacts (exit $rc; log $log)"
        grep -E '^==[0-9]+==ERROR|SUMMARY|fuzz invariant|runtime error' "$log" | head -5 |
            sed 's/^/    /'
        return 1
    fi
}

rm -f "$build"/fuzz-logs/*.failed
for h in "${harnesses[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
        wait -n || true
    done
    (run_one "$h" || touch "$build/fuzz-logs/$h.failed") &
done
wait
for h in "${harnesses[@]}"; do
    [ ! -e "$build/fuzz-logs/$h.failed" ] || exit 1
done
exit 0
