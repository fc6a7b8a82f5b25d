#!/usr/bin/env bash
# check_binding_mask.sh MODE NP UTCRUN PROGRAM: run the binding suite at NP ranks with a
# CPU mask narrower than the machine, as Slurm, cgroups, taskset or mpirun --bind-to leave
# it, and check that binding keeps to it.
#   taskset1, taskset2  the whole job under `taskset -c` with the last 1 or 2 CPUs this
#                       process may use (UTC_TEST_EXPECT_CPUS tells the suite which)
#   bindcore            utcrun --bind-to core: each rank on a core of its own (disjoint
#                       masks; UTC_TEST_EXPECT_DISJOINT=1)
# Each rank has fewer allowed cores than the suite's 4-thread tasks: the runtime must say
# so once per rank (a warning), no more. Exit 77 when this machine has too few CPUs.
set -uo pipefail
mode=$1 np=$2 utcrun=$3 prog=$4

# the CPUs this process may use, one per line
cpus() {
    local list
    list=$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)
    tr ',' '\n' <<<"$list" | while IFS=- read -r a b; do seq "$a" "${b:-$a}"; done
}
ncpus=$(cpus | wc -l)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
case "$mode" in
    taskset1|taskset2)
        k=${mode#taskset}
        [ "$ncpus" -ge "$k" ] || { echo "SKIPPED: needs $k CPUs, has $ncpus"; exit 77; }
        command -v taskset >/dev/null || { echo "SKIPPED: no taskset"; exit 77; }
        list=$(cpus | tail -n "$k" | paste -sd, -)
        echo "running under taskset -c $list"
        UTC_TEST_EXPECT_CPUS=$list UTC_MPIRUN_ARGS="${UTC_MPIRUN_ARGS:-} -x UTC_TEST_EXPECT_CPUS" \
            taskset -c "$list" "$utcrun" -np "$np" "$prog" >"$out" 2>&1
        rc=$? ;;
    bindcore)
        ncores=$(nproc)
        [ "$ncores" -ge "$np" ] || { echo "SKIPPED: needs $np CPUs"; exit 77; }
        UTC_TEST_EXPECT_DISJOINT=1 UTC_MPIRUN_ARGS="${UTC_MPIRUN_ARGS:-} -x UTC_TEST_EXPECT_DISJOINT" \
            "$utcrun" -np "$np" --bind-to core "$prog" >"$out" 2>&1
        rc=$? ;;
    *) echo "check_binding_mask.sh: unknown mode '$mode'" >&2; exit 2 ;;
esac
cat "$out"
[ "$rc" = 0 ] || { echo "FAILED: the suite exited $rc"; exit 1; }
warnings=$(grep -c "more threads on this rank than" "$out")
if [ "$warnings" != "$np" ]; then
    echo "FAILED: $warnings warnings about too few cores, expected one per rank ($np)"
    exit 1
fi
echo "PASSED: binding within the mask ($mode, $np ranks), one warning per rank"
