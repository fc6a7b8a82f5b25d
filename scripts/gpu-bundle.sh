# The GPU machine's missing packages (sourced by scripts/gpu-check.sh and the gpubundle
# test; not a program of its own).
#
# A GPU machine lent to the project has a driver and a CUDA toolkit, but no Open MPI,
# hwloc, CUnit, uthash, pkg-config or make, and no package registry. On a machine with apt,
# bundle_prepare fetches them as Debian packages (apt-get download: nothing is installed)
# into one folder, gpu-bundle/, that git ignores and the device tool carries. On the GPU
# machine bundle_unpack extracts them with dpkg-deb -x into a private prefix (never over
# /), and bundle_env points the compiler, CMake, pkg-config, the loader and Open MPI at
# that prefix alone.
#
# What goes in: the packages named in bundle_roots, and, recursively, what their
# libraries and programs need (Depends, Pre-Depends), except what every Debian or Ubuntu
# system has (bundle_base: the C library and the compiler's runtime, zlib, ...) and
# hwloc's optional plugins (X11, OpenCL, PCI: UTC binds to cores, not to devices). The
# -dev packages bring headers and .so links; their own needs (other -dev packages) are
# not followed. The packages come from the distribution of the machine that prepares
# them (recorded in gpu-bundle/MANIFEST): prepare on one no newer than the GPU machine's
# (the libraries need its C library to be at least as new).

bundle_roots="openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libhwloc15 libhwloc-dev
libcunit1 libcunit1-dev uthash-dev pkgconf pkgconf-bin libpkgconf3 make"
bundle_base='^(libc6|libgcc-s1|libstdc\+\+6|gcc-[0-9]+-base|zlib1g|libudev1|libuuid1|libatomic1|adduser|debconf|dpkg|perl-base|libzstd1|liblzma5|libbz2-1\.0|libselinux1|libpcre2-8-0|libcrypt1|libtinfo6|libssl3|libssl3t64|libhwloc-plugins|openssh-client|ssh-client|libjs-.*)$'
# a file of each that proves the unpacked prefix is whole
bundle_proof="usr/bin/orterun usr/bin/opal_wrapper usr/bin/pkgconf usr/bin/make usr/include/hwloc.h
usr/include/uthash.h usr/include/CUnit/CUnit.h usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h"

