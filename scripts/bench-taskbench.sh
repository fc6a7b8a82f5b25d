#!/usr/bin/env bash
# bench-taskbench.sh: Task Bench's METG (minimum effective task granularity) for UTC and
# its peers on this machine, in one run.
#
#   scripts/bench-taskbench.sh [--quick] [--reps N] [--steps N] [--patterns LIST]
#                              [--systems LIST] [--max-iter N] [--min-iter N] [--cores N]
#                              [--build DIR] [--taskbench DIR] [--json FILE]
#                              [--chart FILE | --no-chart] [--no-install]
#
# Builds utc_taskbench (CMake, in --build) and the peers from the Task Bench copy, out of
# tree (in --build/taskbench-peers: nothing is written into the copy): MPI nonblock,
# MPI+OpenMP forall, OpenMP tasks, StarPU 1.3 (Debian's libstarpu-dev, installed with
# apt-get when missing unless --no-install). Then, per pattern, sweeps -iter down by powers
# of two (compute_bound kernel, width = cores), the systems taking turns run after run so
# load hits all alike, and keeps the best of --reps repetitions. METG(50%) is computed as
# Task Bench's scripts/chart_metg.py does: efficiency = FLOP/s / peak FLOP/s (the peak is
# the best FLOP/s any system reached in this run), granularity = elapsed x cores / tasks,
# METG = the smallest granularity with efficiency >= 50%, interpolated towards the next
# point. Prints a table (and --json FILE, '-' for stdout) and draws efficiency against
# granularity, one line per system, into --chart (default doc/img/taskbench-metg.png).
#
# Systems: utc (1 rank, cores task threads), utc_ranks (cores ranks, 1 thread each,
# conduits between them), utc_gshared (the same ranks, global shared data between them:
# --comm gshared), mpi (nonblock, cores ranks), mpi_mt (the same nonblock binary with MPI
# initialised at MPI_THREAD_MULTIPLE through Open MPI's OMPI_MPI_THREAD_LEVEL=3: the thread
# level every program whose threads call MPI needs, UTC's included), mpi_openmp (forall,
# 1 rank, cores threads), openmp (tasks, -worker cores), starpu (1 rank, -core cores).
# Patterns: stencil_1d, nearest, spread (default), or any Task Bench -type (spread and
# random_nearest: -radix min(3, width), -period min(3, width / radix), as Task Bench allows).
# --quick: stencil_1d, 500 steps, -iter 4096 down to 1 by factors of 4, 1 repetition.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
usage() { sed -n '2,/^[^#]/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; }
die() { echo "bench-taskbench: $*" >&2; exit 2; }

reps=3 steps=1000 patterns=stencil_1d,nearest,spread
systems=utc,utc_ranks,utc_gshared,mpi,mpi_mt,mpi_openmp,openmp,starpu
max_iter=32768 min_iter=1 factor=2 cores=$(nproc)
build=$root/build-bench taskbench=$root/../shared/third_party/task-bench
json="" chart=$root/doc/img/taskbench-metg.png install=1 quick=0
num() { [[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -ge "${3:-1}" ] || die "$1 needs a number >= ${3:-1}, not '$2'"; }
while [ $# -gt 0 ]; do
    opt=$1
    case "$opt" in
        -h|--help) usage; exit 0 ;;
        --quick) quick=1; shift; continue ;;
        --no-chart) chart=""; shift; continue ;;
        --no-install) install=0; shift; continue ;;
        --reps|--steps|--patterns|--systems|--max-iter|--min-iter|--cores|--build|\
--taskbench|--json|--chart) ;;
        -*) die "unknown option '$opt' (see --help)" ;;
        *) die "unexpected argument '$opt' (see --help)" ;;
    esac
    [ $# -ge 2 ] || die "option $opt needs a value (see --help)"
    case "$opt" in
        --reps) num "$opt" "$2"; reps=$2 ;;
        --steps) num "$opt" "$2"; steps=$2 ;;
        --patterns) patterns=$2 ;;
        --systems) systems=$2 ;;
        --max-iter) num "$opt" "$2"; max_iter=$2 ;;
        --min-iter) num "$opt" "$2"; min_iter=$2 ;;
        --cores) num "$opt" "$2"; cores=$2 ;;
        --build) build=$2 ;;
        --taskbench) taskbench=$2 ;;
        --json) json=$2 ;;
        --chart) chart=$2 ;;
        *) die "unknown option '$opt' (see --help)" ;;
    esac
    shift 2
done
if [ "$quick" = 1 ]; then
    reps=1 steps=500 patterns=stencil_1d max_iter=4096 min_iter=1 factor=4
