#!/usr/bin/env bash
# Profiling tests (tests/trace/CMakeLists.txt):
#   run_trace_test.sh trace UTCRUN NP PROGRAM WORK EXPECT [SYNC]
#                                          UTC_TRACE (UTC_TRACE_SYNC=SYNC), then check_trace.py
#   run_trace_test.sh stats UTCRUN NP PROGRAM WORK EXPECT   UTC_STATS=1, then check_stats.py
#   run_trace_test.sh off   UTCRUN NP PROGRAM WORK          neither: no trace, no table
#   run_trace_test.sh plot  PLOTTER TRACE WORK              utc-trace-plot draws a trace
#   run_trace_test.sh window PLOTTER WORK                   its zoom, merging, errors, names
#                                                           on synthetic traces (check_plot.py)
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
case "$mode" in
trace|stats|off)
    utcrun=$1 np=$2 prog=$3 work=$4 expect=${5:-} sync=${6:-}
    mkdir -p "$work"
    out="$work/$mode-np$np${sync:+-$sync}"
    rm -f "$out.json" "$out.txt"
    unset UTC_TRACE UTC_STATS
    case "$mode" in
    trace) UTC_TRACE="$out.json" UTC_TRACE_SYNC="$sync" "$utcrun" -np "$np" "$prog" > "$out.txt" 2>&1 \
               || { cat "$out.txt"; exit 1; }
           python3 "$here/check_trace.py" "$out.json" "$np" --expect "$expect" ;;
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
