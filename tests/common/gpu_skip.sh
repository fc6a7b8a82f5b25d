#!/usr/bin/env bash
# The rule for GPU runs that find no usable GPU: skipped (exit 77), or failed (exit 1)
# when UTC_REQUIRE_GPU=1 (scripts/gpu-check.sh sets it), so that a GPU CUDA cannot use
# (a driver older than the toolkit, the stub library, no device) never passes as green.
#
#   . tests/common/gpu_skip.sh; gpu_skip "REASON"     in a test driver (bash)
#   tests/common/gpu_skip.sh PROGRAM ARGS...          runs PROGRAM; its exit 77 follows
#                                                     the rule, other statuses pass through
gpu_skip() {
    if [ "${UTC_REQUIRE_GPU:-0}" = 1 ]; then
        echo "FAILED: UTC_REQUIRE_GPU=1, and no usable GPU: $*"
        exit 1
    fi
    echo "SKIPPED: $*"
    exit 77
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    [ $# -gt 0 ] || { echo "usage: gpu_skip.sh PROGRAM ARGS..." >&2; exit 2; }
    "$@"
    rc=$?
    [ "$rc" = 77 ] && gpu_skip "$(basename "$1") exited 77 (skipped: see its output above)"
    exit "$rc"
fi
