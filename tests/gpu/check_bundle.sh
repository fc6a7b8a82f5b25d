#!/usr/bin/env bash
# check_bundle.sh SRC WORK: proves the GPU machine's bundle (scripts/gpu-bundle.sh) whole.
#
# Fetches it first when SRC/gpu-bundle is missing or lacks a package (scripts/gpu-check.sh
# --prepare: needs apt and the network, as CI has; a failure to fetch is a failure, never
# a skip). Unpacks it into a fresh prefix under WORK and, in an environment made afresh
# (env -i) that points at that prefix alone, with CMake told to ignore /usr: configures UTC
# (no CUDA, no apps), builds libutc and a CUnit suite that uses hwloc itself, and a probe
# with the prefix's mpicc; checks that CMake found MPI, hwloc, CUnit, uthash and pkg-config
# in the prefix, that ldd resolves libmpi, libhwloc and libcunit there, and runs both at 2
# ranks with the prefix's mpirun, the probe checking that every library of the MPI stack
# its ranks mapped came from the prefix.
set -u
fail() { echo "FAIL: $*"; exit 1; }

if [ "${1:-}" != --inner ]; then
    src=$(cd "$1" && pwd) work=$2
    bundle=$src/gpu-bundle

    . "$src/scripts/gpu-bundle.sh"
    if ! bundle_complete "$bundle" 2>/dev/null; then
        echo "check_bundle: no complete bundle in $bundle: scripts/gpu-check.sh --prepare"
        "$src/scripts/gpu-check.sh" --prepare || fail "--prepare failed"
    fi
    echo "check_bundle: $(ls "$bundle"/*.deb | wc -l) packages, $(du -sh "$bundle" | cut -f1) in $bundle"

    rm -rf "$work"
    mkdir -p "$work"
    prefix=$work/prefix
    bundle_unpack "$bundle" "$prefix" || fail "unpacking"
    # The rest runs in an environment made afresh that knows only the prefix and the basics.
    exec env -i HOME="${HOME:-/root}" PATH=/usr/bin:/bin TMPDIR="${TMPDIR:-/tmp}" \
        bash "$0" --inner "$src" "$work" "$prefix"
fi

src=$2 work=$3 prefix=$4
. "$src/scripts/gpu-bundle.sh"
bundle_env "$prefix"
prefix=$UTC_BUNDLE_PREFIX
build=$work/build

for tool in mpirun mpicc pkg-config; do
    case "$(command -v $tool)" in "$prefix"/*) ;; *) fail "$tool is $(command -v $tool), not the prefix's" ;; esac
done
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUTC_WITH_CUDA=OFF \
    -DUTC_BUILD_APPS=OFF "${UTC_BUNDLE_CMAKE_ARGS[@]}" >"$work/configure.log" 2>&1 ||
    { tail -30 "$work/configure.log"; fail "configure against the prefix"; }
for var in MPI_C_COMPILER MPI_C_HEADER_DIR MPI_mpi_LIBRARY PKG_CONFIG_EXECUTABLE \
    pkgcfg_lib_HWLOC_hwloc UTHASH_INCLUDE_DIR CUNIT_INCLUDE_DIR CUNIT_LIBRARY; do
    val=$(sed -n "s/^$var:[A-Z]*=//p" "$build/CMakeCache.txt")
    case "$val" in "$prefix"/*) echo "ok: $var = $val" ;; *) fail "$var = '$val', not in $prefix" ;; esac
done
grep -q "^HWLOC_INCLUDE_DIRS:INTERNAL=$prefix/" "$build/CMakeCache.txt" || fail "hwloc's headers are not the prefix's"

jobs=$(nproc)
cmake --build "$build" -j "$jobs" --target utc test_task_binding >"$work/build.log" 2>&1 ||
    { tail -40 "$work/build.log"; fail "building against the prefix"; }
mpicc -std=gnu11 -Wall -Wextra -I"$src/include" "$src/tests/gpu/bundle_probe.c" -o "$work/bundle_probe" \
    -L"$build" -lutc -Wl,-rpath,"$build" || fail "the prefix's mpicc"

for bin in "$build/libutc.so" "$build/tests/framework/test_task_binding" "$work/bundle_probe"; do
    for lib in libmpi.so libhwloc.so libopen-pal.so; do
        where=$(ldd "$bin" | awk -v l="$lib" 'index($1, l) == 1 { print $3 }')
        case "$where" in "$prefix"/*) ;; *) fail "$(basename "$bin"): $lib resolves to '$where'" ;; esac
    done
done
where=$(ldd "$build/tests/framework/test_task_binding" | awk '$1 ~ /^libcunit/ { print $3 }')
case "$where" in "$prefix"/*) echo "ok: libmpi, libhwloc, libopen-pal, libcunit from the prefix (ldd)" ;;
    *) fail "libcunit resolves to '$where'" ;; esac

"$src/scripts/utcrun" -np 2 "$build/tests/framework/test_task_binding" </dev/null >"$work/run.log" 2>&1 ||
    { tail -30 "$work/run.log"; fail "test_task_binding at 2 ranks"; }
grep -E "^ +tests " "$work/run.log"
"$src/scripts/utcrun" -np 2 "$work/bundle_probe" "$prefix" </dev/null || fail "bundle_probe at 2 ranks"
echo "check_bundle: passed"
