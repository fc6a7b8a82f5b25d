#!/usr/bin/env bash
# bench-trace-plot.sh: how long utc-trace-plot takes, and how much memory, on synthetic
# traces of 1k to 1M spans; the plotter of a baseline revision against this tree's, in the
# same run (a benchmark, not a test).
#
#   scripts/bench-trace-plot.sh [--sizes N,N,...] [--reps N] [--baseline REV]
#                               [--old-timeout S] [--work DIR]
#
#   --sizes N,...     spans per trace (default 1000,8000,20000,1000000)
#   --reps N          runs per plotter and size, taking turns; the fastest is reported,
#                     with its peak memory (default 3)
#   --baseline REV    the revision whose scripts/utc-trace-plot is the baseline (default main)
#   --old-timeout S   the baseline's runs are killed after S seconds and reported as "> S";
#                     a run over 30 s is not repeated, and after a kill larger sizes are
#                     not tried (default 300)
#   --work DIR        keep the traces and pictures in DIR (default: a temporary folder,
#                     removed at the end)
#
# A trace: 4 ranks of 4 task threads and a main thread each, over 2 s; each task thread
# runs one task span with its share of the spans inside it (conduit, rma, barrier,
# collective and gpu spans of random length at random places in their slot), in the shape
# UTC_TRACE writes. Time and peak memory come from /usr/bin/time -v (wall clock, "Maximum
# resident set size"); each plot runs under the python3 that has matplotlib.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
sizes=1000,8000,20000,1000000 reps=3 baseline=main old_timeout=300 work="" work_kept=""
while [ $# -gt 0 ]; do
    case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --old-timeout) old_timeout=$2; shift 2 ;;
    --work) work=$2 work_kept=1; shift 2 ;;
    -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-trace-plot: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[[ "$sizes" =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "bench-trace-plot: --sizes '$sizes': give N,N,..." >&2; exit 2; }
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || { echo "bench-trace-plot: --reps '$reps': give a count >= 1" >&2; exit 2; }
[[ "$old_timeout" =~ ^[1-9][0-9]*$ ]] || { echo "bench-trace-plot: --old-timeout '$old_timeout': give seconds >= 1" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-trace-plot: needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 1; }
py=""
for p in python3 /usr/bin/python3; do
    if "$p" -c "import matplotlib, numpy" 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "bench-trace-plot: needs python3-matplotlib" >&2; exit 1; }

if [ -z "$work" ]; then
    work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
old=$work/utc-trace-plot.$baseline new=$root/scripts/utc-trace-plot
git -C "$root" show "$baseline:scripts/utc-trace-plot" > "$old" || {
    echo "bench-trace-plot: no scripts/utc-trace-plot at '$baseline'" >&2; exit 1; }

# gen N FILE: a synthetic trace of N spans (N >= 25: the mains' and tasks' spans first)
gen() {
    "$py" - "$1" "$2" <<'PY'
import random, sys
n, path = int(sys.argv[1]), sys.argv[2]
ranks, threads, length = 4, 4, 2e6  # us
rnd = random.Random(n)
kinds = [("conduit_write", "conduit"), ("conduit_read", "conduit"), ("conduit_wait", "conduit"),
         ("rma_load", "rma"), ("rma_store", "rma"), ("rma_barrier", "rma"),
         ("barrier", "barrier"), ("allreduce", "collective"), ("gpu_h2d", "gpu")]
span = ('{"name":"%s","cat":"%s","ph":"X","pid":%d,"tid":%d,"ts":%.3f,"dur":%.3f,'
        '"args":{"task":%d,"bytes":%d}}')
lines = []
for r in range(ranks):
    lines.append('{"name":"process_name","ph":"M","pid":%d,"tid":0,"args":{"name":"rank %d (bench)"}}' % (r, r))
    lines.append('{"name":"thread_name","ph":"M","pid":%d,"tid":0,"args":{"name":"main"}}' % r)
    lines.append(span % ("world_barrier", "barrier", r, 0, 0.0, 40.0, -1, -1))
    lines.append(span % ("task_wait", "runtime", r, 0, 50.0, length - 50.0, 0, -1))
    for t in range(1, threads + 1):
        lines.append('{"name":"thread_name","ph":"M","pid":%d,"tid":%d,"args":{"name":'
                     '"worker #0 thread %d (local %d)"}}' % (r, t, t - 1, t - 1))
        lines.append(span % ("worker.run", "task", r, t, 60.0, length - 80.0, 0, -1))
inner = n - 3 * ranks - ranks * threads
with open(path, "w") as f:
    f.write('{"traceEvents":[\n' + ",\n".join(lines))
    for i in range(ranks * threads):
        r, t = divmod(i, threads)
        k = inner // (ranks * threads) + (1 if i < inner % (ranks * threads) else 0)
        slot = (length - 200.0) / max(k, 1)
        for j in range(k):
            name, cat = kinds[rnd.randrange(len(kinds))]
            dur = slot * rnd.uniform(0.02, 0.7)
            ts = 100.0 + j * slot + rnd.uniform(0, slot - dur)
            f.write(",\n" + span % (name, cat, r, t + 1, ts, dur, 0, 64))
    f.write('\n],\n"displayTimeUnit":"ms",\n"otherData":{"utc_version":"bench","ranks":%d,'
            '"clock_sync":"none","clock_sync_rtt_us":0.0,"events":%d,"dropped_events":0}}\n'
            % (ranks, n))
PY
}

