#!/usr/bin/env bash
# Configure and build UTC in build/ (CUDA on when a toolkit is found). Extra arguments go
# to cmake's configure step, e.g. scripts/build.sh -DUTC_WITH_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >build.log 2>&1 || {
    cat build.log; echo "build: cmake configure failed" >&2; exit 1; }
cmake --build build -j "$jobs" >>build.log 2>&1 || {
    tail -60 build.log; echo "build: compilation failed (full log in build.log)" >&2; exit 1; }
echo "build: done (log in build.log)"
