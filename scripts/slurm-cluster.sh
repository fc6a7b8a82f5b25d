#!/usr/bin/env bash
# slurm-cluster.sh: start a real Slurm (Debian's slurm-wlm and munge) of this run's own,
# submit jobs that run UTC programs through it, check them, and stop it.
#
#   scripts/slurm-cluster.sh [--nodes 1|2] [--build DIR] [--keep] [--verbose]
#
# --nodes 1 (default): munged, slurmctld and one slurmd for this host alone, on 127.0.0.1
#   with ports that were free when the run began. Jobs: apps/examples/slurm/ryr.sbatch
#   (ryr --verify at 2 ranks through utcrun, which launches with srun --mpi=pmix), and one
#   that runs a conduit test at 2 ranks through utcrun, ryr through plain srun, the
#   binding suite with each task bound to a core of its own by Slurm (task/affinity), and
#   utcrun -np 3 in a 2-task job (refused, with a message).
# --nodes 2: two slurmd nodes (utcnode1, utcnode2), each in a network namespace and UTS
#   namespace of this run's making, joined by veths to a bridge in a namespace of its own
#   (10.99.0.1-2/24 there only; the root namespace gets no interface, address or route),
#   as scripts/netns-cluster.sh does for mpirun; slurmctld runs on utcnode1. One job spans
#   both nodes, one task on each: ranks report different hosts, ryr --verify and a conduit
#   test run with a rank on each node, over TCP.
# Configuration, state and logs go under DIR/slurm-cluster/run.PID (DIR: the build, default
# build/), removed at the end unless --keep. Every daemon started here is stopped by its
# pid (also on failure or Ctrl-C); so are the namespaces' processes.
# Exit 0: all passed; 1: a failure; 77: skipped (not root, Slurm or munge not installed,
# no network namespaces for --nodes 2). With UTC_REQUIRE_TEST_TOOLS=1 (test.sh, which
# installs them) missing Slurm or munge is a failure, not a skip.
set -uo pipefail

nodes=1 build="" keep=0 verbose=0
root=$(cd "$(dirname "$0")/.." && pwd)
while [ $# -gt 0 ]; do
    case "$1" in
        --nodes) nodes=${2:-}; shift 2 ;;
        --build) build=${2:-}; shift 2 ;;
        --keep) keep=1; shift ;;
        --verbose|-v) verbose=1; shift ;;
        -h|--help) sed -n '2,/^set /s/^# \{0,1\}//p' "$0" | grep -v '^set '; exit 0 ;;
        *) echo "slurm-cluster.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
case "$nodes" in 1|2) ;; *) echo "slurm-cluster.sh: --nodes must be 1 or 2" >&2; exit 2 ;; esac
build=${build:-$root/build}
build=$(cd "$build" 2>/dev/null && pwd) || { echo "slurm-cluster.sh: no build folder" >&2; exit 2; }

