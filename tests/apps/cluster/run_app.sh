#!/usr/bin/env bash
# Runs one cluster app through utcrun and checks the outcome (a ctest driver).
#
#   run_app.sh UTCRUN NP EXPECT PROGRAM ARGS...
#
# EXPECT:
#   verified      exit 0 and a JSON last line with "verified":true; exit 77 (skipped) when
#                 the program says there is no GPU (exit 3), for --impl gpu runs (1, failed,
#                 under UTC_REQUIRE_GPU=1: tests/common/gpu_skip.sh)
#   nogpu         exit 3 with a message naming the missing GPU; 77 when a GPU ran it
#   fail:C:REGEX  exit status C and output (stdout and stderr) matching REGEX (grep -E)
#   ok:REGEX      exit 0 and output matching REGEX
set -u
. "$(dirname "$0")/../../common/run_checks.sh"
. "$(dirname "$0")/../../common/gpu_skip.sh"
name=run_app utcrun=$1 np=$2 expect=$3
shift 3
out=$("$utcrun" -np "$np" "$@" 2>&1)
rc=$?

case "$expect" in
verified)
    if [ "$rc" = 3 ] && printf '%s\n' "$out" | grep -qE 'no GPU support|no CUDA device'; then
        show; gpu_skip "run_app: no GPU here"
    fi
    [ "$rc" = 0 ] || fail "exit status $rc, expected 0"
    last=$(printf '%s\n' "$out" | grep '^{"app"' | tail -n 1)
    printf '%s\n' "$last" | grep -q '"verified":true' || fail "no JSON line with \"verified\":true"
    printf '%s\n' "$last" | grep -q "\"ranks\":$np," || fail "JSON line does not say $np ranks"
    show ;;
nogpu)
    if [ "$rc" = 0 ]; then show; echo "run_app: skipped: a GPU ran it"; exit 77; fi
    [ "$rc" = 3 ] || fail "exit status $rc, expected 3 (no GPU)"
    printf '%s\n' "$out" | grep -qE 'no GPU support|no CUDA device' || fail "no clear message"
    show ;;
fail:* | ok:*)
    check_common "$expect"
    show ;;
*)
    echo "run_app: unknown expectation '$expect'" >&2; exit 2 ;;
esac
echo "run_app: passed"
