#!/usr/bin/env bash
# Profiling tests (tests/trace/CMakeLists.txt):
#   run_trace_test.sh trace UTCRUN NP PROGRAM WORK EXPECT [SYNC]
#                                          UTC_TRACE (UTC_TRACE_SYNC=SYNC), then check_trace.py
#   run_trace_test.sh stats UTCRUN NP PROGRAM WORK EXPECT   UTC_STATS=1, then check_stats.py
#   run_trace_test.sh off   UTCRUN NP PROGRAM WORK          neither: no trace, no table
#   run_trace_test.sh plot  PLOTTER TRACE WORK              utc-trace-plot draws a trace
#   run_trace_test.sh window PLOTTER WORK                   its zoom, merging, errors, names
#                                                           on synthetic traces (check_plot.py)
#   run_trace_test.sh names UTCRUN NP PROGRAM WORK          trace_names with UTC_TRACE,
#                                          UTC_STATS and UTC_LOG=info, then check_names.py
#   run_trace_test.sh paths UTCRUN NP PROGRAM WORK          UTC_TRACE at a symbolic link, a
#                                          dangling one, a directory, a FIFO, an old trace
#   run_trace_test.sh full  UTCRUN NP PROGRAM WORK          a write that fails as on a full
#                                          disk: utc_finalize fails, no partial trace
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=$1; shift

# A python3 with matplotlib (Debian's where the one on PATH lacks it), or skip (exit 77).
plot_python() {
    local py
    for py in python3 /usr/bin/python3; do
        if "$py" -c "import matplotlib" 2>/dev/null; then echo "$py"; return; fi
    done
    echo "no matplotlib (apt-get install python3-matplotlib)" >&2
    # where the test tools are required (test.sh installs them), a gap is a failure
    [ "${UTC_REQUIRE_TEST_TOOLS:-0}" != 1 ] || exit 1
    echo "skipped" >&2; exit 77
}
fail() { echo "FAILED: $*"; exit 1; }

# No temporary file of the trace writer may be left in directory $1.
no_leftovers() {
    if ls -A "$1" | grep -q '\.utc-.*\.tmp$'; then
        ls -la "$1"; fail "a temporary trace file was left in $1"
    fi
}

# Run trace_run with UTC_TRACE=$1 (more arguments go to the program): utc_finalize must
# fail with UTC_ERR_IO on every rank, and rank 0 log an error saying $2. The program
# exits non-zero; with --finalize-fails (checked on every rank) zero.
finalize_fails() {
    local path=$1 why=$2 st=0
    local log="$path.log"
    shift 2
    UTC_TRACE="$path" "$utcrun" -np "$np" "$prog" "$@" > "$log" 2>&1 || st=$?
    case " $* " in
    *" --finalize-fails "*)
        [ "$st" -eq 0 ] || { cat "$log"; fail "UTC_TRACE=$path: a rank's utc_finalize did not fail"; }
        local n
        n=$(grep -c "utc_finalize: input/output error" "$log" || true)
        [ "$n" -eq "$np" ] || { cat "$log"; fail "UTC_TRACE=$path: $n of $np ranks said so"; } ;;
    *)  [ "$st" -ne 0 ] || { cat "$log"; fail "UTC_TRACE=$path: exit status 0"; } ;;
    esac
    grep -q "^utc\[0\] error: trace: .*$why" "$log" || { cat "$log"; fail "no error saying '$why'"; }
    echo "ok: UTC_TRACE=$path: no trace ($why), exit status $st"
}

case "$mode" in
names)
    utcrun=$1 np=$2 prog=$3 work=$4
    mkdir -p "$work"
    out="$work/names-np$np"
    rm -f "$out.json" "$out.txt" "$out.err"
    unset UTC_TRACE UTC_STATS
    UTC_TRACE="$out.json" UTC_STATS=1 UTC_LOG=info UTC_WATCHDOG=0.05 \
        "$utcrun" -np "$np" "$prog" > "$out.txt" 2> "$out.err" \
        || { cat "$out.txt" "$out.err"; exit 1; }
    python3 "$here/check_names.py" "$out.json" "$out.err" "$np"
    no_leftovers "$work"
    ;;