fi
[ "$min_iter" -le "$max_iter" ] || die "--min-iter $min_iter is above --max-iter $max_iter"
[ -f "$taskbench/core/core_c.h" ] || die "no Task Bench at '$taskbench' (--taskbench DIR)"
taskbench=$(cd "$taskbench" && pwd)
build=$(mkdir -p "$build" && cd "$build" && pwd)
IFS=, read -r -a pattern_list <<<"$patterns"
IFS=, read -r -a system_list <<<"$systems"
for s in "${system_list[@]}"; do
    case "$s" in utc|utc_ranks|utc_gshared|mpi|mpi_mt|mpi_openmp|openmp|starpu) ;;
        *) die "unknown system '$s' (utc, utc_ranks, utc_gshared, mpi, mpi_mt, mpi_openmp," \
               "openmp, starpu)" ;;
    esac
done
for p in "${pattern_list[@]}"; do
    case "$p" in stencil_1d|stencil_1d_periodic|dom|tree|fft|all_to_all|nearest|spread|\
random_nearest|trivial|no_comm) ;;
        *) die "unknown pattern '$p' (a Task Bench -type)" ;; esac
done
has() { [[ ",$systems," == *",$1,"* ]]; }
log() { echo "bench-taskbench: $*" >&2; }

# A Python with matplotlib for the chart (Debian's python3-matplotlib if need be).
py=""
for cand in python3 /usr/bin/python3; do
    if command -v "$cand" >/dev/null && "$cand" -c 'import matplotlib' 2>/dev/null; then
        py=$cand; break
    fi
done
if [ -z "$py" ] && [ -n "$chart" ] && [ "$install" = 1 ]; then
    log "installing python3-matplotlib for the chart"
    apt-get install -y python3-matplotlib >/dev/null 2>&1 || pip install matplotlib >/dev/null 2>&1 || true
    for cand in python3 /usr/bin/python3; do
        "$cand" -c 'import matplotlib' 2>/dev/null && { py=$cand; break; }
    done
fi
if [ -z "$py" ]; then
    [ -z "$chart" ] || log "no matplotlib: no chart (apt-get install python3-matplotlib)"
    chart="" py=python3
fi

# ---- build ----
log "building utc_taskbench in $build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DUTC_TASKBENCH_DIR="$taskbench" \
    >"$build/bench-cmake.log" 2>&1 || { tail -20 "$build/bench-cmake.log"; die "cmake failed"; }
cmake --build "$build" -j"$(nproc)" --target utc_taskbench >"$build/bench-build.log" 2>&1 ||
    { tail -20 "$build/bench-build.log"; die "building utc_taskbench failed"; }
utc_bin=$build/apps/taskbench/utc_taskbench

peers=$build/taskbench-peers
if has starpu && ! [ -f /usr/include/starpu/1.3/starpu.h ]; then
    if [ "$install" = 1 ]; then
        log "installing libstarpu-dev (StarPU 1.3) with apt-get"
        apt-get install -y libstarpu-dev >"$build/bench-apt.log" 2>&1 ||
            log "apt-get install libstarpu-dev failed (see $build/bench-apt.log)"
    fi
    if ! [ -f /usr/include/starpu/1.3/starpu.h ]; then
        log "no StarPU 1.3: leaving starpu out"
        systems=$(echo ",$systems," | sed 's/,starpu,/,/; s/^,//; s/,$//')
    fi
fi
log "building the peers in $peers"
mkdir -p "$peers"
for d in core mpi mpi_openmp openmp starpu; do
    [ -d "$taskbench/$d" ] || continue
    rm -rf "${peers:?}/$d"
    cp -r "$taskbench/$d" "$peers/$d"
    chmod -R u+w "$peers/$d"
done
mk() { env -u MAKEFLAGS -u MAKELEVEL make -s "$@" >>"$peers/build.log" 2>&1; }
: >"$peers/build.log"
mk -C "$peers/core" libcore.a || die "building Task Bench's core failed ($peers/build.log)"
ln -sf libcore.a "$peers/core/libcore_s.a"
declare -A bin=([utc]=$utc_bin [utc_ranks]=$utc_bin [utc_gshared]=$utc_bin)
if has mpi || has mpi_mt; then
    mk -C "$peers/mpi" nonblock || die "building mpi/nonblock failed ($peers/build.log)"
    bin[mpi]=$peers/mpi/nonblock
fi
if has mpi_openmp; then
    mk -C "$peers/mpi_openmp" forall || die "building mpi_openmp/forall failed ($peers/build.log)"
    bin[mpi_openmp]=$peers/mpi_openmp/forall
fi
if has openmp; then
    mk -C "$peers/openmp" main || die "building openmp/main failed ($peers/build.log)"
    bin[openmp]=$peers/openmp/main
