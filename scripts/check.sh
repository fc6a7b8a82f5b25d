#!/usr/bin/env bash
# Sanitizer and valgrind checks (doc/ROBUSTNESS.md, "Sanitizers and valgrind").
#
#   scripts/check.sh [asan] [tsan] [valgrind]     (no argument: all three)
#
# asan      build-asan: -DUTC_SANITIZE=address,undefined, no CUDA; the whole ctest suite
#           but the labels matching UTC_CHECK_ASAN_EXCLUDE (default
#           "stress|install|multihost|slurm|large|gpubundle") and the tests matching UTC_CHECK_ASAN_SKIP (default
#           "^conduit_cpu_"; set both empty to run everything), with leak detection and
#           UBSan stopping at the first finding.
# tsan      build-tsan: -DUTC_SANITIZE=thread (clang when installed, else gcc), no CUDA,
#           no apps; the framework, conduit and global shared data suites at one rank
#           (task threads, mailboxes, barriers, in-process conduits, RMA in shared
#           memory), conduit_cpu apart, and the conformance suite's in-process run.
#           (Being a clang build, it also checks that UTC works when built with clang.)
# valgrind  build-valgrind: a plain build, no CUDA, no apps; memcheck on the framework,
#           conduit and global shared data suites at one rank (conduit_cpu apart): no
#           definite leak, no invalid access, no use of uninitialised memory.
#
# Suppressions (tests/supp/) cover Open MPI's, hwloc's, PMIx's and libevent's own
# internals only (and LLVM's OpenMP runtime's leaks). Environment: UTC_CHECK_JOBS (ctest
# -j, default 1); UTC_CHECK_ASAN_CC=clang builds the asan pass with clang, in
# build-asan-clang. Each pass prints its time; the script exits 1 when any pass found
# something, 2 on a usage error.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
supp=$root/tests/supp
jobs=${UTC_CHECK_JOBS:-1}

passes=("$@")
[ ${#passes[@]} -gt 0 ] || passes=(asan tsan valgrind)
for p in "${passes[@]}"; do
    case "$p" in
        asan|tsan|valgrind) ;;
        -h|--help) sed -n '2,/^set /s/^# \{0,1\}//p' "$0" | grep -v '^set '; exit 0 ;;
        *) echo "check: unknown pass '$p' (asan, tsan, valgrind)" >&2; exit 2 ;;
    esac
done

symbolizer=$(command -v llvm-symbolizer || ls /usr/lib/llvm-*/bin/llvm-symbolizer 2>/dev/null |
             tail -1 || true)
[ -z "$symbolizer" ] || export ASAN_SYMBOLIZER_PATH="$symbolizer" TSAN_SYMBOLIZER_PATH="$symbolizer"
mpirun_args=${UTC_MPIRUN_ARGS:-}
# export_to_ranks VAR=VALUE...: set VARs here and have mpirun pass them to every rank (-x)
export_to_ranks() {
    local extra=$mpirun_args
    for kv in "$@"; do
        export "${kv?}"
        extra+=" -x ${kv%%=*}"
    done
    export UTC_MPIRUN_ARGS="$extra"
}

# build DIR CMAKE-ARGS...: configure and build DIR (no CUDA), log in DIR/check-build.log
build() {
    local dir=$1
    shift
    echo "check: building $dir"
    mkdir -p "$dir"
    local log=$dir/check-build.log
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUTC_WITH_CUDA=OFF "$@" \
        >"$log" 2>&1 || { tail -30 "$log"; echo "check: configure of $dir failed" >&2; return 1; }
    cmake --build "$dir" -j "$(nproc)" >>"$log" 2>&1 || {
        tail -40 "$log"; echo "check: build of $dir failed (log $log)" >&2; return 1; }
}

# The np1 suites of the framework, the conduits and global shared data.
np1_framework='^(task_[a-z_]+_np1|context_state)$'
np1_conduits='^conduit_[a-z_]+_np1$'
np1_gshared='^gshared_[a-z]+_np1$'
np1_conformance='^conformance_inproc_np1$'
# conduit_cpu checks that a blocked wait costs < 5% of a core; instrumentation makes
# polling and the large copy it includes dearer (5-7% under ASan and TSan, 4.2% under
# valgrind), so no pass runs it: it measures the tools, not the code.
cpu_budget='^conduit_cpu_'

