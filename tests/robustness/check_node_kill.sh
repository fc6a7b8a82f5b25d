#!/usr/bin/env bash
# check_node_kill.sh UTCRUN PROG: rank 1 of 2 killed with SIGKILL while rank 0 is blocked in
# a read from it on a node-local conduit (conduits/node/). Run under mpirun
# --enable-recovery, which leaves the survivor running: its read must return
# UTC_ERR_PEER_FAILED within 10 s of the kill. (Where mpirun aborts the job anyway, the
# job must end within 10 s, non-zero: no hang either way.)
set -u
utcrun=$1 prog=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
timeout 60 "$utcrun" -np 2 --enable-recovery "$prog" nodekill "$tmp/killed_at" >"$tmp/out" 2>"$tmp/err"
rc=$?
end=$(date +%s.%N)
cat "$tmp/out" "$tmp/err"
[ $rc -ne 77 ] || { echo "skipped: the conduit is not node-local here"; exit 77; }
[ -s "$tmp/killed_at" ] || { echo "FAILED: rank 1 never got to kill itself (exit $rc)"; exit 1; }
[ $rc -ne 124 ] || { echo "FAILED: the job hung (killed by timeout after 60 s)"; exit 1; }
grep -q "still alive" "$tmp/err" && { echo "FAILED: rank 0 outlived the kill by 30 s with its read blocked"; exit 1; }
ret=$(sed -n 's/^rob_fault: nodekill: the read returned \([A-Za-z_ ()-]*\) at \([0-9.]*\):.*/\2/p' "$tmp/out" | head -1)
if [ -n "$ret" ]; then
    grep -q "the read returned .*peer failed\|PEER_FAILED\|other end failed" "$tmp/out" ||
        { echo "FAILED: the survivor's read returned something else than UTC_ERR_PEER_FAILED"; exit 1; }
    took=$(awk -v a="$(cat "$tmp/killed_at")" -v b="$ret" 'BEGIN { printf "%.2f", b - a }')
    echo "the survivor's read returned UTC_ERR_PEER_FAILED ${took} s after the kill"
else
    [ $rc -ne 0 ] || { echo "FAILED: exit status 0 but the read never returned"; exit 1; }
    took=$(awk -v a="$(cat "$tmp/killed_at")" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
    echo "the job ended ${took} s after the kill, exit status $rc"
fi
awk -v t="$took" 'BEGIN { exit !(t < 10) }' || { echo "FAILED: more than 10 s"; exit 1; }
echo "1 passed, 0 failed"