skip() { echo "SKIPPED: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (Slurm's daemons, namespaces)"
for tool in munged mungekey slurmctld slurmd sbatch squeue sinfo scontrol scancel srun; do
    if ! command -v "$tool" >/dev/null; then
        [ "${UTC_REQUIRE_TEST_TOOLS:-0}" != 1 ] ||
            { echo "FAILED: UTC_REQUIRE_TEST_TOOLS=1 and '$tool' is missing (scripts/install-deps.sh --test installs slurm-wlm and munge)"; exit 1; }
        skip "needs '$tool' (apt-get install slurm-wlm munge, or scripts/install-deps.sh --test)"
    fi
done
ryr=$build/apps/ryr/ryr
conduit_test=$build/tests/conduits/test_conduit_basic
binding_test=$build/tests/framework/test_task_binding
for f in "$ryr" "$conduit_test" "$binding_test"; do
    [ -x "$f" ] || skip "no $f in the build"
done
# a job of 2 tasks of one core each; with one CPU it would wait for ever
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
if [ "$nodes" = 2 ]; then
    for tool in ip unshare nsenter; do command -v "$tool" >/dev/null || skip "needs '$tool'"; done
fi

work=$build/slurm-cluster/run.$$
# a UNIX socket's path must fit in 108 bytes
if [ ${#work} -gt 80 ]; then work=$(mktemp -d /tmp/utc-slurm.XXXXXX); fi
rm -rf "$work"
mkdir -p "$work" && chmod 755 "$work" || exit 1
pids=()    # daemons started here, stopped in reverse order
created=() # network namespaces made here
tag="s$$"
ns_of() { echo "utc-${tag}-n$1"; }
br_ns="utc-${tag}-br"

stop_pid() { # stop_pid PID: TERM, up to 10 s, then KILL
    local pid=$1 i
    kill -TERM "$pid" 2>/dev/null || return 0
    for i in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.2
    done
    kill -KILL "$pid" 2>/dev/null
}
cleanup() {
    local rc=$? i
    trap - EXIT INT TERM
    # jobs still running end first (their steps belong to slurmd)
    if [ -n "${jobs_started:-}" ]; then
        for j in $jobs_started; do on_ctl scancel "$j" 2>/dev/null; done
        sleep 1
    fi
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do stop_pid "${pids[$i]}"; done
    for ns in "${created[@]}"; do
        # what is left in a namespace of ours (a job's step, a hung daemon) would keep it
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
        ip netns del "$ns" 2>/dev/null
    done
    if [ "$keep" = 1 ]; then
        echo "slurm-cluster.sh: --keep: $work left in place (daemons stopped)"
    else
        rm -rf "$work"
        rmdir "$build/slurm-cluster" 2>/dev/null
    fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
    echo "FAILED: $*"
    for f in "$work"/*.log; do
        [ -f "$f" ] || continue
        echo "---- $(basename "$f") (last lines)"
        tail -15 "$f" | sed 's/^/    /'
    done
    exit 1
}

# ---- where the daemons run: this host, or the nodes' namespaces ----
if [ "$nodes" = 1 ]; then
    node_exec() { shift; exec "$@"; }
    ctl_addr=127.0.0.1
    ctl_host=$(hostname -s)
    # two ports free now (another run picks others); fixed fallbacks from the pid
    read -r ctl_port node_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])' 2>/dev/null ||
        echo $((20000 + $$ % 20000)) $((40001 + $$ % 20000)))
else
    ip netns add "$br_ns" 2>/dev/null || skip "cannot create a network namespace here"
    created+=("$br_ns")
    ip -n "$br_ns" link set lo up
    ip -n "$br_ns" link add utcbr0 type bridge || skip "no bridge support"
    ip -n "$br_ns" link set utcbr0 up
    for i in 1 2; do
        ns=$(ns_of $i)
        ip netns add "$ns" || fail "cannot create $ns"
        created+=("$ns")
        # both ends made in the bridge's namespace, one moved to the node: none in ours
        ip -n "$br_ns" link add "veth$i" type veth peer name eth0 netns "$ns" || fail "veth"
        ip -n "$br_ns" link set "veth$i" master utcbr0 up
        ip -n "$ns" link set lo up
        ip -n "$ns" addr add "10.99.0.$i/24" dev eth0
        ip -n "$ns" link set eth0 up
    done
    printf '127.0.0.1 localhost\n10.99.0.1 utcnode1\n10.99.0.2 utcnode2\n' >"$work/hosts"
    # node_exec N CMD...: become CMD on node N: its network, host name and /etc/hosts.
    # (nsenter, not `ip netns exec`, which mounts a /sys of its own, without the cgroup
    # file system that slurmd needs.)
    node_exec() {
        local n=$1
        shift
        exec nsenter --net="/run/netns/$(ns_of "$n")" unshare --uts --mount /bin/sh -c \
            'mount --bind "$1/hosts" /etc/hosts && hostname "utcnode$2" && shift 2 && exec "$@"' \
            sh "$work" "$n" "$@"
    }
    ctl_addr=10.99.0.1 ctl_host=utcnode1
    ctl_port=6817 node_port=6818 # namespaces of this run's own: no one else's ports
fi
# on_node N CMD...: run CMD there and wait; start_on N CMD &: CMD is the background job
# itself (so $! is its pid)
on_node() { (node_exec "$@"); }
start_on() { node_exec "$@"; }
on_ctl() { on_node 1 "$@"; }

# ---- munge: a key of this run's own, one munged for every node ----
mungekey --create --keyfile="$work/munge.key" --force >/dev/null 2>&1 ||
    dd if=/dev/urandom of="$work/munge.key" bs=1024 count=1 2>/dev/null
chmod 600 "$work/munge.key"
munged -F --force --socket="$work/munge.sock" --key-file="$work/munge.key" \
    --pid-file="$work/munged.pid" --log-file="$work/munged.log" \
    --seed-file="$work/munged.seed" >>"$work/munged.log" 2>&1 &
pids+=($!)

# ---- slurm.conf ----
# the node as this host's slurmd sees it (CPUs, sockets, cores, threads)
hw=$(slurmd -C 2>/dev/null | head -1 | tr ' ' '\n' |
    grep -E '^(CPUs|Boards|SocketsPerBoard|CoresPerSocket|ThreadsPerCore)=' | tr '\n' ' ')
[ -n "$hw" ] || hw="CPUs=$(nproc)"
mkdir -p "$work/state"
{
    echo "ClusterName=utc$$"
    echo "SlurmctldHost=$ctl_host($ctl_addr)"
    echo "SlurmctldPort=$ctl_port"
    echo "SlurmdPort=$node_port"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    echo "AuthInfo=socket=$work/munge.sock"
    echo "StateSaveLocation=$work/state"
    echo "SlurmdSpoolDir=$work/spool-%n"
    echo "SlurmctldPidFile=$work/slurmctld.pid"
    echo "SlurmdPidFile=$work/slurmd-%n.pid"
    echo "SlurmctldLogFile=$work/slurmctld.log"
    echo "SlurmdLogFile=$work/slurmd-%n.log"
    echo "PlugStackConfig=$work/plugstack.conf"
    echo "MailProg=/bin/true"
    # no cgroups needed: processes tracked by parentage, tasks bound with sched_setaffinity
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/affinity"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core"
    echo "SchedulerType=sched/builtin"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "MpiDefault=none"
    echo "ReturnToService=2"
    echo "KillWait=5"
    echo "MinJobAge=300"
    echo "DebugFlags=NO_CONF_HASH"
    echo "FirstJobId=$((1000 + $$ % 100000))" # names of job folders unlike another run's
    for i in $(seq 1 "$nodes"); do
        addr=127.0.0.1
        [ "$nodes" = 1 ] || addr=10.99.0.$i
        echo "NodeName=utcnode$i NodeAddr=$addr $hw State=UNKNOWN"
        mkdir -p "$work/spool-utcnode$i"
    done
    echo "PartitionName=utc Nodes=ALL Default=YES MaxTime=10 State=UP"
} >"$work/slurm.conf"
: >"$work/plugstack.conf"
# Slurm's PMIx makes a folder per step, named alike on every node of the step
# (spmix_appdir_UID_JOB.STEP): each node gets a base of its own, in an mpi.conf beside a
# copy of slurm.conf (slurmd reads mpi.conf from its slurm.conf's folder).
node_conf() { # node_conf N: the slurm.conf node N's slurmd reads
    if [ "$nodes" = 1 ]; then echo "$work/slurm.conf"; else echo "$work/node$1/slurm.conf"; fi
}
for i in $(seq 1 "$nodes"); do
    [ "$nodes" = 1 ] || { mkdir -p "$work/node$i" && cp "$work/slurm.conf" "$work/node$i/"; }
    mkdir -p "$work/pmix$i"
    echo "PMIxCliTmpDirBase=$work/pmix$i" >"$(dirname "$(node_conf "$i")")/mpi.conf"
done
export SLURM_CONF=$work/slurm.conf

# ---- the daemons (in the foreground of their own, so that $! is theirs) ----
start_on 1 slurmctld -D -i -f "$SLURM_CONF" >>"$work/slurmctld.log" 2>&1 &
pids+=($!)
for i in $(seq 1 "$nodes"); do
    start_on "$i" slurmd -D -f "$(node_conf "$i")" -N "utcnode$i" >>"$work/slurmd-utcnode$i.log" 2>&1 &
    pids+=($!)
done

# all nodes idle within 60 s
up=0
for _ in $(seq 120); do
    n=$(on_ctl sinfo -h -N -o '%N %t' 2>/dev/null | grep -c ' idle$')
    [ "$n" = "$nodes" ] && { up=1; break; }
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || fail "a daemon (pid $pid) ended"; done
    sleep 0.5
done
[ $up = 1 ] || fail "the $nodes node(s) did not come up: $(on_ctl sinfo -N 2>&1 | tr '\n' ' ')"
echo "slurm-cluster.sh: Slurm $(sinfo -V 2>/dev/null | awk '{print $2}'), $nodes node(s) up:" \
    "$(on_ctl sinfo -h -N -o '%N(%c CPUs)' | tr '\n' ' ')(controller $ctl_addr:$ctl_port)"

jobs_started=""
# submit SCRIPT SBATCH-ARGS...: prints the job id
submit() {
    local script=$1
    shift
    on_ctl sbatch --parsable --chdir="$work" "$@" "$script" 2>>"$work/sbatch.log" | cut -d';' -f1
}
# wait_job ID: until it has ended (120 s at most); 0 if it COMPLETED with exit 0
wait_job() {
    local id=$1 state=""
    for _ in $(seq 240); do
        state=$(on_ctl scontrol show job "$id" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
        case "$state" in
            COMPLETED) return 0 ;;
            FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED)
                echo "job $id ended $state"; return 1 ;;
        esac
        sleep 0.5
    done
    echo "job $id did not end within 120 s (state $state)"
    on_ctl scancel "$id"
    return 1
}

passed=0 failed=0 failures=()
# verdict NAME [WHY]: a check passed (no WHY) or failed (WHY says how)
verdict() {
    if [ -z "${2:-}" ]; then
        passed=$((passed + 1))
        printf '  %-58s passed\n' "$1"
    else
        failed=$((failed + 1))
        failures+=("$1")
        printf '  %-58s FAILED (%s)\n' "$1" "$2"
    fi
}
# waited ID: wait_job, counted as a check of its own (the job ended well)
waited() {
    local why
    why=$(wait_job "$1")
    verdict "job $1 completed, exit 0" "$why"
}
# check NAME FILE PATTERN...: every PATTERN (grep -E) is in FILE
check() {
    local name=$1 file=$2 miss=""
    shift 2
    for pat in "$@"; do grep -Eq -- "$pat" "$file" 2>/dev/null || miss+=" '$pat'"; done
    verdict "$name" "${miss:+missing$miss}"
    [ -z "$miss" ] || sed 's/^/      /' "$file" 2>/dev/null | tail -40
}

# run_job SCRIPT NAME: submit SCRIPT (its output NAME-JOBID.out), wait for it, count that
# as a check; sets id and out (the output's path)
run_job() {
    id=$(submit "$1" --export=ALL)
    [ -n "$id" ] || fail "sbatch refused $1: $(cat "$work/sbatch.log")"
    jobs_started+=" $id"
    waited "$id"
    out=$work/$2-$id.out
}

export UTCRUN=$root/scripts/utcrun RYR=$ryr
if [ "$nodes" = 1 ]; then
    # The example, as a user submits it.
    run_job "$root/apps/examples/slurm/ryr.sbatch" ryr
    check "example ryr.sbatch: utcrun -> srun, ryr --verify, 2 ranks" "$out" \
        "srun --mpi=pmix -n 2 " "\(verified\)"

    # A job of the test's own: 2 tasks of 1 CPU.
    cat >"$work/steps.sbatch" <<EOF
#!/bin/bash
#SBATCH --ntasks=2 --cpus-per-task=1 --time=00:05:00 --output=steps-%j.out
echo "job \$SLURM_JOB_ID: \$SLURM_NTASKS tasks on \$SLURM_JOB_NODELIST"
"\$UTCRUN" -np 2 "$conduit_test"
echo "STEP conduit rc=\$?"
srun --mpi=pmix -n 2 "\$RYR" --size 96x64 --frames 2 --verify --no-output
echo "STEP srun-ryr rc=\$?"
# task/affinity binds each task to a core of its own: binding keeps within it
UTC_TEST_EXPECT_DISJOINT=1 "\$UTCRUN" -np 2 "$binding_test" 2>&1 | tee binding-\$SLURM_JOB_ID.out
echo "STEP binding rc=\${PIPESTATUS[0]} warnings=\$(grep -c 'more threads on this rank than' binding-\$SLURM_JOB_ID.out)"
"\$UTCRUN" -np 3 "$conduit_test"
echo "STEP too-many rc=\$?"
EOF
    run_job "$work/steps.sbatch" steps
    check "conduit test at 2 ranks through utcrun in a job" "$out" \
        "STEP conduit rc=0" "Suite: conduit"
    check "ryr --verify through plain srun --mpi=pmix" "$out" "STEP srun-ryr rc=0" "\(verified\)"
    check "binding within each task's core (task/affinity), one warning" "$out" \
        "STEP binding rc=0 warnings=2" "rank 0: mask " "rank 1: mask "
    check "utcrun -np 3 in a 2-task job: refused, with a message" "$out" \
        "STEP too-many rc=2" "-np 3 is more ranks than Slurm job $id holds: 2 tasks"
else
    # One job over both nodes, one task on each. The nodes reach each other over eth0
    # only; UCX's shared-memory transports would take them for one host.
    cat >"$work/two.sbatch" <<EOF
#!/bin/bash
#SBATCH --nodes=2 --ntasks-per-node=1 --cpus-per-task=2 --time=00:05:00 --output=two-%j.out
export UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 OMPI_MCA_btl_tcp_if_include=10.99.0.0/24
echo "job \$SLURM_JOB_ID: \$SLURM_NTASKS tasks on \$SLURM_JOB_NODELIST (\$SLURM_JOB_NUM_NODES nodes)"
srun -n 2 hostname | sort | sed 's/^/HOST /'
"\$UTCRUN" -np 2 hostname | sort | sed 's/^/UTCRUN-HOST /'
"\$UTCRUN" --dry-run -np 2 "\$RYR"
"\$UTCRUN" -np 2 "\$RYR" --size 96x64 --frames 3 --verify --no-output
echo "STEP ryr rc=\$?"
"\$UTCRUN" -np 2 "$conduit_test"
echo "STEP conduit rc=\$?"
EOF
    run_job "$work/two.sbatch" two
    check "one job over 2 nodes: a task on each (srun, utcrun)" "$out" \
        "^HOST utcnode1$" "^HOST utcnode2$" "^UTCRUN-HOST utcnode1$" "^UTCRUN-HOST utcnode2$"
    check "utcrun -> srun with the TCP transports for 2 nodes" "$out" \
        "OMPI_MCA_osc=ucx OMPI_MCA_btl=tcp,self OMPI_MCA_pml=ob1 srun --mpi=pmix -n 2 "
    check "ryr --verify, one rank on each node" "$out" "STEP ryr rc=0" "\(verified\)"
    check "conduit test, one rank on each node" "$out" "STEP conduit rc=0"
fi

echo "slurm-cluster.sh: $nodes node(s): $passed passed, $failed failed"
[ "$verbose" = 0 ] || tail -n +1 "$work"/*.out
[ $failed = 0 ] || { printf '  failed: %s\n' "${failures[@]}"; exit 1; }
exit 0