pass_asan() {
    local dir=build-asan ccargs=()
    if [ -n "${UTC_CHECK_ASAN_CC:-}" ]; then # another compiler: a build folder of its own
        dir=build-asan-$(basename "$UTC_CHECK_ASAN_CC")
        ccargs=(-DCMAKE_C_COMPILER="$UTC_CHECK_ASAN_CC")
    fi
    build "$dir" "${ccargs[@]}" -DUTC_SANITIZE=address,undefined -DUTC_FUZZ=OFF || return 1
    # detect_leaks with suppressions for MPI's own allocations; full stacks so that the
    # suppressions see the MPI frames; UBSan stops (and fails the test) at a finding.
    export_to_ranks \
        ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0:malloc_context_size=40 \
        LSAN_OPTIONS=suppressions=$supp/lsan.supp:print_suppressions=0 \
        UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=$supp/ubsan.supp
    # Left out by default, as they measure what the sanitizers change rather than
    # memory errors: the soak (label stress: it checks that resident memory stays flat,
    # which ASan's quarantine of freed blocks defeats; and, for its cost alone, the MPI
    # transport's 10,000 conduits: 20 s of Open MPI's allocations under full-stack
    # unwinding, for code that the other conformance cases check here,
    # tests/conduits/conformance/CMakeLists.txt), the install tests (label install:
    # a program built against an installed sanitized libutc would need the sanitizer
    # runtimes on its own link line), the multi-host run (label multihost: it repeats
    # suites run here, plus the soak, over TCP, where LeakSanitizer's tracer dies on UCX's
    # threads), the Slurm runs (label slurm: suites run here, under daemons not built
    # with the sanitizers), the messages over 2 GiB (label large: 2.5 GiB buffers filled and
    # checked word by word, under ASan's shadow memory and instrumentation) and
    # conduit_cpu (see cpu_budget).
    local exclude=()
    local labels=${UTC_CHECK_ASAN_EXCLUDE-stress|install|multihost|slurm|large|gpubundle}
    local names=${UTC_CHECK_ASAN_SKIP-$cpu_budget}
    [ -z "$labels" ] || exclude+=(-LE "$labels")
    [ -z "$names" ] || exclude+=(-E "$names")
    (cd "$dir" && ctest --output-on-failure --timeout 900 -j "$jobs" "${exclude[@]}" \
        >ctest.log 2>&1)
    local rc=$?
    grep -E "tests passed|tests failed" "$dir/ctest.log" | tail -1
    [ $rc = 0 ] || sed -n '/The following tests/,$p' "$dir/ctest.log"
    return $rc
}

pass_tsan() {
    local cc=${UTC_CHECK_TSAN_CC:-}
    [ -n "$cc" ] || cc=$(command -v clang || echo gcc)
    build build-tsan -DCMAKE_C_COMPILER="$cc" -DUTC_SANITIZE=thread -DUTC_BUILD_APPS=OFF \
        -DUTC_FUZZ=OFF || return 1
    export_to_ranks \
        TSAN_OPTIONS="suppressions=$supp/tsan.supp:second_deadlock_stack=1:history_size=4:exitcode=66"
    (cd build-tsan && ctest --output-on-failure --timeout 900 -j "$jobs" \
        -R "$np1_framework|$np1_conduits|$np1_gshared|$np1_conformance" -E "$cpu_budget" \
        >ctest.log 2>&1)
    local rc=$?
    grep -E "tests passed|tests failed" build-tsan/ctest.log | tail -1
    [ $rc = 0 ] || sed -n '/The following tests/,$p' build-tsan/ctest.log
    return $rc
}

pass_valgrind() {
    command -v valgrind >/dev/null || { echo "check: valgrind is not installed" >&2; return 1; }
    build build-valgrind -DUTC_SANITIZE= -DUTC_BUILD_APPS=OFF -DUTC_FUZZ=OFF || return 1
    local names
    names=$(cd build-valgrind && ctest -N -R "$np1_framework|$np1_conduits|$np1_gshared" |
            sed -n 's/^ *Test *#[0-9]*: \([a-z_0-9]*\)$/\1/p' | grep -Ev "$cpu_budget")
    local mpisupp=()
    for f in /usr/share/openmpi/openmpi-valgrind.supp /usr/share/openmpi/*/openmpi-valgrind.supp; do
        [ -f "$f" ] && mpisupp+=(--suppressions="$f")
    done
    mkdir -p build-valgrind/valgrind
    local failed=() n=0
    for t in $names; do
        local exe=test_${t%_np1}
        local bin
        bin=$(find build-valgrind/tests -name "$exe" -type f -perm -u+x | head -1)
        [ -n "$bin" ] || { echo "check: valgrind: no $exe"; failed+=("$t"); continue; }
        local log=build-valgrind/valgrind/$t.log
        local t0=$SECONDS
        timeout 1800 scripts/utcrun -np 1 valgrind --error-exitcode=1 --leak-check=full \
            --show-leak-kinds=definite --errors-for-leak-kinds=definite --num-callers=40 \
            --track-origins=yes --suppressions="$supp/valgrind.supp" "${mpisupp[@]}" \
            "$bin" >"$log" 2>&1
        local rc=$?
        n=$((n + 1))
        if [ $rc = 0 ]; then
            echo "check: valgrind: $t ok ($((SECONDS - t0)) s)"
        else
            echo "check: valgrind: $t FAILED (exit $rc, log $log)"
            grep -E "^==[0-9]+== (Invalid|Conditional|Use of|Syscall|Mismatched|[0-9,]+ bytes in .* definitely)|ERROR SUMMARY" \
                "$log" | head -8 | sed 's/^/    /'
            failed+=("$t")
        fi
    done
    echo "check: valgrind: $((n - ${#failed[@]})) of $n suites clean"
    [ ${#failed[@]} = 0 ]
}

status=0
for p in "${passes[@]}"; do
    t0=$SECONDS
    echo "check: === $p ==="
    if "pass_$p"; then
        echo "check: $p: clean ($((SECONDS - t0)) s)"
    else
        echo "check: $p: FOUND PROBLEMS ($((SECONDS - t0)) s)"
        status=1
    fi
done
exit $status
