#!/usr/bin/env bash
# check_watchdog.sh UTCRUN NP PROG: the watchdog names what long waits wait on.
#  - UTC_WATCHDOG=0.5 and 2 s waits: stderr names the conduit, tag and peer rank of a blocked
#    read, the main thread's task wait, the task barrier, the global shared data barrier,
#    a signal wait (its element, comparison, value and the value last seen), on a
#    share-mode shared conduit a reader's and the writer's wait with the other side's real
#    ranks (never rank -1), and a task collective's call, number and late rank (also with
#    the board read through MPI_Rget: --mca osc ucx);
#  - without UTC_WATCHDOG: on, at its default of 60 s (its debug line says so), and no
#    watchdog line for 0.3 s waits (that no wait under the threshold is reported is checked
#    in the first run, with a threshold the waits pass);
#  - UTC_WATCHDOG=soon: a warning, and the program still runs.
set -u
utcrun=$1 np=$2 prog=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAILED: $*"; fails=$((fails + 1)); }

# UTC_LEND=0: the lines checked below name each task thread and the main thread in
# utc_task_wait; with a 2-thread task on a 2-CPU machine the main thread would otherwise run
# one thread's share itself (and be reported as that thread, not as waiting)
UTC_LEND=0 UTC_WATCHDOG=0.5 timeout 120 "$utcrun" -np "$np" "$prog" 2 >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/err"
[ $rc = 0 ] || fail "UTC_WATCHDOG=0.5: exit status $rc"
grep -q "rob_watchdog: done" "$tmp/out" || fail "the program did not finish its steps"
writer=0 reader=$((np - 1))
expect() { # expect REGEX WHAT
    grep -Eq "$1" "$tmp/err" || fail "no watchdog line for $2 (wanted /$1/)"
}
expect "^utc\[$reader\] watchdog: task 'wd_reader' \(id [0-9]+\) thread 0 \(tid [0-9]+\) has waited [0-9.]+ s on conduit 0: a read of tag 7 from rank $writer\$" \
    "the reader's thread 0 in utc_conduit_read"
expect "^utc\[$reader\] watchdog: task 'wd_reader' \(id [0-9]+\) thread 1 .* on conduit 0: a read of tag 7 from rank $writer\$" \
    "the reader's thread 1 (waiting for thread 0's transfer)"
expect "^utc\[$reader\] watchdog: the main thread \(tid [0-9]+\) has waited .* utc_task_init/wait of task 'wd_reader'" \
    "the main thread in utc_task_wait"
expect "watchdog: task 'wd_barrier' .* the task barrier of task 'wd_barrier'" "a task barrier"
expect "watchdog: task 'wd_gdata' .* RMA: a global shared data team step of task 'wd_gdata'" \
    "a global shared data barrier"
expect "^utc\[$reader\] watchdog: task 'wd_signal' .* on RMA: global shared data of task 'wd_signal' \(id [0-9]+\) on rank $reader: utc_gdata_wait_until on element 3 of this rank's part of the object at window offset 0 \(8 elements per rank\): waits until it is >= 5, last seen 2\$" \
    "a signal wait (utc_gdata_wait_until) naming its element, comparison and values"
# a shared conduit in share mode: the real ranks of the other side, never -1
expect "^utc\[$reader\] watchdog: task 'wd_worker' \(id [0-9]+\) thread 0 .* on conduit [0-9]+: a read of tag 5 from rank $writer: shared conduit [0-9]+ \(share mode, credit window 2\): reader 0 waits for a message of tag 5 from its 1 writer\(s\), on rank $writer; 2 asked for and not yet read, 1 read\(s\) waiting\$" \
    "a share-mode reader waiting for its writer"
readers=$( [ "$np" = 1 ] && echo "rank 0" || echo "ranks 0, $reader" )
expect "^utc\[$writer\] watchdog: task 'wd_dispatch' \(id [0-9]+\) thread 0 .* on conduit [0-9]+: a write of tag 5 to rank $reader .*: shared conduit [0-9]+ \(share mode\): writer 0 waits for a reader to ask for a message of tag 5 \(2 reader\(s\), on $readers\)\$" \
    "a share-mode writer waiting for an ask"
if grep -E "watchdog: .*rank -1" "$tmp/err"; then
    fail "a watchdog line names rank -1"
fi
# a collective one rank comes late to names the call, its number and the late rank; the
# late rank's other thread waits for its sibling
last=$((np - 1))
for step in "wd_coll:utc_task_allreduce" "wd_coll0:utc_task_alltoallv"; do
    task=${step%%:*} call=${step#*:}
    on="a task collective of task '$task' \(id [0-9]+\): $call #2"
    if [ "$np" -gt 1 ]; then
        expect "^utc\[0\] watchdog: task '$task' .* on $on: waiting for rank $last \(still at #1\)\$" \
            "$call with rank $last late (on rank 0)"
    fi
    expect "^utc\[$last\] watchdog: task '$task' .* on $on: waiting for this rank's threads of the task \(1 of 2 here\)\$" \
        "$call on the late rank, whose thread 0 is late"
done
# a 2 s wait with a 0.5 s threshold is reported at 0.5 s and 1 s, never with less than 0.5 s
if grep -E "watchdog: .* has waited 0\.[0-4] s" "$tmp/err"; then
    fail "a wait shorter than the threshold was reported"
fi

# the collectives again where the board is read with MPI_Rget (a window outside shared
# memory: one-sided component UCX); a late rank that makes no MPI call may not answer
if [ "$np" -gt 1 ]; then
    UTC_LEND=0 UTC_WATCHDOG=0.5 timeout 120 "$utcrun" -np "$np" --mca osc ucx "$prog" 2 coll \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if grep -q "rob_watchdog: done" "$tmp/out"; then
        expect "^utc\[0\] watchdog: task 'wd_coll' .*: utc_task_allreduce #2: (waiting for rank $last \(still at #1\)|no answer from rank $last within 1 s: not in an MPI call, so most likely not arrived)\$" \
            "utc_task_allreduce with rank $last late (osc ucx, on rank 0)"
        expect "^utc\[0\] watchdog: task 'wd_coll0' .*: utc_task_alltoallv #2: (waiting for rank $last|no answer from rank $last)" \
            "utc_task_alltoallv with rank $last late (osc ucx, on rank 0)"
    elif grep -q "osc" "$tmp/err" && [ $rc != 0 ]; then
        echo "(no one-sided component UCX here: that run is skipped)"
    else
        cat "$tmp/err"
        fail "osc ucx: exit status $rc"
    fi
fi

UTC_LOG=debug timeout 120 "$utcrun" -np "$np" "$prog" 0.3 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 0 ] || fail "without UTC_WATCHDOG: exit status $rc"
on=$(grep -c "^utc\[[0-9]*\] debug: watchdog: reporting waits longer than 60 s\$" "$tmp/err")
[ "$on" = "$np" ] || fail "without UTC_WATCHDOG: $on of $np ranks say the watchdog is on at 60 s"
if grep -v "debug: watchdog: reporting waits longer than" "$tmp/err" | grep -q "watchdog"; then
    fail "watchdog lines for waits under the default 60 s"; cat "$tmp/err"
fi

UTC_WATCHDOG=soon timeout 120 "$utcrun" -np "$np" "$prog" 0.1 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 0 ] || fail "UTC_WATCHDOG=soon: exit status $rc"
grep -q "UTC_WATCHDOG='soon' is not a number of seconds" "$tmp/err" ||
    fail "UTC_WATCHDOG=soon: no warning: $(head -c 300 "$tmp/err")"

[ $fails = 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "watchdog at $np rank(s): all checks passed"
