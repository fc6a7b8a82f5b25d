#!/usr/bin/env bash
# Install what UTC needs from Debian's packages; a no-op when everything is there.
# CUDA is not installed here: it is optional, found in /usr/local/cuda when present.
set -euo pipefail

# command or file that proves each package is installed
declare -A need=(
    [build-essential]=/usr/bin/make
    [cmake]=/usr/bin/cmake
    [pkg-config]=/usr/bin/pkg-config
    [openmpi-bin]=/usr/bin/mpirun
    [libopenmpi-dev]=/usr/bin/mpicc
    [libhwloc-dev]=/usr/include/hwloc.h
    [uthash-dev]=/usr/include/uthash.h
    [libcunit1-dev]=/usr/include/CUnit/CUnit.h
    [python3]=/usr/bin/python3
    [netpbm]=/usr/bin/pnmfile
    [python3-matplotlib]=/usr/lib/python3/dist-packages/matplotlib/__init__.py
)
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
