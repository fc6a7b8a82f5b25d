#!/usr/bin/env bash
# netns-cluster.sh: run the multi-rank tests across "hosts" made of network namespaces.
#
#   scripts/netns-cluster.sh [--nodes 2|3] [--build DIR] [--quick] [--only REGEX] [--keep]
#                            [--verbose]
#
# Makes NODES network namespaces on this machine (utcnode1..NODES), each with lo up and one
# veth to a bridge that lives in a namespace of its own (addresses 10.99.0.1..NODES/24
# on the project's veths only; the root namespace keeps no interface, address or route of
# ours). Each node gets its own host name (a UTS namespace) and /etc/hosts
# (/etc/netns/NAME/hosts). mpirun runs on utcnode1 and starts its daemons on the others
# through `ip netns exec` (a small remote-shell agent instead of ssh), so ranks on different
# nodes talk over TCP only, as on a real cluster: scripts/utcrun --hostfile adds
# --mca osc ucx --mca btl tcp,self --mca pml ob1.
#
# Runs, at 2 and 3 ranks spread over the nodes (--map-by node): the conduit and global
# shared data suites, the task suites, the RYR sample (--verify: frames bit-equal to the
# sequential path), the soak and watchdog programs and the killed-rank fault test.
# --quick runs fewer of them (and gives gshared_rma's open-ended phases 5 s each rather than
# 20: UTC_TEST_RMA_BUDGET_S), --only those whose name matches REGEX. Needs root, `ip`,
# `unshare` and a build (default: build/).
# Exit 0: all passed; 1: a failure; 77: cannot make namespaces here (skipped).
# Everything is removed on exit, also on failure or Ctrl-C (--keep leaves it for a look).
set -uo pipefail

nodes=3 build="" quick=0 keep=0 verbose=0 only=""
root=$(cd "$(dirname "$0")/.." && pwd)
while [ $# -gt 0 ]; do
    case "$1" in
        --nodes) nodes=${2:-}; shift 2 ;;
        --build) build=${2:-}; shift 2 ;;
        --quick) quick=1; shift ;;
        --only) only=${2:-}; shift 2 ;;
        --keep) keep=1; shift ;;
        --verbose|-v) verbose=1; shift ;;
        -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "netns-cluster.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
case "$nodes" in 2|3) ;; *) echo "netns-cluster.sh: --nodes must be 2 or 3" >&2; exit 2 ;; esac
build=${build:-$root/build}
build=$(cd "$build" 2>/dev/null && pwd) || { echo "netns-cluster.sh: no build folder" >&2; exit 2; }

