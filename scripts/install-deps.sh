#!/usr/bin/env bash
# Install what UTC needs from Debian's packages; a no-op when everything is there.
#
#   scripts/install-deps.sh          what building and running UTC need (run.sh)
#   scripts/install-deps.sh --test   also what the tests need beyond the build (test.sh):
#                                    python3, doxygen (the API-reference test), ffmpeg (the
#                                    video tests), groff (the man pages), netpbm,
#                                    python3-matplotlib, slurm-wlm and munge (the tests
#                                    that run jobs under a Slurm of their own)
#
# CUDA is not installed here: it is optional, found in /usr/local/cuda when present.
set -euo pipefail

usage() {
    awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
}

# package -> a command or file that proves it is installed
declare -A need=(
    [build-essential]=/usr/bin/make
    [cmake]=/usr/bin/cmake
    [pkg-config]=/usr/bin/pkg-config
    [openmpi-bin]=/usr/bin/mpirun
    [libopenmpi-dev]=/usr/bin/mpicc
    [libhwloc-dev]=/usr/include/hwloc.h
    [uthash-dev]=/usr/include/uthash.h
    [libcunit1-dev]=/usr/include/CUnit/CUnit.h
)
declare -A need_test=(
    [python3]=/usr/bin/python3
    [doxygen]=/usr/bin/doxygen
    [ffmpeg]=/usr/bin/ffprobe
    [groff-base]=/usr/bin/groff
    [netpbm]=/usr/bin/pnmfile
    [python3-matplotlib]=/usr/lib/python3/dist-packages/matplotlib/__init__.py
    [slurm-wlm]=/usr/sbin/slurmctld
    [munge]=/usr/sbin/munged
)
case "${1:-}" in
    "") ;;
    --test) for pkg in "${!need_test[@]}"; do need[$pkg]=${need_test[$pkg]}; done ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install-deps: unknown argument '$1' (see scripts/install-deps.sh --help)" >&2; exit 2 ;;
esac

missing=()
for pkg in "${!need[@]}"; do
    [ -e "${need[$pkg]}" ] || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
echo "install-deps: installing ${missing[*]}"
if [ "$(id -u)" != 0 ]; then
    SUDO=sudo
else
    SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
for pkg in "${missing[@]}"; do
    [ -e "${need[$pkg]}" ] || { echo "install-deps: $pkg did not install ${need[$pkg]}" >&2; exit 1; }
done
