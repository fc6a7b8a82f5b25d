#!/usr/bin/env bash
# check_gpu_refused.sh UTCRUN NP RYR: where there is no usable GPU (a build without CUDA, or
# no device), ryr --preset gpu and --stage-alone are refused before any work: exit status
# 2, rank 0 says "--preset gpu needs a GPU" and CUDA's (or the build's) reason, once, and
# the output folder is not made. Skipped (77) where a GPU is there: nothing to refuse.
set -u
utcrun=$1 np=$2 ryr=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/ryr-gpu-refused-XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
checks=0
for extra in "" "--stage-alone raytrace" "--stage-alone rotate --json"; do
    out=$work/out
    # shellcheck disable=SC2086 # $extra is words
    "$utcrun" -np "$np" "$ryr" --preset gpu --size 32x16 --frames 2 --out "$out" $extra \
        >"$work/stdout" 2>"$work/stderr" </dev/null
    rc=$?
    cat "$work/stderr"
    if [ "$rc" = 0 ]; then
        echo "SKIPPED: ryr --preset gpu ran: this machine has a GPU (nothing to refuse)"
        exit 77
    fi
    [ "$rc" = 2 ] || fail "ryr --preset gpu $extra exited $rc, not 2"
    n=$(grep -c -- "ryr: --preset gpu needs a GPU, and none is available" "$work/stderr")
    [ "$n" = 1 ] || fail "the refusal was said $n times, not once (rank 0 alone)"
    grep -q "^ryr: no GPU: ." "$work/stderr" || fail "no reason for the missing GPU"
    [ ! -e "$out" ] || fail "the output folder was made before the refusal"
    [ ! -s "$work/stdout" ] || fail "something went to standard output: $(cat "$work/stdout")"
    checks=$((checks + 1))
done
echo "$checks passed, 0 failed"