skip() { echo "SKIPPED: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
for tool in ip unshare mpirun hostname; do
    command -v "$tool" >/dev/null || skip "needs '$tool'"
done
[ -x "$build/tests/conduits/test_conduit_basic" ] || skip "no tests built in $build"

# Names unique to this run, so two runs (or a left-over) never collide.
tag="u$$"
br_ns="utc-${tag}-br"
ns_of() { echo "utc-${tag}-n$1"; }
work=$(mktemp -d /tmp/utc-netns.XXXXXX)
created=()

cleanup() {
    local rc=$?
    if [ "$keep" = 1 ]; then
        echo "netns-cluster.sh: --keep: namespaces ${created[*]} and $work left in place"
        exit $rc
    fi
    for ns in "${created[@]}"; do
        # processes left in a namespace (a hung daemon) would keep it alive
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
        ip netns del "$ns" 2>/dev/null
        rm -rf "/etc/netns/$ns"
    done
    rm -rf "$work"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the network ----
ip netns add "$br_ns" 2>/dev/null || skip "cannot create a network namespace here"
created+=("$br_ns")
ip -n "$br_ns" link set lo up
ip -n "$br_ns" link add utcbr0 type bridge || skip "no bridge support"
ip -n "$br_ns" link set utcbr0 up
for i in $(seq 1 "$nodes"); do
    ns=$(ns_of "$i")
    ip netns add "$ns" || { echo "cannot create $ns"; exit 1; }
    created+=("$ns")
    # both ends are created inside the bridge namespace, then one moves to the node: no
    # interface of ours ever appears in the root namespace
    ip -n "$br_ns" link add "veth$i" type veth peer name eth0 netns "$ns" || exit 1
    ip -n "$br_ns" link set "veth$i" master utcbr0 up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "10.99.0.$i/24" dev eth0
    ip -n "$ns" link set eth0 up
    mkdir -p "/etc/netns/$ns"
    {
        echo "127.0.0.1 localhost"
        for j in $(seq 1 "$nodes"); do echo "10.99.0.$j utcnode$j"; done
    } >"/etc/netns/$ns/hosts"
    mkdir -p "$work/tmp$i"
done
if command -v ping >/dev/null; then
    for i in $(seq 2 "$nodes"); do
        ip netns exec "$(ns_of 1)" ping -c 1 -W 2 "10.99.0.$i" >/dev/null ||
            { echo "FAILED: utcnode1 cannot reach 10.99.0.$i"; exit 1; }
    done
fi

# ---- how mpirun reaches the other nodes ----
# on_node N CMD...: run CMD on node N (its network, host name and temporary folder).
cat >"$work/on_node" <<'EOF'
#!/bin/sh
# on_node N CMD...: run CMD on node N: its network namespace, host name, temporary folder.
n=$1; shift
exec ip netns exec @NS@$n unshare --uts /bin/sh -c \
    'hostname "utcnode$1" && TMPDIR="@WORK@/tmp$1" && export TMPDIR && shift && exec "$@"' \
    sh "$n" "$@"
EOF
# The remote-shell agent: Open MPI calls it as `agent HOST COMMAND...` (like ssh), where
# COMMAND is shell text.
cat >"$work/agent" <<'EOF'
#!/bin/sh
# Open MPI's remote shell here: agent HOST COMMAND... runs COMMAND on that node.
host=$1; shift
case "$host" in utcnode[1-9]) ;; *) echo "agent: unknown host '$host'" >&2; exit 255 ;; esac
exec @WORK@/on_node "${host#utcnode}" /bin/sh -c "$*"
EOF
sed -i "s|@NS@|utc-${tag}-n|g; s|@WORK@|$work|g" "$work/on_node" "$work/agent"
chmod +x "$work/on_node" "$work/agent"
: >"$work/hosts"
for i in $(seq 1 "$nodes"); do echo "utcnode$i slots=2" >>"$work/hosts"; done

# the caller's own UTC_MPIRUN_ARGS come last (e.g. "-x UTC_WATCHDOG")
export UTC_MPIRUN_ARGS="--map-by node --mca plm_rsh_agent $work/agent \
--mca btl_tcp_if_include 10.99.0.0/24 --mca oob_tcp_if_include 10.99.0.0/24 \
-x UCX_TLS=tcp,self -x UCX_NET_DEVICES=eth0 -x PATH${LD_LIBRARY_PATH:+ -x LD_LIBRARY_PATH} \
${UTC_MPIRUN_ARGS:-}"
utcrun="$root/scripts/utcrun"

passed=0 failed=0 failures=()
# check NAME NP CMD...: run a program over the nodes through utcrun --hostfile.
check() {
    local name=$1 np=$2
    shift 2
    if [ -n "$only" ] && ! grep -Eq -- "$only" <<<"$name"; then return; fi
    local t0=$SECONDS
    "$work/on_node" 1 timeout 300 "$utcrun" --hostfile "$work/hosts" -np "$np" "$@" \
        >"$work/out" 2>&1
    local rc=$?
    if [ $rc = 0 ]; then
        passed=$((passed + 1))
        printf '  %-44s np%d  passed  %3ds\n' "$name" "$np" $((SECONDS - t0))
        [ "$verbose" = 0 ] || tail -5 "$work/out"
    else
        failed=$((failed + 1))
        failures+=("$name np$np")
        printf '  %-44s np%d  FAILED (exit %d)\n' "$name" "$np" $rc
        tail -30 "$work/out" | sed 's/^/      /'
    fi
}

# A first run that shows the ranks really are on different hosts.
"$work/on_node" 1 "$utcrun" --hostfile "$work/hosts" -np "$nodes" --verbose hostname \
    >"$work/out" 2>&1
echo "netns-cluster.sh: $nodes nodes; ranks report host names: $(grep -v utcrun "$work/out" |
    sort | tr '\n' ' ')"