fi
if has starpu; then
    mk -C "$peers/starpu" STARPU_DIR=/usr INC="-I/usr/include/starpu/1.3 -I../core" \
        LIB="-lstarpu-1.3 -lstarpumpi-1.3 -L../core -lcore_s" main ||
        die "building starpu/main failed ($peers/build.log)"
    bin[starpu]=$peers/starpu/main
fi
IFS=, read -r -a system_list <<<"$systems"

# ---- runs ----
utcrun=$root/scripts/utcrun
out=$build/taskbench-bench
mkdir -p "$out"
results=$out/results.csv
echo "system,pattern,iter,rep,elapsed,tasks,flops" >"$results"
iters=()
for ((i = max_iter; i >= min_iter; i /= factor)); do iters+=("$i"); done
load0=$(cut -d' ' -f1-3 /proc/loadavg)
log "${#system_list[@]} systems x ${#pattern_list[@]} patterns x ${#iters[@]} -iter values" \
    "x $reps reps, width $cores, $steps steps; load average $load0"

command_for() { # system pattern iter -> the command in the array cmd
    local s=$1 p=$2 it=$3
    local args=(-steps "$steps" -width "$cores" -type "$p" -kernel compute_bound -iter "$it")
    if [ "$p" = spread ] || [ "$p" = random_nearest ]; then
        # Task Bench's rules: radix at most the width, period at most width / radix
        local radix=$((cores < 3 ? cores : 3))
        local period=$(((cores + radix - 1) / radix))
        args+=(-radix "$radix" -period "$((period < 3 ? period : 3))")
    fi
    case "$s" in
        utc) cmd=("$utcrun" -np 1 "${bin[utc]}" "${args[@]}" --threads "$cores") ;;
        utc_ranks) cmd=("$utcrun" -np "$cores" "${bin[utc]}" "${args[@]}" --threads 1
                        --comm conduit) ;;
        utc_gshared) cmd=("$utcrun" -np "$cores" "${bin[utc]}" "${args[@]}" --threads 1
                          --comm gshared) ;;
        mpi) cmd=("$utcrun" -np "$cores" "${bin[mpi]}" "${args[@]}") ;;
        mpi_mt) cmd=(env OMPI_MPI_THREAD_LEVEL=3 "$utcrun" -np "$cores" "${bin[mpi]}"
                     "${args[@]}") ;;
        mpi_openmp) cmd=(env OMP_NUM_THREADS="$cores" "$utcrun" -np 1 "${bin[mpi_openmp]}"
                         "${args[@]}") ;;
        openmp) cmd=(env OMP_NUM_THREADS="$cores" "${bin[openmp]}" "${args[@]}" -worker "$cores") ;;
        starpu) cmd=(env STARPU_SILENT=1 STARPU_NCPU="$cores" "$utcrun" -np 1 "${bin[starpu]}"
                     "${args[@]}" -core "$cores") ;;
    esac
}

failures=0
for ((rep = 1; rep <= reps; rep++)); do
    for p in "${pattern_list[@]}"; do
        for it in "${iters[@]}"; do
            for s in "${system_list[@]}"; do
                f=$out/${s}_${p}_iter${it}_rep${rep}.log
                command_for "$s" "$p" "$it"
                if ! timeout 300 "${cmd[@]}" >"$f" 2>&1; then
                    log "FAILED: $s $p -iter $it (rep $rep): see $f"
                    failures=$((failures + 1))
                    continue
                fi
                e=$(sed -n 's/^Elapsed Time \([0-9.e+-]*\) seconds$/\1/p' "$f" | tail -n 1)
                n=$(sed -n 's/^Total Tasks \([0-9]*\)$/\1/p' "$f" | tail -n 1)
                fl=$(sed -n 's/^Total FLOPs \([0-9]*\)$/\1/p' "$f" | tail -n 1)
                if [ -z "$e" ] || [ -z "$n" ] || [ -z "$fl" ]; then
                    log "FAILED: $s $p -iter $it (rep $rep): no timing in $f"
                    failures=$((failures + 1))
                    continue
                fi
                echo "$s,$p,$it,$rep,$e,$n,$fl" >>"$results"
            done
        done
        log "rep $rep/$reps: $p done"
    done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- METG, table, JSON, chart ----
"$py" - "$results" "$cores" "$steps" "$reps" "$load0" "$load1" "$json" "$chart" \
    "$(date -u +%Y-%m-%d)" <<'EOF'
import csv, json, sys
results, cores, steps, reps, load0, load1, json_out, chart, day = sys.argv[1:]
cores, steps, reps = int(cores), int(steps), int(reps)
threshold, nodes = 0.5, 1

best = {}  # (system, pattern, iter) -> (elapsed, tasks, flops): best of the repetitions
for r in csv.DictReader(open(results)):
    k = (r['system'], r['pattern'], int(r['iter']))
    e = float(r['elapsed'])
    if k not in best or e < best[k][0]:
        best[k] = (e, int(r['tasks']), int(r['flops']))
