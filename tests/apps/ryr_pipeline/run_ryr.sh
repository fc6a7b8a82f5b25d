#!/usr/bin/env bash
# run_ryr.sh UTCRUN NP RYR ARGS...: run ryr and check its JSON summary says verified.
# Exits 77 (skipped) when the preset needs a GPU and there is none.
set -u
utcrun=$1 np=$2 ryr=$3
shift 3
out=$("$utcrun" -np "$np" "$ryr" "$@" 2>err.$$)
rc=$?
err=$(cat err.$$); rm -f err.$$
echo "$out"
echo "$err" >&2
if [ $rc -ne 0 ] && grep -qiE "needs a GPU|no GPU" <<<"$err"; then
    echo "SKIPPED: this preset needs a GPU"
    exit 77
fi
[ $rc -eq 0 ] || { echo "FAILED: ryr exited $rc"; exit 1; }
last=$(tail -n 1 <<<"$out")
python3 - "$last" <<'PY' || exit 1
import json, sys
r = json.loads(sys.argv[1])
assert r["verified"] is True, "not verified"
assert r["frames"] == 3 and r["width"] == 96 and r["height"] == 64, r
assert set(r["stages"]) == {"raytrace", "yuv", "rotate", "output"}, r["stages"]
print("1 passed, 0 failed")
PY
