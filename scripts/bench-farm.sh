#!/usr/bin/env bash
# bench-farm.sh [--build DIR] [--np R] [--jobs N] [--workers N] [--work-us US] [--spread S]
#               [--reps N] [--credits N] [--ahead-credits N|none] [--base-build DIR]
#
# The user guide's farm (doc/guide/conduits.md, "Farms"; apps/microbench/utc_bench_farm.c)
# in two forms, in one run, taking turns run after run so load changes touch both alike:
#   plain: the guide's worker loop as written (read a job, work, write its result), on the
#          jobs conduit's default credit window (or --credits N);
#   ahead: the same with the next job read ahead by hand (utc_conduit_iread of the next
#          before working on the current one), on a window of --ahead-credits (default 1:
#          a reader asks only as it reads, as share mode did before credit windows; "none"
#          passes no window, for a build that has none).
# Each run has UTC_STATS=1: a worker's idle share is its "wait%" in the statistics (time
# blocked in UTC calls over its run), averaged over the workers. Prints, per form, the
# best and median seconds of --reps runs, the median idle share and the median CPU time
# the dispatcher used (what its waiting takes from the worker beside it), then the ratio
# plain / ahead of the best times. Defaults: 2 ranks, 2000 jobs of 1000 us of CPU +-50%, 2 workers (one per
# rank), 5 reps. --base-build DIR adds both forms built from another tree (an older UTC,
# e.g. main's, with utc_bench_farm.c added), run with no credit option, in the same turns.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build np=2 jobs=2000 workers=2 work_us=1000 spread=0.5 reps=5 credits= ahead_credits=1
base=
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=${2:?--build needs a folder}; shift 2 ;;
    --np) np=${2:?--np needs a number}; shift 2 ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
    --workers) workers=${2:?--workers needs a number}; shift 2 ;;
    --work-us) work_us=${2:?--work-us needs a number}; shift 2 ;;
    --spread) spread=${2:?--spread needs a number}; shift 2 ;;
    --reps) reps=${2:?--reps needs a number}; shift 2 ;;
    --credits) credits=${2:?--credits needs a number}; shift 2 ;;
    --ahead-credits) ahead_credits=${2:?--ahead-credits needs a number or none}; shift 2 ;;
    --base-build) base=${2:?--base-build needs a folder}; shift 2 ;;
    -h | --help) sed -n '2,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-farm.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
case $reps in '' | *[!0-9]* | 0) echo "bench-farm.sh: --reps needs a positive number" >&2; exit 2 ;; esac
prog=$build/apps/microbench/utc_bench_farm
[ -x "$prog" ] || { echo "bench-farm.sh: $prog is missing (build first, or give --build)" >&2; exit 1; }
base_prog=${base:+$base/apps/microbench/utc_bench_farm}
[ -z "$base" ] || [ -x "$base_prog" ] || { echo "bench-farm.sh: $base_prog is missing" >&2; exit 1; }

common=(--jobs "$jobs" --workers "$workers" --work-us "$work_us" --spread "$spread" --json)
plain_args=(--form plain ${credits:+--credits "$credits"})
ahead_args=(--form ahead)
[ "$ahead_credits" = none ] || ahead_args+=(--credits "$ahead_credits")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# one run of PROG: "seconds idle%" (idle: the workers' mean wait% in UTC_STATS)
run() {
    local p=$1
    shift
    UTC_STATS=1 "$root/scripts/utcrun" -np "$np" "$p" "${common[@]}" "$@" >"$tmp/out" 2>"$tmp/err" || {
        cat "$tmp/out" "$tmp/err" >&2; echo "bench-farm.sh: a run failed" >&2; exit 1; }
    python3 - "$tmp/out" "$tmp/err" <<'EOF'
import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
assert r["errors"] == 0, r
waits = [float(l.split()[-1]) for l in open(sys.argv[2])
         if l.startswith("[utc stats]") and l.split()[2] == "worker"]
assert waits, "no worker line in UTC_STATS's table"
print("%.4f %.2f %.4f" % (r["seconds"], sum(waits) / len(waits), r.get("dispatch_cpu_s", -1)))
EOF
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); $np ranks, $jobs jobs of $work_us us +-$(python3 -c "print(round($spread*100))")%, $workers workers, best of $reps"
echo "command: scripts/bench-farm.sh --build $build --np $np --jobs $jobs --workers $workers --work-us $work_us --spread $spread --reps $reps${credits:+ --credits $credits} --ahead-credits $ahead_credits${base:+ --base-build $base}"
plain=() ahead=() bplain=() bahead=()
for _ in $(seq "$reps"); do
    plain+=("$(run "$prog" "${plain_args[@]}")")
    ahead+=("$(run "$prog" "${ahead_args[@]}")")
    if [ -n "$base" ]; then
        bplain+=("$(run "$base_prog" --form plain)")
        bahead+=("$(run "$base_prog" --form ahead)")
    fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$credits" "$ahead_credits" "$reps" "${plain[@]}" "${ahead[@]}" "${bplain[@]}" "${bahead[@]}" <<'EOF'
import statistics, sys
credits, ahead_credits, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
runs = [tuple(map(float, x.split())) for x in sys.argv[4:]]
sets = [runs[k * n:(k + 1) * n] for k in range(len(runs) // n)]
def show(name, rs):
    best = min(r[0] for r in rs)
    print("%-40s best %7.4f s  median %7.4f s  idle %5.2f%%  dispatcher CPU %.3f s (medians; "
          "runs: %s)" % (name, best, statistics.median(r[0] for r in rs),
                         statistics.median(r[1] for r in rs), statistics.median(r[2] for r in rs),
                         ", ".join("%.3f s %.1f%%" % r[:2] for r in rs)))
    return best
p = show("plain (the guide's loop, credits %s)" % (credits or "default"), sets[0])
a = show("ahead (iread by hand, credits %s)" % ahead_credits, sets[1])
if len(sets) == 4:
    bp = show("base build: plain", sets[2])
    ba = show("base build: ahead", sets[3])
    print("base build: plain / ahead: %.3f; plain / base plain: %.3f" % (bp / ba, p / bp))
print("plain / ahead: %.3f" % (p / a))
EOF
