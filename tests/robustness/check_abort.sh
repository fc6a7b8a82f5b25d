#!/usr/bin/env bash
# check_abort.sh UTCRUN NP PROG: utc_abort on one rank (while rank 0 is blocked in a conduit
# read from it) ends the whole job within 10 s, non-zero, the message printed once, and no
# process of the job is left.
set -u
utcrun=$1 np=$2 prog=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s.%N)
# "$tmp" names this job's processes (the program ignores it): other jobs may run beside
timeout 60 "$utcrun" -np "$np" "$prog" abort "$tmp" >"$tmp/out" 2>"$tmp/err"
rc=$?
end=$(date +%s.%N)
cat "$tmp/out" "$tmp/err"
[ $rc -ne 124 ] || { echo "FAILED: the job hung (killed by timeout after 60 s)"; exit 1; }
[ $rc -ne 0 ] || { echo "FAILED: exit status 0 after utc_abort"; exit 1; }
grep -q "still alive" "$tmp/err" && { echo "FAILED: a rank outlived the abort by 30 s"; exit 1; }
n=$(grep -c "abort: rob_fault: the input of task abort_writer is missing" "$tmp/err")
[ "$n" -eq 1 ] || { echo "FAILED: the message was printed $n times (want 1)"; exit 1; }
took=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
echo "the job ended in ${took} s (abort after 0.2 s), exit status $rc"
awk -v t="$took" 'BEGIN { exit !(t < 10) }' || { echo "FAILED: more than 10 s"; exit 1; }
sleep 0.5
if pgrep -f "abort $tmp" >/dev/null; then
    echo "FAILED: a process of the job is still running"; exit 1
fi
echo "1 passed, 0 failed"
