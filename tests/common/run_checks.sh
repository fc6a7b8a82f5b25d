# Sourced by the ctest drivers that run a program through utcrun and check what it did
# (tests/apps/cluster/run_app.sh, tests/apps/taskbench/run_taskbench.sh). The driver sets
# `name` (for messages), runs the program into `out` and `rc`, then uses these.

# The program's output without mpirun's own lines about a rank's exit status.
show() {
    printf '%s\n' "$out" | grep -v -e '^---' -e 'Primary job' -e 'non-zero' \
        -e 'Per user-direction' -e 'Process name' -e 'Exit code' -e 'the job to be' \
        -e 'first process' -e '^ *$'
}

fail() { show | tail -n 40; echo "$name: FAILED: $*" >&2; exit 1; }

# The expectations both drivers share: fail:C:REGEX (exit status C, output matching REGEX,
# grep -E) and ok:REGEX (exit 0, output matching REGEX). Returns 1 for any other.
check_common() {
    local expect=$1 code regex
    case "$expect" in
    fail:*)
        code=${expect#fail:}; code=${code%%:*}; regex=${expect#fail:*:}
        [ "$rc" = "$code" ] || fail "exit status $rc, expected $code"
        printf '%s\n' "$out" | grep -qE -- "$regex" || fail "output does not match /$regex/" ;;
    ok:*)
        regex=${expect#ok:}
        [ "$rc" = 0 ] || fail "exit status $rc, expected 0"
        printf '%s\n' "$out" | grep -qE -- "$regex" || fail "output does not match /$regex/" ;;
    *)
        return 1 ;;
    esac
}