paths|full)
    utcrun=$1 np=$2 prog=$3 work=$4
    unset UTC_TRACE UTC_STATS
    d="$work/$mode-np$np"
    rm -rf "$d"
    mkdir -p "$d"
    if [ "$mode" = paths ]; then
        # a link to a file: refused, the link and the file it points to untouched
        printf 'precious\n' > "$d/target"
        ln -s target "$d/link.json"
        finalize_fails "$d/link.json" "is a symbolic link"
        [ -L "$d/link.json" ] && [ "$(readlink "$d/link.json")" = target ] || fail "the link changed"
        [ "$(cat "$d/target")" = precious ] || fail "the link's target changed"
        # a dangling link: nothing is made where it points
        ln -s made-by-utc "$d/dangling.json"
        finalize_fails "$d/dangling.json" "is a symbolic link" --finalize-fails
        [ ! -e "$d/made-by-utc" ] || fail "a file was made through a dangling link"
        mkdir "$d/dir.json"
        finalize_fails "$d/dir.json" "is a directory" --finalize-fails
        # a FIFO is written in place (as /dev/null would be), read by a reader here
        mkfifo "$d/fifo.json"
        cat "$d/fifo.json" > "$d/from-fifo.json" &
        reader=$!
        UTC_TRACE="$d/fifo.json" "$utcrun" -np "$np" "$prog" > "$d/fifo.txt" 2>&1 \
            || { cat "$d/fifo.txt"; kill "$reader" 2>/dev/null; fail "UTC_TRACE=FIFO"; }
        wait "$reader"
        [ -p "$d/fifo.json" ] || fail "the FIFO was replaced"
        python3 "$here/check_trace.py" "$d/from-fifo.json" "$np"
        # an older trace: replaced whole
        printf 'older trace\n' > "$d/old.json"
        UTC_TRACE="$d/old.json" "$utcrun" -np "$np" "$prog" > "$d/old.txt" 2>&1 \
            || { cat "$d/old.txt"; fail "UTC_TRACE=an older trace"; }
        python3 "$here/check_trace.py" "$d/old.json" "$np"
    else
        # rank 0 can write 2 KiB at most: the trace (several KiB) fails as on a full disk
        finalize_fails "$d/trace.json" "File too large" --limit-file-size 2048 --finalize-fails
        [ ! -e "$d/trace.json" ] || fail "a partial trace was left"
        printf 'older trace\n' > "$d/trace.json"
        finalize_fails "$d/trace.json" "File too large" --limit-file-size 2048
        [ "$(cat "$d/trace.json")" = "older trace" ] || fail "the older trace was changed"
    fi
    no_leftovers "$d"
    echo "$mode ok"
    ;;
trace|stats|off)
    utcrun=$1 np=$2 prog=$3 work=$4 expect=${5:-} sync=${6:-}
    mkdir -p "$work"
    out="$work/$mode-np$np${sync:+-$sync}"
    rm -f "$out.json" "$out.txt"
    unset UTC_TRACE UTC_STATS
    case "$mode" in
    trace) UTC_TRACE="$out.json" UTC_TRACE_SYNC="$sync" "$utcrun" -np "$np" "$prog" > "$out.txt" 2>&1 \
               || { cat "$out.txt"; exit 1; }
           python3 "$here/check_trace.py" "$out.json" "$np" --expect "$expect"
           no_leftovers "$work" ;;
    stats) UTC_STATS=1 "$utcrun" -np "$np" "$prog" > "$out.txt" 2>&1 \
               || { cat "$out.txt"; exit 1; }
           python3 "$here/check_stats.py" "$out.txt" "$np" --expect "$expect" ;;
    off)   (cd "$work" && "$utcrun" -np "$np" "$prog") > "$out.txt" 2>&1 \
               || { cat "$out.txt"; exit 1; }
           if grep -q "utc stats" "$out.txt"; then echo "stats printed while off"; exit 1; fi
           if ls "$work"/*.json 2>/dev/null | grep -q off; then echo "trace written"; exit 1; fi
           echo "off ok" ;;
    esac
    ;;
plot)
    plotter=$1 trace=$2 work=$3
    plot_python > /dev/null
    [ -s "$trace" ] || { echo "no trace at $trace (run the trace tests first)"; exit 1; }
    mkdir -p "$work"
    rm -f "$work/trace.png"
    "$plotter" "$trace" "$work/trace.png"
    python3 - "$work/trace.png" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
assert len(data) > 10000, "suspiciously small PNG (%d bytes)" % len(data)
print("plot ok: %d bytes" % len(data))
PY
    ;;
window)
    plotter=$1 work=$2/plot-window
    py=$(plot_python)
    rm -rf "$work"; mkdir -p "$work"
    "$py" "$here/check_plot.py" "$plotter" "$work"
    ;;
*) echo "unknown mode $mode"; exit 2 ;;
esac
