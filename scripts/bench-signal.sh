#!/usr/bin/env bash
# bench-signal.sh: a token round a ring of ranks with global shared data's signals
# (utc_gdata_rstore_signal / utc_gdata_wait_until) and with conduits, at 2 and 3 ranks
# (apps/microbench/utc_bench_signal: per-hop time, best and median of its reps), and
# optionally the same against a baseline build and Task Bench's gshared path, taking turns.
#
#   scripts/bench-signal.sh [--build DIR] [--base DIR] [--rounds N] [--ranks "2 3"]
#                           [--taskbench]
#
# --build DIR  the build to measure (default build/)
# --base DIR   a baseline build (e.g. of main) with utc_bench_signal (and utc_taskbench):
#              each round runs the baseline and then the build, so load changes touch
#              both alike
# --rounds N   rounds (default 3); each prints one line per binary and rank count
# --taskbench  also run utc_taskbench --comm gshared at 2 ranks (stencil_1d, 20000 steps,
#              -iter 256, 1024, 4096), elapsed seconds per run
# At the end: the best and the median over the rounds of each figure.
# The load average is printed before and after.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build base="" rounds=3 ranks="2 3" taskbench=0
die() { echo "bench-signal: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --build) build=$2; shift 2 ;;
        --base) base=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --ranks) ranks=$2; shift 2 ;;
        --taskbench) taskbench=1; shift ;;
        -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
done
bench=apps/microbench/utc_bench_signal
tb=apps/taskbench/utc_taskbench
[ -x "$build/$bench" ] || die "no $build/$bench (build it: cmake --build build --target utc_bench_signal)"
[ -z "$base" ] || [ -x "$base/$bench" ] || die "no $base/$bench"
builds=("$build")
[ -z "$base" ] || builds=("$base" "$build")
utcrun=$root/scripts/utcrun

echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= rounds; r++)); do
    for np in $ranks; do
        # about a second per method and rep whatever the per-hop time
        hops=$([ "$np" -le 2 ] && echo 200000 || echo 30000)
        for b in "${builds[@]}"; do
            line=$(timeout 600 "$utcrun" -np "$np" "$b/$bench" --hops "$hops" --reps 5 --json |
                   tail -1)
            echo "round $r np $np $b: $line"
        done
    done
    if [ "$taskbench" = 1 ]; then
        for it in 256 1024 4096; do
            for b in "${builds[@]}"; do
                [ -x "$b/$tb" ] || die "no $b/$tb (configure with -DUTC_TASKBENCH_DIR=...)"
                t=$(timeout 300 "$utcrun" -np 2 "$b/$tb" -steps 20000 -width 2 \
                        -type stencil_1d -kernel compute_bound -iter "$it" --threads 1 \
                        --comm gshared 2>&1 | awk '/^Elapsed Time/ {print $3}')
                echo "round $r taskbench gshared np 2 iter $it $b: elapsed $t s"
            done
        done
    fi
done | tee "${TMPDIR:-/tmp}/bench-signal.$$"
# best and median over the rounds of each figure
awk '
    /^round .* np [0-9]+ .*: \{/ {
        match($0, /np [0-9]+ [^:]*/); key = "ring " substr($0, RSTART, RLENGTH)
        n = split($0, kv, /[,{}]/)
        for (i = 1; i <= n; i++) if (split(kv[i], f, ":") == 2 && f[1] ~ /_us"$/) {
            gsub(/"/, "", f[1]); v[key " " f[1]] = v[key " " f[1]] " " f[2] }
    }
    /^round .* taskbench/ {
        match($0, /iter [0-9]+ [^:]*/); v["taskbench " substr($0, RSTART, RLENGTH) " elapsed_s"] = \
            v["taskbench " substr($0, RSTART, RLENGTH) " elapsed_s"] " " $(NF - 1)
    }
    END {
        for (k in v) {
            n = split(substr(v[k], 2), a, " ")
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) {
                t = a[i]; a[i] = a[j]; a[j] = t }
            printf "%s: best %s median %s (%d rounds)\n", k, a[1], a[int((n + 1) / 2)], n
        }
    }' "${TMPDIR:-/tmp}/bench-signal.$$" | sort
rm -f "${TMPDIR:-/tmp}/bench-signal.$$"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