[ "$(grep -c '^utcnode' "$work/out")" = "$nodes" ] &&
    [ "$(grep '^utcnode' "$work/out" | sort -u | wc -l)" = "$nodes" ] ||
    { echo "FAILED: the ranks do not run on $nodes different nodes:"; cat "$work/out"; exit 1; }
grep -q -- "--mca osc ucx --mca btl tcp,self --mca pml ob1" "$work/out" ||
    { echo "FAILED: utcrun did not choose the multi-host transports"; cat "$work/out"; exit 1; }

t="$build/tests"
if [ "$quick" = 1 ]; then
    # over TCP the phases make a few thousand round trips per thread in 5 s
    export UTC_TEST_RMA_BUDGET_S=${UTC_TEST_RMA_BUDGET_S:-5}
    UTC_MPIRUN_ARGS+=" -x UTC_TEST_RMA_BUDGET_S"
    conduit_suites="basic tags modes"
    gshared_suites="rma collectives"
    nps="$nodes"
else
    conduit_suites="basic stress tags async owned multi errors cpu modes"
    gshared_suites="rma alloc errors collectives"
    nps="2 3"
fi
for np in $nps; do
    for s in $conduit_suites; do check "conduit_$s" "$np" "$t/conduits/test_conduit_$s"; done
    for s in $gshared_suites; do check "gshared_$s" "$np" "$t/gshared/test_gshared_$s"; done
    check "task_lifecycle" "$np" "$t/framework/test_task_lifecycle"
    check "task_errors" "$np" "$t/framework/test_task_errors"
    if [ -x "$build/apps/ryr/ryr" ]; then
        small=(--size 96x64 --frames 3 --angle 30 --orbit 20 --verify --no-output)
        for preset in v1 v2 v3; do # v4 and v5 need a GPU
            check "ryr --preset $preset --verify" "$np" "$build/apps/ryr/ryr" --preset "$preset" \
                "${small[@]}"
        done
    fi
done
if [ -x "$build/apps/ryr/ryr" ] && [ "$nodes" = 3 ]; then
    check "ryr placed over 3 hosts --verify" 3 "$build/apps/ryr/ryr" --preset v3 \
        --place raytrace=0,1,2 --place yuv=1 --place rotate=2,0,1 --place output=0 \
        --size 96x64 --frames 3 --verify --no-output
fi
if [ -x "$t/robustness/rob_soak" ]; then
    # With 2 hosts, two of the 3 ranks share one and talk through the node-local transport,
    # the third over TCP: both transports in one soak.
    check "soak (200,000 messages)" 3 "$t/robustness/rob_soak" --messages 200000
    check "task failure surfaces, clean shut-down" 3 "$t/robustness/rob_fault" taskfail
fi

# A rank killed on one host ends the job on every host, non-zero, within 10 s.
if [ -x "$t/robustness/rob_fault" ] && { [ -z "$only" ] || grep -Eq -- "$only" <<<"killed"; }; then
    t0=$(date +%s.%N)
    "$work/on_node" 1 timeout 60 "$utcrun" --hostfile "$work/hosts" -np 3 \
        "$t/robustness/rob_fault" kill "$work/killed_at" >"$work/out" 2>&1
    rc=$?
    end=$(date +%s.%N)
    took=$(awk -v a="$(cat "$work/killed_at" 2>/dev/null || echo "$t0")" -v b="$end" \
        'BEGIN { printf "%.1f", b - a }')
    if [ $rc != 0 ] && [ $rc != 124 ] && [ -s "$work/killed_at" ] &&
        awk -v t="$took" 'BEGIN { exit !(t < 10) }'; then
        passed=$((passed + 1))
        printf '  %-44s np3  passed  (job ended %ss after the kill, exit %d)\n' \
            "rank killed with SIGKILL" "$took" $rc
    else
        failed=$((failed + 1))
        failures+=("rank killed with SIGKILL")
        printf '  %-44s np3  FAILED (exit %d, %ss after the kill)\n' "rank killed with SIGKILL" \
            $rc "$took"
        tail -20 "$work/out" | sed 's/^/      /'
    fi
fi

echo "netns-cluster.sh: $nodes nodes over TCP: $passed passed, $failed failed"
[ $failed = 0 ] || { printf '  failed: %s\n' "${failures[@]}"; exit 1; }
exit 0
