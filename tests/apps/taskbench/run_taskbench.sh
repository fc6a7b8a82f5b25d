#!/usr/bin/env bash
# Runs utc_taskbench through utcrun and checks the outcome (a ctest driver).
#
#   run_taskbench.sh UTCRUN NP EXPECT PROGRAM ARGS...
#
# PROGRAM empty or missing: Task Bench was not found at configure time, exit 77 (skipped).
# EXPECT:
#   tasks:N       exit 0, Task Bench's report with "Total Tasks N" and an elapsed time, run
#                 on NP ranks, outputs crossing ranks as --comm says (default: gshared on
#                 2+ ranks, conduits on one).
#                 Task Bench's core asserts every input a task receives, so a lost, late or
#                 wrong message aborts the run.
#   fail:C:REGEX  exit status C and output (stdout and stderr) matching REGEX (grep -E)
#   ok:REGEX      exit 0 and output matching REGEX
set -u
. "$(dirname "$0")/../../common/run_checks.sh"
name=run_taskbench utcrun=$1 np=$2 expect=$3 prog=${4:-}
shift 4 || shift $#
if [ -z "$prog" ] || [ ! -x "$prog" ]; then
    echo "run_taskbench: skipped: utc_taskbench not built (Task Bench not found;" \
         "configure with -DUTC_TASKBENCH_DIR=PATH)"
    exit 77
fi
out=$(timeout 100 "$utcrun" -np "$np" "$prog" "$@" 2>&1)
rc=$?

case "$expect" in
tasks:*)
    n=${expect#tasks:}
    [ "$rc" = 0 ] || fail "exit status $rc, expected 0"
    printf '%s\n' "$out" | grep -qx "Total Tasks $n" || fail "no 'Total Tasks $n' line"
    printf '%s\n' "$out" | grep -qE '^Elapsed Time [0-9.e+-]+ seconds$' || fail "no elapsed time"
    printf '%s\n' "$out" | grep -q "UTC: $np rank(s)" || fail "not run on $np ranks"
    # how outputs crossed ranks: as asked, or by default (auto) gshared on 2+ ranks
    case " $* " in
    *" --comm conduit "*) how="conduit(s) between ranks" ;;
    *" --comm gshared "*) how="global shared data between ranks" ;;
    *) if [ "$np" -gt 1 ]; then how="global shared data between ranks"
       else how="conduit(s) between ranks"; fi ;;
    esac
    printf '%s\n' "$out" | grep -qF "$how" || fail "outputs did not cross ranks by $how"
    show | grep -E '^(UTC|Total Tasks|Elapsed)' ;;
fail:*)
    check_common "$expect"
    show | tail -n 40 ;;
ok:*)
    check_common "$expect"
    show | head -n 5 ;;
*)
    echo "run_taskbench: bad EXPECT '$expect'" >&2; exit 2 ;;
esac
exit 0
