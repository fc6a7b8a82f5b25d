#!/usr/bin/env bash
# check_apps_trace_lost.sh UTCRUN WORK RYR ROTATE HEAT: the apps pass utc_finalize's failure
# on. With UTC_TRACE at a directory the trace cannot be written, so utc_finalize fails; each
# app must then say so and exit non-zero, where the same run without UTC_TRACE exits 0.
set -u
utcrun=$1 work=$2 ryr=$3 rotate=$4 heat=$5
rm -rf "$work"; mkdir -p "$work/trace-dir.json"
fails=0
check() { # check NAME NP CMD...: 0 without a trace, non-zero and a message with a lost one
    local name=$1 np=$2 st
    shift 2
    unset UTC_TRACE
    "$utcrun" -np "$np" "$@" >"$work/$name-ok.txt" 2>&1
    st=$?
    [ $st = 0 ] || { cat "$work/$name-ok.txt"; echo "FAILED: $name without UTC_TRACE: status $st"; fails=$((fails + 1)); return; }
    UTC_TRACE="$work/trace-dir.json" "$utcrun" -np "$np" "$@" >"$work/$name-lost.txt" 2>&1
    st=$?
    if [ $st = 0 ]; then
        cat "$work/$name-lost.txt"; echo "FAILED: $name exits 0 with its trace lost"; fails=$((fails + 1))
    elif ! grep -q "utc_finalize" "$work/$name-lost.txt"; then
        cat "$work/$name-lost.txt"; echo "FAILED: $name does not say utc_finalize failed"; fails=$((fails + 1))
    else
        echo "ok: $name at $np rank(s): status $st with its trace lost"
    fi
}
check ryr 2 "$ryr" --size 32x32 --frames 2 --no-output
check rotate 1 "$rotate" --impl utc --size 64x64 --threads 2
check heat 2 "$heat" --impl utc --rows 64 --cols 64 --steps 4
[ $fails = 0 ] || exit 1
echo "apps with a lost trace: all checks passed"
