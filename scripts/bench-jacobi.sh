#!/usr/bin/env bash
# bench-jacobi.sh: the Jacobi example (apps/examples/jacobi.c: one task, halos on its
# conduit to itself, the residual by allreduce) against the same solver in plain MPI
# (apps/microbench/jacobi_mpi.c), same plate, same sweeps, in one run: the two take turns
# run after run, so load hits both alike; the best of --reps runs of each is kept.
#
#   scripts/bench-jacobi.sh [--build DIR] [--n POINTS] [--reps N] [--ranks "1 2"]
#
# Prints, per rank count, both times and the ratio UTC / MPI (the target: at most 1.1).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-bench n=300 reps=5 ranks="1 2"
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=${2:?--build needs a folder}; shift 2 ;;
    --n) n=${2:?--n needs a number}; shift 2 ;;
    --reps) reps=${2:?--reps needs a number}; shift 2 ;;
    --ranks) ranks=${2:?--ranks needs a list}; shift 2 ;;
    -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-jacobi.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
case $reps in '' | *[!0-9]* | 0) echo "bench-jacobi.sh: --reps needs a positive number" >&2; exit 2 ;; esac

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$build" -j2 --target example_jacobi jacobi_mpi > /dev/null
utc=$build/apps/examples/example_jacobi mpi=$build/apps/microbench/jacobi_mpi

# the seconds of one run's output line
secs() { sed -n 's/.*residual [^,]*, \([0-9.]*\) s.*/\1/p'; }
best() { printf '%s\n' "$@" | sort -g | head -1; }

echo "load: $(cut -d' ' -f1-3 /proc/loadavg); plate $n x $n, best of $reps runs"
printf '%-6s %10s %10s %8s\n' ranks utc_s mpi_s utc/mpi
for np in $ranks; do
    u=() m=()
    for _ in $(seq "$reps"); do
        u+=("$("$root/scripts/utcrun" -np "$np" "$utc" --n "$n" | secs)")
        m+=("$("$root/scripts/utcrun" -np "$np" "$mpi" --n "$n" | secs)")
    done
    bu=$(best "${u[@]}") bm=$(best "${m[@]}")
    printf '%-6s %10s %10s %8.3f\n' "$np" "$bu" "$bm" "$(awk -v a="$bu" -v b="$bm" 'BEGIN { print a / b }')"
done