# bundle_packages: the package names, one a line (needs apt's package lists).
bundle_packages() {
    local -A seen=()
    local level=($bundle_roots) next p
    while [ ${#level[@]} -gt 0 ]; do
        next=()
        local ask=()
        for p in "${level[@]}"; do
            [ -z "${seen[$p]:-}" ] || continue
            [[ ! $p =~ $bundle_base ]] || continue
            seen[$p]=1
            case $p in *-dev) ;; *) ask+=("$p") ;; esac
        done
        [ ${#ask[@]} -gt 0 ] || break
        # one apt-cache call a level. "Depends: x" and "PreDepends: x"; the first of
        # alternatives ("|Depends") and virtual packages ("<x>") are skipped: the
        # alternative after them is taken
        next=($(apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks \
                    --no-replaces --no-enhances "${ask[@]}" |
                awk '$1 ~ /^(Pre)?Depends:$/ && $2 !~ /^</ { print $2 }' | sort -u))
        level=("${next[@]}")
    done
    printf '%s\n' "${!seen[@]}" | sort
}

# bundle_prepare DIR: fetch the packages into DIR (replaced whole, only once all came).
bundle_prepare() {
    local dir=$1 tmp
    command -v apt-get >/dev/null && command -v apt-cache >/dev/null ||
        { echo "gpu-bundle: --prepare needs apt-get (a Debian or Ubuntu machine)" >&2; return 1; }
    if ! apt-cache show openmpi-bin >/dev/null 2>&1; then
        echo "gpu-bundle: no package lists: apt-get update" >&2
        apt-get update -qq || return 1
    fi
    local pkgs
    pkgs=$(bundle_packages) || return 1
    tmp=$(mktemp -d "${dir%/}.tmp.XXXXXX") || return 1
    # apt's sandbox user cannot write a folder of root's: download as the caller. Lists
    # that name installed packages but no source (an image's emptied apt lists) make the
    # first try fail: update them, try again
    if ! (cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root $pkgs >download.log 2>&1) &&
        ! { echo "gpu-bundle: apt-get download failed: apt-get update, and again" >&2 &&
            apt-get update -qq && pkgs=$(bundle_packages) &&
            (cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root $pkgs >download.log 2>&1); }; then
        cat "$tmp/download.log" >&2
        rm -rf "$tmp"
        echo "gpu-bundle: apt-get download failed" >&2
        return 1
    fi
    rm -f "$tmp/download.log"
    {
        echo "# UTC GPU bundle: Debian packages for scripts/gpu-check.sh (unpack with dpkg-deb -x)"
        echo "prepared: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME") $(uname -m)"
        for f in "$tmp"/*.deb; do
            dpkg-deb --showformat='${Package} ${Version}\n' -W "$f"
        done
    } >"$tmp/MANIFEST"
    rm -rf "$dir"
    mv "$tmp" "$dir"
    echo "gpu-bundle: $(ls "$dir"/*.deb | wc -l) packages, $(du -sh "$dir" | cut -f1) in $dir"
}

# bundle_complete DIR: whether DIR holds every package bundle_packages lists now.
bundle_complete() {
    local dir=$1 p
    [ -f "$dir/MANIFEST" ] || return 1
    for p in $(bundle_packages); do
        grep -q "^$p " "$dir/MANIFEST" || { echo "gpu-bundle: $dir lacks $p" >&2; return 1; }
    done
}

# deb_extract DEB DIR: dpkg-deb -x, or, on a machine without dpkg, ar and tar (a .deb is
# an ar archive whose data.tar.* holds the files).
deb_extract() {
    if command -v dpkg-deb >/dev/null; then
        dpkg-deb -x "$1" "$2"
        return
    fi
    local tmp rc deb
    deb=$(readlink -f "$1") && tmp=$(mktemp -d) || return 1
    (cd "$tmp" && ar x "$deb") && tar -xf "$tmp"/data.tar.* -C "$2"
    rc=$?
    rm -rf "$tmp"
    return $rc
}

# bundle_unpack DIR PREFIX: extract every package of DIR into PREFIX (made, must not be
# /), add the links Debian makes with update-alternatives (mpirun, mpicc), and check it.
bundle_unpack() {
    local dir=$1 prefix=$2 f
    case "$(cd / && readlink -m "$prefix")" in
        / | /usr | /usr/local) echo "gpu-bundle: will not unpack over $prefix" >&2; return 1 ;;
    esac
    ls "$dir"/*.deb >/dev/null 2>&1 || { echo "gpu-bundle: no .deb in $dir (run scripts/gpu-check.sh --prepare where apt works)" >&2; return 1; }
    mkdir -p "$prefix" || return 1
    for f in "$dir"/*.deb; do
        deb_extract "$f" "$prefix" || { echo "gpu-bundle: cannot unpack $f" >&2; return 1; }
    done
    local b
    for b in mpirun mpiexec mpicc; do
        [ -e "$prefix/usr/bin/$b" ] || ln -s "$b.openmpi" "$prefix/usr/bin/$b"
    done
    for f in $bundle_proof; do
        [ -e "$prefix/$f" ] || { echo "gpu-bundle: $prefix/$f is missing after unpacking" >&2; return 1; }
    done
}

# bundle_env PREFIX: export what makes the compiler, CMake, pkg-config, the loader, Open
# MPI (relocated: OPAL_PREFIX) and PMIx take Open MPI, hwloc, CUnit and uthash from PREFIX
# before the system's. UTC_BUNDLE_CMAKE_ARGS holds the CMake arguments that hide the
# system's /usr from find_package, find_path and find_library.
bundle_env() {
    local p
    p=$(readlink -f "$1")
    local arch=x86_64-linux-gnu
    export UTC_BUNDLE_PREFIX=$p
    export PATH="$p/usr/bin:$PATH"
    export LD_LIBRARY_PATH="$p/usr/lib/$arch/openmpi/lib:$p/usr/lib/$arch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export C_INCLUDE_PATH="$p/usr/include${C_INCLUDE_PATH:+:$C_INCLUDE_PATH}"
    export CPLUS_INCLUDE_PATH="$p/usr/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}"
    export LIBRARY_PATH="$p/usr/lib/$arch${LIBRARY_PATH:+:$LIBRARY_PATH}"
    export CMAKE_PREFIX_PATH="$p/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
    # pkg-config: the prefix's .pc files only, their /usr paths moved under the prefix
    export PKG_CONFIG_LIBDIR="$p/usr/lib/$arch/pkgconfig:$p/usr/share/pkgconfig"
    export PKG_CONFIG_SYSROOT_DIR=$p PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
    unset PKG_CONFIG_PATH
    # Open MPI finds its components, help files and settings under the prefix
    export OPAL_PREFIX="$p/usr" OPAL_SYSCONFDIR="$p/etc/openmpi"
    # hwloc's plugins are not in the bundle: look for them in the prefix (none), not in
    # the system's folder (as on the GPU machine, which has none)
    export HWLOC_PLUGINS_PATH="$p/usr/lib/$arch/hwloc"
    # and PMIx (its own install folders) its plugins and help files
    local pmix=$p/usr/lib/$arch/pmix2
    export PMIX_LIBDIR="$pmix/lib" PMIX_PKGLIBDIR="$pmix/lib/pmix" PMIX_PKGDATADIR="$pmix/share/pmix"
    UTC_BUNDLE_CMAKE_ARGS=("-DCMAKE_IGNORE_PREFIX_PATH=/usr;/usr/local;/")
}
