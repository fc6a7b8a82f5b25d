#!/usr/bin/env bash
# check_full_disk.sh UTCRUN RYR: output into a directory whose files land on /dev/full.
# The output stage must report the write error and the run must end (no hang), non-zero.
set -u
utcrun=$1 ryr=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for f in 0 1 2 3; do
    for p in y u v; do ln -s /dev/full "$dir/frame_0000${f}_${p}.pgm"; done
done
timeout 60 "$utcrun" -np 1 "$ryr" --preset v3 --size 64x48 --frames 4 --out "$dir" >/dev/null 2>err.$$
rc=$?
err=$(cat err.$$); rm -f err.$$
echo "$err"
[ $rc -ne 124 ] || { echo "FAILED: the pipeline hung"; exit 1; }
[ $rc -ne 0 ] || { echo "FAILED: exit status 0 despite a full disk"; exit 1; }
grep -qi "no space\|write" <<<"$err" || { echo "FAILED: no write error reported"; exit 1; }
echo "1 passed, 0 failed"
