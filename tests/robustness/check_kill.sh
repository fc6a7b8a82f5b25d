#!/usr/bin/env bash
# check_kill.sh UTCRUN PROG [NP]: a rank killed with SIGKILL mid-run (while the others are
# blocked in a conduit read and a task barrier) ends the whole job within 10 s, non-zero.
# PROG kill FILE runs at NP ranks (default 3); rank 1 writes the time it dies into FILE.
# Exits 77 (skip) when PROG exits 77 before the kill (no GPU for a device conduit).
set -u
utcrun=$1 prog=$2 np=${3:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
timeout 60 "$utcrun" -np "$np" "$prog" kill "$tmp/killed_at" >"$tmp/out" 2>"$tmp/err"
rc=$?
end=$(date +%s.%N)
cat "$tmp/out" "$tmp/err"
# 77: the program skipped (a device conduit's check on a machine without a GPU)
[ $rc -eq 77 ] && [ ! -s "$tmp/killed_at" ] && { echo "skipped"; exit 77; }
[ -s "$tmp/killed_at" ] || { echo "FAILED: rank 1 never got to kill itself (exit $rc)"; exit 1; }
[ $rc -ne 124 ] || { echo "FAILED: the job hung (killed by timeout after 60 s)"; exit 1; }
[ $rc -ne 0 ] || { echo "FAILED: exit status 0 although rank 1 was killed"; exit 1; }
grep -q "still alive" "$tmp/err" && { echo "FAILED: a rank outlived the kill by 30 s"; exit 1; }
took=$(awk -v a="$(cat "$tmp/killed_at")" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
echo "the job ended ${took} s after the kill, exit status $rc"
awk -v t="$took" 'BEGIN { exit !(t < 10) }' || { echo "FAILED: more than 10 s"; exit 1; }
echo "1 passed, 0 failed"
