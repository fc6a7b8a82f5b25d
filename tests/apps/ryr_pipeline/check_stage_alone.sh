#!/usr/bin/env bash
# check_stage_alone.sh UTCRUN RYR: ryr --preset gpu --stage-alone runs each GPU stage's
# kernels alone (the benchmark beside the pipeline's pace): for raytrace, yuv and rotate,
# exit status 0 and one JSON line on rank 0 naming the stage, the frames asked for and a
# positive rate. No figure is judged. Without a usable GPU: skipped (77), or failed under
# UTC_REQUIRE_GPU=1 (tests/common/gpu_skip.sh).
set -u
. "$(dirname "$0")/../../common/gpu_skip.sh"
utcrun=$1 ryr=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/ryr-stage-alone-XXXXXX")
trap 'rm -rf "$work"' EXIT
for stage in raytrace yuv rotate; do
    "$utcrun" -np 1 "$ryr" --preset gpu --size 48x32 --frames 3 --no-output --json \
        --stage-alone "$stage" >"$work/out" 2>"$work/err" </dev/null
    rc=$?
    cat "$work/err"
    if [ "$rc" = 2 ] && grep -q "needs a GPU" "$work/err"; then
        gpu_skip "ryr --preset gpu needs a GPU (above)"
    fi
    [ "$rc" = 0 ] || { cat "$work/out"; echo "FAILED: --stage-alone $stage exited $rc"; exit 1; }
    python3 - "$work/out" "$stage" <<'PY' || { cat "$work/out"; exit 1; }
import json, sys
d = json.loads(open(sys.argv[1]).read())
assert d["stage_alone"] == sys.argv[2] and d["frames"] == 3, d
assert d["fps"] > 0 and d["seconds"] > 0, d
PY
done
echo "ryr --stage-alone: raytrace, yuv and rotate: passed"
