#!/usr/bin/env bash
# Tests of the installed UTC (registered by tests/install/CMakeLists.txt):
#
#   install_test.sh tree      BUILD PREFIX          install BUILD into PREFIX, check the files
#   install_test.sh cmake     PREFIX WORK SRC       a CMake project (SRC) with find_package(UTC)
#   install_test.sh pkgconfig PREFIX WORK SRC CC    a program built with pkg-config and CC
#   install_test.sh examples  PREFIX WORK           the installed examples, built out of tree
#
# The programs are run with PREFIX/bin/utcrun. CMAKE (environment) names cmake.
set -euo pipefail
CMAKE=${CMAKE:-cmake}
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "--- $*"; }

mode=$1; shift
case "$mode" in
tree)
    build=$1 prefix=$2
    rm -rf "$prefix"
    step "cmake --install $build --prefix $prefix"
    "$CMAKE" --install "$build" --prefix "$prefix" > "$prefix.log" 2>&1 \
        || { cat "$prefix.log"; fail "cmake --install failed"; }
    libdir=$(dirname "$(find "$prefix" -name 'libutc.so' | head -1)")
    [ -n "$libdir" ] && [ "$libdir" != . ] || fail "no libutc.so installed"
    for f in include/utc/utc.h include/utc/version.h include/utc/task.h include/utc/conduit.h \
             include/utc/gshared.h include/utc/collectives.h include/utc/gpu.h \
             bin/utcrun bin/utc-trace-plot; do
        [ -e "$prefix/$f" ] || fail "$f not installed"
    done
    [ -x "$prefix/bin/utcrun" ] || fail "bin/utcrun is not executable"
    for f in libutc.a pkgconfig/utc.pc cmake/UTC/UTCConfig.cmake \
             cmake/UTC/UTCConfigVersion.cmake cmake/UTC/UTCTargets.cmake \
             cmake/UTC/FindHWLOC.cmake; do
        [ -e "$libdir/$f" ] || fail "${libdir#$prefix/}/$f not installed"
    done
    ls "$libdir"/libutc.so.* > /dev/null 2>&1 || fail "no versioned libutc.so.N"
    # nothing of the build tree may leak into the package
    if grep -l "$build" "$libdir"/cmake/UTC/*.cmake "$libdir/pkgconfig/utc.pc"; then
        fail "the package refers to the build tree"
    fi
    [ -e "$prefix/share/doc/UTC/examples/CMakeLists.txt" ] || fail "examples not installed"
    "$prefix/bin/utcrun" --help > /dev/null || fail "utcrun --help"
    echo "installed: $(cd "$prefix" && find . -type f | wc -l) files under $prefix"
    ;;
cmake)
    prefix=$1 work=$2 src=$3
    rm -rf "$work"
    step "configure $src against $prefix"
    "$CMAKE" -S "$src" -B "$work" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
        || fail "configure (find_package(UTC)) failed"
    "$CMAKE" --build "$work" -j2 || fail "build failed"
    step "run (shared library)"
    ldd "$work/consumer" | grep "$prefix/.*libutc.so" > /dev/null \
        || { ldd "$work/consumer"; fail "consumer does not use the installed libutc.so"; }
    "$prefix/bin/utcrun" -np 1 "$work/consumer" | tee "$work/out.txt"
    grep -q "consumer: UTC .* ok" "$work/out.txt" || fail "consumer did not run"
    step "run (static library)"
    if ldd "$work/consumer_static" | grep libutc.so > /dev/null; then
        fail "consumer_static uses libutc.so"
    fi
    "$prefix/bin/utcrun" -np 2 "$work/consumer_static" | tee "$work/out2.txt"
    [ "$(grep -c 'consumer: UTC .* ok' "$work/out2.txt")" = 2 ] || fail "consumer_static failed"
    ;;
pkgconfig)
    prefix=$1 work=$2 src=$3 cc=$4
    rm -rf "$work"
    mkdir -p "$work"
    pc=$(dirname "$(find "$prefix" -name utc.pc | head -1)")
    export PKG_CONFIG_PATH="$pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    step "pkg-config utc (PKG_CONFIG_PATH=$pc)"
    pkg-config --exists --print-errors utc || fail "pkg-config does not find utc"
    version=$(pkg-config --modversion utc)
    echo "utc $version: cflags '$(pkg-config --cflags utc)' libs '$(pkg-config --libs utc)'"
    echo "static libs: '$(pkg-config --static --libs utc)'"
    libdir=$(pkg-config --variable=libdir utc)
    [ -e "$libdir/libutc.so" ] || fail "pkg-config's libdir $libdir has no libutc.so"
    # shellcheck disable=SC2046
    "$cc" -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags utc) "$src/consumer.c" \
        -o "$work/consumer_pc" $(pkg-config --libs utc) -Wl,-rpath,"$libdir" \
        || fail "compiling with pkg-config's flags failed"
    # the static library: pkg-config --static must name what libutc.a needs (MPI, hwloc)
    static_libs=$(pkg-config --static --libs utc)
    for l in -lmpi -lhwloc -lm; do
        case " $static_libs " in *" $l "*) ;; *) fail "pkg-config --static --libs lacks $l" ;; esac
    done
    # link libutc.a with its dependencies' shared libraries (a fully static link would
    # need static MPI, hwloc and udev, which Debian does not all ship)
    deps=$(pkg-config --print-requires-private utc | awk '{print $1}' | tr '\n' ' ')
    extra=""
    [ "$(pkg-config --variable=with_cuda utc)" = ON ] &&
        extra="-L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lcudart"
    # shellcheck disable=SC2046,SC2086
    "$cc" -std=c11 $(pkg-config --cflags utc) "$src/consumer.c" -o "$work/consumer_pc_static" \
        "$libdir/libutc.a" $(pkg-config --libs $deps) -lm -pthread $extra \
        || fail "linking libutc.a failed"
    utcrun=$(pkg-config --variable=utcrun utc)
    [ -x "$utcrun" ] || fail "pkg-config's utcrun ($utcrun) is not executable"
    "$work/consumer_pc" --version | grep "(UTC) $version" > /dev/null || fail "--version is not $version"
    step "run"
    "$utcrun" -np 2 "$work/consumer_pc" | tee "$work/out.txt"
    [ "$(grep -c 'consumer: UTC .* ok' "$work/out.txt")" = 2 ] || fail "consumer_pc failed"
    "$utcrun" -np 1 "$work/consumer_pc_static" | grep 'consumer: UTC .* ok' > /dev/null \
        || fail "consumer_pc_static failed"
    ;;
examples)
    prefix=$1 work=$2
    src="$prefix/share/doc/UTC/examples"
    rm -rf "$work"
    step "configure the installed examples ($src)"
    "$CMAKE" -S "$src" -B "$work" -DCMAKE_PREFIX_PATH="$prefix" || fail "configure failed"
    "$CMAKE" --build "$work" -j2 || fail "build failed"
    for ex in first_task first_conduit pipeline global_data jacobi farm gpu_task; do
        [ -x "$work/example_$ex" ] || fail "example_$ex not built"
        "$work/example_$ex" --version | grep "(UTC)" > /dev/null || fail "example_$ex --version"
        "$work/example_$ex" --help | grep "usage" > /dev/null || fail "example_$ex --help"
    done
    step "run"
    "$prefix/bin/utcrun" -np 2 "$work/example_first_conduit" --count 50 \
        || fail "example_first_conduit"
    "$prefix/bin/utcrun" -np 1 "$work/example_pipeline" --frames 5 || fail "example_pipeline"
    "$prefix/bin/utcrun" -np 2 "$work/example_farm" --jobs 20 || fail "example_farm"
    ;;
*)
    fail "unknown mode '$mode'"
    ;;
esac
echo "PASS: $mode"