# run PLOTTER TRACE OUT LIMIT: "seconds MiB status" of one plot, killed after LIMIT s
run() {
    local log=$work/time.log st=0
    /usr/bin/time -v -o "$log" timeout --foreground -s KILL "$4" "$py" "$1" "$2" "$3" > /dev/null 2>&1 || st=$?
    awk -v st="$st" -F': ' '
        /Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0
                                   for (i = 1; i <= n; i++) s = s * 60 + p[i] }
        /Maximum resident set size/ { m = $2 / 1024 }
        END { printf "%.2f %.0f %d\n", s, m, st }' "$log"
}

echo "bench-trace-plot: baseline $baseline's plotter against $(git -C "$root" rev-parse --short HEAD)'s"
echo "  (uncommitted changes included), $reps runs each taking turns, fastest kept; python: $py"
echo "load before: $(uptime)"
printf "%9s %8s | %20s | %20s | %8s\n" spans "file MB" "baseline s (peak MB)" "new s (peak MB)" speedup
old_dead=""
for n in ${sizes//,/ }; do
    trace=$work/trace-$n.json
    gen "$n" "$trace"
    mb=$(du -m "$trace" | cut -f1)
    best_old="" best_new="" note=""
    for ((rep = 1; rep <= reps; rep++)); do
        if [ -z "$old_dead" ] && { [ -z "$best_old" ] || awk -v t="${best_old%% *}" 'BEGIN { exit !(t <= 30) }'; }; then
            read -r s m st <<<"$(run "$old" "$trace" "$work/old-$n.png" "$old_timeout")"
            if [ "$st" = 137 ] || [ "$st" = 124 ]; then
                old_dead=$n best_old="> $old_timeout $m"; note="baseline killed after ${old_timeout} s"
            elif [ "$st" != 0 ]; then
                best_old="failed $m"; note="baseline exit $st"
            elif [ -z "$best_old" ] || awk -v a="$s" -v b="${best_old%% *}" 'BEGIN { exit !(a < b) }'; then
                best_old="$s $m"
            fi
        fi
        read -r s m st <<<"$(run "$new" "$trace" "$work/new-$n.png" 600)"
        [ "$st" = 0 ] || { echo "bench-trace-plot: the new plotter failed on $n spans (exit $st)" >&2; exit 1; }
        if [ -z "$best_new" ] || awk -v a="$s" -v b="${best_new%% *}" 'BEGIN { exit !(a < b) }'; then
            best_new="$s $m"
        fi
    done
    if [ -z "$best_old" ]; then
        best_old="not run"; note="baseline killed at $old_dead spans"
        cell_old="not run"
    elif [[ "$best_old" == ">"* ]]; then
        cell_old=$(printf "> %s (%s)" "$old_timeout" "${best_old##* }")
    elif [[ "$best_old" == failed* ]]; then
        cell_old=$(printf "failed (%s)" "${best_old##* }")
    else
        cell_old=$(printf "%.2f (%s)" "${best_old% *}" "${best_old#* }")
    fi
    speed=$(awk -v o="$best_old" -v n="${best_new%% *}" 'BEGIN {
        split(o, a, " "); if (a[1] == ">") printf "> %.0fx", a[2] / n
        else if (a[1] + 0 > 0) printf "%.1fx", a[1] / n; else printf "-" }')
    printf "%9d %8s | %20s | %20s | %8s %s\n" "$n" "$mb" "$cell_old" \
        "$(printf "%.2f (%s)" "${best_new% *}" "${best_new#* }")" "$speed" "$note"
    [ -n "$work_kept" ] || rm -f "$trace"
done
echo "load after: $(uptime)"