if not best:
    sys.exit('bench-taskbench: no successful run')
peak = max(fl / e for e, n, fl in best.values())  # the best FLOP/s of the run

def interp(x, xp, fp):  # numpy.interp for two increasing points
    if x <= xp[0]: return fp[0]
    if x >= xp[1]: return fp[1]
    return fp[0] + (fp[1] - fp[0]) * (x - xp[0]) / (xp[1] - xp[0])

def metg(rows):
    """chart_metg.analyze: rows sorted by iterations, largest first."""
    eff = [r['efficiency'] for r in rows]
    tpt = [r['time_per_task_us'] for r in rows]
    if not any(e >= threshold for e in eff):
        return None, 'no point at or above 50% efficiency'
    if not any(e < threshold for e in eff):
        return None, 'no point below 50% efficiency (sweep -iter lower)'
    min_i = min((i for i, e in enumerate(eff) if e >= threshold), key=lambda i: tpt[i])
    if min_i + 1 >= len(rows):
        return None, 'no data following the point above the threshold'
    t = tpt[min_i]
    if tpt[min_i + 1] < t:
        t = interp(threshold, [eff[min_i + 1], eff[min_i]], [tpt[min_i + 1], tpt[min_i]])
    return t, None

systems = sorted({k[0] for k in best}, key=lambda s: ['utc', 'utc_ranks', 'utc_gshared', 'mpi', 'mpi_mt', 'mpi_openmp', 'openmp', 'starpu'].index(s))
patterns = list(dict.fromkeys(k[1] for k in best))
out = {'machine': {'cores': cores, 'load_average_start': load0, 'load_average_end': load1},
       'date': day, 'steps': steps, 'width': cores, 'reps': reps, 'kernel': 'compute_bound',
       'threshold': threshold, 'peak_flops': peak, 'patterns': {}}
for p in patterns:
    out['patterns'][p] = {}
    for s in systems:
        rows = []
        for (s2, p2, it), (e, n, fl) in best.items():
            if s2 == s and p2 == p:
                rows.append({'iter': it, 'elapsed_s': e, 'tasks': n, 'flops': fl,
                             'flops_per_s': fl / e,
                             'efficiency': fl / e / nodes / peak,
                             'time_per_task_us': e / n * nodes * cores * 1e6})
        rows.sort(key=lambda r: -r['iter'])
        m, why = metg(rows) if rows else (None, 'no runs')
        out['patterns'][p][s] = {'metg_us': m, 'note': why, 'points': rows}

print()
print('Task Bench METG(50%%), us: compute_bound, width %d, %d steps, best of %d; '
      'peak %.3e FLOP/s; load %s -> %s' % (cores, steps, reps, peak, load0, load1))
w = max(len(s) for s in systems) + 2
print('%-22s' % 'pattern' + ''.join('%*s' % (max(w, 12), s) for s in systems))
for p in patterns:
    cells = []
    for s in systems:
        m = out['patterns'][p][s]['metg_us']
        cells.append('%*s' % (max(w, 12), '%.3f' % m if m is not None else 'n/a'))
    print('%-22s' % p + ''.join(cells))
for p in patterns:
    for s in systems:
        note = out['patterns'][p][s]['note']
        if note:
            print('  %s / %s: %s' % (p, s, note))

if json_out:
    text = json.dumps(out, indent=1)
    if json_out == '-':
        print(text)
    else:
        open(json_out, 'w').write(text + '\n')

if chart:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(patterns), figsize=(5.2 * len(patterns), 4.2), squeeze=False)
    for ax, p in zip(axes[0], patterns):
        for s in systems:
            rows = out['patterns'][p][s]['points']
            if not rows:
                continue
            m = out['patterns'][p][s]['metg_us']
            label = '%s (METG %s)' % (s, '%.2f us' % m if m is not None else 'n/a')
            ax.plot([r['time_per_task_us'] for r in rows], [r['efficiency'] for r in rows],
                    marker='o', markersize=3, label=label)
        ax.axhline(threshold, color='gray', linestyle='--', linewidth=0.8)
        ax.set_xscale('log')
        ax.set_ylim(0, 1.05)
        ax.set_xlabel('task granularity (us)')
        ax.set_ylabel('efficiency')
        ax.set_title('%s, width %d' % (p, cores))
        ax.grid(True, which='both', alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle('Task Bench on %d cores, %s (best of %d, load %s)' % (cores, day, reps, load0),
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(chart, dpi=110)
    print('chart: %s' % chart)
EOF
if [ "$failures" -gt 0 ]; then
    log "$failures run(s) failed (logs in $out)"
    exit 1
fi
