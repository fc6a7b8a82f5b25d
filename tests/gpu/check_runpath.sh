#!/usr/bin/env bash
# check_runpath.sh DIR CUDA_LIBDIR: every ELF file under DIR (programs and libraries, built
# and, where tests/install put them there, installed) that needs libcudart carries
# CUDA_LIBDIR in its RUNPATH, so that it starts on a machine whose ld.so.conf does not
# list the CUDA toolkit. Needs no GPU.
set -u
dir=$1 cudalib=$2
real=$(readlink -f "$cudalib")
checked=0 bad=0
while IFS= read -r -d '' f; do
    head -c 4 "$f" 2>/dev/null | grep -q $'\x7fELF' || continue
    dyn=$(readelf -d "$f" 2>/dev/null) || continue
    grep -q 'NEEDED.*\[libcudart\.so' <<<"$dyn" || continue
    checked=$((checked + 1))
    rpath=$(sed -n 's/.*(RUNPATH)[^[]*\[\(.*\)\]/\1/p' <<<"$dyn")
    ok=0
    IFS=: read -ra dirs <<<"$rpath"
    for d in "${dirs[@]}"; do
        { [ "$d" = "$cudalib" ] || [ "$(readlink -f "$d" 2>/dev/null)" = "$real" ]; } && ok=1
    done
    [ "$ok" = 1 ] || { echo "FAIL: $f needs libcudart, RUNPATH '$rpath' lacks $cudalib"; bad=$((bad + 1)); }
done < <(find "$dir" -type f \( -perm -u+x -o -name '*.so*' \) -not -path '*/CMakeFiles/*' -print0)
echo "$checked binaries need libcudart, $bad without $cudalib in their RUNPATH"
[ "$checked" -gt 0 ] || { echo "FAIL: no binary needing libcudart under $dir"; exit 1; }
[ "$bad" = 0 ]
